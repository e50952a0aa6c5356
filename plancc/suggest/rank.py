"""The order of the candidates: the rules' facts, compared as classes, in the seed's order.

Not a fitted score: the seed's figures are too few to fit a scale (docs/suggest.md,
"The key"). A candidate with an error finding is infeasible: listed apart, never
ranked. The rest are ranked by a key compared place by place:

0. the class against "no warm": a *loss* has a finding the seed measured as turning
   a warm into a loss (PC107, weights streaming beside it, PC106, PC101, PC105,
   PC032, PC041); a *gain* has none, and lands bytes; "no warm" lies between;
1. PC107: a warm that cannot land, below everything that can;
2. the layer's own weight bytes that stream while the warm is in flight (PC104's
   bytes before the first consumer, or PC106's pushed bytes before the last), in
   whole percent of the warm: under 1 % is no difference, as a tensor under 1 % of
   a set rides along;
3. coverage (PC103's missing bytes, in whole percent of the groups' bytes) before
   issue order (PC102): `wo_b, wo_a` (−595 µs) ranks above `wo_b` alone (−399 µs);
4. split scopes (PC101), SDMA overlap (PC105), the budget (PC032), other warnings;
5. bytes landed, more first; then the window, longer first (µs, then steps);
6. on a tie, the plan's declared warms first (the rules give no reason to move
   them), then `--candidate`s, then fewer anchors (a join that changes nothing is
   no better than one anchor), then the names: the order never depends on how the
   plan lists anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from plancc.suggest.evaluate import Evaluation
from plancc.text import fmt_size

GAIN, NONE, LOSS, INFEASIBLE = "gain", "none", "loss", "infeasible"
_LOSSES = ("PC101", "PC105", "PC106", "PC032", "PC041")
_ORDERED = ("PC107", "PC103", "PC102", "PC101", "PC105", "PC032")


def streamed(e: Evaluation) -> int:
    """The bytes that stream while the warm is in flight: PC104's before its first
    consumer, or PC106's pushed before its last, whichever is more."""
    return max(e.streamed, e.total("PC106", "pushed_bytes"))


def streams(e: Evaluation) -> int:
    """Place 2: ``streamed``, in whole percent of the warm's bytes."""
    return 100 * streamed(e) // e.bytes if e.bytes else 0


def missing(e: Evaluation) -> int:
    """Place 3: the bytes of the touched groups it leaves out (PC103's), in whole
    percent of those groups' bytes."""
    left = e.total("PC103", "missing_bytes")
    return 100 * left // (left + e.bytes) if left else 0


def klass(e: Evaluation) -> str:
    if e.candidate.none:
        return NONE
    if e.infeasible:
        return INFEASIBLE
    if e.fired("PC107") or streams(e) or any(e.fired(c) for c in _LOSSES):
        return LOSS
    return GAIN


_CLASS_ORDER = {GAIN: 0, NONE: 1, LOSS: 2, INFEASIBLE: 3}


def _others(e: Evaluation) -> int:
    return sum(f.code not in _ORDERED and f.code != "PC106" for f in e.findings)


@dataclass(frozen=True)
class Place:
    value: Callable[[Evaluation], object]
    words: Callable[[Evaluation, Evaluation], str]  # why this one is below the other


def _message(code: str) -> Callable[[Evaluation, Evaluation], str]:
    def words(e: Evaluation, _: Evaluation) -> str:
        found = next(f for f in e.findings if f.code == code)
        return f"{found.message} ({code})"

    return words


def _streams_words(e: Evaluation, _: Evaluation) -> str:
    if e.total("PC106", "pushed_bytes") > e.streamed:
        return _message("PC106")(e, _)
    return (
        f"{fmt_size(e.streamed)} ({_share(e.streamed, e.bytes)} its {fmt_size(e.bytes)}) "
        "of the layer's own weights stream while it is in flight"
    )


def _share(n: int, of: int) -> str:
    """``75 % of``, or from its size up a ratio: ``4.1× `` is read at once, where
    ``405 %`` (or a 256 B warm's ``29795300 %``) is not."""
    if n < of:
        return f"{100 * n // of} % of"
    ratio = n / of
    return f"{ratio:.1f}×" if ratio < 100 else f"{ratio:,.0f}×"


