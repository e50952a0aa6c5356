"""The library entry points the CLI calls: each runs the pipeline and returns a report.

load -> validate -> resolve -> check (``diagnose_plan``, ``validate_paths``) -> render -> write
(``build``). Nothing here prints or exits; usage and I/O problems raise ``UsageError``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from plancc import codes, ir
from plancc.check import Allowed, check, silence_fixes
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic, diag
from plancc.facts import Facts, facts_of
from plancc.facts.admitted import Admitted, admitted
from plancc.fixes import touched
from plancc.load import Document, FileReader, inputs, load, read_config_file
from plancc.load.inputs import PlanInput
from plancc.measure.durations import timed
from plancc.resolve import resolve
from plancc.rules import Finding
from plancc.source.root import unchecked
from plancc.text import plural
from plancc.usage import UsageError as UsageError  # noqa: PLC0414 (re-exported)
from plancc.validate import Validated, validate

if TYPE_CHECKING:
    from plancc.write import FileStatus


@dataclass(frozen=True)
class PlanResult:
    file: str
    plan: ir.Plan | None
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[Allowed, ...] = ()
    model_broken: bool = False  # `model` missing or not a string: a stand-in, not compared
    piped: bool = False  # read from standard input or a pipe: no file to build from again
    doc: Document | None = None  # the parsed plan (with every node's range), when it parsed
    # What the rules judged by (``check.Checked.facts``): set whenever ``plan`` is.
    facts: Facts | None = field(default=None, compare=False)
    # The rules' diagnostics with the findings they were made of (``check.Checked``).
    findings: Mapping[Diagnostic, Finding] = field(
        default_factory=lambda: MappingProxyType({}), compare=False
    )


@dataclass(frozen=True)
class Validation:
    results: tuple[PlanResult, ...]
    skipped: tuple[inputs.Skipped, ...] = ()  # directory entries that could not be read

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

    @property
    def notices(self) -> int:
        """Never counted against the exit code, even under --strict."""
        return sum(d.severity is Severity.NOTICE for d in self.diagnostics)

    def failed(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)


def _plan_location(file: str) -> str:
    """Where a plan is, for the generated header: its real path, but for a pipe
    (`<(generate-plan)`) the name it was given, since a pipe's real path
    (`/proc/<pid>/fd/pipe:[inode]`) differs on every run."""
    try:
        regular = stat.S_ISREG(os.stat(file).st_mode)
    except OSError:
        regular = False
    return os.path.realpath(file) if regular else os.path.abspath(file)


def diagnose_plan(
    source: PlanInput,
    raw: bytes,
    read_file: FileReader = read_config_file,
    *,
    source_root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
    trace: str | None = None,
) -> PlanResult:
    """The whole front end for one plan (``raw``, its bytes): every diagnostic it can find.
    Its `config` is read relative to its label through ``read_file``: `validate` reads
    files, the language server also sees the unsaved editor buffers. ``overrides``: the
    params `--set` fixes; the others are checked at their default and range's ends."""
    label = source.label
    doc = load(label, raw)
    if isinstance(doc, Diagnostic):
        return PlanResult(label, None, (doc,))
    validated = validate(doc)
    plan, resolved = resolve(validated, read_file, overrides=overrides)
    diagnostics = [*validated.diagnostics, *resolved]
    if plan is None:
        return PlanResult(label, None, tuple(diagnostics), doc=doc)
    narrowed = _check_overrides(plan, overrides)
    if trace is not None:  # the stages' durations measured (docs/suggest.md)
        plan = timed(trace, plan)[0]
    extra = unchecked(validated, plan, source_root)
    if extra is None:  # there is model code to read
        from plancc.source.checks import check_sources  # noqa: PLC0415 (only then)

        extra = check_sources(validated, plan, source_root)
    judged = not narrowed and not any(d.severity is Severity.ERROR for d in diagnostics)
    view = admitted(plan, overrides)  # a guarded warm: where its guard issues it
    checked = check(view.plan, judged=judged, extra=extra)
    found, allowed = [*diagnostics, *checked.diagnostics], checked.allowed
    ranged = any(p.name not in overrides and p.lo != p.hi for p in plan.params)
    if ranged or view.clipped:
        values = _Values(validated, read_file, overrides, found, allowed)
        values.clipped("default", view)
        if ranged:
            values.ends()
        found, allowed = values.result(plan)
    return PlanResult(
        label,
        plan,
        tuple(_offered(doc, found)),
        allowed,
        model_broken=validated.broken.model,
        piped=source.piped,
        doc=doc,
        # The whole plan's: what its outputs and the editor describe, every guarded warm
        # in it (the check judged those its values issue).
        facts=checked.facts if view.plan is plan else facts_of(plan),
        findings=checked.findings,
    )


