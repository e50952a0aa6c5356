"""plancc.schema.gate, the compiled schema, answers only "passes or not", and only
"passes" when the jsonschema reference finds nothing: it may be stricter, never laxer."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from plancc.load import Document, load
from plancc.schema import gate as schema_gate
from plancc.validate import _validator

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (ROOT / "plans").glob("*.yaml")
)
VALID = [p for p in CORPUS if p.parent.name in {"valid", "plans"}]


def _data(plan: Path) -> Any:
    doc = load(plan.name, plan.read_bytes())
    return doc.data if isinstance(doc, Document) else None


@pytest.mark.parametrize("plan", CORPUS, ids=[p.name for p in CORPUS])
def test_a_plan_passes_the_gate_only_if_the_reference_finds_nothing(plan: Path) -> None:
    data = _data(plan)
    before = repr(data)
    if schema_gate.passes(data):
        assert list(_validator().iter_errors(data)) == []
    assert repr(data) == before  # the gate changes nothing (no defaults filled in)


@pytest.mark.parametrize("plan", VALID, ids=[p.name for p in VALID])
def test_valid_plans_take_the_gate(plan: Path) -> None:
    assert schema_gate.passes(_data(plan))


MINIMAL = {
    "plancc": 1,
    "model": "m",
    "platform": "a2a3",
    "dims": {"D": 4},
    "tensors": {"w": {"shape": ["D"], "dtype": "bf16"}},
    "layers": {"k": {"stages": [{"name": "s", "duration_us": 1.5}], "warms": []}},
    "budget": {"l2_fraction": 0.5},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("dims", "D"), 4.0),  # plancc's integer is no float
        (("tensors", "w", "shape"), [4.0]),
        (("budget", "l2_fraction"), float("nan")),  # and its number is finite
        (("layers", "k", "stages"), [{"name": "s", "duration_us": float("inf")}]),
        (("layers", "k", "warms"), [{"name": "w", "after": "s", "tensors": ["w"], "allow": []}]),
        (("dims", "D"), True),
    ],
)
def test_the_gate_is_as_strict_as_the_reference(path: tuple[str, ...], value: Any) -> None:
    data: Any = copy.deepcopy(MINIMAL)
    assert schema_gate.passes(data)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert list(_validator().iter_errors(data))
    assert not schema_gate.passes(data)
