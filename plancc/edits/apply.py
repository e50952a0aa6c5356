"""`validate --fix` and `--diff`: fixes applied to a plan until none is left to apply.

Each pass makes the first fix that applies (``plancc.edits.interpret``: its few text
edits, nothing else of the text changes), with the fixes that do not interact with it
(``plancc.edits.together``: of its code, on other nodes, their findings independent of
one another: several duplicates removed, several unknown names replaced), then checks
the plan again, as ruff's loop does: a fix that another made stale is never applied,
and a fix that uncovers a finding with a fix is followed by it. Errors' fixes come
first (a warning may follow from an error: its fix waits for the error's, after which
it may be gone), then by position. The loop ends when no fix applies, when a fix would
lead back to a text seen before, or after ``MAX_PASSES``, which it then says.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FilePath
from types import MappingProxyType

from plancc import write
from plancc.api import PlanResult, UsageError, Validation, diagnose_plan, unique_models
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.edits.interpret import FixError, apply_fixes
from plancc.edits.together import companions
from plancc.fixes import Fix
from plancc.load import inputs, lines
from plancc.load.inputs import PlanInput
from plancc.text import clip

# A bound only: a fix never leads back to a finding (tested), and the fixes that do not
# interact go in one pass, so a plan needs a pass per fix that waits for another's.
MAX_PASSES = 256

_FIRST = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTICE: 2}


def fixable(result: PlanResult, *, unsafe: bool) -> list[Diagnostic]:
    """The diagnostics whose fix a pass may apply, in the order it tries them: errors'
    first, then by position."""
    found = [d for d in result.diagnostics if d.fix is not None and (unsafe or d.fix.safe)]
    return sorted(found, key=lambda d: (_FIRST[d.severity], d.sort_key))


@dataclass(frozen=True)
class Fixed:
    """One plan after `--fix`: its bytes before and after, the fixes applied (in the
    order of their passes), why any could not be, and the check of the bytes after."""

    label: str
    before: bytes
    after: bytes
    applied: tuple[tuple[Diagnostic, Fix], ...]
    result: PlanResult
    refused: tuple[str, ...] = ()  # a fix that does not apply to the text, and why
    first: PlanResult | None = None  # the check of ``before`` (None: ``result`` is it)
    steps: tuple[int, ...] = ()  # how many of ``applied`` each pass made, in order
    left: int = 0  # the fixes left when the loop stopped at ``MAX_PASSES`` (else 0)

    @property
    def passes(self) -> list[list[Fix]]:
        """The fixes of each pass: those of one pass were made together, on one text."""
        out, at = [], 0
        for n in self.steps:
            out.append([fix for _, fix in self.applied[at : at + n]])
            at += n
        return out

    @property
    def changed(self) -> bool:
        return self.after != self.before

    @property
    def stopped(self) -> str | None:
        """What the loop says when it stopped at its bound with fixes left."""
        if not self.left:
            return None
        n = self.left
        k = len(self.steps)
        fixes = f"{n:,} {'fix' if n == 1 else 'fixes'} left"
        return f"stopped after {k:,} {'pass' if k == 1 else 'passes'}: {fixes}"

    def unwritten(self) -> Fixed:
        """This plan as it stays when its file cannot be rewritten: its bytes and findings
        as they were, no fix applied."""
        first = self.result if self.first is None else self.first
        return Fixed(self.label, self.before, self.before, (), first, self.refused)


def fix_loop(
    label: str, raw: bytes, diagnose: Callable[[bytes], PlanResult], *, unsafe: bool = False
) -> Fixed:
    """``raw`` with its fixes applied (safe ones; with ``unsafe`` every one), a pass at a
    time, checked by ``diagnose`` after each, until none applies: the one loop of
    `validate --fix`, `--diff` and the editor's "fix all"."""
    result = first = diagnose(raw)
    applied: list[tuple[Diagnostic, Fix]] = []
    refused: dict[str, None] = {}
    seen = {_digest(raw)}  # the texts so far, by digest (a 4 MiB plan, a pass each)
    text = raw
    steps: list[int] = []
    left = 0
    while True:
        try:
            step = _next(result, seen, refused, unsafe=unsafe)
            if step is None or len(steps) == MAX_PASSES:
                left = 0 if step is None else len(fixable(result, unsafe=unsafe))
                break
            made, new = step
            checked = diagnose(new)
        except Exception as exc:  # a fault of plancc's own: said, the plan kept as it stood
            why = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"
            refused.setdefault(clip(why))  # and the other plans of `--fix DIR` go on
            break
        applied += made
        steps.append(len(made))
        seen.add(_digest(new))
        text, result = new, checked
    return Fixed(
        label, raw, text, tuple(applied), result, tuple(refused), first, tuple(steps), left
    )


