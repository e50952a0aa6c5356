"""The loader: bytes -> YAML tree with the position of every key and value, or one PC001."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from plancc.api import diagnose_plan
from plancc.diagnostics import Diagnostic, Pos, Severity
from plancc.load import MAX_BYTES, MAX_DEPTH, MAX_NODES, Document, load, read_capped
from plancc.load import compose as composer
from plancc.load.inputs import PlanInput

BLOCK = b"""\
plancc: 1
model: m
platform:
tensors:
  w:
    shape:
      - D
      - 4
    dtype: bf16
"""

FLOW = b"""\
tensors: {w: {shape: [D, 4], dtype: bf16}}
layers: {k: {stages: [{name: s0}, {name: s1, reads: [w]}]}}
"""


def _doc(raw: bytes) -> Document:
    doc = load("plan.yaml", raw)
    assert isinstance(doc, Document), doc
    return doc


def _pc001(raw: bytes) -> Diagnostic:
    d = load("plan.yaml", raw)
    assert isinstance(d, Diagnostic), d
    assert (d.file, d.code, d.severity) == ("plan.yaml", "PC001", Severity.ERROR)
    return d


def test_block_positions_of_keys_and_values() -> None:
    doc = _doc(BLOCK)
    assert doc.data == {
        "plancc": 1,
        "model": "m",
        "platform": None,
        "tensors": {"w": {"shape": ["D", 4], "dtype": "bf16"}},
    }
    assert doc.keys[("model",)] == Pos(2, 1)
    assert doc.values[("model",)] == Pos(2, 8)
    assert doc.keys[("tensors", "w")] == Pos(5, 3)
    assert doc.values[("tensors", "w")] == Pos(6, 5)  # a block mapping starts at its first key
    assert doc.values[("tensors", "w", "shape")] == Pos(7, 7)
    assert doc.values[("tensors", "w", "shape", 0)] == Pos(7, 9)
    assert doc.values[("tensors", "w", "shape", 1)] == Pos(8, 9)
    assert doc.keys[("tensors", "w", "dtype")] == Pos(9, 5)
    assert doc.values[("tensors", "w", "dtype")] == Pos(9, 12)
    assert doc.values[()] == Pos(1, 1)


def test_an_empty_value_is_placed_at_its_key() -> None:
    doc = _doc(BLOCK)
    assert doc.values[("platform",)] == doc.keys[("platform",)] == Pos(3, 1)


def test_flow_positions_of_keys_and_values() -> None:
    doc = _doc(FLOW)
    assert doc.values[("tensors",)] == Pos(1, 10)
    assert doc.keys[("tensors", "w")] == Pos(1, 11)
    assert doc.values[("tensors", "w")] == Pos(1, 14)
    assert doc.keys[("tensors", "w", "shape")] == Pos(1, 15)
    assert doc.values[("tensors", "w", "shape")] == Pos(1, 22)
    assert doc.values[("tensors", "w", "shape", 0)] == Pos(1, 23)
    assert doc.values[("tensors", "w", "shape", 1)] == Pos(1, 26)
    assert doc.values[("tensors", "w", "dtype")] == Pos(1, 37)
    assert doc.values[("layers", "k", "stages", 0)] == Pos(2, 23)
    assert doc.values[("layers", "k", "stages", 1, "name")] == Pos(2, 42)
    assert doc.keys[("layers", "k", "stages", 1, "reads")] == Pos(2, 46)
    assert doc.values[("layers", "k", "stages", 1, "reads", 0)] == Pos(2, 54)


def test_at_falls_back_to_the_nearest_known_ancestor() -> None:
    doc = _doc(FLOW)
    assert doc.at(("tensors", "w", "flat", 0)) == Pos(1, 14)
    assert doc.at(("nowhere",)) == Pos(1, 1)
    # key_at of a list item (which has no key) is its value's position
    assert doc.key_at(("tensors", "w", "shape", 1)) == Pos(1, 26)
    assert doc.key_at(("tensors", "w", "dtype")) == Pos(1, 30)


def test_scalars_follow_yaml_1_2_and_keys_keep_their_source_text() -> None:
    doc = _doc(b"a: yes\nb: ~\nc: TRUE\nd: 1.5\ne: '7'\n0: x\nf: 010\ng: !!str 5\n")
    assert doc.data == {
        "a": "yes",
        "b": None,
        "c": True,
        "d": 1.5,
        "e": "7",
        "0": "x",
        "f": 10,
        "g": "5",
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # YAML 1.2 core integers: decimal (leading zeros and a sign allowed), 0o, 0x
        ("0", 0),
        ("-0", 0),
        ("+12", 12),
        ("-12", -12),
        ("010", 10),
        ("0o17", 15),
        ("0x1F", 31),
        ("0xff", 255),
        # YAML 1.2 core floats
        ("1.5", 1.5),
        ("-.5", -0.5),
        ("1.", 1.0),
        ("1e3", 1000.0),
        ("+1.5E-3", 0.0015),
        (".inf", float("inf")),
        ("-.Inf", float("-inf")),
        ("+.INF", float("inf")),
        # the core schema's booleans and nulls
        ("True", True),
        ("FALSE", False),
        ("Null", None),
        ("~", None),
        # everything else is a string, whatever YAML 1.1 or the library made of it
        ("2024-05-01", "2024-05-01"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("1_000", "1_000"),
        ("0b11", "0b11"),
        ("0B11", "0B11"),
        ("0X1F", "0X1F"),
        ("0O17", "0O17"),
        ("-0x1", "-0x1"),
        ("+0o7", "+0o7"),
        ("0x_1F", "0x_1F"),
        ("1_0.5", "1_0.5"),
        ("685.230_15e+03", "685.230_15e+03"),
        ("1:20", "1:20"),
        ("-.nan", "-.nan"),
        ("inf", "inf"),
        ("yes", "yes"),
        ("tRUE", "tRUE"),
        ("nUll", "nUll"),
    ],
)
def test_plain_scalars_resolve_by_the_yaml_1_2_core_schema(text: str, value: Any) -> None:
    got = _doc(f"a: {text}\n".encode()).data["a"]
    assert (type(got), got) == (type(value), value)


def test_core_nan() -> None:
    for text in (".nan", ".NaN", ".NAN"):
        got = _doc(f"a: {text}\n".encode()).data["a"]
        assert isinstance(got, float)
        assert math.isnan(got)


def test_a_yaml_1_1_directive_does_not_change_the_schema() -> None:
    assert _doc(b"%YAML 1.1\n---\na: yes\nb: 0b1\nc: 1_0\n").data == {
        "a": "yes",
        "b": "0b1",
        "c": "1_0",
    }


def test_a_byte_order_mark_is_ignored() -> None:
    assert _doc(b"\xef\xbb\xbfa: 1\n").data == {"a": 1}


def test_an_empty_file_is_an_empty_document() -> None:
    assert _doc(b"").data is None
    assert _doc(b"# only a comment\n").data is None


def test_aliases_are_expanded_with_the_anchor_position() -> None:
    doc = _doc(b"a: &x [1, 2]\nb: *x\n")
    assert doc.data == {"a": [1, 2], "b": [1, 2]}
    assert doc.values[("b",)] == doc.values[("a",)] == Pos(1, 4)
    assert doc.values[("b", 1)] == Pos(1, 11)


def test_not_utf8_is_pc001_at_the_first_bad_byte() -> None:
    d = _pc001(b'plancc: 1\nmodel: "m\xff"\n')
    assert (d.line, d.col, d.message) == (2, 10, "file is not valid UTF-8")
    d = _pc001(b"\xfe")
    assert (d.line, d.col) == (1, 1)


@pytest.mark.parametrize(
    ("raw", "line", "col"),
    [
        ('plancc: 1\nmodel: "éé'.encode() + b'\x80"\n', 2, 11),  # columns count characters
        ('a: "\U0001f600'.encode() + b'\xff"\n', 1, 6),
        (b"\xef\xbb\xbfa: 1\n\xff\n", 2, 1),  # a BOM is no column
        (b"\xef\xbb\xbfa: '\xff\n", 1, 5),
        (b"a: 1\r\nb: '\xff'\n", 2, 5),  # CRLF is one line break
        (b"a: 1\rb: '\xff'\n", 2, 5),  # so is a lone CR, as for the YAML reader
    ],
)
def test_not_utf8_columns_count_characters(raw: bytes, line: int, col: int) -> None:
    d = _pc001(raw)
    assert (d.line, d.col, d.message) == (line, col, "file is not valid UTF-8")


@pytest.mark.parametrize(
    ("raw", "line", "col", "code"),
    [
        (b'plancc: 1\nmodel: "ab\x07"\n', 2, 11, "0007"),
        ('plancc: 1\nmodel: "éé\x80"\n'.encode(), 2, 11, "0080"),  # valid UTF-8, not YAML
        (b"a: 1\n\x00\n", 2, 1, "0000"),
        (b"\xef\xbb\xbfa: '\x1b'\n", 1, 5, "001B"),
        (b"a: 1\r\nb: 2\rc: '\x01'\n", 3, 5, "0001"),
        ("a: '\ufffe'\n".encode(), 1, 5, "FFFE"),
    ],
)
def test_a_character_yaml_rejects_is_pc001_where_it_is(
    raw: bytes, line: int, col: int, code: str
) -> None:
    d = _pc001(raw)
    assert (d.line, d.col) == (line, col)
    assert d.message == f"invalid YAML: character U+{code} is not allowed"


@pytest.mark.parametrize(
    "raw",
    [
        b'plancc: 1\nmodel: "ab\x07"\n',
        b'{"a\\nb": 1, "a\\nb": 2}\n',  # a key with a line break, named in the message
        b'{"a\\u2028b\\tc": 1, "a\\u2028b\\tc": 2}\n',
        b"a: [1, 2\nc: 3\n",
        b"a: &r [*r]\n",
    ],
)
def test_every_pc001_message_is_one_printable_line(raw: bytes) -> None:
    message = _pc001(raw).message
    assert message.isprintable(), message


def test_a_duplicate_key_is_named_escaped() -> None:
    d = _pc001(b'{"a\\nb": 1, "a\\nb": 2}\n')
    assert d.message == "duplicate key 'a\\nb' (first defined at 1:2)"


def test_the_4_mib_limit(tmp_path: Path) -> None:
    at_limit = b"a: 1\n" + b"#" * (MAX_BYTES - 6) + b"\n"
    assert len(at_limit) == MAX_BYTES == 4 * 1024 * 1024
    assert _doc(at_limit).data == {"a": 1}
    d = _pc001(at_limit + b"\n")
    assert (d.line, d.col) == (1, 1)
    assert d.message == "file is larger than 4 MiB (4,194,304 bytes), the limit"


def test_a_file_past_the_limit_is_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (3 * MAX_BYTES))
    assert len(read_capped(big)) == MAX_BYTES + 1
    # A device that never ends is a PC001 too, not a MemoryError.
    assert len(read_capped("/dev/zero")) == MAX_BYTES + 1


@pytest.mark.parametrize(
    ("raw", "line", "col", "message"),
    [
        (b"a: 1\nb: [1, 2\nc: 3\n", 2, 4, "the list that opens with '[' here is not closed"),
        (b"a:\n\tb: 1\n", 2, 1, "a tab here: YAML indents with spaces"),
        (b"a: 1\n---\nb: 2\n", 2, 1, "a second YAML document starts here"),
        (b"a: 1\nb: 'x\nc: 2\n", 2, 4, "the quoted string that opens here is never closed"),
        (b"a: " + b"9" * 5000 + b"\n", 1, 4, "99999999999999999999… (5,000 digits) does not fit"),
        (b"a: *nothing\n", 1, 4, "alias *nothing refers to no anchor &nothing defined before"),
        (b"a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key 'a' (first defined at 1:1)"),
        (b"x: {a: 1, 'a': 2}\n", 1, 11, "duplicate key 'a' (first defined at 1:5)"),
        (b"? [a]\n: 1\n", 1, 3, "a mapping key must be a plain scalar"),
        (b"a: {x: 1}\nb:\n  <<: *a\n", 3, 7, "alias *a refers to no anchor &a"),
        (b"a: &a {x: 1}\nb:\n  <<: *a\n", 3, 3, "merge keys (<<) are not supported"),
        (b"a: {<<: 1}\n", 1, 5, "merge keys (<<) are not supported"),  # a plain `<<` key
        (b"a: !!merge x\n", 1, 4, "tag !!merge is not supported"),
        (b"a: !!python/name:os.system x\n", 1, 4, "is not supported: a plan is plain data"),
        (b"a: !!binary aGk=\n", 1, 4, "tag !!binary is not supported"),
        (b"a: !!set {x}\n", 1, 4, "tag !!set is not supported"),
        (b"a: !!seq {x: 1}\n", 1, 4, "tag !!seq is not supported"),
        (b"a: !!map [1]\n", 1, 4, "tag !!map is not supported"),
        (b"a: !!float x\n", 1, 4, "invalid number 'x'"),
        (b"a: !!bool maybe\n", 1, 4, "invalid boolean 'maybe'"),
        (b"a: !!timestamp 2001-12-14\n", 1, 4, "tag !!timestamp is not supported"),
        (b"a: !!int 1_000\n", 1, 4, "invalid integer '1_000'"),
        (b"a: !!int 0b11\n", 1, 4, "invalid integer '0b11'"),
        (b"a: !!float 0x10\n", 1, 4, "invalid number '0x10'"),
        (b"a: 9223372036854775808\n", 1, 4, "does not fit in 64 bits"),
        (b"a: &r [*r]\n", 1, 4, "recursive alias"),
    ],
)
def test_unreadable_documents_are_pc001_where_the_parser_says(
    raw: bytes, line: int, col: int, message: str
) -> None:
    d = _pc001(raw)
    assert (d.line, d.col) == (line, col), d.message
    assert message in d.message


def test_every_int64_is_an_integer_and_only_those() -> None:
    assert _doc(b"a: 9223372036854775807\n").data == {"a": 2**63 - 1}
    assert _doc(b"a: -9223372036854775808\n").data == {"a": -(2**63)}
    assert _doc(b"a: 0x7FFFFFFFFFFFFFFF\n").data == {"a": 2**63 - 1}
    for text in ("-9223372036854775809", "0x8000000000000000", "1" + "0" * 30):
        d = _pc001(f"a: {text}\n".encode())
        assert d.message == f"integer {text} does not fit in 64 bits"


def test_leading_zeros_do_not_make_an_integer_long() -> None:
    assert _doc(b"a: 0000000000000000000000000000008\n").data == {"a": 8}
    assert _doc(("a: -" + "0" * 5000 + "7\n").encode()).data == {"a": -7}
    assert _doc(b"a: 0o0000000000000000000000000000000017\n").data == {"a": 15}


# YAML 1.2 texts each path once read otherwise (issue 27): the same, right, reading
# from the C parser's path and the pure one's.
YAML_1_2 = [
    (b"a: 1\n...\n...\n", {"a": 1}),  # document end markers, repeated
    (b'a: ["b":c]\n', {"a": [{"b": "c"}]}),  # YAML 1.2 example 7.21
    (b'a: {"b":c}\n', {"a": {"b": "c"}}),
    (b"a: |\n \n  x\n", {"a": "\nx\n"}),  # a leading blank line shorter than the text
    (b"plancc:\t1\n", {"plancc": 1}),  # a tab separating
    (b"a: b\tc\n", {"a": "b\tc"}),  # a tab inside a plain scalar
    (b"a: 1\t# note\n", {"a": 1}),  # a tab before a comment
    (b"a: [1,\t2]\n", {"a": [1, 2]}),
    (b"a: !!str\t5\n", {"a": "5"}),
    (b"a: >-\t# note\n  x\n", {"a": "x"}),
    (b"a: b\xc2\x85c\n", {"a": "b\x85c"}),  # NEL, LS and PS are no line breaks in 1.2
    ("a: b\u2028c\n# x\u2029y: 1\n".encode(), {"a": "b\u2028c"}),
    ("a: b\ufeff\n".encode(), {"a": "b\ufeff"}),
    (b"a: ! 12\n", {"a": "12"}),  # the non-specific tag: a string
    (b"a: ! [1]\n", {"a": [1]}),
    (b"group: <<\n", {"group": "<<"}),  # no merge value in 1.2
    (b'"<<": 1\n', {"<<": 1}),  # a quoted key is any key
]


@pytest.mark.parametrize("pure", [False, True], ids=["c", "pure"])
@pytest.mark.parametrize(("raw", "data"), YAML_1_2, ids=[repr(r) for r, _ in YAML_1_2])
def test_yaml_1_2_is_read_alike_on_both_paths(raw: bytes, data: Any, pure: bool) -> None:
    doc = load("plan.yaml", raw, pure=pure)
    assert isinstance(doc, Document), doc
    assert doc.data == data


@pytest.mark.parametrize("pure", [False, True], ids=["c", "pure"])
@pytest.mark.parametrize(
    "extra",
    [b"# a\ttab\n", b"# a \xc2\x85 NEL\n", "# a \u2028 LS\n".encode(), b"t: !!str x\n"],
    ids=["tab", "NEL", "LS", "tag"],
)
def test_a_character_or_tag_anywhere_does_not_change_the_reading(extra: bytes, pure: bool) -> None:
    raw = b'a: ["b":c]\nb: |\n \n  x\n' + extra
    doc = load("plan.yaml", raw, pure=pure)
    assert isinstance(doc, Document), doc
    assert (doc.data["a"], doc.data["b"]) == ([{"b": "c"}], "\nx\n")


def test_a_non_specific_tag_makes_the_version_a_string() -> None:
    plan = Path(__file__).parent / "cases" / "core" / "pc003_string_block.yaml"
    text = plan.read_text("utf-8")
    assert text.startswith('plancc: "1"\n')

    def found(first: str) -> list[tuple[str, int, int]]:
        raw = (first + text.split("\n", 1)[1]).encode()
        result = diagnose_plan(PlanInput("plan.yaml", plan), raw)
        return [(d.code, d.line, d.col) for d in result.diagnostics]

    assert found("plancc: ! 1\n") == found('plancc: "1"\n') == [("PC003", 1, 9)]


@pytest.mark.parametrize("pure", [False, True], ids=["c", "pure"])
@pytest.mark.parametrize("raw", [b"---", b"--- ", b"- a\n-", b"a:"])
def test_no_position_is_past_the_end_of_the_text(raw: bytes, pure: bool) -> None:
    doc = load("plan.yaml", raw, pure=pure)
    assert isinstance(doc, Document), doc
    last = raw.decode().split("\n")
    stop = Pos(len(last), len(last[-1]) + 1)
    for start, end in doc.ends.items():
        assert start <= end <= stop, (start, end)
    assert all(p <= stop for p in doc.values.values())
    if raw.startswith(b"---"):
        assert doc.values[()] == stop  # the empty root, where the text ends


def test_an_anchor_is_named_as_libyaml_names_it() -> None:
    # To YAML 1.2 `&x:` names `x:`; to libyaml (and so to plancc), `x`, then `:`.
    for pure in (False, True):
        d = load("plan.yaml", b"a: &x:1\nb: *x\n", pure=pure)
        assert isinstance(d, Document), d
        assert d.data == {"a": ":1", "b": ":1"}


def test_nesting_is_bounded() -> None:
    deep = "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    d = _pc001(deep.encode())
    assert d.message == f"nesting deeper than {MAX_DEPTH} levels"
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    assert isinstance(load("plan.yaml", ok.encode()), Document)


# Reported at the first node deeper than the limit, also where ruamel's recursive
# composer runs out of Python stack before plancc counts the depth (600 levels).
TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels"


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 600, 1500])
def test_deep_flow_nesting_is_reported_where_it_passes_the_limit(levels: int) -> None:
    d = _pc001(("a: " + "[" * levels + "]" * levels + "\n").encode())
    assert (d.line, d.col, d.message) == (1, 4 + MAX_DEPTH, TOO_DEEP)  # the 65th [


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 600, 1500])
def test_deep_block_nesting_is_reported_where_it_passes_the_limit(levels: int) -> None:
    d = _pc001("".join(" " * i + f"k{i}:\n" for i in range(levels)).encode())
    assert (d.line, d.col, d.message) == (65, 65, TOO_DEEP)  # k64, a key of the 64th mapping


BIG = f"the document has more than {MAX_NODES:,} nodes, counting each alias expanded"


def _bomb(levels: int, width: int) -> bytes:
    lines = ['a0: &a0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return ("\n".join(lines) + "\n").encode()


class _Work:
    """What the composer did: how many nodes it built (with their positions)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.built = 0
        compose = composer.Composer.compose

        def counting(this: composer.Composer) -> Any:
            try:
                return compose(this)
            finally:
                self.built = len(this.values)

        monkeypatch.setattr(composer.Composer, "compose", counting)


