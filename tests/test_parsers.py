"""ruamel's C parser and its pure-Python one load every text alike: the same tree,
positions, ranges and diagnostics, through the one composer (plancc/load/compose.py).
The pure one is the reference; the C one is the path taken where it is installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plancc import api
from plancc import load as loader
from plancc.diagnostics import Diagnostic
from plancc.load import MAX_DEPTH, MAX_NODES, Document, compose, load

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (ROOT / "plans").glob("*.yaml")
)
BOMB = (ROOT / "tests" / "cases" / "core" / "pc001_alias_bomb_block.yaml").read_bytes()
# Texts the two parsers once read differently, or that take their paths apart.
TEXTS = [
    b"a: \x07\n",  # a character YAML forbids
    b"a:\tb\n",
    b"a:\n\tb: 1\n",  # a tab indenting: an error on both
    b"a: &x: 1\n",
    b"a: !\n",  # a bare non-specific tag
    b"[{a: 1}: 2]\n",  # a flow mapping as a key
    b"a: {b: [1, 2], c: x\n",  # unclosed: the C parser's error, worded by the pure one
    b"a: *nope\n",
    b"a: 1\n---\nb: 2\n",
    b"a: 1\na: 2\n",
    b"x: &r [*r]\n",
    b"a: !!int 1_000\n",
    # A block sequence closed by the end of a text without a final line break, after
    # an empty value: libyaml ends it on a line past the text (found by make fuzz).
    b'- "a"\n-',
    b'a: ["x"]\nb:\n  -',
    b'a:\n  - name: "s1"\n    reads:',
    b'a:\n  - name: "s1"\n    reads:\n',
    b'a: ["x"]\nb:\n  -\r',
    # issue 27, one reading of YAML
    b"---",  # only a document start: its empty root where the text ends
    b"--- ",
    b"a: ! 12\n",
    b"group: <<\n",
    b"a: 0000000000000000000000000000008\n",
    b"a: -9223372036854775808\n",
    BOMB[:413],  # an alias bomb cut short: a YAML error after all its aliases
    b"a: 1\n...\n...\n",
    b'a: ["b":c]\n',
    b"a: |\n \n  x\n",
    b"a: |\n  \n x\n",  # a leading blank line longer than the text: an error
    b"plancc:\t1\n",
    b"a: b\tc\n",
    b"a: 1\t# c\n",
    b"a: 1\n \t\nb: 2\n",
    b"a: 1\n\t\nb: 2\n",
    b"1\n\t",
    b"- \tb\n",
    b"a: !\tx\n",
    b"a: >-\t# c\n  x\n",
    b">#",
    b"|\na",
    b"a: b\xc2\x85c\n",
    "a: b\u2028c\n\u2029: 1\n".encode(),
    "n\ufeff: 1\nm: \ufeffx\n".encode(),
    b"a: &x:1\nb: *x\n",
    b"{a:b}\n",
    b"{q:}\n",
    b": x\n",
    b"{: x}\n",
    b"...\n",
    b"!!",
    b"!.!",
    b"!!!",
    b"!!!int # a tag: the handle !!, then !int (found by make fuzz)\na: 1\n",
    b"a: [!!str,x]\n",
    b"a: !x!y z\n",
    b'{"plancc": "\\ud800\\udc00"}\n',  # an escaped surrogate pair (found by make fuzz)
    # issue 31: an explicit key left empty in a flow sequence, which libyaml misreads
    b"a: [ ? ]\n",
    b"a: [? : x]\n",
    b"a: [? :]\n",
    b"a: [?,]\n",
    b"a: [?]]\n",  # libyaml: [{"": null}], reading past the `]` it took into the key
    b"a: [? x]\n",
    b"a: [? !!str ]\n",
    b"a: '?]'\n",  # a `?` the C parser could read: the pure one reads it alike
    # a tag's suffix takes a flow indicator; an unknown directive
    b"a: [!, b]\n",
    b"%FOO\n---\na: 1\n",
    b"%FOO bar\n---\na: 1\n",
    b"%YAML.x 1.2\n---\na: 1\n",
    b"%YAML 1.2\n---\na: 1\n",
    b"%YAML 1.1\n---\na: 1\n",
    b"%YAML 1.3\n---\na: 1\n",  # libyaml takes 1.1 and 1.2 only (found after make fuzz)
    b"%YAML 2.0\n---\na: 1\n",
    b"%YAML 1\n---\na: 1\n",
    b"%YAML\t1.2\t# tabs part a directive's words, as anywhere on a line\n---\na: 1\n",
    b"%TAG\t!x!\t!y\n---\na: !x!b c\n",
    b"a: 1\n...\n%YAML 1.2\n---\na: 1\n",  # a second document starts at its directive
]


def _seen(result: Document | Diagnostic) -> Any:
    if isinstance(result, Diagnostic):
        return result
    # repr: nan == nan
    return repr(result.data), dict(result.values), dict(result.keys), dict(result.ends)


needs_c = pytest.mark.skipif(loader.c_parser() is None, reason="ruamel.yaml.clib not installed")


@needs_c
@pytest.mark.parametrize(
    "raw",
    [p.read_bytes() for p in CORPUS] + TEXTS,
    ids=[p.name for p in CORPUS] + [repr(t[:30]) for t in TEXTS],
)
def test_both_parsers_load_alike(raw: bytes) -> None:
    assert _seen(load("p.yaml", raw)) == _seen(load("p.yaml", raw, pure=True))


@needs_c
@pytest.mark.parametrize("plan", CORPUS, ids=[p.name for p in CORPUS])
def test_both_parsers_give_the_corpus_the_same_diagnostics(
    plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = api.validate_paths([str(plan)]).diagnostics
    monkeypatch.setattr(loader, "c_parser", lambda: None)
    assert api.validate_paths([str(plan)]).diagnostics == fast


@needs_c
def test_thec_parser_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    used = []
    real = loader.c_parser()
    assert real is not None

    def spy(text: str) -> Any:
        used.append(text)
        return real(text)

    monkeypatch.setattr(loader, "c_parser", lambda: spy)
    assert isinstance(load("p.yaml", b"a: [1, 2]\n"), Document)
    assert used == ["a: [1, 2]\n"]


class _Events:
    """Counts the events the composer reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        init = compose.Composer.__init__

        def counting(this: compose.Composer, next_event: Any, **options: Any) -> None:
            def counted() -> Any:
                self.read += 1
                return next_event()

            init(this, counted, **options)

        monkeypatch.setattr(compose.Composer, "__init__", counting)