def _class_words(e: Evaluation, above: Evaluation) -> str:
    if e.candidate.none:
        return "lands nothing"
    return loss_fault(e) or "below no warm"


def loss_fault(e: Evaluation) -> str | None:
    """Why a loss is one: its first fault in key order that the seed measured as a loss."""
    for i in _LOSS_PLACES:
        place = PLACES[i]
        if place.value(e):
            return place.words(e, e)
    return None


def _landed_words(e: Evaluation, above: Evaluation) -> str:
    return f"lands {fmt_size(e.landed)} before its first consumer, against {fmt_size(above.landed)}"


def _window_words(e: Evaluation, above: Evaluation) -> str:
    if e.window_us is not None and above.window_us is not None:
        return f"a shorter window: {float(e.window_us):g} µs against {float(above.window_us):g} µs"
    return f"a shorter window: {e.window_steps} steps against {above.window_steps}"


PLACES: Sequence[Place] = (
    Place(lambda e: _CLASS_ORDER[klass(e)], _class_words),
    Place(lambda e: e.fired("PC107") > 0, _message("PC107")),
    Place(streams, _streams_words),
    Place(missing, _message("PC103")),
    Place(lambda e: e.fired("PC102"), _message("PC102")),
    Place(lambda e: e.fired("PC101"), _message("PC101")),
    Place(lambda e: e.fired("PC105"), _message("PC105")),
    Place(lambda e: e.fired("PC032"), _message("PC032")),
    Place(_others, lambda e, _: f"{e.findings[0].message} ({e.findings[0].code})"),
    Place(lambda e: -e.landed, _landed_words),
    Place(lambda e: -(e.window_us or 0), _window_words),
    Place(lambda e: -e.window_steps, _window_words),
)


_ORIGIN = {"declared": 0, "as declared": 0, "given": 1}  # then enumerated
_LOSS_PLACES = (1, 2, 5, 6, 7, 8)  # PC107, streaming, PC101, PC105, PC032, the rest


def key(e: Evaluation) -> tuple[object, ...]:
    c = e.candidate
    # Ties: the plan's own warms first (the rules see no reason to move them), then
    # fewer anchors (a join that changes nothing is no better than one anchor), names.
    return (*(p.value(e) for p in PLACES), _ORIGIN.get(c.origin, 2), len(c.anchor), c.parts)


def label(e: Evaluation) -> str:
    c = e.candidate
    if c.none:
        return "no warm"
    return " | ".join(f"{'+'.join(a)}: {', '.join(t)}" for a, t in c.parts)


@dataclass(frozen=True)
class Ranked:
    rank: int | None  # None: infeasible
    evaluation: Evaluation
    klass: str
    reason: str


def rank(evaluations: Sequence[Evaluation]) -> tuple[list[Ranked], list[Ranked]]:
    """The ranked candidates (with "no warm"), and the infeasible ones apart."""
    feasible = sorted((e for e in evaluations if klass(e) != INFEASIBLE), key=key)
    out: list[Ranked] = []
    for i, e in enumerate(feasible):
        out.append(Ranked(i + 1, e, klass(e), _reason(e, feasible[i - 1] if i else None)))
    apart = sorted((e for e in evaluations if klass(e) == INFEASIBLE), key=key)
    infeasible = [
        Ranked(
            None,
            e,
            INFEASIBLE,
            "; ".join(f"{f.message} ({f.code})" for f in e.findings if f.severity.value == "error"),
        )
        for e in apart
    ]
    return out, infeasible


def _reason(e: Evaluation, above: Evaluation | None) -> str:
    if above is None:
        if klass(e) == GAIN:
            return f"first: lands {fmt_size(e.landed)} with nothing streaming beside it"
        return "first: nothing beats no warm"
    differ = [i for i, place in enumerate(PLACES) if place.value(e) != place.value(above)]
    i = differ[0] if differ else len(PLACES)
    if differ:
        words = f"below {label(above)}: {PLACES[i].words(e, above)}"
    else:
        words = f"ties with {label(above)}: the rules find nothing to tell them apart"
    if klass(e) == LOSS and i not in (0, *_LOSS_PLACES):
        words += f"; a loss: {loss_fault(e)}"  # the place that decided is not why it loses
    return words
