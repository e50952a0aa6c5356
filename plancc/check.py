"""Stage 4, check: run every registered rule over the resolved plan and apply silencing.

A warning is silenced for one warm by its `allow` (with a `reason`) or for the
whole plan by `lint.ignore`. Errors are never silenced: an `allow` or
`ignore` that names an error, or an id that does not exist, is PC004 and has
no effect. Silenced diagnostics are kept apart, with their reasons, for
``--show-allowed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from plancc import codes, ir
from plancc.codes import Code, Severity
from plancc.diagnostics import Diagnostic, diag
from plancc.rules import discover


def catalog() -> list[Code]:
    """Every diagnostic code, the stages' and the rules', in id order."""
    rules = [r.code for r in discover()]
    return sorted([*codes.STAGE_CODES, *rules], key=lambda c: c.id)


def lookup(id: str) -> Code | None:
    return _by_id().get(id)


@cache
def _by_id() -> dict[str, Code]:
    return {c.id: c for c in catalog()}


@dataclass(frozen=True)
class Allowed:
    diagnostic: Diagnostic
    reason: str


@dataclass(frozen=True)
class Checked:
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[Allowed, ...]


def check(plan: ir.Plan) -> Checked:
    found: list[tuple[Diagnostic, ir.Warm | None]] = []
    for r in discover():
        for f in r.check(plan):
            d = Diagnostic(plan.file, f.pos.line, f.pos.col, r.severity, r.id, f.message, f.hint)
            found.append((d, f.warm))
    shown: list[Diagnostic] = list(_bad_silences(plan))  # never silenced themselves
    allowed: list[Allowed] = []
    for d, warm in found:
        if d.severity is not Severity.WARNING:
            shown.append(d)
        # An `allow` without its `reason` is PC002 and silences nothing.
        elif warm is not None and warm.reason and d.code in warm.allow:
            allowed.append(Allowed(d, f"allow on warm '{warm.name}': {warm.reason}"))
        elif d.code in plan.lint_ignore:
            allowed.append(Allowed(d, "lint.ignore"))
        else:
            shown.append(d)
    return Checked(tuple(shown), tuple(allowed))


def _bad_silences(plan: ir.Plan) -> Iterator[Diagnostic]:
    for rid, pos, where in plan.silences:
        code = lookup(rid)
        if code is None:
            yield diag(
                plan.file,
                pos,
                codes.BAD_SILENCE,
                f"{where} names '{rid}', which is not a rule id; it silences nothing",
                "`plancc rules` lists every id",
            )
        elif code.severity is Severity.ERROR:
            yield diag(
                plan.file,
                pos,
                codes.BAD_SILENCE,
                f"{where} names {rid}, an error; errors cannot be silenced",
                f"fix the {rid} error instead",
            )
