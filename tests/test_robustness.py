"""Hostile or merely huge inputs get diagnostics, never an exception or an endless computation."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from plancc.api import Validation as Report
from plancc.api import validate_paths
from plancc.resolve import MAX_FORWARD_LAYERS, parse_size

HEAD = "plancc: 1\nmodel: m\nplatform: a2a3\n"
TAIL = "tensors: {w: {shape: [D0], dtype: bf16}}\nlayers: {k: {stages: [{name: s0}]}}\n"

Write = Callable[..., Path]


def _diagnostics(path: Path) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in validate_paths([str(path)]).diagnostics]


def test_a_long_chain_of_dims_resolves(write_plan: Write) -> None:
    n = 3000  # far deeper than Python's recursion limit if resolved recursively
    dims = "".join(f"  D{i}: D{i + 1} + 1\n" for i in range(n)) + f"  D{n}: 1\n"
    path = write_plan(HEAD + "dims:\n" + dims + TAIL)
    report = validate_paths([str(path)])
    assert report.diagnostics == []
    (result,) = report.results
    assert result.plan is not None
    assert result.plan.tensors["w"].shape == (n + 1,)


def test_a_cycle_through_many_dims_is_pc012(write_plan: Write) -> None:
    n = 3000
    dims = "".join(f"  D{i}: D{(i + 1) % n}\n" for i in range(n))
    got = _diagnostics(write_plan(HEAD + "dims:\n" + dims + TAIL))
    assert got == [("PC012", 5, 7, f"dims form a cycle: D0 -> D1 -> D2 -> … ({n} dims) -> D0")]


def _deep(frames: int, call: Callable[[], object]) -> object:
    """``call()`` from ``frames`` frames further down Python's stack."""
    return _deep(frames - 1, call) if frames else call()


@pytest.mark.parametrize("n", [160, pytest.param(3000, marks=pytest.mark.slow)])
def test_dims_resolve_alike_whatever_the_callers_stack_depth(write_plan: Write, n: int) -> None:
    chain = "".join(f"  C{i}: C{i + 1} + 1\n" for i in range(n)) + f"  C{n}: 1\n"
    cycle = "".join(f"  D{i}: D{(i + 1) % n}\n" for i in range(n))
    path = write_plan(HEAD + "dims:\n" + chain + cycle + "  D: C0 + D0\n" + TAIL)
    expected = [("PC012", n + 6, 7, f"dims form a cycle: D0 -> D1 -> D2 -> … ({n} dims) -> D0")]
    assert _diagnostics(path) == expected
    assert _deep(500, lambda: _diagnostics(path)) == expected
    report = _deep(500, lambda: validate_paths([str(path)]))
    assert isinstance(report, Report)
    (result,) = report.results
    assert result.plan is not None
    assert [(d.name, d.value) for d in result.plan.dims] == [
        (f"C{i}", n + 1 - i) for i in range(n + 1)
    ]


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (1, "D0 -> D0"),
        (8, "D0 -> D1 -> D2 -> D3 -> D4 -> D5 -> D6 -> D7 -> D0"),
        (9, "D0 -> D1 -> D2 -> … (9 dims) -> D0"),
    ],
)
def test_a_cycle_of_more_than_eight_dims_is_named_in_part(
    write_plan: Write, n: int, shown: str
) -> None:
    dims = "".join(f"  D{i}: D{(i + 1) % n} + 1\n" for i in range(n))
    got = _diagnostics(write_plan(HEAD + "dims:\n" + dims + TAIL))
    assert got == [("PC012", 5, 7, f"dims form a cycle: {shown}")]


def test_long_names_in_a_cycle_are_quoted_in_part(write_plan: Write) -> None:
    a, b = "A" * 100, "B" * 100
    dims = f"dims:\n  D0: 1\n  {a}: {b}\n  {b}: {a}\n"
    got = _diagnostics(write_plan(HEAD + dims + TAIL))
    assert ("PC012", 6, 105, f"dims form a cycle: {a[:40]}… -> {b[:40]}… -> {a[:40]}…") in got


def test_dims_using_each_other_in_several_cycles_are_one_pc012(write_plan: Write) -> None:
    # One strongly connected component: A -> B -> A, B -> C -> B and C -> E -> A.
    dims = "dims:\n  D0: 1\n  C: B + E\n  A: B\n  B: A * C\n  E: A\n  F: C + 1\n"
    got = _diagnostics(write_plan(HEAD + dims + TAIL))
    assert got == [("PC012", 6, 6, "dims form a cycle: C -> B -> C")]


