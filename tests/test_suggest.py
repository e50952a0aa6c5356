"""`plancc suggest`: the seed's tables as it ranks them, its properties, its command line."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc.cli.app import app
from plancc.facts import crossing
from plancc.facts.timeline import Timeline
from plancc.suggest import LayerSuggestions, candidates, output, suggest
from plancc.suggest.evaluate import _warm as candidate_warm
from plancc.suggest.output import CAPPED
from plancc.suggest.rank import label

ROOT = Path(__file__).resolve().parent.parent
GRAPH = str(ROOT / "tests/data/suggest/flash_csa_graph.yaml")
FLASH = str(ROOT / "plans/deepseek_v4_flash.yaml")
OPROJ = "wo_a,wo_b"
ANCHORS = {  # the seed's "Choosing the anchor": the same warm at each anchor
    "entry": f"csa:hc_pre:{OPROJ}",
    "rms_norm": f"csa:rms_norm:{OPROJ}",
    "kv": f"csa:kv_proj:{OPROJ}",
    "q": f"csa:q_proj:{OPROJ}",
    "sparse": f"csa:indexer_topk:{OPROJ}",
}
ALL_ATTENTION = (
    "wq_a,wkv,cmp_wkv,cmp_wgate,idx_wq_b,weights_proj,inner_wkv,inner_wgate,wq_b,wq_b_scale"
)


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1"})


def _layer(*given: str, plan: str = GRAPH, kind: str = "csa") -> LayerSuggestions:
    found = suggest(plan, [kind], list(given))
    assert not found.errors
    (layer,) = found.layers
    return layer


def _places(layer: LayerSuggestions) -> dict[str, int]:
    """Each ranked candidate's place, by its label; infeasible ones are not ranked."""
    return {label(r.evaluation): r.rank or 0 for r in layer.ranked}


def _at(anchor: str, tensors: str) -> str:
    return f"{anchor}: {tensors.replace(',', ', ')}"


def test_anchor_table() -> None:
    layer = _layer(*ANCHORS.values())
    at = _places(layer)
    entry, rms, kv, q, sparse = (_at(a.split(":")[1], OPROJ) for a in ANCHORS.values())
    none = at["no warm"]
    assert at[q] == 1  # the q output ranks first...
    assert at[sparse] == max(at[a] for a in (entry, rms, kv, q, sparse))  # ...its inputs last
    assert at[q] < none < at[rms]
    assert none < at[sparse]
    assert at[q] < min(at[entry], at[rms], at[kv], at[sparse])
    assert max(at[entry], at[kv]) < min(at[rms], at[sparse])
    assert at[rms] < at[sparse]
    reasons = {label(r.evaluation): r.reason for r in layer.ranked}
    assert (
        "76.2 MB (75 % of its 100.7 MB) of the layer's own weights stream while it is in flight"
        in reasons[entry]
    )
    assert "(PC107)" in reasons[sparse]


def test_streaming_past_a_warms_size_reads_as_a_ratio() -> None:
    layer = _layer(plan=FLASH)
    reasons = {label(r.evaluation): r.reason for r in layer.ranked}
    assert reasons["no warm"].endswith(": lands nothing")
    small = reasons["rms_norm: idx_wq_b"]
    assert "(4.1× its 8.4 MB) of the layer's own weights stream" in small
    assert " % " not in small


def test_warm_set_table() -> None:
    sets = ["wo_b", "wo_b,wo_a", "wo_a", OPROJ]
    layer = _layer(*(f"csa:q_proj:{s}" for s in sets), f"csa:rms_norm:{ALL_ATTENTION},{OPROJ}")
    at = _places(layer)
    b, ba, a, ab = (_at("q_proj", s) for s in sets)
    everything = _at("rms_norm", f"{ALL_ATTENTION},{OPROJ}")
    assert at[ab] == 1
    assert at[everything] == len(layer.ranked)  # every attention weight at rms_norm: last
    assert max(at[s] for s in (b, ba, a, ab)) < at["no warm"]
    assert at[ab] < min(at[ba], at[b], at[everything])
    assert at[a] < at[b]
    assert at[ba] < at[b]


def test_l2_table() -> None:
    layer = _layer(f"csa:q_proj:{OPROJ},routed_w1,routed_w3")
    over = _at("q_proj", f"{OPROJ},routed_w1,routed_w3")  # 268.4 MB, 1.33x L2
    (row,) = [r for r in layer.infeasible if label(r.evaluation) == over]
    assert "PC030" in row.evaluation.codes
    assert over not in _places(layer)
    # The MoE warm anchored before the dispatch: its window holds an sdma stage.
    (moe,) = [r for r in layer.ranked if label(r.evaluation) == "moe_gate: routed_w1, routed_w3"]
    assert moe.klass == "loss"
    assert moe.reason.endswith("spans the SDMA stage 'moe_dispatch' (PC105)")


SPLIT = """\
    warms:
      - {name: prefetch_wo_a, after: q_proj, tensors: [wo_a]}
      - {name: prefetch_wo_b, after: q_proj, tensors: [wo_b]}
"""


