"""`plancc suggest`'s properties: what holds for every plan, not only the seed's tables."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from plancc import api, ir
from plancc.facts import facts_of
from plancc.load.inputs import PlanInput
from plancc.suggest import suggest, suggest_plan
from plancc.suggest.rank import label

ROOT = Path(__file__).resolve().parent.parent
GRAPH = ROOT / "tests/data/suggest/flash_csa_graph.yaml"
FLASH = ROOT / "plans/deepseek_v4_flash.yaml"
ORDER = {"gain": 0, "none": 1, "contended": 2, "loss": 3, "infeasible": 4}


def _tree() -> dict[str, Any]:
    """The graph form as data, every stage with its `deps` (the MoE's made explicit), so
    that any topological listing of the stages is the same graph."""
    tree: dict[str, Any] = YAML(typ="safe").load(GRAPH.read_text("utf-8"))
    stages = tree["layers"]["csa"]["stages"]
    for before, stage in itertools.pairwise(stages):
        stage.setdefault("deps", [before["name"]])
    return tree


def _write(tmp_path: Path, tree: dict[str, Any], name: str = "plan.yaml") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(tree, indent=1), "utf-8")  # JSON is YAML
    return str(path)


def _plan(path: str) -> ir.Plan:
    raw = Path(path).read_bytes()
    result = api.diagnose_plan(PlanInput(path, Path(path)), raw)
    assert result.plan is not None
    return result.plan


def _ranking(path: str) -> list[tuple[str, str]]:
    found = suggest(path)
    return [(label(r.evaluation), r.klass) for layer in found.layers for r in layer.ranked]


@pytest.mark.parametrize("path", [GRAPH, FLASH])
def test_never_suggests_what_validate_rejects(tmp_path: Path, path: Path) -> None:
    tree: dict[str, Any] = YAML(typ="safe").load(path.read_text("utf-8"))
    for key in ("config", "source_root"):  # the plan's files, from where it is
        if key in tree:
            tree[key] = str(path.parent / tree[key])
    found = suggest(str(path))
    checked = 0
    for layer in found.layers:
        for r in layer.ranked:
            c = r.evaluation.candidate
            if c.none:
                continue
            tree["layers"][layer.kind]["warms"] = [
                {
                    "name": f"w_{layer.kind}_{i}",
                    "after": a[0] if len(a) == 1 else list(a),
                    "tensors": list(t),
                }
                for i, (a, t) in enumerate(c.parts)
            ]
            result = api.validate_paths([_write(tmp_path, tree)])
            assert result.errors == 0, (label(r.evaluation), result.diagnostics)
            checked += 1
    assert checked > 10


def test_the_same_ranking_for_every_valid_listing_order(tmp_path: Path) -> None:
    tree = _tree()
    expected = _ranking(_write(tmp_path, tree))
    stages = tree["layers"]["csa"]["stages"]
    rng = random.Random(7)
    for k in range(4):
        left, order = list(stages), []
        while left:  # a random topological order: any stage whose deps are all listed
            ready = [s for s in left if all(d in {o["name"] for o in order} for d in s["deps"])]
            pick = rng.choice(ready)
            order.append(pick)
            left.remove(pick)
        assert order != stages
        tree["layers"]["csa"]["stages"] = order
        assert _ranking(_write(tmp_path, tree, f"order{k}.yaml")) == expected


def test_deterministic() -> None:
    first = suggest(str(GRAPH))
    again = suggest(str(GRAPH))
    assert [(label(r.evaluation), r.reason) for r in first.layers[0].ranked] == [
        (label(r.evaluation), r.reason) for r in again.layers[0].ranked
    ]


def _classes(plan: ir.Plan) -> dict[str, str]:
    (layer,) = suggest_plan(facts_of(plan))
    return {label(r.evaluation): r.klass for r in (*layer.ranked, *layer.infeasible)}


def test_raising_l2_never_demotes_a_feasible_candidate(tmp_path: Path) -> None:
    plan = _plan(str(GRAPH))
    assert plan.platform is not None
    assert plan.platform.l2_bytes is not None
    before = _classes(plan)
    for factor in (2, 4):
        l2 = plan.platform.l2_bytes * factor
        after = _classes(replace(plan, platform=replace(plan.platform, l2_bytes=l2)))
        for name, klass in before.items():
            if klass != "infeasible":
                assert ORDER[after[name]] <= ORDER[klass], name
    assert before != after  # it does promote some: the property is not vacuous


@pytest.mark.slow  # 1.6 s: a suggest per candidate
def test_a_weight_stream_between_anchor_and_consumer_never_promotes(tmp_path: Path) -> None:
    tree = _tree()
    tree["tensors"]["w_new"] = {"shape": [4096, 4096], "dtype": "bf16"}  # 33.6 MB
    base = _write(tmp_path, tree)
    found = suggest(base)
    (layer,) = found.layers
    judged = 0
    for r in layer.ranked:
        e = r.evaluation
        if e.candidate.none or e.first is None or len(e.candidate.parts) > 1:
            continue
        if e.window_steps == 0:
            # Its consumer runs right after the anchor: a stage put between opens the
            # window PC107 judged shut, which changes what PC107 knows, not the stream.
            continue
        anchor, tensors = e.candidate.parts[0]
        grown = json.loads(json.dumps(tree))
        stages = grown["layers"]["csa"]["stages"]
        at = next(i for i, s in enumerate(stages) if s["name"] == e.first)
        # With a duration: the window keeps what PC107 could estimate in it.
        streamer = {"name": "streamer", "deps": list(anchor), "reads": ["w_new"], "duration_us": 1}
        stages.insert(at, streamer)
        stages[at + 1]["deps"] = [*stages[at + 1]["deps"], "streamer"]
        path = _write(tmp_path, grown, "grown.yaml")
        spec = f"csa:{'+'.join(anchor)}:{','.join(tensors)}"
        (after,) = suggest(path, ["csa"], [spec]).layers
        row = [x for x in (*after.ranked, *after.infeasible) if label(x.evaluation) == label(e)]
        assert ORDER[row[0].klass] >= ORDER[r.klass], (label(e), row[0].reason)
        judged += 1
    assert judged > 10
