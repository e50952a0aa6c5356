"""Stage 4, check: run every registered rule over the resolved plan and apply silencing.

A warning is silenced for one warm by its `allow` (with a `reason`) or for the
whole plan by `lint.ignore`. Errors are never silenced: an `allow` or
`ignore` that names an error, or an id that does not exist, is PC004 and has
no effect. An entry that silences nothing in this run is PC006, as ruff's
RUF100: a stale suppression would hide the next real finding. Silenced
diagnostics are kept apart, with their reasons, for ``--show-allowed``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from types import MappingProxyType

from plancc import codes, fixes, ir
from plancc.codes import Code, Severity
from plancc.diagnostics import Diagnostic, diag, printable
from plancc.facts import Facts, facts_of
from plancc.facts.timeline import Timeline
from plancc.rules import Finding, discover


def catalog() -> list[Code]:
    """Every diagnostic code, the stages' and the rules', in id order."""
    rules = [r.code for r in discover()]
    return sorted([*codes.STAGE_CODES, *rules], key=lambda c: c.id)


def lookup(id: str) -> Code | None:
    """The code ``id`` names; codes compare case-insensitively (`pc107` is PC107)."""
    return _by_id().get(id.upper())


@cache
def _by_id() -> dict[str, Code]:
    return {c.id: c for c in catalog()}


@dataclass(frozen=True)
class Allowed:
    diagnostic: Diagnostic
    reason: str
    warm: str | None = None  # the warm whose `allow` silenced it; None for lint.ignore


@dataclass(frozen=True)
class Checked:
    diagnostics: tuple[Diagnostic, ...]
    allowed: tuple[Allowed, ...]
    facts: Facts  # what the rules judged by, built once for them all (plancc.facts)
    # Each rule's diagnostic with the finding it was made of (its warm, the stages it
    # names: where `plancc report` marks it), shown or silenced.
    findings: Mapping[Diagnostic, Finding] = field(
        default_factory=lambda: MappingProxyType({}), compare=False
    )


# A diagnostic and the warms whose `allow` may silence it.
_Found = tuple[Diagnostic, tuple[ir.Warm, ...]]


def check(
    plan: ir.Plan,
    *,
    judged: bool = True,
    extra: Sequence[tuple[Diagnostic, tuple[ir.Warm, ...]]] = (),
    timelines: Mapping[str, Timeline] = MappingProxyType({}),
) -> Checked:
    """``judged``: the plan had no error before this stage, so every rule saw all of it
    and an entry that silences nothing is stale (PC006); after an error it may only
    be waiting for the finding the error hides. ``extra``: findings of other checks
    (the source checks, PC200-PC208) with the warms whose `allow` may silence each,
    silenced as the rules' are. ``timelines``: layer kinds' timelines built already
    (``facts_of``: `plancc suggest` checks a copy of a layer kind per candidate)."""
    found: list[_Found] = list(extra)
    findings: dict[Diagnostic, Finding] = {}
    facts = facts_of(plan, timelines)
    for r in discover():
        for f in r.check(plan, facts):
            d = f.diagnostic(plan.file, r)
            findings.setdefault(d, f)
            found.append((d, tuple(w for w in (f.warm, *f.also) if w is not None)))
    shown: list[Diagnostic] = list(_bad_silences(plan))  # never silenced themselves
    allowed: list[Allowed] = []
    judged = judged and not any(d.severity is Severity.ERROR for d, _ in found)
    stale = list(_stale_silences(plan, found)) if judged else []
    for d, warms in [*found, *stale]:
        if d.severity is not Severity.WARNING:
            shown.append(d)
            continue
        # An `allow` without its `reason` is PC002 and silences nothing.
        by = [w for w in warms if w.reason and d.code in w.allow]
        if by:
            allowed.append(Allowed(d, printable(by[0].reason or ""), by[0].name))
        elif d.code in plan.lint_ignore:
            allowed.append(Allowed(d, "lint.ignore"))
        else:
            shown.append(d)
    return Checked(tuple(shown), tuple(allowed), facts, MappingProxyType(findings))


def _stale_silences(plan: ir.Plan, found: list[_Found]) -> Iterator[_Found]:
    """PC006 for each `allow` or `lint.ignore` entry that silences no finding of this run.

    Entries of a warm the rules could not judge (its anchor names no stage, its
    layer kind lost a stage to a schema error) are left alone, as is `PC006`
    itself. PC004 is never silenced (it reports a silence that does not work), so
    an entry naming it always silences nothing, whether PC004 fires or not.
    """
    raised: set[tuple[str | None, str]] = set()
    for d, by in found:
        raised.update((w.name, d.code) for w in by)
        raised.add((None, d.code))
    seen: set[tuple[str, str]] = set()
    warms = {ir.allow_scope(w.name): w for w in (*plan.warms, *plan.skipped)}
    skipped = {w.name for w in plan.skipped}  # not issued at these values: nothing fires
    stale: list[_Found] = []
    for rid, pos, where, _ in plan.silences:
        code = lookup(rid)
        if code is None or code.severity is not Severity.WARNING or code is codes.UNUSED_SILENCE:
            continue
        warm = warms.get(where)
        if warm is not None and not _judged(plan, warm):
            continue
        key = (where, code.id)
        scope = None if warm is None else warm.name
        if code is codes.BAD_SILENCE:
            message = f"{where} names {code.id}, which cannot be silenced"
        elif key in seen:
            message = f"{where} names {code.id} twice; this entry silences nothing"
        elif (scope, code.id) not in raised or scope in skipped:
            message = f"{where} names {code.id}, which does not fire " + (
                "on this warm" if warm is not None else "in this plan"
            )
        else:
            seen.add(key)
            continue
        seen.add(key)
        d = diag(plan.file, pos, codes.UNUSED_SILENCE, message, f"remove {rid} from {_list(where)}")
        stale.append((d, (warm,) if warm is not None else ()))
    fixed = silence_fixes(plan, [d for d, _ in stale])
    yield from ((d, by) for d, (_, by) in zip(fixed, stale, strict=True))


def silence_fixes(plan: ir.Plan, found: Sequence[Diagnostic]) -> list[Diagnostic]:
    """``found`` (a plan's diagnostics) with the fixes of its PC006 worked out from all of
    them: each removes its entry; removing every entry of a list removes the list (a warm's
    `reason` with its `allow`: one is required with the other; `lint` with its `ignore`)."""
    stale = [d for d in found if d.code == codes.UNUSED_SILENCE.id]
    at = {(pos.line, pos.col): s for s in plan.silences for pos in (s[1],)}
    lists: dict[tuple[str | int, ...], int] = {}
    for _, _, _, path in plan.silences:
        lists[path[:-1]] = lists.get(path[:-1], 0) + 1
    entries = [at[d.line, d.col] for d in stale]
    for _, _, _, path in entries:
        lists[path[:-1]] -= 1
    out: dict[int, Diagnostic] = {}
    for d, (rid, _, scope, path) in zip(stale, entries, strict=True):
        where, index = path[:-1], path[-1]
        title = f"remove {rid} from {_list(scope)}"
        if lists[where] > 0:
            fix = fixes.remove(where, (index,), title)
        elif where[-1] == "allow":
            fix = fixes.remove(where[:-1], ("allow", "reason"), title)
        else:  # `lint` holds only `ignore`
            fix = fixes.remove((), ("lint",), title)
        out[id(d)] = replace(d, fix=fix)
    return [out.get(id(d), d) for d in found]


def _list(where: str) -> str:
    return "lint.ignore" if where == "lint.ignore" else "the allow list"


def _judged(plan: ir.Plan, warm: ir.Warm) -> bool:
    layer = plan.layers.get(warm.layer)
    return warm.reason is not None and warm.anchor is not None and bool(layer and layer.complete)


def _bad_silences(plan: ir.Plan) -> Iterator[Diagnostic]:
    for rid, pos, where, _ in plan.silences:
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