def _offered(doc: Document, found: Sequence[Diagnostic]) -> Sequence[Diagnostic]:
    """``found`` without the fixes that would edit text aliases share (a YAML alias, or
    the anchored node it names): the edit would change the other places too, or not
    be possible, so such a fix is not offered, in any output."""
    if not doc.aliased:
        return found
    return [
        replace(d, fix=None)
        if d.fix is not None and any(doc.shared(p) for e in d.fix.edits for p in touched(e))
        else d
        for d in found
    ]


def _check_overrides(plan: ir.Plan, overrides: Mapping[str, int]) -> bool:
    """A `--set` value outside its param's range is a usage error. Whether one fixes a
    range: values then go unchecked, so no silence is stale (PC006)."""
    for p in plan.params:
        value = overrides.get(p.name)
        if value is not None and not p.lo <= value <= p.hi:
            raise UsageError(
                f"--set {p.name}={value}: {plan.file}: param '{p.name}' ranges over "
                f"[{p.lo}, {p.hi}]"
            )
    return any(p.name in overrides and p.lo != p.hi for p in plan.params)


class _Values:
    """The checks again at the other values: with every param not fixed by `--set` at the
    low end of its range, then at the high end; and, for a warm whose guard a check's
    values skip, at the values nearest them its guards admit (``facts.admitted``), where
    only the findings on that warm count. A finding (a code at a place) is reported once,
    at the first values where it appears, and one that appears only at other values than
    the defaults says at which (``... at CTX=4096``). A silence that silences nothing
    (PC006) must be stale at every value. The source checks do not depend on a param:
    they run once, at the default."""

    def __init__(
        self,
        validated: Validated,
        read_file: FileReader,
        overrides: Mapping[str, int],
        found: list[Diagnostic],
        allowed: tuple[Allowed, ...],
    ) -> None:
        self.validated, self.read_file, self.overrides = validated, read_file, overrides
        self.found, self.more = found, list(allowed)
        self.seen = {(d.line, d.col, d.code) for d in found}
        self.stale = {(d.line, d.col) for d in found if d.code == codes.UNUSED_SILENCE.id}
        self.kept = {(a.diagnostic.line, a.diagnostic.col, a.diagnostic.code) for a in allowed}

    def ends(self) -> None:
        for point in ("lo", "hi"):
            plan, resolved = resolve(
                self.validated, self.read_file, point=point, overrides=self.overrides
            )
            if plan is None:  # pragma: no cover (the default's resolved: so does every end's)
                continue
            view = admitted(plan, self.overrides)
            self._merge(plan, view.plan, resolved, None)
            self.clipped(point, view)

    def clipped(self, point: str, view: Admitted) -> None:
        """The checks of the warms ``view`` skips, each at the values its guards admit."""
        for values, warms in view.clipped.items():
            overrides = {**self.overrides, **dict(values)}
            plan, resolved = resolve(
                self.validated, self.read_file, point=point, overrides=overrides
            )
            if plan is None:  # pragma: no cover (a param's value within its range resolves)
                continue
            self._merge(plan, admitted(plan, overrides).plan, resolved, warms)

    def _merge(
        self,
        plan: ir.Plan,
        judged_plan: ir.Plan,
        resolved: Sequence[Diagnostic],
        warms: frozenset[str] | None,
    ) -> None:
        """One more check's findings; ``warms``: only those on these warms count."""
        errors = (*self.validated.diagnostics, *resolved)
        checked = check(judged_plan, judged=not any(d.severity is Severity.ERROR for d in errors))
        at = f" at {plan.at_values}" if plan.at_values else ""
        stale = self.stale
        self.stale = stale & {
            (d.line, d.col) for d in checked.diagnostics if d.code == codes.UNUSED_SILENCE.id
        }

        def counts(d: Diagnostic) -> bool:
            if warms is None:
                return True
            f = checked.findings.get(d)
            return f is not None and any(
                w is not None and w.name in warms for w in (f.warm, *f.also)
            )

        for d in (*(resolved if warms is None else ()), *checked.diagnostics):
            key = (d.line, d.col, d.code)
            if key not in self.seen and d.code != codes.UNUSED_SILENCE.id and counts(d):
                self.seen.add(key)
                self.found.append(replace(d, message=d.message + at))
        for a in checked.allowed:
            key = (a.diagnostic.line, a.diagnostic.col, a.diagnostic.code)
            if key not in self.kept and counts(a.diagnostic):
                self.kept.add(key)
                d = a.diagnostic
                self.more.append(replace(a, diagnostic=replace(d, message=d.message + at)))

    def result(self, default: ir.Plan) -> tuple[list[Diagnostic], tuple[Allowed, ...]]:
        found = [
            d
            for d in self.found
            if d.code != codes.UNUSED_SILENCE.id or (d.line, d.col) in self.stale
        ]
        return silence_fixes(default, found), tuple(self.more)  # fewer entries stale: their fixes


