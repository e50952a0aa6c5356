"""`plancc suggest` on the forms of issue 43: cross-layer, prefix and guarded candidates,
judged by the same check as every candidate, and written by `--fix` through the one fix
interpreter (docs/suggest.md, "The candidates")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc.api import validate_paths
from plancc.cli.app import app
from plancc.suggest import LayerSuggestions, suggest
from plancc.suggest.candidates import Part
from plancc.suggest.rank import Ranked, label

ROOT = Path(__file__).resolve().parent.parent
PLANS = ROOT / "plans"
NEXT_QKV = "moe_combine: next layer's wkv, wq_a"


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1"})


def _plan(tmp_path: Path, name: str, *edits: tuple[str, str], file: str = "plan.yaml") -> str:
    """A shipped plan with each (old, new) replaced once, its config found from anywhere."""
    text = (PLANS / name).read_text("utf-8")
    for old, new in (*edits, ("config: configs/", f"config: {PLANS}/configs/")):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / file
    path.write_text(text, "utf-8")
    return str(path)


MOE_TID = ("{name: moe_combine, sdma: true, ", "{name: moe_combine, task: moe_tid, sdma: true, ")


def _layer(plan: str, kind: str, *given: str) -> LayerSuggestions:
    found = suggest(plan, [kind], list(given), source_root="")
    assert not found.errors, found.errors
    (layer,) = found.layers
    return layer


def _row(layer: LayerSuggestions, name: str) -> tuple[Ranked, Any]:
    """The row standing for the candidate labelled ``name``, and that candidate."""
    for r in (*layer.ranked, *layer.infeasible):
        for e in (r.evaluation, *r.same):
            if label(e) == name:
                return r, e
    raise AssertionError(f"{name}: not a candidate of {layer.kind}")


# -- cross-layer -----------------------------------------------------------------------


def test_the_next_layers_q_kv_weights_after_the_moe_are_enumerated_and_contended(
    tmp_path: Path,
) -> None:
    # Flash with a TaskId after its MoE: the next layer's wq_a and wkv (no anchor of the
    # next layer lands them: they are read right after its rms_norm) are a cross-layer
    # candidate, judged on the kind joined with the next one. Nothing fires against it,
    # but the next layer's entry (hc_pre) streams 5.8 MB of its own weights while it is in
    # flight, and no later stage of the issuing layer has a task: contended, below no warm.
    plan = _plan(tmp_path, "deepseek_v4_flash.yaml", MOE_TID)
    layer = _layer(plan, "csa")
    row, e = _row(layer, NEXT_QKV)
    assert e.candidate.origin == "crossing"
    assert e.candidate.parts == (Part(("moe_combine",), ("wkv", "wq_a"), (), True, ()),)
    assert (row.klass, e.codes, e.bytes) == ("contended", (), 12_582_912)
    assert e.first == "next.kv_proj"  # the next layer's stage, in the joined kind
    assert "5.8 MB (45 % of its 12.6 MB) of the layer's own weights stream" in row.reason
    none = next(r.rank for r in layer.ranked if r.evaluation.candidate.none)
    assert row.rank is not None
    assert none is not None
    assert row.rank > none
    # Every cross-layer candidate is the next layer's weights that no anchor of it lands.
    crossing = [
        e
        for r in layer.ranked
        for e in (r.evaluation, *r.same)
        if e.candidate.parts and e.candidate.parts[0].next_layer
    ]
    assert {t for e in crossing for t in e.candidate.tensors} <= {
        "wq_a",
        "wkv",
        "hca_cmp_wkv",
        "hca_cmp_wgate",
        "hca_cmp_ape",
        "hc_attn_fn",
        "hc_attn_scale",
        "hc_attn_base",
        "freqs_cos",
        "freqs_sin",
    }


def test_without_an_anchor_after_the_moe_no_crossing_is_in_reach() -> None:
    # The shipped Flash plan: from q_proj the MoE streams 427.8 MB before the next layer,
    # past twice L2: every next layer's weight is out of reach (PC106 would evict it).
    found = suggest(str(PLANS / "deepseek_v4_flash.yaml"), source_root="")
    for layer in found.layers:
        assert not any(
            p.next_layer
            for r in layer.ranked
            for e in (r.evaluation, *r.same)
            for p in e.candidate.parts
        )


def test_a_declared_cross_layer_warm_is_judged_across_the_boundary(tmp_path: Path) -> None:
    # Before: suggest judged it as a warm of one layer (its tensors read at or before the
    # anchor in that layer: PC040, infeasible). It is the crossing's now, as validate's.
    warm = (
        "      - {name: next_qkv_csa, after: moe_combine, next_layer: true, tensors: [wq_a, wkv]}\n"
    )
    last = "        tensors: [wo_a, wo_b]\n\n  hca:"
    plan = _plan(
        tmp_path, "deepseek_v4_flash.yaml", MOE_TID, (last, last.replace("\n", "\n" + warm, 1))
    )
    assert validate_paths([plan], source_root="").errors == 0
    layer = _layer(plan, "csa")
    row, e = _row(layer, "moe_combine: next layer's wq_a, wkv")
    assert e.candidate.origin == "declared"
    assert e.candidate.parts[0].next_layer
    assert row.klass == "contended"
    assert "PC040" not in e.codes
    assert all("PC040" not in r.evaluation.codes for r in layer.ranked)


# -- prefixes --------------------------------------------------------------------------


def test_pros_declared_prefix_keeps_its_rows_and_the_others_are_enumerated() -> None:
    layer = _layer(str(PLANS / "deepseek_v4_pro.yaml"), "csa")
    top = layer.ranked[0]
    assert label(top.evaluation) == "q_proj: wo_a[0:8]"  # not wo_a whole: rows kept
    assert (top.klass, top.evaluation.bytes, top.evaluation.allowed_codes) == (
        "gain",
        67_108_864,
        ("PC103",),
    )
    # wo_a + wo_b is over L2: no whole group is enumerated, but its quarters are.
    for k in (4, 12):
        row, e = _row(layer, f"q_proj: wo_a[0:{k}]")
        assert (e.candidate.origin, row.klass, e.codes) == ("prefix", "gain", ("PC103",))
        assert e.bytes == k * 8_388_608


WINDOW = """\
plancc: 1
model: window
platform: a2a3
tensors:
  w: {shape: [16, 1024, 4096], dtype: bf16}  # 134.2 MB, 16 groups
