"""`plancc suggest`'s output: a table per layer kind and the measurement recipe (text and
markdown), or one JSON object (docs/suggest.md, "Output").

One row per distinct warm (``rank``); a `--candidate` the user asked about is always
shown, marked, whatever `--top`; JSON gives every row unless `--top` is given. The text
fits 120 columns: a long anchor or tensor list is cut with a count, the reason wraps
under its row.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from plancc.facts.crossing import NEXT
from plancc.suggest import LayerSuggestions, Suggestions, suggest
from plancc.suggest.candidates import MAX_GENERATED, Part, guard_text
from plancc.suggest.measured import INCONCLUSIVE
from plancc.suggest.rank import Ranked, label
from plancc.tables.outputs import manifest_file
from plancc.text import fmt_share, fmt_size
from plancc.usage import UsageError

HYPOTHESES = (
    "Suggestions are hypotheses to measure: ranked by the rules' findings, not by "
    "measured times (docs/suggest.md)."
)
WIDTH = 120  # the text's columns
TOP = 10  # rows shown per layer kind in text and markdown without --top
CAPPED = (
    f"the candidates generated stopped at their bound ({MAX_GENERATED:,}, the earliest "
    "anchors first): name others with --candidate"
)
ASKED = "*"  # marks a row that is, or stands for, a --candidate
HEADER = ["rank", "class", "anchor", "tensors", "bytes", "× L2", "codes"]
# The widest an anchor, tensors or codes cell may be in text: with the rest, 120 columns.
_CELL = {2: 24, 3: 34, 6: 13}


def _cells(r: Ranked, l2: int | None, asked: bool, fit: bool) -> list[str]:
    e = r.evaluation
    c = e.candidate
    share = "-" if c.none or not l2 else fmt_share(Fraction(e.bytes, l2))
    rank = "-" if r.rank is None else str(r.rank)
    anchors = ["+".join(p.anchor) for p in c.parts]
    measured = r.measured is not None and r.measured.decision != INCONCLUSIVE
    return [
        rank + (ASKED if asked else ""),
        f"measured {r.klass}" if measured else r.klass,
        _listed(anchors, " | ", _CELL[2] if fit else None) or "-",
        _tensors(c.parts, _CELL[3] if fit else None) or "(no warm)",
        "-" if c.none else fmt_size(e.bytes),
        share,
        _listed(list(e.codes), ",", _CELL[6] if fit else None) or "-",
    ]


def _tensors(parts: tuple[Part, ...], width: int | None) -> str:
    """One warm's tensors (``next: `` before a cross-layer warm's, a prefix's rows, `` if
    CTX <= 2272`` after a guarded one's), or a split's warms each as one item."""
    if len(parts) != 1:
        return _listed([", ".join(p.items) for p in parts], " | ", width)
    (p,) = parts
    head = "next: " if p.next_layer else ""
    tail = p.guard_words
    room = None if width is None else max(width - len(head) - len(tail), 8)
    return head + _listed(p.items, ", ", room) + tail


def _listed(items: list[str], sep: str, width: int | None) -> str:
    """The items joined, or as many as fit in ``width`` and how many are left out."""
    text = sep.join(items)
    if width is None or len(text) <= width:
        return text
    for k in range(len(items) - 1, 0, -1):
        cut = sep.join(items[:k]) + f" +{len(items) - k}"
        if len(cut) <= width:
            return cut
    return items[0][: max(width - 1, 1)] + "…"


def _shown(layer: LayerSuggestions, top: int | None) -> tuple[list[Ranked], int]:
    """The rows to show: the first ``top``, every row asked for and every row measured;
    how many are left out."""
    if top is None:
        return list(layer.ranked), 0
    rows = [
        r for i, r in enumerate(layer.ranked) if i < top or layer.asked(r) or r.measured is not None
    ]
    return rows, len(layer.ranked) - len(rows)


def _infeasible(layer: LayerSuggestions, limit: int) -> tuple[list[Ranked], int]:
    """The infeasible candidates to show: the first ``limit`` and every one asked for; how
    many are left out."""
    rows = [r for i, r in enumerate(layer.infeasible) if i < limit or layer.asked(r)]
    return rows, len(layer.infeasible) - len(rows)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(w) if i in (0, 4, 5) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in rows
    ]


def _wrapped(text: str, indent: int) -> list[str]:
    pad = " " * indent
    return textwrap.wrap(
        text, WIDTH, initial_indent=pad, subsequent_indent=pad, break_on_hyphens=False
    ) or [pad.rstrip()]


def _same(r: Ranked) -> str:
    """The other anchors a row stands for, in words."""
    names = ["+".join(e.candidate.anchor) for e in r.same]
    if not names:
        return ""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f" (the same warm at {shown})"


def text(s: Suggestions, top: int | None) -> str:
    assert s.plan is not None
    plan = s.plan
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    limit = TOP if top is None else top
    lines: list[str] = []
    for layer in s.layers:
        lines += _text_layer(layer, l2, limit)
        lines += _wrapped(_recipe(s, layer), 0)
        lines.append("")
    if s.notes:
        for note in s.notes:
            lines += _wrapped(f"trace: {note}", 0)
        lines.append("")
    lines += _wrapped(HYPOTHESES, 0)
    return "\n".join(lines) + "\n"


def _text_layer(layer: LayerSuggestions, l2: int | None, limit: int) -> list[str]:
    lines = [f"{layer.kind} (durations: {_durations(layer)})"]
    if layer.capped:
        lines.append(CAPPED)
    rows, left = _shown(layer, limit)
    table = _table([HEADER, *(_cells(r, l2, layer.asked(r), True) for r in rows)])
    lines.append(table[0])
    for r, line in zip(rows, table[1:], strict=True):
        lines.append(line)
        lines += _wrapped(r.reason + _same(r), 6)
    if left:
        lines.append(f"… {left} more (--top N shows more)")
    infeasible, hidden = _infeasible(layer, limit)
    if infeasible:
        lines.append("infeasible (never ranked, never written):")
        for r in infeasible:
            row = _wrapped(f"{label(r.evaluation)} — {r.reason}", 2)
            lines += [ASKED + row[0][1:], *row[1:]] if layer.asked(r) else row
        if hidden:
            lines.append(f"  … {hidden} more")
    if any(layer.asked(r) for r in [*rows, *infeasible]):
        lines.append(f"{ASKED} a --candidate you asked about")
    for note in layer.notes:
        lines += _wrapped(note, 0)
    return lines


def markdown(s: Suggestions, top: int | None) -> str:
    """The tables to paste into a pull request (a cell's ``|`` escaped)."""
    assert s.plan is not None
    l2 = s.plan.platform.l2_bytes if s.plan.platform is not None else None
    limit = TOP if top is None else top
    lines: list[str] = []
    header = [*HEADER, "reason"]
    for layer in s.layers:
        lines += [f"### {layer.kind} (durations: {_durations(layer)})", ""]
        shown, left = _shown(layer, limit)
        rows = [header, ["---"] * len(header)]
        rows += [[*_cells(r, l2, layer.asked(r), False), r.reason + _same(r)] for r in shown]
        infeasible, hidden = _infeasible(layer, limit)
        rows += [[*_cells(r, l2, layer.asked(r), False), r.reason] for r in infeasible]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        if left or hidden:
            more = f"… {left} more (--top N shows more)" if left else ""
            more += f"{'; ' if left else '… '}{hidden} more infeasible" if hidden else ""
            lines += ["", more]
        if any(layer.asked(r) for r in [*shown, *infeasible]):
            lines += ["", f"{ASKED} a --candidate you asked about"]
        if layer.notes:
            lines += ["", *layer.notes]
        lines += ["", _recipe(s, layer), ""]
    return "\n".join([*lines, HYPOTHESES]) + "\n"


def _durations(layer: LayerSuggestions) -> str:
    return {
        "steps": "steps: no stage has a duration",
        "plan": "the plan's duration_us",
        "trace": "the swimlane trace",
    }[layer.durations]


def _recipe(s: Suggestions, layer: LayerSuggestions) -> str:
    top = layer.top_gain
    if top is None:
        return "nothing beats no warm here: no warm to measure"
    assert s.plan is not None
    e = top.evaluation
    first = e.first and f"'{e.first}'"
    if e.first is not None and e.first.startswith(NEXT):  # a cross-layer warm's consumer
        first = f"'{e.first.removeprefix(NEXT)}' of the next layer"
    slots = f" around {first} (its first consumer) and the stage before it" if first else ""
    return (
        f"to measure the top gain ({label(e)}): write it as the {layer.kind} warm (--fix), "
        "`plancc build`, run the benchmark with and without it at PYPTO_BENCH_WARMUP=500 "
        f"with timing slots{slots}, then `plancc measure "
        f"--manifest build/{manifest_file(s.plan.model)}` with both logs and the slots"
    )


def as_json(s: Suggestions, top: int | None) -> str:
    layers = [_layer(layer, top) for layer in s.layers]
    return json.dumps({"layers": layers, "trace_notes": list(s.notes)}, indent=2) + "\n"


def _layer(layer: LayerSuggestions, top: int | None) -> dict[str, object]:
    rows, _ = _shown(layer, top)
    return {
        "layer": layer.kind,
        "durations": layer.durations,
        "capped": layer.capped,
        "candidates": [_candidate(r, layer.asked(r)) for r in rows],
        "infeasible": [_candidate(r, layer.asked(r)) for r in layer.infeasible],
        "notes": list(layer.notes),
    }


def _candidate(r: Ranked, asked: bool) -> dict[str, object]:
    e = r.evaluation
    return {
        "rank": r.rank,
        "anchor": list(e.candidate.anchor),
        "tensors": list(e.candidate.tensors),
        # Its forms: per tensor a prefix's [lo, hi) (null: whole), a cross-layer warm, guards.
        "rows": [list(r) if r else None for p in e.candidate.parts for r in _rows(p)],
        "next_layer": any(p.next_layer for p in e.candidate.parts),
        "guard": [guard_text(g) for p in e.candidate.parts for g in p.guards],
        "class": r.klass,
        "bytes": e.bytes,
        "reason": r.reason,
        "codes": list(e.codes),
        "allowed": list(e.allowed_codes),
        "asked": asked,
        "same": [list(o.candidate.anchor) for o in r.same],
        "measured": None if r.measured is None else _measured(r),
    }


def _rows(p: Part) -> list[tuple[int, int] | None]:
    return [p.range_of(j) for j in range(len(p.tensors))]


def _measured(r: Ranked) -> dict[str, object]:
    m = r.measured
    assert m is not None
    return {
        "decision": m.decision,
        "p50_pct": m.pct,
        "plan_sha256": m.plan_sha256,
        "this_plan": m.this_plan,
        "rules_rank": r.rules_rank,
        "contradicted": r.contradicted,
    }


@dataclass(frozen=True)
class Run:
    """The command, as `plancc suggest` is given it."""

    plan: str
    kinds: list[str]
    given: list[str]
    trace: str | None
    top: int | None  # None: TOP rows in text and markdown, every row in JSON
    fmt: str
    fix: bool
    overrides: Mapping[str, int]  # `--set`: the params' values fixed (``api.parse_sets``)
    source_root: str | None = None  # as `validate` takes it (`--source-root`, `--no-source`)
    measured: str | None = None  # `--measured`: a result of `plancc measure --format json`

    def __call__(self, out: Callable[[str], None], err: Callable[[str], None]) -> int:
        """Print its output (``out``) and any error lines (``err``); the exit code."""
        if self.top is not None and self.top < 1:
            raise UsageError(f"--top {self.top}: must be at least 1")
        found = suggest(
            self.plan,
            self.kinds,
            self.given,
            trace=self.trace,
            overrides=self.overrides,
            source_root=self.source_root,
            measured=self.measured,
        )
        if found.errors:
            for d in found.errors:
                err(f"{d.file}:{d.line}:{d.col}: error {d.code}: {d.message}")
            err(f"{found.file}: has errors: nothing suggested")
            return 1
        write = {"json": as_json, "markdown": markdown}.get(self.fmt, text)
        out(write(found, self.top))
        if self.fix:
            from plancc.suggest.fix import fix  # noqa: PLC0415 (only with --fix)

            said = fix(found)
            for line in said:  # JSON stays the one value on stdout
                err(line) if self.fmt == "json" else out(line + "\n")
        return 0
