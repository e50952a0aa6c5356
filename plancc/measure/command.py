"""`plancc measure`: read every input, analyse, return the result and its exit code."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancc import write
from plancc.measure import (
    compare,
    logs,
    markdown,
    report,
    scopes,
    slots,
    text,
    trace,
    verdict,
    wall,
)
from plancc.measure.errors import InputError
from plancc.measure.files import expanded
from plancc.measure.manifest import Manifest
from plancc.measure.manifest import load as load_manifest

_WINDOW = re.compile(r"([A-Za-z0-9_]+)=(\d{1,2}):(\d{1,2})")
_SLOTS = re.compile(r"(baseline|warm)=(.+)", re.S)


@dataclass(frozen=True)
class Options:
    manifest: str
    baseline: str | None  # no logs: a report of the traces (and slot files), no verdict
    warm: str | None
    traces: list[str] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)
    standalone: list[str] = field(default_factory=list)  # NAME=µs
    windows: list[str] = field(default_factory=list)  # NAME=A:B


def measure(o: Options) -> dict[str, Any]:
    if (o.baseline is None) != (o.warm is None):
        given, lacking = ("--baseline", "--warm") if o.warm is None else ("--warm", "--baseline")
        raise InputError(given, f"a verdict compares two runs: give {lacking} too")
    if o.baseline is None and not o.traces:
        raise InputError("--manifest", "nothing to measure: give --baseline and --warm, or --trace")
    m = load_manifest(o.manifest)
    if o.baseline is not None and o.warm is not None:
        wall_time = _wall(m, o.baseline, o.warm)  # the logs first: quick to read, and to refuse
    else:
        wall_time = dict.fromkeys(("baseline", "warm", "delta", "verdict", "warmup"))
    found = _scopes(m, o.traces)
    scope_rows = [report.scope(s, m) for s in found.scopes]
    gbps = {row["warm"]: row["gbps"] for row in scope_rows}
    return {
        "format": report.FORMAT,
        "manifest": {
            "file": m.file,
            "model": m.model,
            "platform": m.platform,
            "plan": m.plan,
            "plan_sha256": m.plan_sha256,
            "single_stream_gbps": None
            if m.single_stream_bytes_per_s is None
            else m.single_stream_bytes_per_s / 1e9,
            # What was measured, as `plancc suggest --measured` matches it to a candidate.
            "warms": [
                {
                    "name": w.name,
                    "layer": w.layer,
                    "after": list(w.after),
                    "tensors": list(w.tensor_names),
                    "rows": [None if r is None else list(r) for r in w.rows],
                    "next_layer": w.next_layer,
                    "guards": [{"param": p, "op": op, "bound": b} for p, op, b in w.guards],
                }
                for w in m.warms
            ],
        },
        **wall_time,
        "traces": expanded(o.traces),
        "scopes": scope_rows,
        "unattributed": [report.unattributed(u, m) for u in found.unattributed],
        "splits": [x for x in (report.split(s, m, gbps) for s in found.splits) if x is not None],
        "stage_windows": _windows(o, _pids(wall_time["baseline"]), _pids(wall_time["warm"])),
    }


def _wall(m: Manifest, baseline: str, warm: str) -> dict[str, Any]:
    """The two benchmark logs: their figures, whether they compare, the verdict."""
    b_log, w_log = logs.read(baseline), logs.read(warm)
    b_own = compare.check(b_log)
    if compare.same_file(baseline, warm):
        w_own, findings = b_own, [compare.one_run(b_log), *b_own]
    else:
        w_own = compare.check(w_log)
        findings = [*b_own, *w_own, *compare.across(b_log, w_log)]
    base = wall.variant(b_log, not b_own)
    warm_v = wall.variant(w_log, not w_own)
    fastest = wall.deltas(base.quoted, warm_v.quoted)
    v = verdict.decide(base, warm_v, fastest, findings)
    return {
        "baseline": report.variant(base),
        "warm": report.variant(warm_v),
        "delta": {
            "fastest_rank": report.delta_set(fastest),
            "headline": report.delta_set(wall.deltas(base.headline, warm_v.headline)),
        },
        "verdict": report.verdict(v, findings),
        "warmup": report.warmup(m, base, warm_v),
    }


def exit_code(result: dict[str, Any]) -> int:
    """0 ship (or a report without a verdict: no benchmark logs), 1 no-ship or inconclusive."""
    v = result["verdict"]
    return 0 if v is None or v["decision"] == verdict.SHIP else 1


def _scopes(m: Manifest, paths: list[str]) -> scopes.Analysis:
    files = expanded(paths)
    if not files:
        return scopes.Analysis([], [], [])
    kernels = {w.name_hint for w in m.warms} | {
        k for w in m.warms for k in w.consumer_kernels if k is not None
    }
    pattern = trace.name_pattern(kernels)
    traces = [trace.read(f, pattern) for f in files]
    hints = {w.name_hint for w in m.warms}
    if not any(e.kernel in hints for t in traces for e in t.worker_events()):
        guards = sorted({g for w in m.warms for g in w.guard_texts})
        skipped = (
            f", or of a run whose guards ({', '.join(guards)}) skipped every warm"
            if all(w.guarded for w in m.warms)
            else ""
        )
        raise InputError(
            files[0] if len(files) == 1 else f"{len(files)} traces",
            "no scope named by the manifest's name_hints ("
            + ", ".join(sorted(hints))
            + f") in the Worker View: a trace of another build, or of a run without the warm"
            f"{skipped} (manifest {m.file})",
        )
    return scopes.analyse(m, traces)


def _pids(variant: dict[str, Any] | None) -> set[str]:
    return set() if variant is None else {r["rank"] for r in variant["ranks"]}


def _windows(o: Options, base: set[str], warm: set[str]) -> list[dict[str, Any]]:
    named = _named_windows(o.windows)
    pairs = set(named.values()) if named else None
    runs = {"baseline": slots.SlotRun(), "warm": slots.SlotRun()}
    if o.baseline is not None and o.warm is not None:  # stderr captured with stdout (2>&1)
        slots.read(o.baseline, runs["baseline"], pairs)
        slots.read(o.warm, runs["warm"], pairs)
    pids = {"baseline": base, "warm": warm}
    for spec in o.slots:
        m = _SLOTS.fullmatch(spec)
        if m and not os.path.exists(spec):
            if slots.read(m[2], runs[m[1]], pairs) == 0:
                raise InputError(m[2], "no [STRACE] task_slot lines")
            continue
        run = slots.SlotRun()
        if slots.read(spec, run, pairs) == 0:
            raise InputError(spec, "no [STRACE] task_slot lines")
        which = [name for name, ranks in pids.items() if run.pids & ranks]
        if len(which) != 1:
            raise InputError(
                spec,
                "its [STRACE] pids ("
                + ", ".join(sorted(run.pids))
                + ") match "
                + ("no rank" if not which else "ranks")
                + " of "
                + ("either benchmark log" if not which else "both benchmark logs")
                + ": name its run, --slots baseline=FILE or --slots warm=FILE",
            )
        runs[which[0]].merge(run)
    if not named:
        seen = sorted(set(runs["baseline"].found) | set(runs["warm"].found))
        named = {f"{a}:{b}": (a, b) for a, b in seen}
    standalone = _standalone(o.standalone, named)
    return [
        report.window(
            name,
            (a, b),
            runs["baseline"].windows(a, b),
            runs["warm"].windows(a, b),
            standalone=standalone.get(name),
            note=_absent((a, b), runs) if o.windows else None,
        )
        for name, (a, b) in named.items()
    ]


def _absent(pair: tuple[int, int], runs: dict[str, slots.SlotRun]) -> str | None:
    """A note for a named window whose slot never appears: in any slot line, or in those
    of a run that has some."""
    notes = []
    for slot in pair:
        lacking = [name for name, run in runs.items() if slot not in run.seen]
        if len(lacking) == len(runs):
            notes.append(f"slot {slot} appears in no slot line")
        else:
            notes += [
                f"slot {slot} appears in no slot line of the {n}" for n in lacking if runs[n].seen
            ]
    return "; ".join(notes) or None


def _named_windows(specs: list[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for spec in specs:
        m = _WINDOW.fullmatch(spec)
        if m is None or int(m[2]) > slots.MAX_SLOT or int(m[3]) > slots.MAX_SLOT:
            raise InputError("--window", f"'{spec}' is not NAME=A:B with slots 0-15")
        if int(m[2]) >= int(m[3]):
            raise InputError(
                "--window",
                f"'{spec}': a window runs from an earlier slot to a later one (A < B)",
            )
        out[m[1]] = (int(m[2]), int(m[3]))
    return out


def _standalone(specs: list[str], windows: dict[str, tuple[int, int]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        try:
            us = float(value)
        except ValueError:
            us = -1.0
        if not (us >= 0 and us != float("inf")):
            raise InputError("--standalone", f"'{spec}' is not NAME=µs (e.g. csa=347.0)")
        if name not in windows:
            known = ", ".join(windows) or "none: no slot lines"
            raise InputError(
                "--standalone",
                f"no stage window named '{name}' (windows: {known}); "
                f"name one with --window {name}=A:B",
            )
        out[name] = us
    return out


def render(result: dict[str, Any], fmt: str) -> str:
    """The result in ``fmt``: text, json or markdown."""
    if fmt == "json":  # RFC 8259: no figure is ever non-finite, and none may slip through
        return json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt == "markdown":
        return markdown.render(result)
    return text.render(result)


def run(o: Options, fmt: str, out: str | None) -> tuple[str, int]:
    """What to print (nothing when ``out`` is written) and the exit code: 0 ship, 1 no-ship or
    inconclusive; an unreadable input raises InputError (exit 2)."""
    result = measure(o)
    rendered = render(result, fmt)
    if out is None:
        return rendered, exit_code(result)
    try:
        write.replace(Path(out), rendered.encode("utf-8"))  # as every file plancc writes
    except write.WriteError as exc:
        raise InputError(out, str(exc).removeprefix(f"{out}: ")) from None
    return "", exit_code(result)
