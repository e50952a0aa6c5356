"""The editor knows the keys of issue 35: params are names of the dims' namespace
(completion in expressions, hover, navigation), a join's stages and a read's tensor
are references, a stack's `layers`, a read's `share` and `streams` are expressions."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from plancc.lsp.completion import complete
from plancc.lsp.hover import hover
from plancc.lsp.state import PlanState, analyse

PLAN = """\
plancc: 1
model: fam
platform: a2a3
dims: {H: 64, MAX_CTX: 4096, KV_BYTES: 4096 * CTX}
params:
  CTX: {default: 2048, range: [1, MAX_CTX]}
tensors:
  wo: {shape: [H, H], dtype: bf16, stacked: {layers: NL, index: layer_idx}}
  wg: {shape: [H, H], dtype: bf16}
layers:
  k:
    stages:
      - {name: q_proj, task: q_tid}
      - {name: k_proj, task: k_tid, deps: []}
      - {name: attn, deps: [q_proj, k_proj], streams: KV_BYTES + 2 * CTX}
      - {name: g0, reads: [{tensor: wg, share: 6/17}, wo]}
    warms:
      - {name: warm_wo, after: [q_proj, k_proj], tensors: [wo]}
"""


def _state(text: str, tmp_path: Path) -> PlanState:
    path = tmp_path / "fam.yaml"
    path.write_text(text, "utf-8")
    return analyse(path.as_uri(), 1, text, {}, codec=PositionCodec(), docs_url="")


def _at(text: str, needle: str, offset: int = 0) -> lsp.Position:
    before = text[: text.index(needle) + offset]
    return lsp.Position(before.count("\n"), len(before) - before.rfind("\n") - 1)


def test_references_of_a_join_a_read_and_expressions_are_indexed(tmp_path: Path) -> None:
    state = _state(PLAN, tmp_path)
    assert state.index is not None
    found = {(o.kind, o.name, o.definition) for o in state.index.occurrences}
    assert {("dim", "CTX", True), ("dim", "MAX_CTX", True)} <= found
    uses = [(o.kind, o.name) for o in state.index.occurrences if not o.definition]
    # the join's two stages, the read's tensor, names in streams and in a stack's layers
    assert uses.count(("stage", "q_proj")) == 2  # in attn's deps and in the join
    assert uses.count(("stage", "k_proj")) == 2
    assert ("tensor", "wg") in uses
    assert uses.count(("dim", "CTX")) == 2  # in KV_BYTES and in attn's streams
    assert ("dim", "KV_BYTES") in uses
    assert ("dim", "MAX_CTX") in uses
    assert ("config", "NL") in uses  # not a dim: a config key, unknown here


def test_a_param_hovers_with_its_range(tmp_path: Path) -> None:
    state = _state(PLAN.replace("layers: NL", "layers: 4"), tmp_path)
    got = hover(state, _at(PLAN, "2 * CTX", 5))
    assert got is not None
    assert isinstance(got.contents, lsp.MarkupContent)
    assert got.contents.value == (
        "param `CTX` = 2,048, range 1 … 4,096\n\nrun-time value in the model code: `ctx`"
    )


def _labels(text: str, needle: str, state: PlanState) -> list[str]:
    at = _at(text, needle, len(needle))
    return [i.label for i in complete(state, text, at).items]


def test_completion_in_the_new_places(tmp_path: Path) -> None:
    state = _state(PLAN.replace("layers: NL", "layers: 4"), tmp_path)
    names = ["H", "MAX_CTX", "KV_BYTES", "CTX"]
    # A join's next stage, a read's tensor, expressions in streams, share and range.
    assert _labels(PLAN + "      - {name: w2, after: [q_proj, ", "after: [q_proj, ", state) == [
        "q_proj",
        "k_proj",
        "attn",
        "g0",
    ]
    text = PLAN.replace("{tensor: wg, share: 6/17}", "{tensor: w")
    assert _labels(text, "{tensor: w", state) == ["wo", "wg"]
    text = PLAN.replace("streams: KV_BYTES + 2 * CTX}", "streams: KV_BYTES + ")
    assert _labels(text, "streams: KV_BYTES + ", state) == names
    text = PLAN.replace("range: [1, MAX_CTX]}", "range: [1, ")
    assert _labels(text, "range: [1, ", state) == names


def test_a_stacked_tensor_hovers_as_one_layers_slab(tmp_path: Path) -> None:
    text = PLAN.replace("layers: NL", "layers: 40")
    state = _state(text, tmp_path)
    got = hover(state, _at(text, "wo: {", 1))
    assert got is not None
    assert isinstance(got.contents, lsp.MarkupContent)
    assert got.contents.value.split("\n\n")[:3] == [
        "tensor `wo`: [64, 64] bf16",
        "stacked: one of 40 layers, picked by `layer_idx`",
        "bytes: 8,192 B = 0.00× L2",
    ]


def test_hover_numbers_stages_as_the_report_does(tmp_path: Path) -> None:
    """From 1, in list order: the hover's `#N` is the report's `stage N`."""
    from plancc.api import diagnose_plan
    from plancc.load.inputs import PlanInput
    from plancc.report_html import render

    state = _state(PLAN, tmp_path)
    path = tmp_path / "fam.yaml"
    page = render(diagnose_plan(PlanInput(str(path), path), PLAN.encode()))
    for number, name in enumerate(["q_proj", "k_proj", "attn", "g0"], start=1):
        shown = hover(state, _at(PLAN, f"{{name: {name}", 7))
        assert shown is not None
        assert isinstance(shown.contents, lsp.MarkupContent)
        assert shown.contents.value.startswith(f"stage `{name}` (#{number} of `k`)")
        assert f"<title>stage {number} {name}: reads" in page
