"""Every derived file is current: `make regen` would change none of them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests import regen


@pytest.mark.parametrize("path", sorted(regen.DERIVED), ids=lambda p: p.name)
def test_derived_file_is_current(path: Path) -> None:
    expected = regen.DERIVED[path]()
    assert path.read_text("utf-8") == expected, f"{path.name} is stale: run make regen"


def test_the_lists_follow_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # A new dtype or platform reaches every derived list (and so fails the test above
    # until `make regen` has run).
    from plancc.tables import dtypes, platforms

    monkeypatch.setitem(dtypes.DTYPES, "fp64", dtypes.DType("fp64", "FP64", 64))
    monkeypatch.setitem(platforms.PLATFORMS, "a9", platforms.Platform("a9", None, False, None, ""))
    schema = ROOT_SCHEMA.read_text("utf-8")
    assert '"uint64", "bool", "fp64"]' in regen._manifest_schema(schema)
    assert '"a5sim", "a9"]' in regen._manifest_schema(schema)
    # ... and so do the manifest's format id and the output names (plancc.tables.outputs).
    from plancc.tables import outputs

    monkeypatch.setattr(outputs, "MANIFEST_FORMAT", "plancc-manifest/2")
    monkeypatch.setattr(outputs, "MODULE_SUFFIX", "_prefetch.py")
    monkeypatch.setattr(outputs, "MANIFEST_SUFFIX", "_prefetch.json")
    manifest = regen._manifest_schema(schema)
    assert '"format": {"const": "plancc-manifest/2"}' in manifest
    assert '"title": "plancc runtime manifest, format plancc-manifest/2"' in manifest
    assert "module as <model>_prefetch.json. A serving" in manifest
    assert '"pattern": "^[A-Za-z][A-Za-z0-9_]*_prefetch\\\\.py$"' in manifest
    plan_format = regen._plan_format(PLAN_FORMAT.read_text("utf-8"))
    assert "uint64 bool fp64`" in plan_format
    assert "# a2a3 | a2a3sim | a5 | a5sim | a9\n" in plan_format


ROOT_SCHEMA = regen.MANIFEST
PLAN_FORMAT = regen.PLAN_FORMAT


def test_a_key_declared_on_a_model_reaches_the_plan_and_fmt() -> None:
    # Adding a key is one edit of plancc/schema/declared.py: `make regen` carries it to
    # the named tuple, its builder and the order `plancc fmt` writes.
    from pydantic import create_model

    from plancc.schema import declared as schema_model
    from tests import regen_model

    stage = create_model("Stage", __base__=schema_model.Stage, priority=(list[str], []))
    layer = create_model("Layer", __base__=schema_model.Layer, stages=(list[stage], ...))  # type: ignore[valid-type]
    plan = create_model(
        "Plan",
        __base__=schema_model.Plan,
        layers=(dict[str, layer], ...),
        scratch_dir=(str, "."),  # type: ignore[valid-type]
    )
    text = regen_model.generate(plan)
    assert "    priority: Sequence[str] = ()\n" in text
    assert "    scratch_dir: str = '.'\n" in text or '    scratch_dir: str = "."\n' in text
    namespace: dict[str, object] = {}
    exec(compile(text, "model.py", "exec"), namespace)
    order = namespace["KEY_ORDER"]
    assert order[()][-1] == "scratch_dir"  # type: ignore[index]
    assert order[("layers", "*", "stages", "#")][-1] == "priority"  # type: ignore[index]
    built = namespace["plan_from_tree"](  # type: ignore[operator]
        {"plancc": 1, "model": "m", "platform": "a2a3", "tensors": {}, "layers": {}}
    )
    assert built.scratch_dir == "."


CORPUS = sorted((regen.ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (regen.ROOT / "plans").glob("*.yaml")
)


def test_the_generated_builder_reads_the_corpus_as_pydantic_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every tree `validate` builds a plan from, over the whole corpus, gives the same
    # plan (types kept at every level: 1 is not 1.0) through plancc.schema.plan as through
    # pydantic, and the corpus builds every class at least once.
    import pydantic

    import plancc.validate as stage
    from plancc.api import validate_paths
    from plancc.schema import declared as schema_model
    from plancc.schema import plan as model

    trees: list[dict[str, Any]] = []

    def spy(tree: dict[str, Any]) -> model.Plan:
        trees.append(tree)
        return model.plan_from_tree(tree)

    monkeypatch.setattr(stage, "plan_from_tree", spy)
    validate_paths([str(p) for p in CORPUS])
    seen: set[str] = set()

    def plain(value: Any) -> Any:
        if isinstance(value, pydantic.BaseModel):
            return (
                type(value).__name__,
                {k: plain(getattr(value, k)) for k in type(value).model_fields},
            )
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            seen.add(type(value).__name__)
            return (type(value).__name__, {k: plain(getattr(value, k)) for k in value._fields})
        if isinstance(value, Mapping):
            return ("dict", {k: plain(v) for k, v in value.items()})
        if isinstance(value, list | tuple):
            return ("list", [plain(v) for v in value])
        return (type(value).__name__, value)

    assert len(trees) > len(CORPUS) // 2
    for tree in trees:
        assert plain(model.plan_from_tree(tree)) == plain(schema_model.Plan.model_validate(tree))
    classes = {
        name
        for name, cls in vars(schema_model).items()
        if isinstance(cls, type)
        and issubclass(cls, pydantic.BaseModel)
        and cls.__module__ == schema_model.__name__
        and not name.startswith("_")
    }
    assert seen == classes
