"""The line scanner (plancc/scan.py) reads the part of YAML plans are written in and
gives exactly what the composer gives from the pure parser's events: the same
tree, positions and ranges. Outside that part it gives up (None), never guesses."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancc import load as loader
from plancc.compose import Composer
from plancc.diagnostics import pos_of
from plancc.load import Document, load
from plancc.scan import scan
from tests import bench_plans

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (ROOT / "plans").glob("*.yaml")
)


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")


def _composed(text: str) -> Any:
    """The reference: the composer over the pure parser's events."""
    from ruamel.yaml import YAML

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Composer(YAML(typ="safe", pure=True).parse(text).__next__).compose()


def _unfolded(bare: Any) -> tuple[str, list[Any], list[Any]]:
    """A scan without ranges, every folded position recorded: its tree and positions,
    in order."""
    folds = bare[4]
    if folds is not None:
        folds.unfold_all()
    return repr(bare[0]), list(bare[1].items()), list(bare[2].items())


def _scan(text: str) -> Any:
    """``scan(text)``, held to the scan without ranges (which reads most flow mappings
    by a faster path, and keeps their positions folded): both read the text or
    neither, to the same tree and positions."""
    full, bare = scan(text), scan(text, ranges=False)
    assert (full is None) == (bare is None)
    if full is not None:
        assert full[4] is None  # with ranges, every position is recorded as read
        assert bare[3] is None
        assert _unfolded(bare) == (repr(full[0]), list(full[1].items()), list(full[2].items()))
    return full


def _same(scanned: Any, composed: Any) -> None:
    data, values, keys, ends, _ = scanned
    assert repr(data) == repr(composed[0])  # repr: nan == nan
    assert (values, keys, ends) == composed[1:]


@pytest.mark.parametrize("plan", CORPUS, ids=[p.name for p in CORPUS])
def test_what_the_scanner_reads_in_the_corpus_it_reads_as_the_composer(plan: Path) -> None:
    text = _text(plan)
    if loader._pure_only(text):
        pytest.skip("for the pure parser alone")
    scanned = _scan(text)
    if scanned is not None:
        _same(scanned, _composed(text))


def test_the_scanner_reads_most_of_the_corpus() -> None:
    read = [p for p in CORPUS if not loader._pure_only(_text(p)) and scan(_text(p)) is not None]
    assert len(read) >= 100  # of 167: the others quote, alias, tag or hold a YAML error
    # The Pro plan's `reason: >-` (a folded block scalar) is for the composer.
    assert "deepseek_v4_flash.yaml" in {p.name for p in read}


@pytest.mark.parametrize("shape", ["spread", "anchored"])
def test_the_bench_plans_are_scanned_exactly(shape: str) -> None:
    text = getattr(bench_plans, shape)(100)
    scanned = _scan(text)
    assert scanned is not None
    _same(scanned, _composed(text))


def test_load_takes_the_scanned_tree_without_the_c_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_c_parser", lambda: pytest.fail("the C parser was asked"))
    doc = load("p.yaml", (ROOT / "plans" / "deepseek_v4_flash.yaml").read_bytes())
    assert isinstance(doc, Document)
    assert doc.data["platform"] == "a2a3"