def test_names_that_are_not_dims_are_checked_in_a_cycle_too(write_plan: Write) -> None:
    dims = "dims:\n  D0: X + D0\n  E: E * Y + 1\n"
    got = _diagnostics(write_plan(HEAD + dims + TAIL))
    assert got == [
        ("PC010", 5, 7, "unknown dim 'X'"),
        ("PC012", 5, 7, "dims form a cycle: D0 -> D0"),
        ("PC010", 6, 6, "unknown dim 'Y'"),
        ("PC012", 6, 6, "dims form a cycle: E -> E"),
    ]


def test_a_short_cycle_names_every_member_in_plan_order(write_plan: Write) -> None:
    dims = "dims:\n  D0: C\n  A: B\n  B: D0 + 1\n  C: 2 * A\n"
    got = _diagnostics(write_plan(HEAD + dims + TAIL))
    assert got == [("PC012", 5, 7, "dims form a cycle: D0 -> C -> A -> B -> D0")]


def test_a_diamond_is_not_a_cycle(write_plan: Write) -> None:
    dims = "dims:\n  D0: B + C\n  B: A * 2\n  C: A * 3\n  A: 4\n"
    assert _diagnostics(write_plan(HEAD + dims + TAIL)) == []


def test_shapes_and_views_beyond_int64_are_pc012(write_plan: Write) -> None:
    text = HEAD + (
        "dims: {D0: 4, BIG: 3037000500}\n"
        "tensors:\n"
        "  w: {shape: [D0], dtype: bf16}\n"
        "  huge: {shape: [BIG, BIG], dtype: bf16}\n"
        "  view: {shape: [D0], dtype: bf16, flat: [BIG, BIG]}\n"
        "layers: {k: {stages: [{name: s0}]}}\n"
    )
    assert [(c, line, col) for c, line, col, _ in _diagnostics(write_plan(text))] == [
        ("PC012", 7, 17),
        ("PC012", 8, 42),
    ]


def test_many_shape_entries_do_not_overflow_printing(write_plan: Write) -> None:
    shape = ", ".join(["9223372036854775807"] * 400)
    text = HEAD + f"dims: {{D0: 1}}\ntensors: {{w: {{shape: [{shape}], dtype: bf16}}}}\n"
    text += "layers: {k: {stages: [{name: s0}]}}\n"
    assert [g[0] for g in _diagnostics(write_plan(text))] == ["PC012"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("[" + ", ".join(["0"] * 10_000) + "]", "[" + "0, " * 13 + "…"),
        ("x" * 100_000, "'" + "x" * 39 + "…"),
        ("[1, 2]", "[1, 2]"),
    ],
    ids=["long-list", "long-string", "short"],
)
def test_a_huge_plancc_value_is_quoted_in_part(write_plan: Write, value: str, shown: str) -> None:
    text = HEAD.replace("plancc: 1", f"plancc: {value}") + "dims: {D0: 1}\n" + TAIL
    assert _diagnostics(write_plan(text)) == [
        ("PC003", 1, 9, f"plancc must be the integer 1, not {shown}")
    ]


def test_a_huge_forward_is_pc014_not_a_memory_error(write_plan: Write) -> None:
    text = HEAD + "dims: {D0: 1}\n" + TAIL
    text += "forward: [{layer: k, repeat: 9223372036854775807}]\n"
    got = _diagnostics(write_plan(text))
    assert got == [
        ("PC014", 7, 11, f"forward has more than {MAX_FORWARD_LAYERS:,} layers at entry 0")
    ]


def test_forward_at_the_limit_is_fine(write_plan: Write) -> None:
    text = HEAD + "dims: {D0: 1}\n" + TAIL
    text += f"forward: [{{layer: k, repeat: {MAX_FORWARD_LAYERS - 1}}}, k]\n"
    report = validate_paths([str(write_plan(text))])
    assert report.diagnostics == []
    assert report.results[0].plan is not None
    assert report.results[0].plan.forward is not None
    assert len(report.results[0].plan.forward.kinds) == MAX_FORWARD_LAYERS


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (1234, 1234),
        ("427.8 MB", 427_800_000),
        ("427.8MB", 427_800_000),
        (" 1.5 KiB ", 1536),
        ("0.1 B", 1),  # fractional bytes round up
        ("1.0000001 kB", 1001),
        ("1 GiB", 2**30),
        ("2 kB", 2000),
        (
            "999999999999999.999999999999999 GiB",
            math.ceil(Fraction("999999999999999.999999999999999") * 2**30),
        ),
    ],
)
def test_parse_size_is_exact(text: str | int, size: int) -> None:
    assert parse_size(text) == size


def test_a_size_with_too_many_digits_is_pc002(write_plan: Write) -> None:
    text = HEAD + "dims: {D0: 1}\ntensors: {w: {shape: [D0], dtype: bf16}}\n"
    text += f'layers: {{k: {{stages: [{{name: s0, streams: "{"9" * 16} GB"}}]}}}}\n'
    assert [g[0] for g in _diagnostics(write_plan(text))] == ["PC002"]


