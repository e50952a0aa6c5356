"""The order of the candidates: the rules' facts, compared as classes, in the seed's order;
then the rows: one per distinct warm.

Not a fitted score: the seed's figures are too few to fit a scale (docs/suggest.md,
"The key"). A candidate with an error finding is infeasible: listed apart, never
ranked. Which findings make a warm a loss, and which numbers carry their amounts, the
rules declare (``Rule.loss``, ``Rule.amount``); the places below only order them, in the
order of the seed's lessons (each amount in whole steps of the negligible share,
``tables.thresholds``: under 1 % is no difference):

0. the class: a *loss* has a shown finding of a loss rule (an `allow` of the warm, or
   `lint.ignore`, silences one as for `validate`); a warm with none that the layer's
   own weights still stream beside, where no later task lets PC104 name an anchor, is
   *contended*; else a *gain*. "no warm" lies between the gains and the rest; a
   measured verdict (``measured``) overrides the class;
1. PC107: a warm that cannot land, below everything that can;
2. what streaming costs it: its loss findings' amounts (PC104's weights beside it,
   PC106's bytes evicted), or the weights beside a contended one;
3. coverage (the other findings' amounts: PC103's missing bytes) before issue order
   (PC102): `wo_b, wo_a` (−595 µs) ranks above `wo_b` alone (−399 µs);
4. split scopes (PC101), a collective or SDMA stage it spans (PC105), the budget
   (PC032), other warnings;
5. what streams through L2 while it is in flight (PC106's bytes), in percent of L2,
   less first: a warm with room to spare above one at the edge;
6. bytes landed, more first; then the window, longer first (µs, then steps);
7. on a tie, the plan's declared warms first (the rules give no reason to move them),
   then `--candidate`s, then fewer anchors, then the names: the order never depends on
   how the plan lists anything.

Two candidates are one row when their findings agree (shown and allowed, with their
numbers), every place agrees, and their anchors are equivalent: each warm waits for the
same stage (a join whose other members finish no later is its latest finisher alone).
The row is the first of them by the key; the others are its ``same``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache

from plancc.rules import Rule, discover
from plancc.suggest.candidates import Part
from plancc.suggest.evaluate import Evaluation, Judged, Stream
from plancc.suggest.measured import INCONCLUSIVE, SHIP, Measured
from plancc.tables.engines import ENGINES
from plancc.tables.thresholds import negligible, share
from plancc.text import fmt_share, fmt_size

GAIN, NONE, CONTENDED, LOSS, INFEASIBLE = "gain", "none", "contended", "loss", "infeasible"
# The codes a place of the key orders by (the rest count among "other warnings").
_ORDERED = ("PC107", "PC103", "PC102", "PC101", "PC105", "PC032")


@cache
def _rules() -> dict[str, Rule]:
    return {r.id: r for r in discover()}


def loss_codes(e: Evaluation) -> tuple[str, ...]:
    """The codes of its shown findings that make a warm a loss (``Rule.loss``)."""
    rules = _rules()
    return tuple(c for c in e.codes if c in rules and rules[c].loss)


def _amount(e: Evaluation, loss: bool) -> int:
    """The bytes its shown findings of loss rules (``loss``) or of the others are about,
    by the rules' declared `data` keys: of losses the most, of the others the sum."""
    rules = _rules()
    found = [
        int(f.data.get(r.amount) or 0)
        for f in e.findings
        if (r := rules.get(f.code)) is not None and r.amount is not None and r.loss == loss
    ]
    return max(found, default=0) if loss else sum(found)


def costs(e: Evaluation) -> int:
    """Place 2: the bytes streaming costs the warm, in whole percent of it: its loss
    findings' amounts (PC104's weights beside it, PC106's bytes evicted), or the layer's
    own weights streaming beside it where no later anchor lets PC104 name them (it is
    contended), whichever is more."""
    return share(max(_amount(e, True), e.streamed), e.bytes)


def missing(e: Evaluation) -> int:
    """Place 3: the bytes it leaves out, in whole percent of those and its own."""
    left = _amount(e, False)
    return share(left, left + e.bytes)


def klass(e: Evaluation) -> str:
    """A loss has a loss finding; a warm with none that the layer's own weights still
    stream beside (PC104's bytes, not negligible, where no later stage has a task for
    PC104 to name: the seed's `rms_norm` anchor, +770 µs) is contended; else a gain."""
    if e.candidate.none:
        return NONE
    if e.infeasible:
        return INFEASIBLE
    if loss_codes(e):
        return LOSS
    return GAIN if negligible(e.streamed, e.bytes) else CONTENDED