def test_one_scope_above_no_warm_and_the_split_below(tmp_path: Path) -> None:
    text = Path(GRAPH).read_text("utf-8")
    plan = tmp_path / "split.yaml"
    plan.write_text(text[: text.index("    warms:")] + SPLIT, "utf-8")
    layer = _layer(f"csa:q_proj:{OPROJ}", plan=str(plan))
    at = _places(layer)
    split = "q_proj: wo_a | q_proj: wo_b"
    assert at[_at("q_proj", OPROJ)] < at["no warm"] < at[split]
    (row,) = [r for r in layer.ranked if label(r.evaluation) == split]
    assert row.klass == "loss"
    assert "(PC101)" in row.reason


@pytest.mark.parametrize("kind", ["swa", "csa", "hca"])
def test_the_shipped_warm_tops_every_attention_kind(kind: str) -> None:
    top = _layer(plan=FLASH, kind=kind).ranked[0]
    assert (top.klass, label(top.evaluation)) == ("gain", "q_proj: wo_a, wo_b")


def test_json_shape() -> None:
    result = _run("suggest", GRAPH, "--format", "json", "--top", "50")
    assert result.exit_code == 0, result.output
    (layer,) = json.loads(result.output)["layers"]
    assert layer["layer"] == "csa"
    assert layer["durations"] == "plan"
    first = layer["candidates"][0]
    (none,) = [c for c in layer["candidates"] if c["class"] == "none"]
    assert first == {
        "rank": 1,
        "anchor": ["q_proj"],
        "tensors": ["wo_a", "wo_b"],
        "rows": [None, None],
        "next_layer": False,
        "guard": [],
        "class": "gain",
        "bytes": 100663296,
        "reason": "first: lands 25.6 MB with nothing streaming beside it",
        "codes": [],
        "allowed": [],
        "asked": False,
        "same": [["kv_proj", "q_proj"]],  # kv_proj beside q_proj finishes no later
        "measured": None,
    }
    assert (none["anchor"], none["tensors"], none["class"]) == ([], [], "none")
    assert all(c["rank"] is None and c["class"] == "infeasible" for c in layer["infeasible"])
    assert layer["notes"] == []


