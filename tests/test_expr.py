"""Dim expressions: the whitelist parser, evaluation and rendering (never ``eval``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancc import expr as ex
from plancc.expr import BinOp, ExprError, Name, Num, evaluate, names, parse, render

DIMS = {"D": 4096, "H": 64, "HEAD_DIM": 512, "G": 8, "ONE": 1, "KV": None}


def _lookup(name: str) -> int | None:
    return DIMS[name]


def _value(source: int | str) -> int | None:
    return evaluate(parse(source), _lookup)


@pytest.mark.parametrize(
    ("source", "tree"),
    [
        (4096, Num(4096)),
        ("4096", Num(4096)),
        ("D", Name("D")),
        ("  D  ", Name("D")),
        ("D*2", BinOp("*", Name("D"), Num(2))),
        ("a + b * c", BinOp("+", Name("a"), BinOp("*", Name("b"), Name("c")))),
        ("(a + b) * c", BinOp("*", BinOp("+", Name("a"), Name("b")), Name("c"))),
        ("a - b - c", BinOp("-", BinOp("-", Name("a"), Name("b")), Name("c"))),
        ("a // b % c", BinOp("%", BinOp("//", Name("a"), Name("b")), Name("c"))),
        ("((a))", Name("a")),
        ("snake_case2", Name("snake_case2")),
    ],
)
def test_parse_accepts(source: int | str, tree: ex.Expr) -> None:
    assert parse(source) == tree


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "empty expression"),
        ("   ", "empty expression"),
        (0, "0 is not a positive integer"),
        (-3, "-3 is not a positive integer"),
        (2**63, "is larger than 2**63 - 1"),
        ("0", "a literal 0 is not a dimension"),
        ("D * 0", "a literal 0 is not a dimension"),
        ("0x10", "'0x10' is not a decimal integer"),
        ("D * 0x10", "'0x10' is not a decimal integer"),
        ("1_000", "'1_000' is not a decimal integer"),
        ("1e3", "'1e3' is not a decimal integer"),
        ("064", "'064': write integers without leading zeros"),
        ("99999999999999999999", "'99999999999999999999' is larger than 2**63 - 1"),
        ("1" * 5000, "is larger than 2**63 - 1"),
        ("D ** 2", "'**' is not allowed"),
        ("D / 2", "use // for integer division"),
        ("max(D, 2)", "'max(': calls are not allowed"),
        ("__import__('os').system('true')", "'__import__(': calls are not allowed"),
        ("D.bit_length", "'D.': attribute access is not allowed"),
        ("D[0]", "'[' is not allowed in a dim expression"),
        ("'D'", "''' is not allowed in a dim expression"),
        ("D; 1", "';' is not allowed"),
        ("D if D else 1", "unexpected 'if'"),
        ("-D", "unexpected '-'"),
        ("+D", "unexpected '+'"),
        ("D - + 2", "unexpected '+'"),
        ("D D", "unexpected 'D' in 'D D'"),
        ("D +", "the expression ends too early"),
        ("(D + 1", "the expression ends too early"),
        ("D)", "unexpected ')' in 'D)'"),
        ("()", "unexpected ')'"),
        ("1.5", "'.' is not allowed"),
        ("D\u00b2", "'\u00b2' is not allowed"),
        ("+".join(["1"] * 101), "the expression is longer than 200 tokens"),
        ("(" * 150 + "1" + ")" * 150, "the expression is longer than 200 tokens"),
    ],
)
def test_parse_rejects(source: int | str, message: str) -> None:
    with pytest.raises(ExprError) as err:
        parse(source)
    assert message in str(err.value)


def test_the_longest_expression_allowed() -> None:
    source = "+".join(["1"] * 100)  # 199 tokens
    assert _value(source) == 100


def test_rejected_text_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for source in (
        f"__import__('pathlib').Path({str(marker)!r}).touch()",
        f"open({str(marker)!r}, 'w')",
    ):
        with pytest.raises(ExprError):
            evaluate(parse(source), lambda name: 1)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (7, 7),
        ("D", 4096),
        ("H * HEAD_DIM // G", 4096),
        ("2 + 3 * 4", 14),
        ("(2 + 3) * 4", 20),
        ("20 - 4 - 3", 13),
        ("20 - (4 - 3)", 19),
        ("100 // 10 // 5", 2),
        ("100 // (10 // 5)", 50),
        ("7 % 4 * 3", 9),
        ("2 * 7 % 4", 2),
        ("7 // 2", 3),
        ("D - 4095", 1),
        ("ONE - D", -4095),  # a negative value evaluates; resolve reports it (PC012)
        ("KV", None),
        ("KV * 2 + D", None),
        ("(KV)", None),
        ("4611686018427387904 + 4611686018427387903", 2**63 - 1),
    ],
)
def test_evaluate(source: int | str, value: int | None) -> None:
    assert _value(source) == value


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("D // (D - D)", "division by zero"),
        ("D % (H - 64)", "division by zero"),
        ("D // (ONE - ONE) + KV", "division by zero"),
        ("4611686018427387904 + 4611686018427387904", "the value is larger than 2**63 - 1"),
        ("3037000500 * 3037000500", "the value is larger than 2**63 - 1"),
    ],
)
def test_evaluate_rejects(source: str, message: str) -> None:
    with pytest.raises(ExprError, match=message.replace("*", r"\*")):
        _value(source)


def test_evaluate_checks_names_from_lookup() -> None:
    with pytest.raises(ExprError, match="larger than"):
        evaluate(parse("BIG"), lambda name: 2**64)


def test_evaluate_asks_lookup_for_every_name_in_order() -> None:
    seen: list[str] = []

    def lookup(name: str) -> int:
        seen.append(name)
        return 2

    assert evaluate(parse("a * (b + a) // c"), lookup) == 4
    assert seen == ["a", "b", "a", "c"]


def test_names_in_source_order() -> None:
    assert list(names(parse("H * HEAD_DIM // (G + H)"))) == ["H", "HEAD_DIM", "G", "H"]
    assert list(names(parse(3))) == []


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("D", "D"),
        ("D*2", "D * 2"),
        ("((D))", "D"),
        ("(a + b) * c", "(a + b) * c"),
        ("a + (b * c)", "a + b * c"),
        ("(a * b) + c", "a * b + c"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("a - (b + c)", "a - (b + c)"),
        ("a + (b - c)", "a + (b - c)"),
        ("a // (b * c)", "a // (b * c)"),
        ("a * (b // c)", "a * (b // c)"),
        ("(a * b) // c", "a * b // c"),
        ("a % (b % c)", "a % (b % c)"),
        ("(a + b) // (c - d)", "(a + b) // (c - d)"),
        ("H * HEAD_DIM // O_GROUPS", "H * HEAD_DIM // O_GROUPS"),
    ],
)
def test_render_keeps_only_the_parentheses_it_needs(source: str, text: str) -> None:
    assert render(parse(source)) == text


def test_is_compound() -> None:
    assert ex.is_compound(parse("a + 1"))
    assert not ex.is_compound(parse("(a)"))
    assert not ex.is_compound(parse(4))


_NAMES = ("a", "b", "c")
_ENV = {"a": 7, "b": 3, "c": 12}


def _trees() -> st.SearchStrategy[ex.Expr]:
    leaves: st.SearchStrategy[ex.Expr] = st.one_of(
        st.integers(1, 50).map(Num), st.sampled_from(_NAMES).map(Name)
    )
    return st.recursive(
        leaves,
        lambda sub: st.builds(BinOp, st.sampled_from(["+", "-", "*", "//", "%"]), sub, sub),
        max_leaves=12,
    )


def _safe_value(tree: ex.Expr) -> int | None:
    try:
        return evaluate(tree, _ENV.get)
    except ExprError:
        return None


@settings(database=None)
@given(_trees())
def test_render_round_trips_and_means_the_same_in_python(tree: ex.Expr) -> None:
    text = render(tree)
    assert parse(text) == tree  # rendering loses nothing, parsing adds nothing
    value = _safe_value(tree)
    if value is not None:
        # Generated code evaluates the rendered text as Python: it must mean the same.
        assert eval(text, {"__builtins__": {}}, dict(_ENV)) == value
