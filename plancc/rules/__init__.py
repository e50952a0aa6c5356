"""Check-stage rules. Each rule is one function decorated with ``@rule``.

The decorator makes the rule's ``Code`` (id, short name, severity, with the
function's docstring as its documentation for ``plancc explain``) and records
the rule in ``RULES``. A rule takes the resolved plan and its facts (``plancc.facts``:
the timelines, placed warms and L2 peaks ``check`` worked out once for every rule) and
yields ``Finding`` values; it never raises for a user's mistake. ``discover()`` imports every
module of this package, so a new rule module needs no registration; the check
stage runs it before it reads ``RULES``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from plancc import ir
from plancc.codes import Code, Severity
from plancc.diagnostics import Diagnostic, Pos
from plancc.facts import Facts
from plancc.fixes import Fix


@dataclass(frozen=True)
class Finding:
    pos: Pos
    message: str
    hint: str | None = None
    warm: ir.Warm | None = None  # the warm whose `allow` may silence it
    # Other warms whose `allow` silences it too (a budget finding: every warm at the peak).
    also: tuple[ir.Warm, ...] = ()
    stages: tuple[int, ...] = ()  # indices of the stages it is about (`plancc report` marks them)
    fix: Fix | None = None  # what to change, when the rule knows it (plancc.fixes)
    data: Mapping[str, Any] | None = None  # the numbers it judged, by name (docs/rules.md)

    def diagnostic(self, file: str, rule: Rule) -> Diagnostic:
        """The diagnostic ``check`` reports for it."""
        pos = self.pos
        return Diagnostic(
            file,
            pos.line,
            pos.col,
            rule.severity,
            rule.id,
            self.message,
            self.hint,
            self.fix,
            self.data,
        )


RuleFn = Callable[[ir.Plan, Facts], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    code: Code
    check: RuleFn
    # What `plancc suggest` reads of its findings (docs/suggest.md, "Classes"): whether one
    # makes a warm a loss (the seed measured that finding as a loss), and the key of its
    # `data` holding the bytes it is about: for a loss, the bytes it costs the warm (the
    # weights streaming beside it, the bytes evicted); else the bytes it leaves out.
    loss: bool = False
    amount: str | None = None

    @property
    def id(self) -> str:
        return self.code.id

    @property
    def name(self) -> str:
        return self.code.name

    @property
    def severity(self) -> Severity:
        return self.code.severity


RULES: list[Rule] = []


def rule(
    id: str,
    name: str,
    severity: Severity,
    doc_vars: Mapping[str, str] | None = None,
    *,
    loss: bool = False,
    amount: str | None = None,
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule; ``doc_vars`` fill ``{placeholders}`` in its docstring with text
    derived from data (the platform table), so the documentation cannot go stale.
    ``loss`` and ``amount``: what `plancc suggest` reads of its findings (``Rule``)."""

    def register(fn: RuleFn) -> RuleFn:
        if any(r.id == id for r in RULES):
            raise ValueError(f"rule {id} declared twice")
        doc = fn.__doc__ or ""
        if doc_vars is not None:
            doc = doc.format_map(doc_vars)
        RULES.append(Rule(Code(id, name, severity, doc), fn, loss, amount))
        return fn

    return register


_discovered = False


def discover() -> list[Rule]:
    """Every rule, each rule module of this package imported once, in name order."""
    global _discovered
    if not _discovered:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            importlib.import_module(f"{__name__}.{info.name}")
        _discovered = True  # only now: after a failed import, the next call tries again
    return RULES