def test_text_says_hypotheses_and_the_recipe() -> None:
    result = _run("suggest", FLASH, "--layer", "csa", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "PYPTO_BENCH_WARMUP=500" in result.output
    assert "timing slots around 'proj_a'" in result.output
    assert result.output.rstrip().endswith(
        "Suggestions are hypotheses to measure: ranked by the rules' findings, not by "
        "measured times (docs/suggest.md)."
    )


def test_markdown_tables() -> None:
    result = _run("suggest", GRAPH, "--format", "markdown", "--top", "1")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("### csa (durations: the plan's duration_us)\n\n| rank |")
    assert (
        "| 1 | gain | q_proj | wo_a, wo_b | 100.7 MB | 0.50 | - | first: lands 25.6 MB"
        in result.output
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--candidate", "csa:q_proj"], "expected KIND:ANCHOR[+ANCHOR…]:T1,T2,…"),
        (["--candidate", "cs:q_proj:wo_a"], "unknown layer kind 'cs'; did you mean 'csa'?"),
        (["--candidate", "csa:q_prj:wo_a"], "unknown stage 'q_prj'; did you mean 'q_proj'?"),
        (["--candidate", "csa:q_proj:wo_c"], "unknown tensor 'wo_c'"),
        (["--candidate", "csa:q_proj:wo_a,wo_a"], "a tensor is listed twice"),
        (["--layer", "moe"], "--layer 'moe': unknown layer kind 'moe'"),
        (["--top", "0"], "--top 0: must be at least 1"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    result = _run("suggest", GRAPH, *args)
    assert result.exit_code == 2
    assert message in result.output


def test_a_plan_with_errors_gets_no_suggestion(tmp_path: Path) -> None:
    plan = tmp_path / "broken.yaml"
    plan.write_text(Path(GRAPH).read_text("utf-8").replace("[wo_a, wo_b]}", "[wo_c]}"), "utf-8")
    result = _run("suggest", str(plan))
    assert result.exit_code == 1
    assert "error PC010: unknown tensor 'wo_c'" in result.output
    assert "has errors: nothing suggested" in result.output


def test_fix_writes_the_top_gain_keeping_comments(tmp_path: Path) -> None:
    plan = tmp_path / "early.yaml"
    text = Path(GRAPH).read_text("utf-8")
    early = "{name: prefetch_o_proj_w, after: rms_norm, tensors: [wo_b]}  # too early"
    plan.write_text(
        text.replace("{name: prefetch_o_proj_w, after: q_proj, tensors: [wo_a, wo_b]}", early),
        "utf-8",
    )
    result = _run("suggest", str(plan), "--top", "1", "--fix")
    assert result.exit_code == 0, result.output
    assert result.output.endswith("csa: wrote warm q_proj: wo_a, wo_b\n")
    fixed = plan.read_text("utf-8")
    # The values that change, written in place: every comment kept, the rest as it was.
    assert fixed == text.replace(
        "{name: prefetch_o_proj_w, after: q_proj, tensors: [wo_a, wo_b]}",
        "{name: prefetch_o_proj_w, after: q_proj, tensors: [wo_a, wo_b]}  # too early",
    )
    assert _run("validate", str(plan)).exit_code == 0
    again = _run("suggest", str(plan), "--top", "1", "--fix")
    assert again.output.endswith("csa: the top gain (q_proj: wo_a, wo_b) is its warm already\n")
    assert plan.read_text("utf-8") == fixed


@pytest.mark.parametrize(("bom", "newline"), [("\ufeff", "\r\n"), ("", "\r")])
def test_fix_keeps_the_bom_and_the_line_breaks(tmp_path: Path, bom: str, newline: str) -> None:
    plan = tmp_path / "early.yaml"
    text = (
        Path(GRAPH)
        .read_text("utf-8")
        .replace("after: q_proj, tensors: [wo_a, wo_b]}", "after: rms_norm, tensors: [wo_a, wo_b]}")
    )
    plan.write_bytes((bom + text.replace("\n", newline)).encode())
    result = _run("suggest", str(plan), "--top", "1", "--fix")
    assert result.exit_code == 0, result.output
    want = bom + Path(GRAPH).read_text("utf-8").replace("\n", newline)
    assert plan.read_bytes() == want.encode()


NOTHING_LANDS = """\
plancc: 1
model: nothing_lands
platform: a2a3
tensors: {w: {shape: [1048576], dtype: bf16}}
layers:
  k:
    stages:
      - {name: a, task: a_tid}
      - {name: b, reads: [w]}
"""


def test_fix_writes_nothing_when_nothing_beats_no_warm(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(NOTHING_LANDS, "utf-8")
    result = _run("suggest", str(plan), "--fix")
    assert result.exit_code == 0, result.output
    assert "nothing beats no warm here: no warm to measure" in result.output
    assert result.output.endswith("k: nothing beats no warm: nothing written\n")
    assert plan.read_text("utf-8") == NOTHING_LANDS


def test_enumeration_stops_at_its_bound_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(candidates, "MAX_GENERATED", 3)
    layer = _layer(f"csa:hc_pre:{OPROJ}")
    assert layer.capped
    said = _run("suggest", GRAPH, "--top", "1").output.splitlines()
    assert said[1] == CAPPED
    every = [*layer.ranked, *layer.infeasible]
    assert sum(r.evaluation.candidate.origin == "enumerated" for r in every) <= 3
    assert any(label(r.evaluation) == _at("hc_pre", OPROJ) for r in every)  # given: kept
    monkeypatch.undo()
    assert not _layer().capped
    result = _run("suggest", FLASH, "--format", "json", "--top", "1")
    assert [layer["capped"] for layer in json.loads(result.output)["layers"]] == [False] * 3


JOIN = "q_proj+k_proj+v_proj: wo if CTX <= 2272"  # Qwen3-14B's warm


def test_equivalent_anchors_are_one_row_the_plans_own_first() -> None:
    # Qwen3-14B's warm waits for q, k and v (a join); anchored at q alone (the slowest of
    # the three), or at any join of q with a stage finishing no later (a seed at layer
    # entry, k or v), it has the same findings: one row, the plan's own warm.
    # The plan's warm is guarded (CTX <= 2272); so is each of the others, where the check
    # finds it evicted at CTX=4096 and a gain up to 2,272 (``ranges``).
    layer = _layer(plan=str(ROOT / "plans/qwen3_14b.yaml"), kind="decode_layer")
    (row,) = [r for r in layer.ranked if label(r.evaluation) == JOIN]
    assert row.klass == "gain"
    assert row.evaluation.candidate.origin == "declared"
    same = {label(e) for e in row.same}
    guard = " if CTX <= 2272"
    assert {f"q_proj: wo{guard}", f"k_proj+q_proj: wo{guard}"} <= same
    assert f"attn_out_seed+q_proj: wo{guard}" in same
    assert f"k_proj: wo{guard}" not in same  # q_proj beside it still streams wq: PC104


def test_a_warm_at_a_shorter_stage_beside_a_longer_one_streams_the_longers_weights() -> None:
    # k_proj (17 µs) finishes while q_proj (63 µs) beside it still streams wq: a warm of
    # wo at k_proj alone is in flight during that stream, the join waits it out.
    layer = _layer(plan=str(ROOT / "plans/qwen3_14b.yaml"), kind="decode_layer")
    by_label = {label(r.evaluation): r for r in layer.ranked}
    join, alone = by_label[JOIN], by_label["k_proj: wo"]
    assert (join.klass, alone.klass) == ("gain", "loss")
    assert alone.evaluation.streamed == 52_428_800 + 163_840  # wq, and normed_in's slab
    assert alone.evaluation.codes == ("PC104", "PC106")  # and evicted at CTX=4096
    assert not alone.reason.startswith("ties")


def test_the_infeasible_list_is_capped_at_top_but_for_the_candidates_asked() -> None:
    over = ["routed_w1,routed_w3", "routed_w3,routed_w1", "wq_b,routed_w1,routed_w3"]
    given = [a for w in over for a in ("--candidate", f"csa:q_proj:{OPROJ},{w}")]  # over L2
    result = _run("suggest", GRAPH, "--top", "2", *given)
    assert result.exit_code == 0, result.output
    _head, _, rest = result.output.partition("infeasible (never ranked, never written):\n")
    listed, _, _ = rest.partition("\nto measure")
    assert sum(line.startswith("* q_proj: ") for line in listed.splitlines()) == 3
    assert listed.endswith("\n* a --candidate you asked about")
    found = suggest(GRAPH, ["csa"], [g for g in given if g != "--candidate"])
    unasked = dataclasses.replace(found.layers[0], given=frozenset())
    shown = output.text(dataclasses.replace(found, layers=(unasked,)), 2)
    _head, _, rest = shown.partition("infeasible (never ranked, never written):\n")
    listed, _, _ = rest.partition("\nto measure")
    assert sum(line.startswith("  q_proj: ") for line in listed.splitlines()) == 2
    assert listed.endswith("\n  … 1 more")


# Two stages of one step, the faster listed first: a join of both waits for the slower.
BESIDE = """\
plancc: 1
model: beside
platform: a2a3
dims: {H: 5120}
tensors:
  wo: {shape: [H, H], dtype: bf16}
layers:
  dec:
    stages:
      - {name: entry, task: entry_tid, duration_us: 1}
      - {name: fast, deps: [entry], task: fast_tid, duration_us: 1}
      - {name: slow, deps: [entry], task: slow_tid, duration_us: 9}
      - {name: o_proj, deps: [fast, slow], reads: [wo], duration_us: 1}
    warms:
      - {name: warm_wo, after: [fast, slow], tensors: [wo]}
"""


def test_a_join_candidate_waits_for_the_anchor_resolve_picks(tmp_path: Path) -> None:
    plan = tmp_path / "beside.yaml"
    plan.write_text(BESIDE, "utf-8")
    found = suggest(str(plan), ["dec"], ["dec:fast+slow:wo"])
    assert found.plan is not None
    (declared,) = found.plan.layers["dec"].warms
    assert declared.anchor == 2  # resolve: the slower of one step
    (row,) = [r for r in found.layers[0].ranked if label(r.evaluation) == "fast+slow: wo"]
    layer = found.plan.layers["dec"]
    setting = candidates.Setting(found.plan, layer, Timeline(found.plan, layer))
    given = candidates.one("dec", ("fast", "slow"), ("wo",), "given")
    judged = candidate_warm(setting, given, 0)
    assert (judged.anchor, judged.live) == (declared.anchor, declared.live)
    assert row.evaluation.window_us == 0  # from slow's finish, not fast's (8 µs)
    assert found.layers[0].asked(row)  # the plan's own warm, which the --candidate is too


def test_set_fixes_a_param_and_ranks_at_that_value(tmp_path: Path) -> None:
    # At the default context (2048) the KV stream leaves Qwen3-14B's wo warm in L2; at
    # 4096 it evicts it (PC106). The shipped warm is guarded (CTX <= 2272): at 4096 the
    # rules rank the same warm, unguarded, below no warm.
    qwen = str(ROOT / "plans/qwen3_14b.yaml")
    at_default = json.loads(_run("suggest", qwen, "--format", "json").output)
    result = _run("suggest", qwen, "--format", "json", "--set", "CTX=4096")
    assert result.exit_code == 0, result.output
    at_4096 = json.loads(result.output)
    rows = at_default["layers"][0]["candidates"]
    (join,) = [c for c in rows if c["anchor"] == ["q_proj", "k_proj", "v_proj"] and c["guard"]]
    assert (join["class"], join["guard"]) == ("gain", ["CTX <= 2272"])
    assert at_4096["layers"][0]["notes"] == [
        "q_proj+k_proj+v_proj: wo if CTX <= 2272: not issued at CTX=4096, where its guard "
        "skips it: not judged"
    ]
    rows = at_4096["layers"][0]["candidates"]
    none = next(i for i, c in enumerate(rows) if c["class"] == "none")
    # Above no warm: the next layer's q/k/v (read before the KV stream), and wo guarded
    # where its class flips inside BATCH's range (the KV stream grows with the batch).
    assert all(c["next_layer"] for c in rows[: none - 1])
    assert (rows[none - 1]["tensors"], rows[none - 1]["guard"]) == (["wo"], ["BATCH <= 8"])
    # The join of three is the plan's (the enumeration joins two); q_proj's is the same.
    join = next(
        c
        for c in rows
        if c["tensors"] == ["wo"]
        and ["k_proj", "q_proj"] in [c["anchor"], *c["same"]]
        and not c["guard"]
    )
    assert (join["anchor"], join["tensors"]) == (["q_proj"], ["wo"])
    assert (join["class"], join["codes"], join["guard"]) == ("loss", ["PC106"], [])
    assert rows.index(join) > none
    # A plan that accepts PC106 with `allow` instead (a trade-off it measured): its warm
    # stays first, the finding allowed; the same warm without the allow is a loss.
    text = Path(qwen).read_text(encoding="utf-8")
    assert "        guard: CTX <= 2272\n" in text
    allowed = tmp_path / "qwen3_14b.yaml"
    allowed.write_text(
        text.replace(
            "        guard: CTX <= 2272\n",
            "        allow: [PC106]\n        reason: a trade-off of the context length\n",
        ).replace("config: ", f"config: {(ROOT / 'plans').as_posix()}/", 1),
        encoding="utf-8",
    )
    result = _run("suggest", str(allowed), "--no-source", "--format", "json", "--set", "CTX=4096")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["layers"][0]["candidates"]
    (first,) = [c for c in rows if c["class"] == "gain" and not c["next_layer"] and not c["guard"]]
    assert (first["anchor"], first["class"], first["codes"], first["allowed"]) == (
        ["q_proj", "k_proj", "v_proj"],
        "gain",
        [],
        ["PC106"],
    )
    assert "; PC106 allowed: a trade-off of the context length" in first["reason"]
    alone = next(
        c for c in rows if c["anchor"] == ["q_proj"] and c["tensors"] == ["wo"] and not c["guard"]
    )
    assert (alone["class"], alone["codes"], alone["allowed"]) == ("loss", ["PC106"], [])


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            "CTX=8192",
            "plancc: --set CTX=8192: plans/qwen3_14b.yaml: param 'CTX' ranges over [1, 4096]",
        ),
        ("FOO=1", "plancc: --set FOO: no plan given has a param 'FOO'"),
        ("CTX", "plancc: --set CTX: expected NAME=VALUE, e.g. --set CTX=4096"),
    ],
)
def test_a_bad_set_is_a_usage_error(given: str, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = _run("suggest", "plans/qwen3_14b.yaml", "--set", given)
    assert result.exit_code == 2
    assert said in result.output


def test_a_directory_of_plans_is_no_plan_file(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(Path(GRAPH).read_text("utf-8"), "utf-8")
    result = _run("suggest", str(tmp_path))
    assert (result.exit_code, result.output) == (
        2,
        f"plancc: {tmp_path}: 2 plans; suggest takes one plan file\n",
    )


def _stripped(tmp_path: Path) -> Path:
    """The shipped Flash plan with no warm in any kind (`warms: []`)."""
    text = Path(FLASH).read_text("utf-8")
    text = re.sub(r"    warms:\n(      - .*\n(        .*\n)*)", "    warms: []\n", text)
    text = text.replace("config: configs/", f"config: {ROOT}/plans/configs/")
    plan = tmp_path / "stripped.yaml"
    plan.write_text(text, "utf-8")
    assert text.count("warms: []") == 3
    return plan


def test_a_plan_without_warms_gets_the_seeds_optimum_in_every_attention_kind(
    tmp_path: Path,
) -> None:
    # Tensors under 1 % of a set never ride along into an enumerated candidate: the
    # 256 B attn_sink (read by sparse_attn right after q_proj) and the 16 KB wo_b_scale
    # are left out, and the exact pair is judged.
    found = suggest(str(_stripped(tmp_path)), source_root="")
    assert not found.errors
    for layer in found.layers:
        top = layer.ranked[0]
        assert (layer.kind, top.klass, label(top.evaluation)) == (
            layer.kind,
            "gain",
            "q_proj: wo_a, wo_b",
        )
        enumerated = [r.evaluation.candidate for r in layer.ranked]
        assert not any("attn_sink" in c.tensors and "wo_a" in c.tensors for c in enumerated)


def _without_allow(tmp_path: Path) -> str:
    """Qwen3-14B's plan with its warm issued at every context: no guard, no `allow`."""
    text = (ROOT / "plans/qwen3_14b.yaml").read_text("utf-8")
    assert "        guard: CTX <= 2272\n" in text
    text = text.replace("        guard: CTX <= 2272\n", "")
    text = text.replace("config: configs/", f"config: {ROOT}/plans/configs/")
    plan = tmp_path / "qwen.yaml"
    plan.write_text(text, "utf-8")
    assert "allow" not in text
    assert "guard:" not in text
    return str(plan)


def _wo_row(plan: str, ctx: int) -> Any:
    result = _run("suggest", plan, "--no-source", "--format", "json", "--set", f"CTX={ctx}")
    assert result.exit_code == 0, result.output
    (layer,) = json.loads(result.output)["layers"]
    rows = layer["candidates"]
    (row,) = [
        c
        for c in rows
        if c["tensors"] == ["wo"] and ["q_proj"] in [c["anchor"], *c["same"]] and not c["guard"]
    ]
    return row, rows


def test_the_kv_stream_grades_the_warm_with_no_cliff(tmp_path: Path) -> None:
    # Qwen3-14B's wo warm with fa_fused's KV stream in flight beside it: at 2,272 tokens
    # it just fits L2 (a gain, the reason says what streams), one token more it is the
    # best of the losses, right below no warm: no jump to the bottom of the table.
    # (Above it rank the cross-layer warms of the next layer's q/k/v weights, whatever
    # the context: the KV stream comes after their consumers.)
    plan = _without_allow(tmp_path)
    below, rows = _wo_row(plan, 2272)
    none = next(c["rank"] for c in rows if c["class"] == "none")
    assert (below["rank"], below["class"]) == (none - 1, "gain")
    assert all(c["class"] == "gain" and c["next_layer"] for c in rows[: none - 2])
    assert "'fa_fused' (k_cache, v_cache) streams 148.9 MB while it is in flight" in below["reason"]
    above, rows = _wo_row(plan, 2273)
    # Where it was: the same warm guarded where it still pays at 2,273 tokens (BATCH's
    # range: the KV stream grows with the batch), then no warm.
    assert [(c["class"], c["tensors"], c["guard"]) for c in rows[none - 2 : none]] == [
        ("gain", ["wo"], ["BATCH <= 15"]),
        ("none", [], []),
    ]
    losses = [c for c in rows if c["class"] == "loss"]
    assert (above["class"], above["codes"]) == ("loss", ["PC106"])
    assert losses[0] == above
    # (Between no warm and the losses: the contended, the next layer's v/k at dcr_xgamma.)
    assert {c["class"] for c in rows[none : above["rank"] - 1]} == {"contended"}
    # Past the edge it sinks as more of it is evicted, a place at a time.
    ranks = [_wo_row(plan, ctx)[0]["rank"] for ctx in (2048, 2272, 2273, 2300, 2400, 4096)]
    assert ranks == sorted(ranks), ranks
    assert ranks[:3] == [none - 1, none - 1, above["rank"]]


def test_no_two_rows_are_the_same_warm(tmp_path: Path) -> None:
    plans = [GRAPH, FLASH, str(ROOT / "plans/qwen3_14b.yaml"), str(_stripped(tmp_path))]
    for plan in plans:
        for layer in suggest(plan, source_root="").layers:
            rows = [*layer.ranked, *layer.infeasible]
            seen = set()
            for r in rows:
                e = r.evaluation
                warms = tuple(zip(e.gates, e.candidate.parts, strict=True))
                key = (warms, e.signature)
                assert key not in seen, (plan, layer.kind, label(e))
                seen.add(key)
            assert len(rows) > 3


def test_the_text_fits_120_columns_and_every_loss_names_its_codes(tmp_path: Path) -> None:
    for plan in (GRAPH, FLASH, str(ROOT / "plans/qwen3_14b.yaml"), str(_stripped(tmp_path))):
        result = _run("suggest", plan, "--no-source", "--top", "1000")
        assert result.exit_code == 0, result.output
        assert max(len(line) for line in result.output.splitlines()) <= 120
        found = json.loads(_run("suggest", plan, "--no-source", "--format", "json").output)
        for layer in found["layers"]:
            assert all(c["codes"] for c in layer["candidates"] if c["class"] == "loss")


def test_an_asked_candidate_is_shown_whatever_top() -> None:
    given = "csa:q_proj:wo_b"  # below the pair and below wo_a alone
    result = _run("suggest", GRAPH, "--top", "1", "--candidate", given)
    assert result.exit_code == 0, result.output
    (marked,) = [line for line in result.output.splitlines() if "*  gain" in line]
    assert " q_proj  wo_b " in marked
    assert "* a --candidate you asked about" in result.output
    everything = json.loads(_run("suggest", GRAPH, "--format", "json").output)
    top = json.loads(_run("suggest", GRAPH, "--format", "json", "--top", "2").output)
    assert len(everything["layers"][0]["candidates"]) > 10  # JSON: every row by default
    assert len(top["layers"][0]["candidates"]) == 2
    asked = json.loads(
        _run("suggest", GRAPH, "--format", "json", "--top", "1", "--candidate", given).output
    )
    rows = asked["layers"][0]["candidates"]
    assert [(c["rank"] > 1, c["asked"], c["tensors"]) for c in rows[1:]] == [(True, True, ["wo_b"])]


def test_an_asked_infeasible_candidate_is_shown_and_marked() -> None:
    """An infeasible --candidate past the first --top infeasible ones was left out ("… 1
    more") and unmarked, in text and markdown."""
    args = ["suggest", "--no-source", FLASH, "--layer", "swa", "--top", "1", "--candidate"]
    args.append("swa:rms_norm:freqs_cos,wo_a")
    out = _run(*args).output.splitlines()
    start = out.index("infeasible (never ranked, never written):")
    assert out[start + 1 : start + 6] == [
        "  q_proj: freqs_cos, wo_a — tensor 'freqs_cos' is read by 'rope', at or before anchor "
        "'q_proj': the warm would start",
        "  after its consumer (PC040)",
        "* rms_norm: freqs_cos, wo_a — tensor 'freqs_cos' is read by 'rope', which runs beside "
        "anchor 'rms_norm': the warm may",
        "  start after its consumer (PC040)",
        "* a --candidate you asked about",
    ]
    md = _run(*args, "--format", "markdown").output.splitlines()
    assert (
        "| -* | infeasible | rms_norm | freqs_cos, wo_a | 69.2 MB | 0.34 | PC040,PC103,PC104 | "
        "tensor 'freqs_cos' is read by 'rope', which runs beside anchor 'rms_norm': the warm "
        "may start after its consumer (PC040) |"
    ) in md
    assert "* a --candidate you asked about" in md


def test_the_rules_declare_what_suggest_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from plancc.api import validate_paths
    from plancc.rules import RULES, discover

    ranking = importlib.import_module("plancc.suggest.rank")  # `rank` is also a function

    # Every amount a rule declares is a key of its findings' data.
    amounts = {r.id: r.amount for r in discover() if r.amount}
    assert set(amounts) == {"PC103", "PC104", "PC106"}
    cases = sorted((ROOT / "tests/cases/rules").glob("*.yaml"))
    found = [d for d in validate_paths([str(c) for c in cases]).diagnostics if d.code in amounts]
    assert {d.code for d in found} == set(amounts)
    assert all(amounts[d.code] in (d.data or {}) for d in found)
    # The class is the rules' word: PC106 declared no loss, the evicted warm is a gain.
    plan = _without_allow(tmp_path)
    assert _wo_row(plan, 2273)[0]["class"] == "loss"
    declared = [replace(r, loss=False) if r.id == "PC106" else r for r in RULES]
    monkeypatch.setattr("plancc.rules.RULES", declared)
    ranking._rules.cache_clear()
    try:
        assert _wo_row(plan, 2273)[0]["class"] == "gain"
    finally:
        monkeypatch.undo()
        ranking._rules.cache_clear()


def test_a_findings_fix_gives_a_neighbour_judged_like_any_other() -> None:
    # At layer entry, wo_b before wo_a: PC104 (anchor at q_proj) and PC102 (reorder).
    # Following PC104's fix gives `q_proj: wo_b, wo_a`, which nothing enumerates (the
    # enumeration lists tensors in consumer order); it is judged, and ranks by PC102.
    layer = _layer("csa:hc_pre:wo_b,wo_a")
    rows = {label(e): (r, e) for r in layer.ranked for e in (r.evaluation, *r.same)}
    row, e = rows["q_proj: wo_b, wo_a"]
    assert e.candidate.origin == "neighbour"
    assert (row.klass, e.codes) == ("gain", ("PC102",))
    assert rows["q_proj: wo_a, wo_b"][0].rank == 1


def test_fix_writes_exactly_the_top_candidates_tensors(tmp_path: Path) -> None:
    # The CSA warm moved to rms_norm: --fix writes the pair back at q_proj, and no
    # tensor under 1 % rides along (attn_sink, wo_b_scale: 128 warm issues, not 86).
    text = (
        Path(FLASH).read_text("utf-8").replace("config: configs/", f"config: {ROOT}/plans/configs/")
    )
    at = text.index("name: prefetch_o_proj_w_csa")
    plan = tmp_path / "early.yaml"
    plan.write_text(text[:at] + text[at:].replace("after: q_proj", "after: rms_norm", 1), "utf-8")
    done = _run("suggest", str(plan), "--no-source", "--layer", "csa", "--top", "1", "--fix")
    assert done.exit_code == 0, done.output
    assert done.output.endswith("csa: wrote warm q_proj: wo_a, wo_b\n")
    assert plan.read_text("utf-8") == text
    checked = _run("validate", str(plan), "--no-source")
    assert "forward 43 layers, 86 warm issues" in checked.output


SWA_WARM = """\
    warms:
      - name: prefetch_o_proj_w_swa
        name_hint: prefetch_o_proj_w
        after: q_proj
        tensors: [wo_a, wo_b]
"""
TWO_WARMS = """\
    warms:
      # the early one
      - name: early_swa  # e
        after: rms_norm  # early
        tensors: [wq_b]  # q
      # the o-proj warm
      - name: prefetch_o_proj_w_swa  # o
        name_hint: prefetch_o_proj_w
        after: rms_norm  # moved
        tensors: [wo_a, wo_b]  # pair
        allow: [PC104]
        reason: measured at rms_norm
"""


def test_fix_writes_the_top_gain_into_the_warm_it_is_a_version_of(tmp_path: Path) -> None:
    """Two warms in SWA: the top gain (the o-proj pair at q_proj) goes into the o-proj warm,
    which keeps its name, `name_hint` and comments (its `allow` goes: the pair was judged
    without it); the early warm goes with its own comments. It was written into the
    early warm's slot, under a new name, with the early warm's comments."""
    text = (
        Path(FLASH).read_text("utf-8").replace("config: configs/", f"config: {ROOT}/plans/configs/")
    )
    assert text.count(SWA_WARM) == 1
    plan = tmp_path / "two.yaml"
    plan.write_text(text.replace(SWA_WARM, TWO_WARMS), "utf-8")
    done = _run("suggest", str(plan), "--no-source", "--layer", "swa", "--top", "1", "--fix")
    assert done.exit_code == 0, done.output
    assert done.output.endswith("swa: wrote warm q_proj: wo_a, wo_b\n")
    kept = "\n".join(TWO_WARMS.splitlines()[:1] + TWO_WARMS.splitlines()[5:10]) + "\n"
    assert plan.read_text("utf-8") == text.replace(
        SWA_WARM, kept.replace("after: rms_norm  # moved", "after: q_proj  # moved")
    )


COVER = """\
plancc: 1
model: cover
platform: a2a3
tensors:
  w1: {shape: [100000000], dtype: int8}
  w2: {shape: [60000000], dtype: int8}
layers:
  k:
    stages:
      - {name: a, task: a_tid}
      - {name: mid}
      - {name: b, reads: [w1], group: g}
      - {name: c, reads: [w2], group: g}
"""


def test_a_first_row_says_the_warnings_it_still_has(tmp_path: Path) -> None:
    # The whole group is over the budget (PC032, a loss): w1 alone is the top gain, and
    # its reason says what validate would warn of it (PC103), not only what it lands.
    plan = tmp_path / "cover.yaml"
    plan.write_text(COVER, "utf-8")
    (layer,) = suggest(str(plan), ["k"], ["k:a:w1"]).layers
    top = layer.ranked[0]
    assert (label(top.evaluation), top.evaluation.codes) == ("a: w1", ("PC103",))
    assert top.reason == (
        "first: lands 100.0 MB with nothing streaming beside it; still: warm "
        "'prefetch_w1_k' covers w1 but not w2 of consumer group 'g' (stages b, c) (PC103)"
    )


SHUT = """\
plancc: 1
model: shut
platform: a2a3
tensors:
  w1: {shape: [100000000], dtype: int8}
layers:
  k:
    stages:
      - {name: a, task: a_tid}
      - {name: b, reads: [w1]}
    warms:
      - name: w1_early
        after: a
        tensors: [w1]
        allow: [PC107]
        reason: the consumer waits on the transfer
"""


def test_a_warm_that_cannot_land_lands_nothing_where_no_stage_is_timed(tmp_path: Path) -> None:
    # Its consumer runs right after the anchor: PC107 fires without an estimate (no stage
    # has a duration). Its `allow` keeps it a gain, but it lands none of its bytes.
    plan = tmp_path / "shut.yaml"
    plan.write_text(SHUT, "utf-8")
    (layer,) = suggest(str(plan), ["k"]).layers
    top = layer.ranked[0]
    assert (label(top.evaluation), top.klass, top.evaluation.landed) == ("a: w1", "gain", 0)
    assert top.reason == (
        "first: lands 0 B with nothing streaming beside it; PC107 allowed: the consumer "
        "waits on the transfer"
    )


TP = str(ROOT / "tests/data/suggest/tp_collectives.yaml")
SPANS = "spans the collective 'o_group_a2a' (vector-core MTE) (PC105)"


def test_a_candidate_across_a_collective_is_a_loss_that_names_it() -> None:
    """Every o-projection warm from before the MTE all-to-all is alive across it: a loss
    by PC105's declaration, whose reason names the collective and its engine, whether
    PC105 decided its place ("below no warm: spans …") or another place did ("a shorter
    window …; a loss: spans …")."""
    layer = _layer("csa:rms_norm:wo_a,wo_b", plan=TP)
    rows = {label(r.evaluation): r for r in layer.ranked}
    assert [label(r.evaluation) for r in layer.ranked][:2] == ["rms_norm: wq_b", "no warm"]
    assert rows["rms_norm: wq_b, wo_a, wo_b"].reason == f"below no warm: {SPANS}"
    for warm in ("q_proj: wo_a, wo_b", "sparse_attn: wo_a, wo_b"):
        assert rows[warm].klass == "loss"
        assert rows[warm].reason.endswith(f"; a loss: {SPANS}")
    # PC104's bytes decide its place (the costs come first); the collective is named too.
    assert rows["rms_norm: wo_a, wo_b"].reason.endswith(
        "of the layer's own weights stream while it is in flight (PC104); " + SPANS
    )


def test_an_allowed_collective_is_named_with_its_reason() -> None:
    (_, layer) = suggest(TP, ["csa", "hca"], []).layers
    first = layer.ranked[0]
    assert label(first.evaluation) == "sparse_attn: wo_a, wo_b"
    assert first.reason == (
        "first: lands 50.3 MB with nothing streaming beside it; spans the collective "
        "'o_group_a2a' (vector-core MTE): PC105 allowed: the all-to-all is measured with it "
        "in flight"
    )


@pytest.mark.parametrize("form", ["text", "json", "markdown"])
def test_every_output_names_the_collective(form: str) -> None:
    result = _run("suggest", TP, "--layer", "csa", "--format", form, "--top", "3")
    assert result.exit_code == 0, result.output
    if form == "json":
        (layer,) = json.loads(result.output)["layers"]
        reasons = [c["reason"] for c in layer["candidates"]]
        assert reasons[2] == f"below no warm: {SPANS}"
    else:
        assert f"below no warm: {SPANS}" in " ".join(result.output.split())


def _fan(n: int) -> str:
    """A layer kind of ``n`` tasked stages beside each other, each reading a weight of
    its own, nothing after them: no pair of them has a later group (bench/suggest.py's
    fan without its last stage)."""
    stages = "".join(
        f"      - {{name: s{i}, task: t{i}, deps: [], reads: [u{i}]}}\n" for i in range(n)
    )
    tensors = "".join(f"  u{i}: {{shape: [4096, 4096], dtype: int8}}\n" for i in range(n))
    return (
        f"plancc: 1\nmodel: m\nplatform: a2a3\ntensors:\n{tensors}"
        f"layers:\n  k:\n    stages:\n{stages}"
    )


def test_a_fan_costs_its_stages_not_its_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40, point 4: suggest near-linear in tasked stages. A fan of n stages with
    nothing after them: each stage is visited once as an anchor, no join of two (every
    pair was visited, at no cost to the bound: 16,000 stages never ended), and the
    cross-layer sets are worked out once per step of the layer (a visit of the 16,000
    next-layer stages per anchor: 64 of them, 25 s); the joined kind's schedule works
    out the last stages all its first ones wait for once (n² steps: 88 s, 2.2 GiB)."""
    n = 300
    plan = tmp_path / "fan.yaml"
    plan.write_text(_fan(n), "utf-8")
    visits: list[int] = []
    real_groups = candidates._later_groups

    def groups(s: candidates.Setting, anchors: tuple[int, ...], *rest: Any) -> list[list[str]]:
        visits.append(len(anchors))
        return real_groups(s, anchors, *rest)

    iterated = [0]

    class Counted(tuple[int, ...]):
        def __iter__(self) -> Any:
            iterated[0] += 1
            return super().__iter__()

    real_join = crossing.join

    def join(*args: Any) -> Any:
        layer, tensors = real_join(*args)
        sinks = Counted(layer.stages[n].deps)  # what every first stage of the next waits for
        stages = [
            s if s.deps != sinks else dataclasses.replace(s, deps=sinks) for s in layer.stages
        ]
        return dataclasses.replace(layer, stages=tuple(stages)), tensors

    monkeypatch.setattr(candidates, "_later_groups", groups)
    monkeypatch.setattr(crossing, "join", join)
    result = _run("suggest", str(plan), "--top", "1")
    assert result.exit_code == 0, result.output
    assert visits == [1] * (n + 1)  # n anchors in the kind, one step of them for the next
    assert iterated[0] <= 4  # the shared wait read once or twice, not once per stage