@pytest.mark.parametrize(
    "text",
    [
        "a: 'x'\n",  # quotes
        'a: ["x"]\n',
        "a: &x 1\nb: *x\n",  # an anchor, an alias
        "a: !!str 1\n",  # a tag
        "a: |\n  x\n",  # a block scalar
        "a: >-\n  x\n",
        "a: b\n  c\n",  # a plain scalar over two lines
        "a: [1,\n  2]\n",  # a flow collection over two lines
        "a:\nb: 1\n",  # an empty value
        "a: [1, ]\n",  # a trailing comma
        "a: {b: }\n",
        "a: 1\na: 2\n",  # a duplicate key
        "a: {b: 1, b: 2}\n",
        "a: [x]y\n",  # more after a collection
        "a: [x]#c\n",  # a comment needs a space before it
        "a: [x #c]\n",
        "a:b\n",  # one plain scalar: no key
        "a: {b:c}\n",
        "a: [b: c]\n",  # a pair in a sequence
        "a: b: c\n",
        "<<: {a: 1}\n",  # a merge key
        "a: <<\n",  # `<<` is a merge also as a value: not plain data (found by mutation)
        "a: [<<]\n",
        "a: {b: <<}\n",
        "a: {b: [<<]}\n",
        "a: {b: 1, c: [x, <<]}\n",
        "a: {b: 99999999999999999999}\n",
        "a: {b: [-]}\n",
        "a: {b: - x}\n",
        "a: {b: 1}x\n",
        "a: {b: 1} x\n",
        "a" * 1025 + ": b\n",  # a key past YAML's 1,024 characters (found by review)
        "- " + "a" * 1025 + ": b\n",
        "x: {y: z, " + "a" * 1025 + ": b}\n",
        "a: 1\r\nb: 2\r\n",  # CR
        "a:\t1\n",  # a tab
        "  a: 1\nb: 2\n",  # a second root
        "a:\n    b: 1\n  c: 2\n",  # a dedent to no open level
        "- a\n- - b\n",  # a sequence in a sequence on one line
        "-\n  a\n",  # an item on the next line
        "---\na: 1\n",  # a document marker
        "? a\n: 1\n",  # an explicit key
        "a: 99999999999999999999\n",  # no value for its tag (past 64 bits): the composer words why
        "a: [1]]\n",
        "a: {b: [1}]\n",  # a bracket closing the other kind
        "# only a comment\n",
        "",
    ],
)
def test_the_scanner_gives_up_outside_its_part_of_yaml(text: str) -> None:
    assert scan(text) is None
    assert scan(text, ranges=False) is None


def test_the_scanner_gives_up_at_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from plancc import compose

    deep = "a: " + "[" * compose.MAX_DEPTH + "]" * compose.MAX_DEPTH + "\n"
    assert scan(deep) is None  # its innermost level is past the limit: the composer says where
    assert scan("a: " + "[" * 10 + "]" * 10 + "\n") is not None
    monkeypatch.setattr(compose, "MAX_NODES", 10)
    assert scan("a: [" + "0, " * 6 + "0]\n") is not None  # 10 nodes
    assert scan("a: [" + "0, " * 7 + "0]\n") is None  # 11
    for ranges in (True, False):  # a folded mapping's nodes count, positions or not
        assert scan("a: {b: [" + "0, " * 4 + "0]}\n", ranges=ranges) is not None  # 10 nodes
        assert scan("a: {b: [" + "0, " * 5 + "0]}\n", ranges=ranges) is None  # 11


_PIECES = [
    *(" ", "  ", "-", "- ", ":", ": ", "#", " #", ",", ", ", "[", "]", "{", "}", "\n", "\n  "),
    *("\n- ", "'", '"', "&", "*", "!", "?", "|", ">", "%", "@", "`", ".", "~", "0", "9", "x"),
    *("_", "/", "+", "\\", "null", "true", "0x1F", "1e3", ".inf", "-1", "<<", "a: ", "{}", "[]"),
]
_SEEDS = [t for t in (_text(p) for p in CORPUS) if not loader._pure_only(t) and scan(t)]


@st.composite
def _mutants(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.integers(0, 2))
        if op == 0:
            text = text[:at] + draw(st.sampled_from(_PIECES)) + text[at:]
        elif op == 1:
            text = text[:at] + text[at + draw(st.integers(1, 3)) :]
        else:
            text = text[:at] + draw(st.sampled_from(_PIECES)) + text[at + 1 :]
    return text


