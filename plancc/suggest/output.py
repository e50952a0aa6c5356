"""`plancc suggest`'s output: a table per layer kind and the measurement recipe (text),
or one JSON object (docs/suggest.md, "Output")."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from plancc.suggest import MAX_ENUMERATED, LayerSuggestions, Suggestions, suggest
from plancc.suggest.rank import Ranked, label
from plancc.tables.outputs import manifest_file
from plancc.text import fmt_share, fmt_size
from plancc.usage import UsageError

HYPOTHESES = (
    "Suggestions are hypotheses to measure: ranked by the rules' findings, not by "
    "measured times (docs/suggest.md)."
)


def _row(r: Ranked, l2: int | None) -> list[str]:
    e = r.evaluation
    c = e.candidate
    share = "-" if c.none or not l2 else fmt_share(Fraction(e.bytes, l2))
    return [
        "-" if r.rank is None else str(r.rank),
        r.klass,
        " | ".join("+".join(a) for a, _ in c.parts) or "-",
        " | ".join(", ".join(t) for _, t in c.parts) or "(no warm)",
        "-" if c.none else fmt_size(e.bytes),
        share,
        r.reason,
    ]


CAPPED = (
    f"enumeration stopped at {MAX_ENUMERATED:,} candidates (the earliest anchors first): "
    "name others with --candidate"
)
HEADER = ["rank", "class", "anchor", "tensors", "bytes", "× L2", "reason"]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    out = []
    for r in rows:
        cells = [
            cell.rjust(w) if i in (0, 4, 5) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=False))
        ]
        out.append("  ".join([*cells, r[-1]]).rstrip())
    return out


def text(s: Suggestions, top: int) -> str:
    assert s.plan is not None
    plan = s.plan
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    lines: list[str] = []
    for layer in s.layers:
        lines.append(f"{layer.kind} (durations: {_durations(layer)})")
        if layer.capped:
            lines.append(CAPPED)
        shown = layer.ranked[:top]
        lines += _table([HEADER, *(_row(r, l2) for r in shown)])
        if len(layer.ranked) > top:
            lines.append(f"… {len(layer.ranked) - top} more (--top N shows more)")
        if layer.infeasible:
            lines.append("infeasible (never ranked, never written):")
            lines += [f"  {label(r.evaluation)} — {r.reason}" for r in layer.infeasible[:top]]
            if len(layer.infeasible) > top:
                lines.append(f"  … {len(layer.infeasible) - top} more")
        lines.append(_recipe(s, layer))
        lines.append("")
    if s.notes:
        lines += [*(f"trace: {note}" for note in s.notes), ""]
    lines.append(HYPOTHESES)
    return "\n".join(lines) + "\n"


def markdown(s: Suggestions, top: int) -> str:
    """The tables to paste into a pull request (a cell's ``|`` escaped)."""
    assert s.plan is not None
    l2 = s.plan.platform.l2_bytes if s.plan.platform is not None else None
    lines: list[str] = []
    for layer in s.layers:
        lines += [f"### {layer.kind} (durations: {_durations(layer)})", ""]
        rows = [HEADER, ["---"] * len(HEADER), *(_row(r, l2) for r in layer.ranked[:top])]
        rows += [_row(r, l2) for r in layer.infeasible[:top]]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
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
    slots = f" around '{e.first}' (its first consumer) and the stage before it" if e.first else ""
    return (
        f"to measure the top gain ({label(e)}): write it as the {layer.kind} warm (--fix), "
        "`plancc build`, run the benchmark with and without it at PYPTO_BENCH_WARMUP=500 "
        f"with timing slots{slots}, then `plancc measure "
        f"--manifest build/{manifest_file(s.plan.model)}` with both logs and the slots"
    )


def as_json(s: Suggestions, top: int) -> str:
    layers = [_layer(layer, top) for layer in s.layers]
    return json.dumps({"layers": layers, "trace_notes": list(s.notes)}, indent=2) + "\n"


def _layer(layer: LayerSuggestions, top: int) -> dict[str, object]:
    return {
        "layer": layer.kind,
        "durations": layer.durations,
        "capped": layer.capped,
        "candidates": [_candidate(r) for r in layer.ranked[:top]],
        "infeasible": [_candidate(r) for r in layer.infeasible],
    }


def _candidate(r: Ranked) -> dict[str, object]:
    e = r.evaluation
    return {
        "rank": r.rank,
        "anchor": list(e.candidate.anchor),
        "tensors": list(e.candidate.tensors),
        "class": r.klass,
        "bytes": e.bytes,
        "reason": r.reason,
        "codes": list(e.codes),
    }


@dataclass(frozen=True)
class Run:
    """The command, as `plancc suggest` is given it."""

    plan: str
    kinds: list[str]
    given: list[str]
    trace: str | None
    top: int
    fmt: str
    fix: bool
    overrides: Mapping[str, int]  # `--set`: the params' values fixed (``api.parse_sets``)
    source_root: str | None = None  # as `validate` takes it (`--source-root`, `--no-source`)

    def __call__(self, out: Callable[[str], None], err: Callable[[str], None]) -> int:
        """Print its output (``out``) and any error lines (``err``); the exit code."""
        if self.top < 1:
            raise UsageError(f"--top {self.top}: must be at least 1")
        found = suggest(
            self.plan,
            self.kinds,
            self.given,
            trace=self.trace,
            overrides=self.overrides,
            source_root=self.source_root,
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