def _next(
    result: PlanResult, seen: set[bytes], refused: dict[str, None], *, unsafe: bool
) -> tuple[list[tuple[Diagnostic, Fix]], bytes] | None:
    """The fixes of the next pass and the text they make: the first fix of ``result``
    that applies and leads to a text not seen before, with the fixes that do not
    interact with it (when they apply together)."""
    doc = result.doc
    if doc is None:
        return None
    found = fixable(result, unsafe=unsafe)
    for k, d in enumerate(found):
        assert d.fix is not None
        try:
            new = apply_fixes(doc, [d.fix])
        except FixError as exc:
            refused.setdefault(f"{d.code} ({d.line}:{d.col}): {exc}")
            continue
        if _digest(new) in seen:
            continue
        batch = companions(doc.data, d, found[k + 1 :])
        if len(batch) > 1:
            pairs = [(b, b.fix) for b in batch if b.fix is not None]
            try:
                together = apply_fixes(doc, [f for _, f in pairs])
            except FixError:
                pass  # one of them does not apply (it is said on its own turn)
            else:
                if _digest(together) not in seen:
                    return pairs, together
        return [(d, d.fix)], new
    return None


def _digest(text: bytes) -> bytes:
    return hashlib.sha256(text).digest()


def fix_plan(
    source: PlanInput,
    raw: bytes,
    *,
    unsafe: bool = False,
    source_root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> Fixed:
    """`validate --fix` of one plan (``fix_loop``, checked as `validate` checks it)."""

    def diagnose(data: bytes) -> PlanResult:
        return diagnose_plan(source, data, source_root=source_root, overrides=overrides)

    return fix_loop(source.label, raw, diagnose, unsafe=unsafe)


@dataclass(frozen=True)
class FixRun:
    """`validate --fix` or `--diff`: each plan fixed, and the report of what remains."""

    plans: tuple[Fixed, ...]
    report: Validation
    unsafe: bool = False
    unwritten: tuple[str, ...] = ()  # a plan whose file could not be rewritten, and why

    @property
    def changed(self) -> list[Fixed]:
        return [f for f in self.plans if f.changed]

    @property
    def available(self) -> int:
        """The unsafe fixes left, which `--unsafe-fixes` would apply (none with it)."""
        if self.unsafe:
            return 0
        return sum(1 for d in self.report.diagnostics if d.fix is not None and not d.fix.safe)

    def lines(self) -> list[str]:
        """What was fixed, one line per fix."""
        return [
            f"{f.label}: fixed {d.code}: {fix.title}" for f in self.plans for d, fix in f.applied
        ]

    def unfixed(self) -> list[str]:
        """What could not be fixed, where the loop stopped at its bound, and how many unsafe
        fixes are left (``1 fix available with --unsafe-fixes``): what `--fix` says after
        its fixes, `--diff` on stderr."""
        out = [f"{f.label}: not fixed: {why}" for f in self.plans for why in f.refused]
        out += [f"{f.label}: {f.stopped}" for f in self.plans if f.stopped]
        n = self.available
        if n:
            out.append(f"{n:,} {'fix' if n == 1 else 'fixes'} available with --unsafe-fixes")
        return out

    def said(self) -> str:
        """What `--fix` says before the report."""
        return "".join(line + "\n" for line in [*self.lines(), *self.unfixed()])

    def diff(self) -> str:
        out: list[str] = []
        for f in self.changed:
            old, new = _lines(f.before), _lines(f.after)
            out += difflib.unified_diff(old, new, f.label, f.label, lineterm="")
        return "".join(line + "\n" for line in out)


def _lines(raw: bytes) -> list[str]:
    """A plan's lines as the diff shows them: broken where plancc breaks lines (not at
    U+2028, as ``str.splitlines`` would), without their breaks."""
    return [line.rstrip("\r\n") for line in lines.split(raw.decode("utf-8", "replace"))]


def fix_paths(
    paths: Sequence[str],
    *,
    unsafe: bool = False,
    dry: bool = False,
    stdin: str | None = None,
    root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> FixRun:
    """Fix every plan the paths name, in place (atomically, only when it changed), or with
    ``dry`` (`--diff`) write nothing; ``stdin``: `--stdin-filename`, ``root``:
    `--source-root`, ``overrides``: `--set`. Raises ``UsageError`` for usage problems and
    a plan that cannot be read; a plan that cannot be written (read-only, hard-linked) is
    left as it is, named in ``unwritten``, and the others are written all the same."""
    try:
        found = inputs.collect(paths, stdin)
        if not dry and any(p.piped for p in found.plans):
            raise UsageError("-: --fix rewrites plan files in place; use --diff for standard input")
        plans = [
            fix_plan(source, raw, unsafe=unsafe, source_root=root, overrides=overrides)
            for source, raw in found.read()
        ]
    except inputs.InputError as exc:
        raise UsageError(str(exc)) from None
    unwritten: list[str] = []
    if not dry:
        plans, unwritten = _write(plans)
    results = tuple(unique_models([f.result for f in plans]))
    return FixRun(tuple(plans), Validation(results, tuple(found.skipped)), unsafe, tuple(unwritten))


def _write(plans: list[Fixed]) -> tuple[list[Fixed], list[str]]:
    """Each changed plan written in place, on its own, as ruff's ``--fix`` does: one that
    cannot be written stays as it was (its findings those of its bytes) and is said, and
    the others are written all the same."""
    out: list[Fixed] = []
    unwritten: list[str] = []
    for f in plans:
        if f.changed:
            try:
                write.replace(FilePath(f.label), f.after)  # through a symlink, to its target
            except write.WriteError as exc:
                unwritten.append(str(exc))
                f = f.unwritten()  # noqa: PLW2901 (what stands on disk)
        out.append(f)
    return out, unwritten