_CLASS_ORDER = {GAIN: 0, NONE: 1, CONTENDED: 2, LOSS: 3, INFEASIBLE: 4}


def _others(e: Evaluation) -> int:
    rules = _rules()
    return sum(
        f.code not in _ORDERED and not (f.code in rules and rules[f.code].amount)
        for f in e.findings
    )


def in_flight(e: Evaluation) -> int:
    """Place 9: what streams through L2 while it is in flight, in whole percent of L2."""
    return share(e.pushed, e.l2 or 0) if not e.candidate.none else 0


@dataclass(frozen=True)
class Place:
    value: Callable[[Evaluation], object]
    words: Callable[[Evaluation, Evaluation], str]  # why this one is below the other


def _message(code: str) -> Callable[[Evaluation, Evaluation], str]:
    def words(e: Evaluation, _: Evaluation) -> str:
        found = next(f for f in e.findings if f.code == code)
        return f"{found.message} ({code})"

    return words


def _costs_words(e: Evaluation, _: Evaluation) -> str:
    rules = _rules()
    worst = max(
        (f for f in e.findings if (r := rules.get(f.code)) is not None and r.loss and r.amount),
        key=lambda f: int(f.data.get(rules[f.code].amount or "") or 0),
        default=None,
    )
    if worst is not None and worst.code == "PC106" and _amount(e, True) > e.streamed:
        return f"{streams_words(e)} (PC106)"
    if worst is not None and worst.code not in ("PC104", "PC106"):
        return _amounted(e, loss=True)
    code = " (PC104)" if e.fired("PC104") else ""
    if not code and klass(e) == CONTENDED:
        code = ": no later stage has a task to wait them out (PC104 names none)"
    return (
        f"{fmt_size(e.streamed)} ({_share(e.streamed, e.bytes)} its {fmt_size(e.bytes)}) "
        f"of the layer's own weights stream while it is in flight{code}"
    )


def streams_words(e: Evaluation) -> str:
    """What streams while it is in flight, and the L2 it leaves: "'fa_fused' streams 134.2
    MB (k_cache, v_cache) while it is in flight: 0.93× L2 with the warm"."""
    names = ", ".join(_stream(s) for s in e.pushers)
    if e.pushing > len(e.pushers):
        names += f" and {e.pushing - len(e.pushers)} more"
    verb = "streams" if e.pushing == 1 else "stream"
    share = ""
    if e.l2:
        ratio = fmt_share(Fraction(e.pushed + e.bytes, e.l2), [Fraction(1)])
        share = f": {ratio}× L2 with the warm"
    return f"{names} {verb} {fmt_size(e.pushed)} while it is in flight{share}"


def _stream(s: Stream) -> str:
    if s.streams and s.reads:
        return f"'{s.stage}' ({', '.join(s.reads)})"
    return f"'{s.stage}'"


def _amounted(e: Evaluation, *, loss: bool) -> str:
    """The message of the finding with the largest declared amount (``Rule.amount``)."""
    rules = _rules()
    found = max(
        (f for f in e.findings if (r := rules.get(f.code)) and r.amount and r.loss == loss),
        key=lambda f: int(f.data.get(rules[f.code].amount or "") or 0),
    )
    return f"{found.message} ({found.code})"


