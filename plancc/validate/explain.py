"""Explaining schema errors: each failing JSON Schema keyword has its handler, which
yields the diagnostics at the node at fault, each with what it spoils."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from plancc import codes
from plancc.diagnostics import Diagnostic, diag
from plancc.load import Document, PathT
from plancc.schema.plan import NAME_PATTERNS, SIZE_PATTERN
from plancc.tables.names import suggest
from plancc.text import clip
from plancc.validate.recover import KeyOnly

_JSON_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


# What a schema error spoils: a path (that node, or the entity it is required by),
# one unknown key, or nothing.
Spoils = PathT | KeyOnly | None
Explained = Iterator[tuple[Diagnostic, Spoils]]


def kind_of(value: Any) -> str:
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


def explain(doc: Document, err: Any) -> Explained:
    """Diagnostics for one schema error, each with the path it spoils (None: nothing)."""
    path: PathT = tuple(err.absolute_path)
    v = err.validator
    if path == ("plancc",) and v in ("const", "type"):
        yield from _version(doc, err, path)
        return
    if "propertyNames" in err.schema_path:
        yield from _property_names(doc, err, path)
        return
    if v == "pattern" and err.validator_value in NAME_PATTERNS:
        return  # PC013, reported by resolve
    if v == "enum" and path[-1:] == ("dtype",):
        return  # PC023, reported by resolve
    if v == "minItems" and path == ("forward",):
        return  # PC014, reported by resolve
    handler = _HANDLERS.get(v, _other)
    yield from handler(doc, err, path)


Handler = Callable[[Document, Any, PathT], Explained]


def _version(doc: Document, err: Any, path: PathT) -> Explained:
    if err.validator == "type" or err.instance != 1:
        if err.validator == "const" and not isinstance(err.instance, int):
            return  # the type error says it
        got = json.dumps(err.instance) if not isinstance(err.instance, str) else repr(err.instance)
        yield (
            diag(
                doc.file,
                doc.at(path),
                codes.VERSION,
                f"plancc must be the integer 1, not {clip(got)}",
                "1 is the only plan format version; write `plancc: 1`",
            ),
            path,
        )


def _property_names(doc: Document, err: Any, path: PathT) -> Explained:
    if err.validator_value in NAME_PATTERNS:
        return  # PC013, reported by resolve
    key_path = (*path, err.instance)
    yield (
        diag(
            doc.file,
            doc.key_at(key_path),
            codes.STRUCTURE,
            f"{_where(path)} key '{err.instance}' must be an integer (a value of the config list)",
        ),
        key_path,
    )


def _required(doc: Document, err: Any, path: PathT) -> Explained:
    for key in err.validator_value:
        if key not in err.instance:
            # A top-level key spoils only itself: the rest of the plan is still checked.
            spoiled = path if path else (key,)
            message = f"{_where(path)} is missing required key '{key}'"
            yield diag(doc.file, doc.at(path), codes.STRUCTURE, message), spoiled


def _additional_properties(doc: Document, err: Any, path: PathT) -> Explained:
    allowed = list(err.schema.get("properties", {}))
    for key in err.instance:
        if key not in allowed:
            key_path = (*path, key)
            hint = suggest(key, allowed) or f"allowed keys: {', '.join(sorted(allowed))}"
            yield (
                diag(
                    doc.file,
                    doc.key_at(key_path),
                    codes.STRUCTURE,
                    f"unknown key '{clip(key)}' in {_where(path)}",
                    hint,
                ),
                KeyOnly(key_path),
            )


# dependentRequired pairs, said in the plan's words.
_NEEDS = {
    ("allow", "reason"): "`allow` needs a `reason`: say why the warnings are accepted",
    ("reason", "allow"): "`reason` without `allow` explains nothing: add the `allow` it is for",
}


def _dependent_required(doc: Document, err: Any, path: PathT) -> Explained:
    for key, needs in err.validator_value.items():
        if key in err.instance:
            missing = [n for n in needs if n not in err.instance]
            yield (
                diag(
                    doc.file,
                    doc.key_at((*path, key)),
                    codes.STRUCTURE,
                    _NEEDS.get(
                        (key, missing[0]), f"'{key}' in {_where(path)} needs '{missing[0]}'"
                    ),
                ),
                None,
            )


def _type(doc: Document, err: Any, path: PathT) -> Explained:
    expected = _expected(err.validator_value)
    message = f"{_where(path)} must be {expected}, not {kind_of(err.instance)}"
    yield diag(doc.file, doc.at(path), codes.STRUCTURE, message), path


def _enum(doc: Document, err: Any, path: PathT) -> Explained:
    options = ", ".join(str(o) for o in err.validator_value)
    closest = suggest(str(err.instance), [str(o) for o in err.validator_value])
    yield (
        diag(
            doc.file,
            doc.at(path),
            codes.STRUCTURE,
            f"{_where(path)} '{clip(str(err.instance))}' is not one of: {options}",
            closest,
        ),
        path,
    )


def _pattern(doc: Document, err: Any, path: PathT) -> Explained:
    if err.validator_value != SIZE_PATTERN:
        yield from _other(doc, err, path)
        return
    yield (
        diag(
            doc.file,
            doc.at(path),
            codes.STRUCTURE,
            f"{_where(path)} '{clip(str(err.instance))}' is not a size",
            "give a number of bytes, a number with a unit: B, kB, MB, GB, KiB, MiB, GiB, "
            "or a dim expression in bytes (65536 * CTX)",
        ),
        path,
    )


def _other(doc: Document, err: Any, path: PathT) -> Explained:
    """A keyword with a one-phrase message (or jsonschema's own message)."""
    messages = {
        "minItems": "must not be empty",
        "minProperties": "must not be empty",
        "minLength": "must not be empty",
        "minimum": f"must be at least {err.validator_value}",
        "exclusiveMinimum": f"must be greater than {err.validator_value}",
        "maximum": f"must be at most {err.validator_value}",
        "exclusiveMaximum": f"must be less than {err.validator_value}",
    }
    text = messages.get(err.validator, err.message)
    yield diag(doc.file, doc.at(path), codes.STRUCTURE, f"{_where(path)} {text}"), path


def _expected(types: str | list[str]) -> str:
    names = [types] if isinstance(types, str) else types
    return " or ".join(_JSON_TYPES.get(t, t) for t in names)


def _any_of(doc: Document, err: Any, path: PathT) -> Explained:
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
            yield from explain(doc, sub)
        return
    words = " or ".join(dict.fromkeys(_JSON_TYPES.get(t, t) for t in expected))
    yield (
        diag(
            doc.file,
            doc.at(path),
            codes.STRUCTURE,
            f"{_where(path)} must be {words}, not {kind_of(err.instance)}",
        ),
        path,
    )


def _branch_types(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# The failing keyword -> its handler; any other keyword: `_other`.
_HANDLERS: dict[str, Handler] = {
    "required": _required,
    "additionalProperties": _additional_properties,
    "dependentRequired": _dependent_required,
    "anyOf": _any_of,
    "type": _type,
    "enum": _enum,
    "pattern": _pattern,
}
