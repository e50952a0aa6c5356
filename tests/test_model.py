"""plancc.model's plain classes mirror plancc.schema_model's pydantic models, the format's source.

Field for field (names, defaults), and value for value: every tree that
``validate`` builds a plan from, over the whole corpus, gives the same plan
through ``model.plan_from_tree`` as through pydantic's ``model_validate``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic
import pytest

from plancc import model, schema_model
from plancc.api import validate_paths

ROOT = Path(__file__).parent.parent
CORPUS = sorted((ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (ROOT / "plans").glob("*.yaml")
)
CLASSES = sorted(
    name
    for name, cls in vars(schema_model).items()
    if isinstance(cls, type)
    and issubclass(cls, pydantic.BaseModel)
    and cls.__module__ == schema_model.__name__
    and not name.startswith("_")
)


def _is_class(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def test_every_model_has_its_class() -> None:
    assert (
        sorted(
            name
            for name, cls in vars(model).items()
            if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")
        )
        == CLASSES
    )


@pytest.mark.parametrize("name", CLASSES)
def test_same_fields_and_defaults(name: str) -> None:
    ours = getattr(model, name)
    theirs = getattr(schema_model, name).model_fields
    assert set(ours._fields) == set(theirs)
    for key, info in theirs.items():
        if info.is_required():
            assert key not in ours._field_defaults, key
        else:
            assert _plain(ours._field_defaults[key]) == _plain(info.default), key


def _plain(value: Any) -> Any:
    """A value with its type kept at every level: 1 and 1.0 and True differ, as do a
    name and a mapping."""
    if isinstance(value, pydantic.BaseModel):
        return (
            type(value).__name__,
            {k: _plain(getattr(value, k)) for k in type(value).model_fields},
        )
    if _is_class(value):
        return (type(value).__name__, {k: _plain(getattr(value, k)) for k in value._fields})
    if isinstance(value, Mapping):  # a dict, or the read-only empty default
        return ("dict", {k: _plain(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ("list", [_plain(v) for v in value])
    return (type(value).__name__, value)


@functools.cache
def _trees(plan: Path) -> tuple[dict[str, Any], ...]:
    """Every tree ``validate`` builds a plan from while it checks ``plan``."""
    import plancc.validate as stage

    trees: list[dict[str, Any]] = []

    def spy(tree: dict[str, Any]) -> model.Plan:
        trees.append(tree)
        return model.plan_from_tree(tree)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stage, "plan_from_tree", spy)
        validate_paths([str(plan)])
    return tuple(trees)


@pytest.mark.parametrize("plan", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_corpus_builds_the_same_plan(plan: Path) -> None:
    for tree in _trees(plan):
        ours = _plain(model.plan_from_tree(tree))
        assert ours == _plain(schema_model.Plan.model_validate(tree))


def test_the_corpus_reaches_every_class() -> None:
    """The comparison above sees each class built at least once (a case per union arm)."""
    seen: set[str] = set()

    def walk(value: Any) -> None:
        if _is_class(value):
            seen.add(type(value).__name__)
            for v in value:
                walk(v)
        elif isinstance(value, dict | list):
            for v in value.values() if isinstance(value, dict) else value:
                walk(v)

    for plan in CORPUS:
        for tree in _trees(plan):
            walk(model.plan_from_tree(tree))
    assert seen == set(CLASSES)