@settings(
    max_examples=400, deadline=None, database=None, derandomize=True,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
@given(_mutants())
def test_a_mutated_plan_the_scanner_reads_is_read_as_the_composer_reads_it(text: str) -> None:
    scanned = None if loader._pure_only(text) else _scan(text)
    if scanned is not None:
        _same(scanned, _composed(text))  # the composer raising here is a bug too


def test_without_ranges_the_scanner_writes_no_ends_and_the_same_rest() -> None:
    text = (ROOT / "plans" / "deepseek_v4_flash.yaml").read_text()
    full, bare = scan(text), scan(text, ranges=False)
    assert full is not None
    assert bare is not None
    assert bare[3] is None  # not worked out
    assert full[3]  # every node's end
    assert bare[4] is not None  # most flow mappings kept folded
    assert _unfolded(bare) == (repr(full[0]), list(full[1].items()), list(full[2].items()))


@pytest.mark.parametrize("source", ["flash", "spread"])
def test_positions_kept_folded_are_found_as_the_composer_places_them(source: str) -> None:
    # Each question asked of a fresh document: the first about a folded mapping
    # records its entries, by each way a position is asked for.
    if source == "flash":
        text = (ROOT / "plans" / "deepseek_v4_flash.yaml").read_text()
    else:
        text = bench_plans.spread(100)
    _, values, keys, _ = _composed(text)
    want = {
        "values": {p: pos_of(w) for p, w in values.items()},
        "keys": {p: pos_of(w) for p, w in keys.items()},
    }

    def fresh() -> Document:
        doc = load("p.yaml", text.encode())
        assert isinstance(doc, Document)
        assert doc.values._folds is not None  # type: ignore[attr-defined]
        return doc

    for table in ("values", "keys"):
        doc = fresh()
        asked = getattr(doc, table)
        for path in reversed(want[table]):  # a mapping's last entry first
            assert path in asked
            assert asked.get(path) == want[table][path]
            assert asked[path] == want[table][path]
            assert (*path, "nope") not in asked
        assert getattr(fresh(), table) == want[table]  # every item, whole
        assert len(getattr(fresh(), table)) == len(want[table])
    doc = fresh()
    for path in want["values"]:  # a missing child: placed at the node
        assert doc.at((*path, "nope")) == want["values"][path]
    doc = fresh()
    for path in want["keys"]:
        assert doc.key_at(path) == want["keys"][path]


def test_a_folded_document_iterates_in_document_order_after_lookups() -> None:
    doc = load("p.yaml", b"a: {x: 1}\nb: 2\nc: {z: 3, y: [4, 5]}\n")
    assert isinstance(doc, Document)
    assert doc.keys._folds is not None  # type: ignore[attr-defined]  # both mappings folded
    assert doc.keys.get(("c", "z")) == (3, 5)  # unfolds c, then a: each goes in last
    assert doc.keys.get(("a", "x")) == (1, 5)
    assert list(doc.keys) == [("a",), ("a", "x"), ("b",), ("c",), ("c", "z"), ("c", "y")]
    values = [(), ("a",), ("a", "x"), ("b",), ("c",), ("c", "z"), ("c", "y"), ("c", "y", 0)]
    assert list(doc.values) == [*values, ("c", "y", 1)]


class _Reads:
    """Counts how often the loader reads a text through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ranges: list[bool] = []
        real = loader._compose

        def counted(text: str, pure: bool, ranges: bool) -> Any:
            self.ranges.append(ranges)
            return real(text, pure, ranges)

        monkeypatch.setattr(loader, "_compose", counted)


def test_a_scanned_plans_ends_are_read_on_the_first_question_unless_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = (ROOT / "plans" / "deepseek_v4_flash.yaml").read_bytes()  # scanned
    kept = load("p.yaml", raw, ranges=True)
    reads = _Reads(monkeypatch)
    doc = load("p.yaml", raw)
    assert isinstance(doc, Document)
    assert isinstance(kept, Document)
    assert reads.ranges == [False]  # checking a plan needs no ranges
    assert dict(doc.ends) == dict(kept.ends)  # the first question reads them...
    assert doc.ends.get(doc.at(("model",))) == kept.ends.get(kept.at(("model",)))
    assert reads.ranges == [False, True]  # ... once


@pytest.mark.parametrize("pure", [False, True])
def test_a_composed_plans_ends_come_with_it(monkeypatch: pytest.MonkeyPatch, pure: bool) -> None:
    raw = (ROOT / "plans" / "deepseek_v4_pro.yaml").read_bytes()  # not scanned: composed
    reads = _Reads(monkeypatch)
    doc = load("p.yaml", raw, pure=pure)
    assert isinstance(doc, Document)
    assert len(doc.ends) > 100  # the composer works them out on its way: kept
    assert reads.ranges == [False]


def test_the_language_server_keeps_ranges_as_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from plancc.lsp.adapter import check_text

    reads = _Reads(monkeypatch)
    plan = ROOT / "plans" / "deepseek_v4_flash.yaml"
    result = check_text(plan, plan.read_text(), {})
    assert result.doc is not None
    assert len(result.doc.ends) > 100
    assert reads.ranges == [True]