@pytest.mark.parametrize("pure", [False, True])
def test_deep_nesting_stops_reading_at_the_level_past_the_limit(
    monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    # 1,000 nested flow sequences in 2 KB: rejected after ~MAX_DEPTH events, not after
    # reading (and the parser tracking) all 1,000 levels.
    events = _Events(monkeypatch)
    d = load("p.yaml", ("x: " + "[" * 1000 + "]" * 1000 + "\n").encode(), pure=pure)
    assert isinstance(d, Diagnostic)
    assert (d.line, d.col, d.message) == (
        1,
        4 + MAX_DEPTH,
        f"nesting deeper than {MAX_DEPTH} levels",
    )
    assert events.read < MAX_DEPTH + 10


def test_an_alias_whose_expansion_nests_too_deep_is_pc001_at_the_alias() -> None:
    deep = "[" * 40 + "0" + "]" * 40
    d = load("p.yaml", f"a: &a {deep}\nb: {'[' * 30}*a{']' * 30}\n".encode())
    assert isinstance(d, Diagnostic)
    assert (d.line, d.col, d.message) == (2, 34, f"nesting deeper than {MAX_DEPTH} levels")


@pytest.mark.parametrize("pure", [False, True])
def test_an_alias_bomb_cut_short_is_never_expanded(
    monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    # 413 bytes whose aliases stand for 2**13 leaves, then a YAML error: the error is
    # the answer, and no composer (of either parser) copies an anchor on the way.
    built: list[int] = []
    real = compose.Composer._expand

    def expand(this: compose.Composer, copy: Any) -> None:
        built.append(1)
        real(this, copy)

    monkeypatch.setattr(compose.Composer, "_expand", expand)
    d = load("p.yaml", BOMB[:413], pure=pure)
    assert isinstance(d, Diagnostic)
    assert (d.line, d.col, d.message) == (42, 3, "invalid YAML: could not find expected ':'")
    assert built == []
    whole = BOMB[: BOMB.rindex(b"\n", 0, 413) + 1]  # its whole lines: read, and copied
    assert isinstance(load("p.yaml", whole, pure=pure), Document)
    assert built != []
    assert MAX_NODES == 500_000


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # libyaml refuses most of these and misreads the rest: PC001 at the `?`
        (b"a: [ ? ]\n", (1, 6, "invalid YAML: found an empty explicit key")),
        (b"a: [? : x]\n", (1, 5, "invalid YAML: found an empty explicit key")),
        (b"a: [?]]\n", (1, 5, "invalid YAML: found an empty explicit key")),
        (b"a: [!, b]\n", (1, 5, "tag !, is not supported: a plan is plain data")),
        (b"%FOO\n---\na: 1\n", (1, 5, "invalid YAML: found unknown directive name")),
        (
            b"%YAML 2.0\n---\na: 1\n",
            (
                1,
                1,
                "invalid YAML: found incompatible YAML document (version 1.1 or 1.2 is required)",
            ),
        ),
    ],
)
def test_texts_the_parsers_read_apart_are_pc001_on_both_paths(
    raw: bytes, expected: tuple[int, int, str], pure: bool
) -> None:
    d = load("p.yaml", raw, pure=pure)
    assert isinstance(d, Diagnostic)
    assert (d.code, d.line, d.col, d.message) == ("PC001", *expected)


def test_an_explicit_key_in_a_flow_sequence_is_read() -> None:
    d = load("p.yaml", b"a: [? x : y, ? !!str ]\n")
    assert isinstance(d, Document)
    assert d.data == {"a": [{"x": "y"}, {"": None}]}
