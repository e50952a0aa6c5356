"""The plan format, version 1, in memory: frozen dataclasses built from a schema-valid tree.

``validate`` hands ``plan_from_tree`` a tree that passed the JSON Schema (or
lost what failed it), so building is only defaults and the two unions (a warm's
tensor item, ``forward``); nothing is checked twice. The format's definition,
and the source of ``schemas/warm-plan.schema.json``, is ``plancc.schema_model``
(pydantic): these classes mirror it field for field, which
``tests/test_model.py`` holds them to. They are named tuples, not pydantic
models or dataclasses, because a cold ``plancc validate`` would spend about 200 ms
importing pydantic and about 15 ms creating dataclasses; a named tuple is
immutable and costs a fraction of either; their empty defaults are immutable too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from plancc.names import KEYWORDS, MAX_NAME, RESERVED, RESERVED_SUFFIX

_NOT_KEYWORD = "(?!(?:" + "|".join(sorted(KEYWORDS)) + ")$)"
# At most MAX_NAME characters, as names.identifier_problem checks (PC013).
NAME_PATTERN = f"^{_NOT_KEYWORD}[A-Za-z][A-Za-z0-9_]{{0,{MAX_NAME - 1}}}$"
# Dims, tensors and warms also avoid the generated module's own names (PC013).
_NOT_RESERVED = "(?!(?:" + "|".join(sorted(RESERVED)) + ")$)(?!.*" + RESERVED_SUFFIX + "$)"
UNRESERVED_NAME_PATTERN = NAME_PATTERN.replace("^", "^" + _NOT_RESERVED, 1)
NAME_PATTERNS = frozenset({NAME_PATTERN, UNRESERVED_NAME_PATTERN})
# `PATH:FUNCTION`: a Python file and the function in it (the path may hold colons).
SOURCE_PATTERN = r"^.+:[A-Za-z_][A-Za-z0-9_]*$"
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
SIZE_PATTERN = r"^\s*[0-9]{1,15}(\.[0-9]{1,15})?\s*(B|kB|MB|GB|KiB|MiB|GiB)\s*$"

DimExpr = int | str  # an integer, a dim or config key name, or an expression over them


class Budget(NamedTuple):
    l2_fraction: float = 0.75


class Tensor(NamedTuple):
    shape: list[DimExpr]
    dtype: str
    flat: list[DimExpr] | None = None


class Stage(NamedTuple):
    name: str
    task: str | None = None
    deps: Sequence[str] | None = None  # None: waits for the stage listed before it
    reads: Sequence[str] = ()
    streams: int | str | None = None
    sdma: bool = False
    group: str | None = None
    duration_us: float | None = None
    kernel: str | None = None


class WarmTensor(NamedTuple):
    tensor: str
    flat: list[DimExpr] | None = None


class Warm(NamedTuple):
    name: str
    after: str
    tensors: list[str | WarmTensor]
    name_hint: str | None = None
    allow: list[str] | None = None
    reason: str | None = None


class Layer(NamedTuple):
    stages: list[Stage]
    warms: Sequence[Warm] = ()
    source: str | None = None  # `PATH:FUNCTION` of the model code (docs/sources.md)
    # plan tensor -> the source parameter it stands for, where the names differ
    source_params: Mapping[str, str] = MappingProxyType({})


class ForwardEntry(NamedTuple):
    layer: str
    repeat: DimExpr = 1


class ForwardFromConfig(NamedTuple):
    from_config: str
    kinds: dict[str, str]
    layers: DimExpr | None = None


class Lint(NamedTuple):
    ignore: Sequence[str] = ()


class Plan(NamedTuple):
    plancc: int
    model: str
    platform: str
    tensors: dict[str, Tensor]
    layers: dict[str, Layer]
    budget: Budget = Budget()
    config: str | None = None
    dims: Mapping[str, DimExpr] = MappingProxyType({})
    forward: list[str | ForwardEntry] | ForwardFromConfig | None = None
    lint: Lint = Lint()
    source_root: str | None = None


def plan_from_tree(tree: dict[str, Any]) -> Plan:
    """The plan of a schema-valid tree (every key the schema allows, of its type)."""
    budget = tree.get("budget")
    forward = tree.get("forward")
    lint = tree.get("lint")
    return Plan(
        plancc=tree["plancc"],
        model=tree["model"],
        platform=tree["platform"],
        tensors={name: Tensor(**t) for name, t in tree["tensors"].items()},
        layers={kind: _layer(layer) for kind, layer in tree["layers"].items()},
        budget=Budget() if budget is None else Budget(**_floats(budget, "l2_fraction")),
        config=tree.get("config"),
        dims=tree.get("dims", {}),
        forward=_forward(forward),
        lint=Lint() if lint is None else Lint(**lint),
        source_root=tree.get("source_root"),
    )


def _layer(layer: dict[str, Any]) -> Layer:
    warms = [
        Warm(
            **{**w, "tensors": [t if isinstance(t, str) else WarmTensor(**t) for t in w["tensors"]]}
        )
        for w in layer.get("warms", ())
    ]
    stages = [Stage(**_floats(s, "duration_us")) for s in layer["stages"]]
    return Layer(stages, warms, layer.get("source"), layer.get("source_params", {}))


def _floats(node: dict[str, Any], key: str) -> dict[str, Any]:
    """``node`` with ``key`` a float: the format's numbers with a fraction read 1 as 1.0."""
    value = node.get(key)
    return node if value is None or isinstance(value, float) else {**node, key: float(value)}


def _forward(forward: Any) -> list[str | ForwardEntry] | ForwardFromConfig | None:
    if isinstance(forward, dict):
        return ForwardFromConfig(**forward)
    if forward is None:
        return None
    return [e if isinstance(e, str) else ForwardEntry(**e) for e in forward]