def parse_sets(given: Sequence[str]) -> dict[str, int]:
    """`--set NAME=VALUE` options: each param's value, an integer ≥ 1; the last given wins."""
    out: dict[str, int] = {}
    for item in given:
        name, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not name:
            raise UsageError(f"--set {item}: expected NAME=VALUE, e.g. --set CTX=4096")
        if value.isascii() and value.isdigit() and len(value) > 4300:  # int() refuses it
            raise UsageError(f"--set {name}: an integer of more than 4,300 digits")
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise UsageError(f"--set {item}: a param's value is an integer ≥ 1")
        out[name] = int(value)
    return out


def unknown_sets(results: Sequence[PlanResult], overrides: Mapping[str, int]) -> None:
    """A `--set` that names a param of no plan given is a usage error (a typo would
    otherwise check the range it meant to leave out)."""
    known = {p.name for r in results if r.plan is not None for p in r.plan.params}
    for name in overrides:
        if name not in known:
            from plancc.tables.names import suggest  # noqa: PLC0415 (only for a typo)

            hint = suggest(name, known)
            raise UsageError(
                f"--set {name}: no plan given has a param '{name}'" + (f"; {hint}" if hint else "")
            )


def validate_paths(
    paths: Sequence[str],
    stdin_filename: str | None = None,
    source_root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
    trace: str | None = None,
) -> Validation:
    """``source_root``: `--source-root`, where `source` paths start; ``overrides``: `--set`
    (``parse_sets``), the params' values fixed; ``trace``: `--trace`, stage durations."""
    try:
        found = inputs.collect(paths, stdin_filename)
        results = [
            diagnose_plan(source, raw, source_root=source_root, overrides=overrides, trace=trace)
            for source, raw in found.read()
        ]
    except inputs.InputError as exc:
        raise UsageError(str(exc)) from None
    unknown_sets(results, overrides)
    return Validation(tuple(unique_models(results)), tuple(found.skipped))


def unique_models(results: list[PlanResult]) -> list[PlanResult]:
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
                out.append(replace(r, diagnostics=(*r.diagnostics, d)))
                continue
            first.setdefault(key, (model, r.file))
        out.append(r)
    return out


def _refuse_overwriting_a_plan(report: Validation, out_dir: Path, files: dict[str, bytes]) -> None:
    """A plan that is one of the build's outputs would be overwritten by it: refused
    before anything is written (also with --check, which would call it stale)."""
    for r in report.results:
        for name in files:
            try:
                same = os.path.samefile(r.file, out_dir / name)
            except OSError:  # the output does not exist yet: it is not the plan
                continue
            if same:
                raise UsageError(
                    f"{r.file}: this plan is the output {(out_dir / name).as_posix()} of the "
                    "build, which would overwrite it; choose another --out"
                )


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
    orphans: tuple[FileStatus, ...] = ()  # compared: outputs no plan produces any more

    @property
    def failed(self) -> bool:
        return self.report.failed(self.strict)

    @property
    def out_of_date(self) -> list[FileStatus]:
        return [*(f for p in self.plans for f in p.files if f.status.out_of_date), *self.orphans]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed or self.out_of_date else 0

    @property
    def refusal(self) -> str:
        """Why a failed build wrote nothing: ``nothing written to build: 1 warning under
        --strict``."""
        why = [plural(self.report.errors, "error")] if self.report.errors else []
        if self.strict and self.report.warnings:
            why.append(plural(self.report.warnings, "warning") + " under --strict")
        done = "nothing compared with" if self.compare else "nothing written to"
        return f"{done} {self.out}: {', '.join(why)}"


