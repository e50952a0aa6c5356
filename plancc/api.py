"""The library entry points the CLI calls: each runs the pipeline and returns a report.

load -> validate -> resolve -> check (``diagnose_plan``, ``validate_paths``) -> render -> write
(``build``).
Nothing here prints or exits; usage and I/O problems raise ``UsageError``.
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plancc import codes, ir
from plancc.check import Allowed, check
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic, diag
from plancc.load import load, read_capped
from plancc.resolve import resolve
from plancc.validate import validate

if TYPE_CHECKING:
    from plancc.write import FileStatus


class UsageError(Exception):
    """A usage or I/O problem: one line on stderr, exit 2."""


@dataclass(frozen=True)
class PlanResult:
    file: str
    plan: ir.Plan | None
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[Allowed, ...] = ()
    model_broken: bool = False  # `model` missing or not a string: a stand-in, not compared


@dataclass(frozen=True)
class Validation:
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
    """(path, label) per plan, sorted by label and each file once, whatever the order of
    the arguments: a directory stands for its *.yaml files. One file under two spellings
    (``a.yaml`` and ``/abs/a.yaml``, a directory and a file in it, a symlink) is one plan,
    labelled as it was first given."""
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
    unique: dict[object, tuple[Path, str]] = {}
    for path, label in out:
        unique.setdefault(_identity(path), (path, label))
    return sorted(unique.values(), key=lambda pair: pair[1])


def _identity(path: Path) -> object:
    """What makes two spellings one file: its device and inode (which see through
    symlinks, hard links and case-insensitive names), else its real path."""
    try:
        st = path.stat()
    except OSError:  # reading it will report the problem
        return os.path.realpath(path)
    return (st.st_dev, st.st_ino) if st.st_ino else os.path.realpath(path)


def _plan_location(file: str) -> str:
    """Where a plan is, for the generated header: its real path, but for a pipe
    (`<(generate-plan)`) the name it was given, since a pipe's real path
    (`/proc/<pid>/fd/pipe:[inode]`) differs on every run."""
    try:
        regular = stat.S_ISREG(os.stat(file).st_mode)
    except OSError:
        regular = False
    return os.path.realpath(file) if regular else os.path.abspath(file)


def diagnose_plan(path: Path, label: str) -> PlanResult:
    """The whole front end for one plan file: every diagnostic it can find."""
    # The front end builds a large tree with no reference cycle; the cycle
    # collector's passes over it cost more than the work itself (2.5x on a plan
    # of 10,000 warms), so it waits until the plan is checked.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _diagnose_plan(path, label)
    finally:
        if paused:
            gc.enable()


def _diagnose_plan(path: Path, label: str) -> PlanResult:
    try:
        raw = read_capped(path)
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
    return PlanResult(
        label,
        plan,
        (*diagnostics, *checked.diagnostics),
        checked.allowed,
        model_broken=validated.broken.model,
    )


def validate_paths(paths: Sequence[str]) -> Validation:
    results = [diagnose_plan(path, label) for path, label in plan_files(paths)]
    return Validation(tuple(_unique_models(results)))


def _unique_models(results: list[PlanResult]) -> list[PlanResult]:
    """Two plans of one run may not share a `model`: their outputs would collide (PC011).
    Models are compared case-folded, as a case-insensitive filesystem compares the files."""
    first: dict[str, tuple[str, str]] = {}  # case-folded model -> (model, file)
    out = []
    for r in results:
        if r.plan is not None and not r.model_broken:
            model = r.plan.model
            key = model.casefold()
            if key in first and first[key][1] != r.file:
                other, file = first[key]
                message = (
                    f"model '{model}' is also the model of {file}"
                    if other == model
                    else f"model '{model}' differs only in case from '{other}', the model of {file}"
                )
                hint = "each plan's outputs are named after its model"
                if other != model:
                    hint += ", and a case-insensitive filesystem sees one name"
                d = diag(r.file, r.plan.model_pos, codes.DUPLICATE_NAME, message, hint)
                out.append(PlanResult(r.file, r.plan, (*r.diagnostics, d), r.allowed))
                continue
            first.setdefault(key, (model, r.file))
        out.append(r)
    return out


@dataclass(frozen=True)
class BuiltPlan:
    """One plan's outputs and what happened to each (written, unchanged, stale …)."""

    result: PlanResult
    files: tuple[FileStatus, ...]


@dataclass(frozen=True)
class BuildResult:
    """The front end's report plus, when it passed, every output file's status."""

    report: Validation
    out: str
    compare: bool  # `build --check`: compared with the files on disk, nothing written
    strict: bool
    plans: tuple[BuiltPlan, ...]  # empty when the report failed: nothing was rendered

    @property
    def failed(self) -> bool:
        return self.report.failed(self.strict)

    @property
    def out_of_date(self) -> list[FileStatus]:
        return [f for p in self.plans for f in p.files if f.status.out_of_date]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed or self.out_of_date else 0


def build(
    paths: Sequence[str], out: str, *, compare: bool = False, strict: bool = False
) -> BuildResult:
    """Validate the plans; unless one fails, render each and write (or with ``compare``, compare).

    Writes nothing at all when any plan has an error (or a warning with
    ``strict``). The output directory must exist.
    """

    from plancc import render, write  # noqa: PLC0415 (jinja2 only for build)

    if not out:  # Path("") is ".": an empty --out would write into the current directory
        raise UsageError("--out '': empty output directory (use --out . for this directory)")
    out_dir = Path(out)
    if not out_dir.exists():
        raise UsageError(f"{out}: output directory does not exist")
    if not out_dir.is_dir():
        raise UsageError(f"{out}: not a directory")
    report = validate_paths(paths)
    if report.failed(strict):
        return BuildResult(report, out, compare, strict, ())
    rendered: list[tuple[PlanResult, dict[str, bytes]]] = []
    for r in report.results:
        if r.plan is None:
            continue
        try:  # from the real locations: a symlinked or respelled --out gives the same bytes
            rel = os.path.relpath(_plan_location(r.file), os.path.realpath(out_dir))
        except ValueError:  # another drive on Windows: no relative path exists
            raise UsageError(f"{r.file}: not on the drive of the output directory {out}") from None
        texts = render.render(r.plan, Path(rel).as_posix())
        rendered.append((r, {name: text.encode("utf-8") for name, text in texts.items()}))
    files = {name: data for _, outputs in rendered for name, data in outputs.items()}
    try:
        pairs = {
            render.manifest_file(r.plan.model): render.module_file(r.plan.model)
            for r, _ in rendered
            if r.plan is not None
        }
        done = write.compare(out_dir, files, pairs) if compare else write.write(out_dir, files)
    except write.WriteError as exc:
        raise UsageError(str(exc)) from None
    status = {f.path.name: f for f in done}
    plans = tuple(BuiltPlan(r, tuple(status[n] for n in outputs)) for r, outputs in rendered)
    return BuildResult(report, out, compare, strict, plans)
