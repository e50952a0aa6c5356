"""Stage 2, validate: the YAML tree against the JSON Schema, then into pydantic models.

Every schema violation becomes a diagnostic at the node at fault (PC002, or
PC003 for the version). Checks with their own codes (a name's form: PC013, a
dtype: PC023) are left to later stages, so they are not reported twice.

So that one mistake does not hide the rest of the plan, a violation removes
only what it spoils: an unknown or ill-typed optional key is dropped, an
entity missing a required key (a dim, tensor, stage, warm, layer kind) is
dropped whole and its name remembered in ``Broken``, so that references to it
are not reported again as unknown names.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from plancc.diagnostics import Diagnostic, Pos, clip, diag
from plancc.load import Document, PathT
from plancc.model import NAME_PATTERN, SIZE_PATTERN, Plan
from plancc.names import suggest
from plancc.resources import read_text

# Keys that are required somewhere in the format: a bad value under one of
# them spoils its whole entity; a bad optional key is simply dropped.
_REQUIRED_KEYS = frozenset(
    {"plancc", "model", "platform", "tensors", "layers", "shape", "dtype", "name", "stages"}
    | {"after", "tensor", "layer", "from_config", "kinds"}
)
_STAND_INS: dict[str, Any] = {"plancc": 1, "model": "invalid_model", "platform": ""}
_JSON_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


@dataclass
class Broken:
    """Names whose definitions were dropped; references to them are not reported."""

    dims: set[str] = field(default_factory=set)
    tensors: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    stages: set[tuple[str, str]] = field(default_factory=set)
    all_dims: bool = False
    all_tensors: bool = False
    all_kinds: bool = False
    # Stages replaced by a stand-in (kind, index): their layer kind is incomplete.
    standin_stages: set[tuple[str, int]] = field(default_factory=set)
    forward: bool = False  # an item of an explicit forward, or a `kinds` key, was dropped
    config: bool = False  # `config` was dropped: unknown names may be its keys
    platform: bool = False
    model: bool = False


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


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    )
    cls = validators.extend(Draft202012Validator, type_checker=checker)  # type: ignore[no-untyped-call]
    return cls(plan_schema())


def validate(doc: Document) -> Validated:
    if not isinstance(doc.data, dict):
        got = _kind(doc.data)
        d = diag(doc.file, doc.at(()), "PC002", f"a plan must be a mapping, not {got}")
        return Validated(doc, None, Broken(), (d,), {})
    from plancc import schema_gate

    broken = Broken()
    found: list[tuple[Diagnostic, _Spoils]] = []
    if schema_gate.passes(doc.data):  # the compiled schema: a plan that passes needs no more
        return Validated(doc, Plan.model_validate(doc.data), broken, (), {})
    tree = copy.deepcopy(doc.data)
    errors = list(_validator().iter_errors(doc.data))
    # A value of the wrong type gets one diagnostic, not one more per keyword it fails.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for err in errors:
        if err.validator != "type" and tuple(err.absolute_path) in mistyped:
            continue
        found.extend(_explain(doc, err))
    for _, spoiled in found:
        if spoiled is not None:
            _spoil(tree, spoiled, broken)
    # jsonschema repeats `required` once per missing key: keep each diagnostic once.
    diagnostics = list(dict.fromkeys(d for d, _ in found))
    kept: dict[PathT, list[int]] = {}
    pruned = _drop_spoiled(tree, (), kept)
    plan = Plan.model_validate(pruned)
    return Validated(doc, plan, broken, tuple(diagnostics), kept)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "empty"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "infinity"
    return {dict: "a mapping", list: "a list", str: "a string", int: "an integer"}.get(
        type(value), "a number"
    )


def _where(path: PathT) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the plan"


@dataclass(frozen=True)
class _KeyOnly:
    """An unknown key: it spoils only itself, whatever its name means elsewhere."""

    path: PathT


# What a schema error spoils: a path (that node, or the entity it is required by),
# one unknown key, or nothing.
_Spoils = PathT | _KeyOnly | None


def _explain(doc: Document, err: Any) -> Iterator[tuple[Diagnostic, _Spoils]]:
    """Diagnostics for one schema error, each with the path it spoils (None: nothing)."""
    path: PathT = tuple(err.absolute_path)
    v = err.validator
    where = _where(path)
    file = doc.file

    if path == ("plancc",) and v in ("const", "type"):
        if v == "type" or err.instance != 1:
            if v == "const" and not isinstance(err.instance, int):
                return  # the type error says it
            got = (
                json.dumps(err.instance)
                if not isinstance(err.instance, str)
                else repr(err.instance)
            )
            yield (
                diag(
                    file,
                    doc.at(path),
                    "PC003",
                    f"plancc must be the integer 1, not {clip(got)}",
                    "1 is the only plan format version; write `plancc: 1`",
                ),
                path,
            )
        return
    if "propertyNames" in err.schema_path:
        if err.validator_value == NAME_PATTERN:
            return  # PC013, reported by resolve
        key_path = (*path, err.instance)
        yield (
            diag(
                file,
                doc.key_at(key_path),
                "PC002",
                f"{where} key '{err.instance}' must be an integer (a value of the config list)",
            ),
            key_path,
        )
        return
    if v == "pattern" and err.validator_value == NAME_PATTERN:
        return  # PC013, reported by resolve
    if v == "enum" and path[-1:] == ("dtype",):
        return  # PC023, reported by resolve
    if v == "required":
        for key in err.validator_value:
            if key not in err.instance:
                # A top-level key spoils only itself: the rest of the plan is still checked.
                spoiled = path if path else (key,)
                yield (
                    diag(file, doc.at(path), "PC002", f"{where} is missing required key '{key}'"),
                    spoiled,
                )
        return
    if v == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        for key in err.instance:
            if key not in allowed:
                key_path = (*path, key)
                hint = suggest(key, allowed) or f"allowed keys: {', '.join(sorted(allowed))}"
                yield (
                    diag(
                        file,
                        doc.key_at(key_path),
                        "PC002",
                        f"unknown key '{clip(key)}' in {where}",
                        hint,
                    ),
                    _KeyOnly(key_path),
                )
        return
    if v == "dependentRequired":
        for key, needs in err.validator_value.items():
            if key in err.instance:
                missing = [n for n in needs if n not in err.instance]
                yield (
                    diag(
                        file,
                        doc.key_at((*path, key)),
                        "PC002",
                        f"'{key}' in {where} needs '{missing[0]}': say why the warnings are "
                        "accepted",
                    ),
                    None,
                )
        return
    if v == "anyOf":
        yield from _explain_any_of(doc, err, path)
        return
    if v == "type":
        yield (
            diag(
                file,
                doc.at(path),
                "PC002",
                f"{where} must be {_expected(err.validator_value)}, not {_kind(err.instance)}",
            ),
            path,
        )
        return
    if v == "enum":
        options = ", ".join(str(o) for o in err.validator_value)
        closest = suggest(str(err.instance), [str(o) for o in err.validator_value])
        yield (
            diag(
                file,
                doc.at(path),
                "PC002",
                f"{where} '{clip(str(err.instance))}' is not one of: {options}",
                closest,
            ),
            path,
        )
        return
    if v == "pattern" and err.validator_value == SIZE_PATTERN:
        yield (
            diag(
                file,
                doc.at(path),
                "PC002",
                f"{where} '{clip(str(err.instance))}' is not a size: give an integer number of "
                "bytes or a number with a unit (B, kB, MB, GB, KiB, MiB, GiB)",
            ),
            path,
        )
        return
    messages = {
        "minItems": "must not be empty",
        "minProperties": "must not be empty",
        "minLength": "must not be empty",
        "minimum": f"must be at least {err.validator_value}",
        "exclusiveMinimum": f"must be greater than {err.validator_value}",
        "maximum": f"must be at most {err.validator_value}",
        "exclusiveMaximum": f"must be less than {err.validator_value}",
    }
    text = messages.get(v, err.message)
    yield diag(file, doc.at(path), "PC002", f"{where} {text}"), path


def _expected(types: str | list[str]) -> str:
    names = [types] if isinstance(types, str) else types
    return " or ".join(_JSON_TYPES.get(t, t) for t in names)


def _explain_any_of(doc: Document, err: Any, path: PathT) -> Iterator[tuple[Diagnostic, _Spoils]]:
    """Explain the branch whose type matches the value; else list the types expected."""
    by_branch: dict[int, list[Any]] = {}
    for sub in err.context:
        by_branch.setdefault(sub.schema_path[0], []).append(sub)
    expected: list[str] = []
    for _, subs in sorted(by_branch.items()):
        type_errors = [s for s in subs if s.validator == "type" and not s.relative_path]
        if type_errors:
            expected.extend(_branch_types(type_errors[0].validator_value))
            continue
        for sub in subs:  # the value has this branch's type: its errors are the real ones
            yield from _explain(doc, sub)
        return
    words = " or ".join(dict.fromkeys(_JSON_TYPES.get(t, t) for t in expected))
    yield (
        diag(
            doc.file,
            doc.at(path),
            "PC002",
            f"{_where(path)} must be {words}, not {_kind(err.instance)}",
        ),
        path,
    )


def _branch_types(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# Lists of references whose bad items are dropped one by one: the rest of the
# list, and the entity that holds it, stay checkable.
_ITEM_LISTS = frozenset({"reads", "allow", "ignore", "tensors"})


def _entity(path: PathT) -> PathT:
    """The smallest entity that a bad value at ``path`` spoils."""
    for i in range(len(path) - 1):
        if path[i] in _ITEM_LISTS and isinstance(path[i + 1], int):
            return path[: i + 2]  # one item of a list of names
    if path[:1] == ("forward",) and len(path) >= 2 and isinstance(path[1], int):
        return path[:2]
    if path[:1] in (("dims",), ("tensors",)):
        return path[:2]
    if path[:1] == ("layers",):
        if len(path) >= 4 and path[2] in ("stages", "warms") and isinstance(path[3], int):
            return path[:4]
        return path[:2]
    return path[:1]


def _spoil(tree: dict[str, Any], spoils: PathT | _KeyOnly, broken: Broken) -> None:
    """Mark what the error at ``path`` spoils, so the models can still be built."""
    if isinstance(spoils, _KeyOnly):
        _drop_key(tree, spoils.path, broken)
        return
    path = spoils
    if not path:
        return
    last = path[-1]
    optional = isinstance(last, str) and last not in _REQUIRED_KEYS and len(path) > 1
    if optional and _entity(path) != path and _drop_key(tree, path, broken):
        return
    target = _entity(path)
    top = str(target[0])
    if len(target) == 1:
        if top in _STAND_INS:
            tree[top] = _STAND_INS[top]
            broken.platform = broken.platform or top == "platform"
            broken.model = broken.model or top == "model"
        elif top in ("dims", "tensors", "layers"):
            tree[top] = {}
            broken.all_dims |= top == "dims"
            broken.all_tensors |= top == "tensors"
            broken.all_kinds |= top == "layers"
        else:
            tree[top] = _SPOILED
            broken.config |= top == "config"
        return
    node = _get(tree, target)
    if node is _MISSING or node is _SPOILED:
        return  # dropped already, with what holds it: its name is remembered
    if (isinstance(target[-1], int) and target[-2] in _ITEM_LISTS) or top == "forward":
        broken.forward |= top == "forward"
    elif top == "layers" and len(target) == 4 and target[2] == "stages":
        # A stand-in keeps the stage's index, so the stages after it keep theirs.
        index = int(target[3])
        broken.standin_stages.add((str(target[1]), index))
        name = node.get("name") if isinstance(node, dict) else None
        if isinstance(name, str):
            broken.stages.add((str(target[1]), name))
        stages = _get(tree, target[:-1])
        stages[index] = {"name": f"<stage {index}>"}
        return
    elif top == "dims":
        broken.dims.add(str(target[1]))
    elif top == "tensors":
        broken.tensors.add(str(target[1]))
    elif len(target) == 2:
        broken.kinds.add(str(target[1]))
    elif target[2] == "stages" and isinstance(node, dict) and isinstance(node.get("name"), str):
        broken.stages.add((str(target[1]), node["name"]))
    parent = _get(tree, target[:-1])
    if isinstance(parent, dict | list) and node is not _MISSING:
        parent[target[-1]] = _SPOILED  # type: ignore[index]


def _drop_key(tree: dict[str, Any], path: PathT, broken: Broken) -> bool:
    """Drop the one mapping entry at ``path``; whether it was there to drop."""
    parent = _get(tree, path[:-1])
    if not (isinstance(parent, dict) and path[-1] in parent):
        return False
    parent[path[-1]] = _SPOILED
    # A dropped `forward.kinds` entry leaves the config values it mapped without a
    # kind: that is not news.
    broken.forward |= path[:2] == ("forward", "kinds")
    return True


class _Spoiled:
    pass


_SPOILED = _Spoiled()
_MISSING = object()


def _get(tree: Any, path: Iterable[str | int]) -> Any:
    node = tree
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


def _drop_spoiled(node: Any, path: PathT, kept: dict[PathT, list[int]]) -> Any:
    """The tree without its spoiled parts; ``kept`` maps each list to its surviving indices."""
    if isinstance(node, dict):
        return {k: _drop_spoiled(v, (*path, k), kept) for k, v in node.items() if v is not _SPOILED}
    if isinstance(node, list):
        indices = [i for i, v in enumerate(node) if v is not _SPOILED]
        if len(indices) != len(node):
            kept[path] = indices
        return [_drop_spoiled(node[i], (*path, i), kept) for i in indices]
    return node