layers:
  k:
    stages:
      - {name: entry, task: entry_tid, duration_us: 1}
      - {name: attn, duration_us: 30}
      - {name: proj, reads: [w], duration_us: 400}
"""


def test_a_prefix_lands_where_the_whole_tensor_would_not(tmp_path: Path) -> None:
    # 30 µs before `proj` lands 8.6 MB at 285 GB/s: a quarter of a 33.6 MB prefix (4 of
    # 16 groups), not of the 134.2 MB tensor. PC107 judges each by its own bytes: the
    # prefix is the gain, the whole tensor cannot land.
    plan = tmp_path / "window.yaml"
    plan.write_text(WINDOW, "utf-8")
    layer = _layer(str(plan), "k")
    whole, e_whole = _row(layer, "entry: w")
    part, e_part = _row(layer, "entry: w[0:4]")
    assert "PC107" in e_whole.codes
    assert whole.klass == "loss"
    assert (part.klass, e_part.codes, e_part.candidate.origin) == ("gain", ("PC103",), "prefix")
    assert layer.ranked[0] is part
    for k in (8, 12):  # 67.1 and 100.7 MB: a quarter of each is more than lands
        assert "PC107" in _row(layer, f"entry: w[0:{k}]")[1].codes


# -- guards ----------------------------------------------------------------------------


def _unguarded(tmp_path: Path) -> str:
    return _plan(tmp_path, "qwen3_14b.yaml", ("        guard: CTX <= 2272\n", ""))


def test_the_wo_join_comes_out_guarded_where_it_stops_paying(tmp_path: Path) -> None:
    # Qwen3-14B's wo warm without its guard: a gain at the default context (2048), evicted
    # at CTX=4096 (PC106, as validate finds it at the range's high end). Bisected, it is a
    # gain up to 2,272 tokens: the candidate guarded there is a gain, the join among it.
    layer = _layer(_unguarded(tmp_path), "decode_layer")
    plain, e = _row(layer, "q_proj+k_proj+v_proj: wo")
    assert plain.klass == "loss"
    assert e.codes == ("PC106",)
    assert "at CTX=4096 (PC106)" in plain.reason
    assert "; a gain up to CTX 2,272: guard: CTX <= 2272" in plain.reason
    guarded, g = _row(layer, "q_proj+k_proj+v_proj: wo if CTX <= 2272")
    assert g.candidate.parts[0].guards == (("CTX", "<=", 2272),)
    assert (guarded.klass, g.codes) == ("gain", ())
    assert guarded.evaluation.candidate.origin == "declared"  # the plan's join heads it
    assert guarded.rank is not None
    assert plain.rank is not None
    assert guarded.rank < plain.rank


def test_the_guard_bound_is_the_last_value_that_is_a_gain(tmp_path: Path) -> None:
    plan = _unguarded(tmp_path)
    _, at = _row(_layer_at(plan, 2272), "q_proj+k_proj+v_proj: wo")
    _, over = _row(_layer_at(plan, 2273), "q_proj+k_proj+v_proj: wo")
    assert (at.codes, over.codes) == ((), ("PC106",))


def test_a_loss_at_the_runs_values_is_guarded_where_it_pays(tmp_path: Path) -> None:
    # The same warm with the default context at 3,000 tokens: evicted at the run's values
    # (a loss), a gain at the low end of the range. Its class flips inside the range all
    # the same: the candidate guarded to the contexts where it pays is a gain, above it.
    plan = _plan(
        tmp_path,
        "qwen3_14b.yaml",
        ("        guard: CTX <= 2272\n", ""),
        ("    default: 2048\n", "    default: 3000\n"),
    )
    layer = _layer(plan, "decode_layer")
    plain, e = _row(layer, "q_proj+k_proj+v_proj: wo")
    assert (plain.klass, e.codes) == ("loss", ("PC106",))
    assert "; a gain up to CTX 2,272: guard: CTX <= 2272" in plain.reason
    guarded, g = _row(layer, "q_proj+k_proj+v_proj: wo if CTX <= 2272")
    assert (guarded.klass, g.codes) == ("gain", ())
    assert guarded.rank is not None
    assert plain.rank is not None
    assert guarded.rank < plain.rank


def _layer_at(plan: str, ctx: int) -> LayerSuggestions:
    found = suggest(plan, ["decode_layer"], overrides={"CTX": ctx}, source_root="")
    (layer,) = found.layers
    return layer


def test_a_set_param_is_never_guarded(tmp_path: Path) -> None:
    layer = _layer_at(_unguarded(tmp_path), 2048)
    assert not any(
        p.guards for r in layer.ranked for e in (r.evaluation, *r.same) for p in e.candidate.parts
    )


# -- --candidate, --fix, --measured -----------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (
            "csa:q_proj:wo_a[0:99]",
            "rows [0:99] of 'wo_a' are no range of its first dim (16): 0 ≤ LO < HI ≤ it",
        ),
        (
            "csa:q_proj:wo_a[4:4]",
            "rows [4:4] of 'wo_a' are no range of its first dim (16): 0 ≤ LO < HI ≤ it",
        ),
        (
            "csa:q_proj:wo_a:later",
            "'later' is neither `next` nor a guard PARAM<=N on a param of the plan (it has none)",
        ),
        ("csa:q_proj:wo_a[0:4],wo_a[0:4]", "a tensor is listed twice"),
    ],
)
def test_a_bad_form_in_a_candidate_is_a_usage_error(spec: str, said: str) -> None:
    result = _run("suggest", str(PLANS / "deepseek_v4_pro.yaml"), "--candidate", spec)
    assert result.exit_code == 2
    assert result.output == f"plancc: --candidate '{spec}': {said}\n"


def test_a_candidate_names_each_form(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "deepseek_v4_flash.yaml", MOE_TID)
    layer = _layer(plan, "csa", "csa:moe_combine:wq_a,wkv:next", "csa:q_proj:wo_a[0:4],wo_b")
    row, e = _row(layer, "moe_combine: next layer's wq_a, wkv")
    assert layer.asked(row)
    assert e.candidate.origin == "given"
    row, e = _row(layer, "q_proj: wo_a[0:4], wo_b")
    assert e.candidate.parts[0].rows == ((0, 4), None)
    qwen = _unguarded(tmp_path)
    layer = _layer(qwen, "decode_layer", "decode_layer:q_proj:wo:CTX<=2000")
    row, e = _row(layer, "q_proj: wo if CTX <= 2000")
    assert (row.klass, layer.asked(row)) == ("gain", True)


def test_json_gives_the_forms() -> None:
    found = json.loads(
        _run(
            "suggest",
            str(PLANS / "deepseek_v4_pro.yaml"),
            "--layer",
            "hca",
            "--format",
            "json",
            "--top",
            "1",
        ).output
    )
    (row,) = found["layers"][0]["candidates"]
    assert (row["tensors"], row["rows"], row["next_layer"], row["guard"]) == (
        ["wo_a"],
        [[0, 8]],
        False,
        [],
    )
    found = json.loads(_run("suggest", str(PLANS / "qwen3_14b.yaml"), "--format", "json").output)
    rows = found["layers"][0]["candidates"]
    assert rows[0]["next_layer"] is True
    assert any(
        r["guard"] == ["CTX <= 2272"] and r["anchor"] == ["q_proj", "k_proj", "v_proj"]
        for r in rows
    )


def test_fix_guards_the_plans_warm_through_the_interpreter(tmp_path: Path) -> None:
    # Qwen3-14B's warm unguarded, and no TaskId after the down projection (so that no
    # cross-layer warm of the next layer's q/k/v ranks above it): the top gain is the
    # plan's own join, guarded where it pays; --fix adds the guard and nothing else.
    last = "{name: dcr_xgamma, task: dcr_tid, deps: [down_proj], kernel: dcr_xgamma}"
    plan = _plan(
        tmp_path,
        "qwen3_14b.yaml",
        ("        guard: CTX <= 2272\n", ""),
        (last, last.replace("task: dcr_tid, ", "")),
    )
    before = Path(plan).read_text("utf-8")
    result = _run("suggest", plan, "--no-source", "--fix", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "decode_layer: wrote warm q_proj+k_proj+v_proj: wo if CTX <= 2272\n" in result.output
    after = Path(plan).read_text("utf-8")
    added = '        guard: "CTX <= 2272"\n'
    assert after.count(added) == 1
    assert after.replace(added, "", 1) == before
    report = validate_paths([plan], source_root="")
    assert (report.errors, report.warnings) == (0, 0)


def test_fix_writes_a_prefix(tmp_path: Path) -> None:
    # Pro without its warms: wo_a with wo_b is over L2, wo_a's first 12 of 16 groups are
    # the top gain; written as `{tensor: wo_a, rows: [0, 12]}`.
    plan = _plan(tmp_path, "deepseek_v4_pro.yaml")
    text = Path(plan).read_text("utf-8")
    for kind in ("csa", "hca"):
        at = text.index(f"      - name: prefetch_o_proj_wo_a_{kind}\n")
        end = text.index("L2 (PC030). To be confirmed on Pro: docs/models.md.\n", at)
        end += len("L2 (PC030). To be confirmed on Pro: docs/models.md.\n")
        text = text[:at].rstrip(" ").removesuffix("warms:\n") + "warms: []\n" + text[end:]
    Path(plan).write_text(text, "utf-8")
    result = _run("suggest", plan, "--no-source", "--fix", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "csa: wrote warm q_proj: wo_a[0:12]\n" in result.output
    after = Path(plan).read_text("utf-8")
    new = (
        "    warms: [{name: prefetch_wo_a_csa, after: q_proj, tensors: [{tensor: wo_a, rows: "
        "[0, 12]}]}]\n"
    )
    assert new in after
    report = validate_paths([plan], source_root="")
    assert report.errors == 0
    found = [d.code for d in report.diagnostics if d.code != "PC208"]  # PC208: --no-source
    assert found == ["PC103", "PC103"]  # the rest of wo_a, and wo_b


def test_fix_writes_a_cross_layer_warm(tmp_path: Path) -> None:
    # The shipped Qwen3-14B plan: the top gain is the next layer's k/q/v weights after the
    # down projection's residual (dcr_xgamma), a cross-layer warm; it replaces the kind's
    # one warm, whose name it keeps.
    plan = _plan(tmp_path, "qwen3_14b.yaml")
    result = _run("suggest", plan, "--no-source", "--fix", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "decode_layer: wrote warm dcr_xgamma: next layer's wk, wq, wv\n" in result.output
    after = Path(plan).read_text("utf-8")
    assert "      - name: prefetch_wo\n        after: dcr_xgamma\n" in after
    assert "        next_layer: true\n" in after
    report = validate_paths([plan], source_root="")
    assert report.errors == 0, report.diagnostics
    (result_,) = report.results
    assert result_.plan is not None
    (warm,) = result_.plan.warms
    assert (warm.next_layer, [e.tensor.name for e in warm.entries]) == (True, ["wk", "wq", "wv"])


def test_a_measured_prefix_and_guard_stand_for_their_rows(tmp_path: Path) -> None:
    # `plancc measure` of the build keeps each warm's forms (rows, guards): the verdict
    # lands on the row of the prefix (Pro) and of the guarded join (Qwen3-14B), not on a
    # warm of the whole tensor or an unguarded one.
    example = ROOT / "examples" / "measure"
    for name, kind, row in (
        ("deepseek_v4_pro.yaml", "csa", "q_proj: wo_a[0:8]"),
        ("qwen3_14b.yaml", "decode_layer", "q_proj+k_proj+v_proj: wo if CTX <= 2272"),
    ):
        plan = _plan(tmp_path, name, file=name)
        out = tmp_path / "build"
        assert _run("build", plan, "--out", str(out), "--no-source").exit_code == 0
        manifest = next(out.glob(f"{Path(name).stem}_warms.manifest.json"))
        result = tmp_path / f"{kind}.json"
        done = _run(
            "measure", "--manifest", str(manifest),
            "--baseline", str(example / "bench-nowarm.log"),
            "--warm", str(example / "bench-warm.log"), "-f", "json", "-o", str(result),
        )  # fmt: skip
        assert done.exit_code in (0, 1), done.output
        found = suggest(plan, [kind], source_root="", measured=str(result))
        (layer,) = found.layers
        (measured,) = [r for r in layer.ranked if r.measured is not None]
        assert label(measured.evaluation) == row
        assert (measured.rank, measured.klass) == (1, "gain")


def test_a_warm_crossing_into_two_kinds_lands_its_bytes_once(tmp_path: Path) -> None:
    # SWA is followed by SWA and by CSA: the candidate is placed on both crossings, and
    # what it lands is its worst crossing's, never the sum (25.2 MB of a 12.6 MB warm).
    plan = _plan(tmp_path, "deepseek_v4_flash.yaml", MOE_TID)
    _, e = _row(_layer(plan, "swa"), NEXT_QKV)
    assert (e.bytes, e.landed) == (12_582_912, 12_582_912)


def test_the_recipe_names_a_cross_layer_warms_consumer_in_the_next_layer() -> None:
    done = _run("suggest", str(PLANS / "qwen3_14b.yaml"), "--top", "1")
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "timing slots around 'k_proj' of the next layer (its first consumer)" in said


def test_fix_moves_a_declared_prefix_keeping_its_rows_as_written(tmp_path: Path) -> None:
    # Pro's CSA prefix of 12 groups anchored early (rms_norm): the top gain is the same
    # prefix at q_proj, a version of the declared warm: its `after` rewritten, its rows'
    # expression kept as the plan writes it, its `allow` and `reason` gone (the candidate
    # judged was not the plan's warm: PC103 shows). The `reason` is a folded scalar, the
    # warm's last key: the blank line after it, before the next layer kind, stays.
    rows = "          - {tensor: wo_a, rows: [0, O_GROUPS // 2]}  # its first 8 of 16 groups\n"
    moved = "          - {tensor: wo_a, rows: [0, O_GROUPS * 3 // 4]}\n"
    plan = _plan(tmp_path, "deepseek_v4_pro.yaml")
    text = Path(plan).read_text("utf-8")
    at = text.index("      - name: prefetch_o_proj_wo_a_csa\n")
    end = text.index("\n\n", at)
    warm = text[at:end].replace("after: q_proj", "after: rms_norm").replace(rows, moved)
    Path(plan).write_text(text[:at] + warm + text[end:], "utf-8")
    result = _run("suggest", plan, "--no-source", "--layer", "csa", "--fix", "--top", "1")
    assert result.exit_code == 0, result.output
    assert "csa: wrote warm q_proj: wo_a[0:12]\n" in result.output
    after = Path(plan).read_text("utf-8")
    written = after[after.index("      - name: prefetch_o_proj_wo_a_csa\n") :]
    written = written[: written.index("  hca:")]
    assert written == (
        "      - name: prefetch_o_proj_wo_a_csa\n"
        "        name_hint: prefetch_o_proj_wo_a\n"
        "        after: q_proj\n"
        "        tensors:\n" + moved + "\n"
    )
