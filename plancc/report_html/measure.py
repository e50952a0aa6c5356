"""Read the JSON of `plancc measure` for the report, tolerantly.

The report needs a small subset (docs/report.md, "--measure"): a verdict,
deltas, and per warm its achieved bandwidth. It reads them from the
``plancc-measure/1`` format (``verdict.decision``/``reason``, ``delta``
groups of ``{us, pct}``, ``scopes`` with ``gbps`` and ``landed``, the layers
in which the warm landed before its consumer's kernel) and from
simpler forms (``deltas``, ``warms``), ignoring every other key, so the report
keeps working while the measure format grows; what it cannot read it says, on
the page, instead of failing. Only a file that cannot be read or is not a
JSON object is a usage error (exit 2).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from plancc.api import PlanResult, UsageError
from plancc.diagnostics import printable
from plancc.measure.files import read_result
from plancc.text import clip


@dataclass(frozen=True)
class Delta:
    name: str
    value: float
    unit: str
    pct: float | None = None  # the same delta in percent, when given


@dataclass(frozen=True)
class Achieved:
    warm: str
    gbps: float  # achieved GB/s (10**9 bytes per second)
    landed: tuple[str, int, int] | None = None  # consumer kernel, layers landed before it, of


@dataclass(frozen=True)
class Measure:
    source: str
    verdict: str | None
    deltas: tuple[Delta, ...]
    achieved: dict[str, Achieved]
    notes: tuple[str, ...]  # what could not be read, said on the page
    built_from: tuple[str, str] | None = None  # the manifest's model and plan sha256


def read(path: str) -> Measure:
    doc = read_result(path, path)
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: not a JSON object (a `plancc measure` result is one)")
    return parse(path, doc)


def parse(source: str, doc: dict[str, Any]) -> Measure:
    notes: list[str] = []
    verdict = _verdict(doc.get("verdict"), notes)
    if "deltas" in doc:
        deltas = _deltas(doc.get("deltas"), notes)
    else:
        deltas = _delta_groups(doc.get("delta"), notes)
    achieved = _warms(doc.get("warms"), notes) | _warms(doc.get("scopes"), notes)
    return Measure(source, verdict, deltas, achieved, tuple(notes), _built_from(doc))


def _built_from(doc: dict[str, Any]) -> tuple[str, str] | None:
    m = doc.get("manifest")
    if not isinstance(m, dict):
        return None
    model, sha = _text(m.get("model")), m.get("plan_sha256")
    if model is None or not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        return None
    return model, sha


_SHA256 = re.compile(r"[0-9a-f]{64}")


def for_plan(m: Measure, result: PlanResult) -> Measure:
    """``m`` as the page of this plan may show it: refused when it measured another
    model's build, marked when another build of this plan, noted when it names none.
    A plan too broken to name its model is not compared."""
    plan = result.plan if not result.model_broken else None
    model, sha256 = (plan.model, plan.sha256) if plan is not None else (None, None)
    if m.built_from is None:
        note = (
            "the measurement does not name the build it measured (manifest.model and "
            "manifest.plan_sha256 of `plancc measure`): make sure it is this plan's"
        )
        return replace(m, notes=(*m.notes, note))
    built_model, built_sha = m.built_from
    if model is not None and built_model != model:
        raise UsageError(
            f"{m.source}: measures the build of model {printable(clip(built_model))}, "
            f"not this plan's ({model}): give the measurement of this plan's build"
        )
    if sha256 is not None and built_sha != sha256:
        mark = (
            f"measured on another build of this plan (plan sha256 {built_sha[:12]}…, this "
            f"plan {sha256[:12]}…): its figures may not hold for the plan drawn here"
        )
        return replace(m, verdict=f"{mark}. Its verdict: {m.verdict or 'none given'}")
    return m


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def _text(x: Any) -> str | None:
    return x if isinstance(x, str) and x.strip() else None


def _verdict(x: Any, notes: list[str]) -> str | None:
    if x is None:
        notes.append("no verdict in the measurement")
        return None
    if isinstance(
        x, dict
    ):  # {"decision": "ship", "reason": "..."}, {"verdict": ...}, {"text": ...}
        keys = ("decision", "verdict", "text", "summary", "reason", "why")
        found = [p for p in (_text(x.get(k)) for k in keys) if p]
        if found:
            text = ": ".join(dict.fromkeys(found))
            tail = _text(x.get("heavy_tail"))
            return text + (f"; heavy tail: {tail}" if tail else "")
    elif _text(x):
        return str(x)
    notes.append("the verdict is neither text nor an object with text: not shown")
    return None


def _deltas(x: Any, notes: list[str]) -> tuple[Delta, ...]:
    """``[{name, value, unit}]`` or ``{name: number}`` or ``{name: {value, unit}}``."""
    if x is None:
        return ()
    items: list[tuple[Any, Any]]
    if isinstance(x, dict):
        items = list(x.items())
    elif isinstance(x, list):
        items = [
            (_first(d, ("name", "label", "metric")), d) if isinstance(d, dict) else (None, d)
            for d in x
        ]
    else:
        notes.append("deltas is neither a list nor an object: not shown")
        return ()
    out = []
    for name, given in items:
        unit, value = "µs", given
        if isinstance(given, dict):
            unit = _text(given.get("unit")) or unit
            value = _first(given, ("value", "delta", "delta_us", "us"))
        number = _number(value)
        if _text(name) is None or number is None:
            notes.append(f"a delta without a name or a number was skipped: {_short(given)}")
            continue
        out.append(Delta(str(name), number, unit))
    return tuple(out)


def _delta_groups(x: Any, notes: list[str]) -> tuple[Delta, ...]:
    """``{group: {statistic: {us, pct} | null}}``, as `plancc measure` writes ``delta``."""
    if x is None:
        return ()
    if not isinstance(x, dict):
        notes.append("delta is not an object: not shown")
        return ()
    out = []
    for group, stats in x.items():
        if not isinstance(stats, dict):
            notes.append(f"delta {_short(group)} is not an object: skipped")
            continue
        for stat, d in stats.items():
            if d is None:
                continue  # a figure the inputs do not give
            us = _number(d.get("us")) if isinstance(d, dict) else None
            if us is None:
                notes.append(f"delta {group} {stat} has no number: {_short(d)}")
                continue
            pct = _number(d.get("pct")) if isinstance(d, dict) else None
            out.append(Delta(f"{group.replace('_', ' ')} {stat}", us, "µs", pct))
    return tuple(out)


def _warms(x: Any, notes: list[str]) -> dict[str, Achieved]:
    """``[{name, achieved_gbps}]`` or ``{name: {...}}``; the bandwidth as ``achieved_gbps``,
    ``gbps``, ``achieved_bytes_per_s``, or ``bytes`` over ``duration_us``."""
    if x is None:
        return {}
    items: list[tuple[Any, Any]]
    if isinstance(x, dict):
        items = list(x.items())
    elif isinstance(x, list):
        items = [(_first(w, ("name", "warm")) if isinstance(w, dict) else None, w) for w in x]
    else:
        notes.append("warms is neither a list nor an object: no achieved bandwidth shown")
        return {}
    out: dict[str, Achieved] = {}
    for name, w in items:
        gbps = _gbps(w) if isinstance(w, dict) else None
        if _text(name) is not None and gbps is None:
            notes.append(f"no achieved bandwidth for warm {_short(name)} in the measurement")
            continue
        if _text(name) is None or gbps is None:
            notes.append(f"a warm without a name or an achieved bandwidth was skipped: {_short(w)}")
            continue
        out[str(name)] = Achieved(str(name), gbps, _landed(w))
    return out


def _landed(w: Any) -> tuple[str, int, int] | None:
    """``landed: {consumer, before, of}``: in how many of the layers measured the warm
    ended before its consumer's kernel started."""
    d = w.get("landed") if isinstance(w, dict) else None
    if not isinstance(d, dict):
        return None
    consumer, before, of = _text(d.get("consumer")), d.get("before"), d.get("of")
    if consumer is None or not isinstance(before, int) or not isinstance(of, int) or of <= 0:
        return None
    return consumer, before, of


def _gbps(w: dict[str, Any]) -> float | None:
    direct = _number(_first(w, ("achieved_gbps", "gbps", "achieved_GBps")))
    if direct is not None:
        return direct
    per_s = _number(w.get("achieved_bytes_per_s"))
    if per_s is not None:
        return per_s / 1e9
    nbytes, us = _number(w.get("bytes")), _number(w.get("duration_us"))
    if nbytes is not None and us:
        return nbytes / us / 1e3
    return None


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((d[k] for k in keys if k in d), None)


def _short(x: Any) -> str:
    text = json.dumps(x, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:60] + "…"
