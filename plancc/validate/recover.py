"""Recovery: remove from the tree what each schema error spoils, remember what was dropped.

An unknown or ill-typed optional key is dropped; an entity missing a required key
(a dim, tensor, stage, warm, layer kind) is dropped whole and its name kept in
``Broken``; a stage becomes a stand-in that keeps its index.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from plancc.load import PathT
from plancc.tables.resources import read_text


@cache
def required_keys() -> frozenset[str]:
    """Keys that are required somewhere in the format (every `required` of the schema):
    a bad value under one of them spoils its whole entity; a bad optional key is simply
    dropped."""

    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            required = node.get("required")
            if isinstance(required, list):
                yield from required
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)

    return frozenset(walk(json.loads(read_text("schemas", "warm-plan.schema.json"))))


_STAND_INS: dict[str, Any] = {"plancc": 1, "model": "invalid_model", "platform": ""}


@dataclass
class Broken:
    """Names whose definitions were dropped; references to them are not reported."""

    dims: set[str] = field(default_factory=set)  # and params
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
class KeyOnly:
    """An unknown key: it spoils only itself, whatever its name means elsewhere."""

    path: PathT


# Lists of references whose bad items are dropped one by one: the rest of the
# list, and the entity that holds it, stay checkable.
_ITEM_LISTS = frozenset({"reads", "deps", "allow", "ignore", "tensors"})


def _entity(path: PathT) -> PathT:
    """The smallest entity that a bad value at ``path`` spoils."""
    for i in range(len(path) - 1):
        if path[i] in _ITEM_LISTS and isinstance(path[i + 1], int):
            return path[: i + 2]  # one item of a list of names
    if path[:1] == ("forward",) and len(path) >= 2 and isinstance(path[1], int):
        return path[:2]
    if path[:1] in (("dims",), ("params",), ("tensors",)):
        return path[:2]
    if path[:1] == ("layers",):
        if len(path) >= 4 and path[2] in ("stages", "warms") and isinstance(path[3], int):
            return path[:4]
        return path[:2]
    return path[:1]


def spoil(tree: dict[str, Any], spoils: PathT | KeyOnly, broken: Broken) -> None:  # noqa: C901, PLR0912 (one branch per kind of spoil a schema error leaves)
    """Mark what the error at ``path`` spoils, so the models can still be built."""
    if isinstance(spoils, KeyOnly):
        _drop_key(tree, spoils.path, broken)
        return
    path = spoils
    if not path:
        return
    last = path[-1]
    optional = isinstance(last, str) and last not in required_keys() and len(path) > 1
    if optional and _entity(path) != path and _drop_key(tree, path, broken):
        return
    target = _entity(path)
    top = str(target[0])
    if len(target) == 1:
        if top in _STAND_INS:
            tree[top] = _STAND_INS[top]
            broken.platform = broken.platform or top == "platform"
            broken.model = broken.model or top == "model"
        elif top in ("dims", "params", "tensors", "layers"):
            tree[top] = {}
            broken.all_dims |= top in ("dims", "params")  # a param is looked up as a dim is
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
    elif top in ("dims", "params"):
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


def drop_spoiled(node: Any, path: PathT, kept: dict[PathT, list[int]]) -> Any:
    """The tree without its spoiled parts; ``kept`` maps each list to its surviving indices."""
    if isinstance(node, dict):
        return {k: drop_spoiled(v, (*path, k), kept) for k, v in node.items() if v is not _SPOILED}
    if isinstance(node, list):
        indices = [i for i, v in enumerate(node) if v is not _SPOILED]
        if len(indices) != len(node):
            kept[path] = indices
        return [drop_spoiled(node[i], (*path, i), kept) for i in indices]
    return node
