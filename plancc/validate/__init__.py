"""Stage 2, validate: the YAML tree against the JSON Schema, then into the plan's classes.

Every schema violation becomes a diagnostic at the node at fault (PC002, or
PC003 for the version). Checks with their own codes (a name's form: PC013, a
dtype: PC023) are left to later stages, so they are not reported twice.

So that one mistake does not hide the rest of the plan, a violation removes
only what it spoils: an unknown or ill-typed optional key is dropped, an
entity missing a required key (a dim, tensor, stage, warm, layer kind) is
dropped whole and its name remembered in ``Broken``, so that references to it
are not reported again as unknown names.

The parts: ``explain`` turns each schema error into diagnostics (a table from
the failing JSON Schema keyword to its handler); ``recover`` removes what each
error spoils and remembers the names it dropped (``Broken``).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc import codes
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.load import Document, PathT
from plancc.schema.plan import Plan, plan_from_tree
from plancc.tables.resources import read_text
from plancc.validate.explain import Spoils, explain, kind_of
from plancc.validate.recover import Broken, drop_spoiled, spoil

__all__ = ["Broken", "Validated", "plan_schema", "plan_schema_text", "validate"]


@dataclass(frozen=True)
class Validated:
    doc: Document
    plan: Plan | None
    broken: Broken
    diagnostics: tuple[Diagnostic, ...]
    kept: dict[PathT, list[int]]  # lists that lost spoiled items: the indices that remain

    def doc_path(self, path: PathT) -> PathT:
        """The path in the document of a node at ``path`` in ``plan``."""
        if not self.kept:  # no list lost an item: the paths are the same
            return path
        out: list[str | int] = []
        for part in path:
            kept = self.kept.get(tuple(out)) if isinstance(part, int) else None
            out.append(kept[part] if kept is not None and isinstance(part, int) else part)
        return tuple(out)

    def at(self, *path: str | int) -> Pos:
        return self.doc.at(self.doc_path(path))

    def key_at(self, *path: str | int) -> Pos:
        return self.doc.key_at(self.doc_path(path))


@cache
def plan_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(plan_schema_text())
    return schema


def plan_schema_text() -> str:
    return read_text("schemas", "warm-plan.schema.json")


def _is_integer(checker: Any, instance: Any) -> bool:
    # JSON Schema counts 4.0 as an integer; YAML does not, and neither do the models.
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: Any, instance: Any) -> bool:
    # JSON has no .inf or .nan; YAML does, and no key of the format means them.
    if isinstance(instance, float):
        return math.isfinite(instance)
    return _is_integer(checker, instance)


def yaml_type_checker() -> Any:
    """JSON Schema's types as YAML gives them: ``1.0`` is a float, not an integer."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 (jsonschema on first validation)

    return Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    )


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, validators  # noqa: PLC0415 (jsonschema on first validation)

    cls = validators.extend(Draft202012Validator, type_checker=yaml_type_checker())  # type: ignore[no-untyped-call]
    return cls(plan_schema())


def validate(doc: Document) -> Validated:
    if not isinstance(doc.data, dict):
        got = kind_of(doc.data)
        d = diag(doc.file, doc.at(()), codes.STRUCTURE, f"a plan must be a mapping, not {got}")
        return Validated(doc, None, Broken(), (d,), {})
    from plancc.schema import gate as schema_gate  # noqa: PLC0415 (the compiled schema: with the first plan)

    broken = Broken()
    found: list[tuple[Diagnostic, Spoils]] = []
    if schema_gate.passes(doc.data):  # the compiled schema: a plan that passes needs no more
        return Validated(doc, plan_from_tree(doc.data), broken, (), {})
    tree = copy.deepcopy(doc.data)
    errors = list(_validator().iter_errors(doc.data))
    # A value of the wrong type gets one diagnostic, not one more per keyword it fails.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for err in errors:
        if err.validator != "type" and tuple(err.absolute_path) in mistyped:
            continue
        found.extend(explain(doc, err))
    for _, spoiled in found:
        if spoiled is not None:
            spoil(tree, spoiled, broken)
    # jsonschema repeats `required` once per missing key: keep each diagnostic once.
    diagnostics = list(dict.fromkeys(d for d, _ in found))
    kept: dict[PathT, list[int]] = {}
    pruned = drop_spoiled(tree, (), kept)
    plan = plan_from_tree(pruned)
    return Validated(doc, plan, broken, tuple(diagnostics), kept)