def test_a_billion_laughs_is_pc001_without_being_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _bomb(levels=9, width=9)  # 9**9 = 387,420,489 strings if expanded
    work = _Work(monkeypatch)
    d = _pc001(raw)
    assert d.message == BIG
    assert (d.line, d.col) == (7, 5)  # the first anchor whose expansion passes the limit
    # Built no further than the limit allows, though the rest is counted.
    assert work.built <= MAX_NODES


def test_aliases_below_the_limit_are_fine(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _bomb(levels=4, width=9)  # 9**4 + ... = 7,381 nodes when expanded
    work = _Work(monkeypatch)
    doc = _doc(raw)
    assert len(doc.data["a4"]) == 9
    assert doc.data["a4"][8][8][8][8] == "lol"
    assert doc.values[("a4", 8, 8, 8, 8)] == Pos(1, 5)  # where its anchor (`&a0 "lol"`) is
    assert work.built > 7000  # the tree really is expanded, with positions for every node
    assert MAX_NODES == 500_000


def test_the_corpus_bombs_are_rejected_fast() -> None:
    # Not a timing assertion: the bombs in the corpus load through the same path.
    for name in ("pc001_alias_bomb_block.yaml", "pc001_alias_bomb_flow.yaml"):
        raw = (Path(__file__).parent / "cases" / "core" / name).read_bytes()
        assert _pc001(raw).message == BIG


def test_a_big_document_without_aliases_is_not_called_an_alias_bomb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(composer, "MAX_NODES", 10)  # as with 500,000, only faster
    ok = b"a: [" + b"0, " * 6 + b"0]\n"  # the root, the key, the list and 7 items: 10 nodes
    assert isinstance(load("plan.yaml", ok), Document)
    d = _pc001(b"a: [" + b"0, " * 9 + b"0]\n")  # the list alone has 11
    assert (d.line, d.col) == (1, 26)  # the 11th node: the list's 8th item
    assert d.message == "the document has more than 10 nodes, counting each alias expanded"


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        # The root, the key `x`, the list and 149,997 items: node 100,001 is item 99,997.
        (b"x:\n" + b"- 1\n" * 149_997, (2 + 99_997, 3)),
        (b"x: [" + b"1, " * 149_996 + b"1]\n", (1, 5 + 3 * 99_997)),
    ],
    ids=["block", "flow"],
)
def test_a_huge_document_is_rejected_at_the_node_past_the_limit(
    monkeypatch: pytest.MonkeyPatch, raw: bytes, where: tuple[int, int]
) -> None:
    monkeypatch.setattr(composer, "MAX_NODES", 100_000)  # a smaller limit: a smaller file
    work = _Work(monkeypatch)
    # YAML broken at the very end goes unseen: nothing after the node past the limit is read.
    d = _pc001(raw + b'"unclosed\n')
    message = "the document has more than 100,000 nodes, counting each alias expanded"
    assert ((d.line, d.col), d.message) == (where, message)
    assert work.built <= 100_000


def test_every_node_records_where_it_ends() -> None:
    """``Document.ends``: from a node's start to just past its end (an editor's range);
    where a block mapping and its first key start together, the key's end."""
    doc = load("x.yaml", b"a: [bb, {c: d}]\nk:\n  - x: 1\n    y: 2\n")
    assert isinstance(doc, Document)
    ends = {(s.line, s.col): (e.line, e.col) for s, e in doc.ends.items()}
    assert ends[(1, 1)] == (1, 2)  # the key `a`, not the whole document
    assert ends[(1, 4)] == (1, 16)  # [bb, {c: d}]
    assert ends[(1, 5)] == (1, 7)  # bb
    assert ends[(1, 9)] == (1, 15)  # {c: d}
    assert ends[(3, 3)] == (5, 1)  # the block list, through its last line
    assert ends[(4, 8)] == (4, 9)  # 2
