"""The library entry points the CLI calls: each runs the pipeline and returns a report.

load -> validate -> resolve -> check (this module) -> render -> write (``build``).
Nothing here prints or exits; usage and I/O problems raise ``UsageError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plancc import ir
from plancc.check import Allowed, check
from plancc.diagnostics import Diagnostic, Severity, diag
from plancc.load import load
from plancc.resolve import resolve
from plancc.validate import validate


class UsageError(Exception):
    """A usage or I/O problem: one line on stderr, exit 2."""


@dataclass(frozen=True)
class PlanResult:
    file: str
    plan: ir.Plan | None
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[Allowed, ...] = ()


@dataclass(frozen=True)
class Report:
    results: tuple[PlanResult, ...]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return sorted((d for r in self.results for d in r.diagnostics), key=lambda d: d.sort_key)

    @property
    def allowed(self) -> list[Allowed]:
        return sorted(
            (a for r in self.results for a in r.allowed), key=lambda a: a.diagnostic.sort_key
        )

    @property
    def errors(self) -> int:
        return sum(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity is Severity.WARNING for d in self.diagnostics)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)


def plan_files(paths: Sequence[str]) -> list[tuple[Path, str]]:
    """(path, label) per plan: a directory stands for its *.yaml files, sorted."""
    out: list[tuple[Path, str]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(path.glob("*.yaml"))
            if not found:
                raise UsageError(f"{given}: no *.yaml plans in this directory")
            out += [(p, p.as_posix()) for p in found]
        elif path.exists():
            out.append((path, path.as_posix()))
        else:
            raise UsageError(f"{given}: no such file or directory")
    return out


def check_plan(path: Path, label: str) -> PlanResult:
    """The whole front end for one plan file: every diagnostic it can find."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{label}: cannot read: {exc.strerror or exc}") from None
    doc = load(label, raw)
    if isinstance(doc, Diagnostic):
        return PlanResult(label, None, (doc,))
    validated = validate(doc)
    plan, resolved = resolve(validated)
    diagnostics = [*validated.diagnostics, *resolved]
    if plan is None:
        return PlanResult(label, None, tuple(diagnostics))
    checked = check(plan)
    return PlanResult(label, plan, (*diagnostics, *checked.diagnostics), checked.allowed)


def validate_paths(paths: Sequence[str]) -> Report:
    results = [check_plan(path, label) for path, label in plan_files(paths)]
    return Report(tuple(_unique_models(results)))


def _unique_models(results: list[PlanResult]) -> list[PlanResult]:
    """Two plans of one run may not share a `model`: their outputs would collide (PC011)."""
    first: dict[str, str] = {}
    out = []
    for r in results:
        if r.plan is not None:
            model = r.plan.model
            if model in first and first[model] != r.file:
                d = diag(
                    r.file,
                    r.plan.model_pos,
                    "PC011",
                    f"model '{model}' is also the model of {first[model]}",
                    "each plan's outputs are named after its model",
                )
                out.append(PlanResult(r.file, r.plan, (*r.diagnostics, d), r.allowed))
                continue
            first.setdefault(model, r.file)
        out.append(r)
    return out