def test_a_forward_kind_key_with_too_many_digits_is_pc002(write_plan: Write) -> None:
    text = HEAD + "dims: {D0: 1}\n" + TAIL
    text += f"forward: {{from_config: x, kinds: {{{'1' * 30}: k}}}}\n"
    got = _diagnostics(write_plan(text))
    assert [g[0] for g in got] == ["PC010", "PC002"]


def test_a_long_bad_value_is_quoted_in_part(write_plan: Write) -> None:
    long = "q" * 300
    shown = "q" * 40 + "…"
    plan = write_plan(
        f"plancc: 1\nmodel: {long}\nplatform: {long}\n"
        f"tensors:\n  w: {{shape: [4], dtype: {long}}}\n  v: {{shape: [{long}], dtype: bf16}}\n"
        f"layers:\n  k:\n    {long}: 1\n    stages:\n"
        f"      - {{name: s0, task: t0, streams: {long}.0}}\n"
        f"      - {{name: s1, reads: [w, {long}]}}\n"
        f"    warms:\n      - {{name: w1, after: {long}, tensors: [w]}}\n"
    )
    assert [(d.code, d.message) for d in validate_paths([str(plan)]).diagnostics] == [
        ("PC013", f"model '{shown}' is 300 characters long; a name has at most 100"),
        ("PC002", f"platform '{shown}' is not one of: a2a3, a2a3sim, a5, a5sim"),
        ("PC023", f"unknown dtype '{shown}' for tensor 'w'"),
        ("PC010", f"unknown dim '{shown}'"),
        ("PC002", f"unknown key '{shown}' in layers.k"),
        ("PC002", f"layers.k.stages[0].streams '{shown}' is not a size"),
        ("PC010", f"unknown tensor '{shown}'"),
        ("PC010", f"unknown stage '{shown}' in layer kind 'k'"),
    ]


def test_quoted_plan_text_is_escaped_onto_one_printable_line(write_plan: Write) -> None:
    plan = write_plan(
        'plancc: 1\nmodel: m\nplatform: "a\\nb\\e[31mR\\u2028\\u202e"\nconfig: "c.json\\0"\n'
        "tensors: {}\nlayers: {k: {stages: [{name: s}]}}\n"
    )
    assert [(d.code, d.message) for d in validate_paths([str(plan)]).diagnostics] == [
        (
            "PC002",
            "platform 'a\\nb\\x1b[31mR\\u2028\\u202e' is not one of: a2a3, a2a3sim, a5, a5sim",
        ),
        ("PC005", "cannot read config 'c.json\\x00': a path cannot contain a NUL character"),
    ]


def test_a_message_is_cut_at_1000_characters(write_plan: Write) -> None:
    # PC103 names every tensor of the group that the warm leaves out.
    names = [f"weight_tensor_number_{i:03}" for i in range(60)]
    tensors = "".join(f"  {n}: {{shape: [1024], dtype: int8}}\n" for n in names)
    plan = write_plan(
        "plancc: 1\nmodel: m\nplatform: a2a3\ntensors:\n  o: {shape: [1024], dtype: int8}\n"
        f"{tensors}layers:\n  k:\n    stages:\n      - {{name: s0, task: t0}}\n"
        "      - {name: gap}\n"
        f"      - {{name: s1, reads: [o, {', '.join(names)}]}}\n"
        "    warms: [{name: w, after: s0, tensors: [o]}]\n"
    )
    (pc103,) = [d for d in validate_paths([str(plan)]).diagnostics if d.code == "PC103"]
    assert pc103.message.startswith("warm 'w' covers o but not weight_tensor_number_000, ")
    head, tail = pc103.message[:1000], pc103.message[1000:]
    assert "weight_tensor_number_059" not in head
    assert re.fullmatch(r"… \([0-9,]+ more characters\)", tail)


def test_a_stacked_warm_whose_anchor_does_not_resolve_is_its_findings(write_plan: Write) -> None:
    # Found by make fuzz: the warm's function names were checked against its anchor's
    # TaskId with no anchor resolved (an internal error).
    plan = write_plan(
        "plancc: 1\nmodel: m\nplatform: a2a3\ndims: {H: 64}\n"
        "tensors:\n  wo: {shape: [H, H], dtype: bf16, stacked: {layers: 4, index: i}}\n"
        "layers:\n  dec:\n    stages:\n      - {name: attn, task: t}\n"
        "      - {name: o, reads: [wo]}\n"
        "    warms:\n      - {name: warm_wo, after: q_proj, tensors: [wo]}\n"
    )
    assert [d[:3] for d in _diagnostics(plan)] == [("PC010", 13, 32)]