def _in_flight_words(e: Evaluation, above: Evaluation) -> str:
    return (
        f"less of L2 left: {streams_words(e)}, leaving {100 - in_flight(e)} % of L2 "
        f"against {100 - in_flight(above)} %"
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
    """Why a loss is one: its first fault in key order that is a loss finding."""
    for i in _LOSS_PLACES:
        place = PLACES[i]
        if place.value(e):
            return place.words(e, e)
    codes = loss_codes(e)
    if codes:
        return _message(codes[0])(e, e)
    return None


def _landed_words(e: Evaluation, above: Evaluation) -> str:
    return f"lands {fmt_size(e.landed)} before its first consumer, against {fmt_size(above.landed)}"


def _window_words(e: Evaluation, above: Evaluation) -> str:
    if e.window_us is not None and above.window_us is not None:
        return f"a shorter window: {float(e.window_us):g} µs against {float(above.window_us):g} µs"
    return f"a shorter window: {e.window_steps} steps against {above.window_steps}"


def _first_other(e: Evaluation, _: Evaluation) -> str:
    rules = _rules()
    f = next(
        f
        for f in e.findings
        if f.code not in _ORDERED and not (f.code in rules and rules[f.code].amount)
    )
    return f"{f.message} ({f.code})"


PLACES: Sequence[Place] = (
    Place(lambda e: _CLASS_ORDER[klass(e)], _class_words),
    Place(lambda e: e.fired("PC107") > 0, _message("PC107")),
    Place(costs, _costs_words),
    Place(missing, lambda e, _: _amounted(e, loss=False)),
    Place(lambda e: e.fired("PC102"), _message("PC102")),
    Place(lambda e: e.fired("PC101"), _message("PC101")),
    Place(lambda e: e.fired("PC105"), lambda e, _: f"{spans_words(e.findings)} (PC105)"),
    Place(lambda e: e.fired("PC032"), _message("PC032")),
    Place(_others, _first_other),
    Place(in_flight, _in_flight_words),
    Place(lambda e: -e.landed, _landed_words),
    Place(lambda e: -(e.window_us or 0), _window_words),
    Place(lambda e: -e.window_steps, _window_words),
)


_ORIGIN = {"declared": 0, "as declared": 0, "given": 1, "enumerated": 2}  # then neighbours
_LOSS_PLACES = (1, 2, 5, 6, 7, 8)  # PC107, the costs, PC101, PC105, PC032, the rest


def key(e: Evaluation) -> tuple[object, ...]:
    c = e.candidate
    # Ties: the plan's own warms first (the rules see no reason to move them), then
    # fewer anchors (a join that changes nothing is no better than one anchor), names.
    return (*(p.value(e) for p in PLACES), _ORIGIN.get(c.origin, 3), len(c.anchor), c.parts)


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
    # The candidates this row stands for too: the same findings, equivalent anchors.
    same: tuple[Evaluation, ...] = field(default=())
    measured: Measured | None = None  # a verdict of `plancc measure` on it
    rules_rank: int | None = None  # where the rules alone rank it (None: as ``rank``)

    @property
    def contradicted(self) -> bool:
        """Whether a measured verdict says the other way from the rules' class."""
        m = self.measured
        if m is None or m.decision == INCONCLUSIVE:
            return False
        rules = klass(self.evaluation)
        return (m.decision == SHIP) != (rules == GAIN)

    def stands_for(self, parts: Collection[tuple[Part, ...]]) -> bool:
        """Whether it is, or stands for, a candidate of one of ``parts``."""
        return any(e.candidate.parts in parts for e in (self.evaluation, *self.same))


def identity(e: Evaluation) -> tuple[object, ...]:
    """What two candidates must share to be one row: each warm's tensors and the stage it
    waits for, its findings and every place of the key."""
    c = e.candidate
    warms = tuple((gate, tensors) for gate, (_, tensors) in zip(e.gates, c.parts, strict=False))
    return (warms, len(c.parts), e.signature, *(p.value(e) for p in PLACES))


def rank(
    evaluations: Sequence[Evaluation],
    measured: tuple[tuple[Part, ...], Measured] | None = None,
) -> tuple[list[Ranked], list[Ranked]]:
    """The rows: the ranked candidates (with "no warm"), and the infeasible ones apart.
    ``measured``: a verdict on the warms of these parts, which overrides the class of
    the row standing for them: a measured gain first, a measured loss below "no warm"."""
    feasible = _rows(sorted((e for e in evaluations if klass(e) != INFEASIBLE), key=key))
    out: list[Ranked] = []
    for i, (e, same) in enumerate(feasible):
        above = feasible[i - 1][0] if i else None
        row = Ranked(i + 1, e, klass(e), _reason(e, above), same)
        if measured is not None and row.stands_for({measured[0]}):
            row = _measured(row, measured[1])
        out.append(row)
    if measured is not None:
        out = _reordered(out)
    apart = _rows(sorted((e for e in evaluations if klass(e) == INFEASIBLE), key=key))
    infeasible = [
        Ranked(
            None,
            e,
            INFEASIBLE,
            "; ".join(f"{f.message} ({f.code})" for f in e.findings if f.severity.value == "error"),
            same,
        )
        for e, same in apart
    ]
    return out, infeasible


# A measured gain above every unmeasured one; a measured loss with the losses.
_MEASURED_ORDER = {GAIN: -1, LOSS: _CLASS_ORDER[LOSS]}


def _reordered(rows: list[Ranked]) -> list[Ranked]:
    """The rows with a measured one moved by its verdict (each class in the rules' order),
    numbered again; an unmeasured row's reason is against the unmeasured row now above it
    (a measured one is ranked by its verdict, not by the places of the key)."""

    def order(r: Ranked) -> int:
        if r.measured is not None and r.klass in _MEASURED_ORDER:
            return _MEASURED_ORDER[r.klass]
        return _CLASS_ORDER[klass(r.evaluation)]

    out = []
    above: Evaluation | None = None
    for i, r in enumerate(sorted(rows, key=order)):  # stable
        row = replace(r, rank=i + 1)
        if r.measured is None:
            row = replace(row, reason=_reason(r.evaluation, above))
            above = r.evaluation
        out.append(row)
    return out


def _measured(row: Ranked, m: Measured) -> Ranked:
    """The row with a measured verdict: its class, and the reason says how it compares."""
    rules = f"the rules rank it {_ordinal(row.rank or 0)}"
    if m.decision == INCONCLUSIVE:
        said = f"measured inconclusive ({m.figure}) {m.on()}: {rules}; by the rules: {row.reason}"
        return replace(row, reason=said, measured=m, rules_rank=row.rank)
    new = GAIN if m.decision == SHIP else LOSS
    marked = replace(row, klass=new, measured=m, rules_rank=row.rank)
    if marked.contradicted:
        said = f"contradicted: measured {m.figure} {m.on()}, {rules} ({row.klass})"
    else:
        said = f"measured {m.figure} {m.on()}, as {rules} ({row.klass})"
    return replace(marked, reason=f"{said}; by the rules: {row.reason}")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _rows(ordered: list[Evaluation]) -> list[tuple[Evaluation, tuple[Evaluation, ...]]]:
    """Each first of the candidates sharing an ``identity``, with the others."""
    rows: dict[tuple[object, ...], list[Evaluation]] = {}
    for e in ordered:
        rows.setdefault(identity(e), []).append(e)
    return [(first, tuple(rest)) for first, *rest in rows.values()]


def _reason(e: Evaluation, above: Evaluation | None) -> str:
    if above is None:
        words = first_words(e)
    else:
        differ = [i for i, place in enumerate(PLACES) if place.value(e) != place.value(above)]
        i = differ[0] if differ else len(PLACES)
        if differ:
            words = f"below {label(above)}: {PLACES[i].words(e, above)}"
        else:
            words = f"ties with {label(above)}: the rules find nothing to tell them apart"
        if klass(e) in (LOSS, CONTENDED) and i not in (0, *_LOSS_PLACES):
            words += f"; a loss: {loss_fault(e)}"  # the place that decided is not why it loses
    spans = spans_words(e.findings)
    if spans and spans not in words:  # what it spans, whatever decided its place
        words += f"; {spans} (PC105)"
    return words + _allowed_words(e)


def spans_words(found: Sequence[Judged]) -> str:
    """The collectives and SDMA stages a candidate's warms are alive across, from PC105's
    findings among ``found``: "spans the collective 'o_group_a2a' (vector-core MTE)";
    empty when there are none."""
    stages: dict[str, str | None] = {}  # name -> its collective's engine; a split's, once
    for f in found:
        if f.code == "PC105":
            engines = f.data.get("collectives") or {}
            for name in f.data.get("stages") or ():
                stages.setdefault(name, engines.get(name))
    if not stages:
        return ""
    sdma = [n for n, c in stages.items() if c is None]
    parts = [f"the SDMA stage{'s' if len(sdma) > 1 else ''} {_quoted(sdma)}"] if sdma else []
    collectives = [(n, c) for n, c in stages.items() if c is not None]
    if collectives:
        named = ", ".join(f"'{n}' ({ENGINES[c].label})" for n, c in collectives)
        parts.append(f"the collective{'s' if len(collectives) > 1 else ''} {named}")
    return f"spans {' and '.join(parts)}"


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def first_words(e: Evaluation) -> str:
    """The first row's reason: what it lands, what streams beside it, and any warning
    the check still gives it (a gain may have PC102's or PC103's)."""
    if klass(e) != GAIN:
        return "first: nothing beats no warm"
    if negligible(e.pushed, e.l2 or 0):
        said = [f"first: lands {fmt_size(e.landed)} with nothing streaming beside it"]
    else:
        said = [f"first: lands {fmt_size(e.landed)}", streams_words(e)]
    said += [f"still: {f.message} ({f.code})" for f in e.findings]
    return "; ".join(said)


def _allowed_words(e: Evaluation) -> str:
    """The findings the warm's `allow` (or `lint.ignore`) silences: they do not count."""
    seen: dict[str, str] = {}
    for f in e.allowed:
        seen.setdefault(f.code, f.allowed or "")
    spans = spans_words(e.allowed)  # a collective it spans is named, allowed or not
    return "".join(
        f"; {spans}: {code} allowed: {why}"
        if code == "PC105" and spans
        else f"; {code} allowed: {why}"
        for code, why in seen.items()
    )