def build(
    paths: Sequence[str],
    out: str,
    *,
    compare: bool = False,
    strict: bool = False,
    stdin_filename: str | None = None,
    source_root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> BuildResult:
    """Validate the plans; unless one fails, render each and write (or with ``compare``, compare).

    Writes nothing at all when any plan has an error (or a warning with
    ``strict``). The output directory is created when it is missing (not by
    ``compare``, which finds every output missing).
    """

    from plancc import render, write  # noqa: PLC0415 (jinja2 only for build)
    from plancc.render import orphans  # noqa: PLC0415 (jinja2 only for build)

    out_dir = _out_dir(paths, out, stdin_filename)
    report = validate_paths(paths, stdin_filename, source_root, overrides)
    if report.failed(strict):
        return BuildResult(report, out, compare, strict, ())
    real_out = os.path.realpath(out_dir)
    rendered: list[tuple[PlanResult, dict[str, bytes]]] = []
    for r in report.results:
        if r.plan is None:
            continue
        config = None
        if r.plan.config_file is not None:
            config_path, config_sha256 = r.plan.config_file
            config = (_relative(config_path, real_out, out), config_sha256)
        plan_path = _relative(r.file, real_out, out)
        assert r.facts is not None  # checked with its plan
        texts = render.render(r.plan, plan_path, facts=r.facts, piped=r.piped, config=config)
        rendered.append((r, {name: text.encode("utf-8") for name, text in texts.items()}))
    files = {name: data for _, outputs in rendered for name, data in outputs.items()}
    _refuse_overwriting_a_plan(report, out_dir, files)
    try:
        if compare:
            pairs = {
                render.manifest_file(r.plan.model): render.module_file(r.plan.model)
                for r, _ in rendered
                if r.plan is not None
            }
            done = write.compare(out_dir, files, pairs)
        else:
            _make_dir(out_dir, out)
            done = write.write(out_dir, files)
    except write.WriteError as exc:
        raise UsageError(str(exc)) from None
    status = {f.path.name: f for f in done}
    plans = tuple(BuiltPlan(r, tuple(status[n] for n in outputs)) for r, outputs in rendered)
    lost: tuple[FileStatus, ...] = ()
    if compare:
        sources = [_plan_location(r.file) for r, _ in rendered]
        lost = tuple(orphans.find(out_dir, files, sources))
    return BuildResult(report, out, compare, strict, plans, lost)


def _out_dir(paths: Sequence[str], out: str, stdin_filename: str | None) -> Path:
    """The output directory ``out`` names, once it is one a build can use."""
    if not out:  # Path("") is ".": an empty --out would write into the current directory
        raise UsageError("--out '': empty output directory (use --out . for this directory)")
    if inputs.STDIN in paths and stdin_filename is None:
        raise UsageError(
            "-: build records the plan's path in its outputs; name the plan read from "
            "standard input with --stdin-filename PATH"
        )
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out}: not a directory")
    return out_dir


def _relative(file: str, real_out: str, out: str) -> str:
    """``file``'s path relative to the output directory, POSIX form, from the real
    locations: a symlinked or respelled --out gives the same bytes. A pipe's name
    (``/dev/fd/63``) is kept as given, the same whatever --out is."""
    if inputs.process_name(file):
        return file
    try:
        return Path(os.path.relpath(_plan_location(file), real_out)).as_posix()
    except ValueError:  # another drive on Windows: no relative path exists
        raise UsageError(f"{file}: not on the drive of the output directory {out}") from None


def _make_dir(out_dir: Path, out: str) -> None:
    """Create the output directory and its parents when missing (as buf and sqlc do)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or exc
        raise UsageError(f"{out}: cannot create the output directory: {reason}") from None
