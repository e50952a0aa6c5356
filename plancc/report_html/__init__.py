"""`plancc report`: one self-contained HTML page that draws a plan.

facts.py says what to draw (landings, L2 held, where each diagnostic belongs),
layout.py, timeline.py, occupancy.py and strip.py where (SVG units), measure.py
reads `plancc measure` results, and templates/report.html.j2 writes the page:
inline SVG and CSS, no script (a Content-Security-Policy forbids any), no font or
file from elsewhere, the same bytes for the same plan.

A plan with errors still gets its page: what resolved is drawn, every
diagnostic is listed. See docs/report.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from plancc import __version__, ir, write
from plancc.api import PlanResult, UsageError, diagnose_plan, unknown_sets
from plancc.codes import Severity
from plancc.facts.metrics import forward_numbers, l2_numbers, warm_bytes
from plancc.formats.summary import peak_share
from plancc.load import inputs
from plancc.report_html import fmt, layout
from plancc.report_html.facts import Entry, LayerFacts, PlanFacts, facts
from plancc.report_html.measure import Measure, for_plan
from plancc.report_html.measure import read as read_measure
from plancc.report_html.occupancy import Occupancy, occupancy
from plancc.report_html.strip import strip
from plancc.report_html.timeline import Timeline, timeline
from plancc.tables.outputs import report_file
from plancc.tables.resources import template_environment

TEMPLATE = "report.html.j2"
DEFAULT_DIR = "build"


@dataclass(frozen=True)
class Written:
    result: PlanResult
    path: Path
    status: str  # "written" or "unchanged"
    errors: int
    warnings: int
    notices: int = 0  # what plancc could not judge (PC208): never a warning

    @property
    def line(self) -> str:
        counts = f"{self.errors} error{'s' if self.errors != 1 else ''}, "
        counts += f"{self.warnings} warning{'s' if self.warnings != 1 else ''}"
        if self.notices:
            counts += f", {self.notices} notice{'s' if self.notices != 1 else ''}"
        return f"{self.result.file}: {counts} -> {self.status}: {self.path.as_posix()}\n"

    @property
    def exit_code(self) -> int:
        """1 when the plan has errors, as `validate` says: the page is written all the same."""
        return 1 if self.errors else 0


def report(
    plan: str,
    out: str | None,
    measure: str | None,
    overrides: Mapping[str, int] = MappingProxyType({}),
    source_root: str | None = None,
) -> Written:
    """Check ``plan``, render its page and write it to ``out`` (default
    ``build/<model>_report.html``); ``overrides``: `--set`, the params' values fixed;
    ``source_root``: `--source-root`, where its model code is. Usage and I/O problems
    raise UsageError."""
    if Path(plan).is_dir():
        raise UsageError(f"{plan}: report takes one plan file, not a directory")
    try:
        found = list(inputs.collect([plan]).read())
    except inputs.InputError as exc:
        raise UsageError(str(exc)) from None
    source, raw = found[0]
    result = diagnose_plan(source, raw, source_root=source_root, overrides=overrides)
    unknown_sets([result], overrides)
    measured = for_plan(read_measure(measure), result) if measure is not None else None
    if out is None:
        target = Path(DEFAULT_DIR) / report_file(_model(result))
        try:
            target.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{target.parent}: cannot create: {exc.strerror or exc}") from None
    elif not out:
        raise UsageError("-o '': empty output file name")
    else:
        target = Path(out)
        if not target.parent.is_dir():
            raise UsageError(f"{out}: directory {target.parent} does not exist")
    for given in (source.path, Path(measure) if measure is not None else None):
        if given is not None and _same_file(target, given):
            raise UsageError(f"{target}: is an input of this report; the page would replace it")
    page = render(result, measured)
    try:
        done = write.write(target.parent, {target.name: page.encode("utf-8")})
    except (write.WriteError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    count = Counter(d.severity for d in result.diagnostics)
    return Written(
        result,
        target,
        done[0].status.value,
        count[Severity.ERROR],
        count[Severity.WARNING],
        count[Severity.NOTICE],
    )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and a.samefile(b)
    except OSError:
        return False


def _model(result: PlanResult) -> str:
    """The model names the page; a plan too broken to name one, its file's stem."""
    if result.plan is not None and not result.model_broken:
        return result.plan.model
    return Path(result.file).stem or "plan"


def render(result: PlanResult, measure: Measure | None = None) -> str:
    env = template_environment(autoescape=True)
    env.filters.update(px=fmt.px, mb=fmt.mb, mib=fmt.mib, num=fmt.num)
    return env.get_template(TEMPLATE).render(**context(result, measure))


@dataclass(frozen=True)
class LayerFigures:
    facts: LayerFacts
    timeline: Timeline
    occupancy: Occupancy
    listed: tuple[Entry, ...] = field(default=())  # diagnostics about the kind as a whole


def layer_figures(lf: LayerFacts, plan: ir.Plan, measure: Measure | None) -> LayerFigures:
    grid = layout.grid(lf, plan)
    listed = tuple(e for e in lf.entries if e.figure is None)
    return LayerFigures(lf, timeline(lf, grid, measure), occupancy(lf, grid, plan), listed)


def context(result: PlanResult, measure: Measure | None) -> dict[str, Any]:
    pf = facts(result)
    plan = pf.plan
    out: dict[str, Any] = {
        "version": __version__,
        "file": result.file,
        "model": _model(result),
        "facts": pf,
        "measure": measure,
        "geo": layout,
        "plan": plan,
        "layers": [],
        "strip": None,
        "forward": None,
        "l2": None,
        "peak_share": None,
    }
    if plan is None:
        return out
    out["layers"] = [layer_figures(lf, plan, measure) for lf in pf.layers]
    out["strip"] = strip(plan)
    out["forward"] = forward_numbers(plan) if plan.forward is not None else None
    assert result.facts is not None  # checked with its plan
    l2 = l2_numbers(result.facts)
    out["l2"] = l2
    if l2["capacity_bytes"]:
        out["peak_share"] = peak_share(plan, l2)
        out["budget_bytes"] = int(l2["capacity_bytes"] * plan.l2_fraction)
    out["kinds"] = _kinds(plan, pf)
    return out


def _kinds(plan: ir.Plan, pf: PlanFacts) -> list[dict[str, Any]]:
    """Per layer kind, for the forward's legend: layers in the forward, warm issues, bytes."""
    used = list(plan.forward.kinds) if plan.forward is not None else []
    rows = []
    for i, lf in enumerate(pf.layers):
        name = lf.layer.name
        # In the forward's last layer, a kind's cross-layer warms are not issued.
        last = 1 if used and used[-1] == name else 0
        lastless = sum(len(w.entries) for w in lf.layer.warms if not w.next_layer)
        issues = sum(len(w.entries) for w in lf.layer.warms)
        bytes_each = warm_bytes(lf.layer)
        rows.append(
            {
                "index": i,
                "name": name,
                "layers": used.count(name),
                "issues": issues,
                "bytes": bytes_each,
                "total_issues": issues * (used.count(name) - last) + lastless * last,
                "total_bytes": bytes_each * (used.count(name) - last)
                + warm_bytes(lf.layer, last=True) * last,
            }
        )
    return rows
