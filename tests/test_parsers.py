"""ruamel's C parser and its pure-Python one load every plan alike: the same tree,
positions, ranges and diagnostics. The pure one is the reference; the C one is
the fast path for text the line scanner (tests/test_scan.py) gives up on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plancc import api, compose
from plancc import load as loader
from plancc.diagnostics import Diagnostic
from plancc.load import MAX_DEPTH, Document, load

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "cases").rglob("*.yaml")) + sorted(
    (ROOT / "plans").glob("*.yaml")
)
needs_c = pytest.mark.skipif(loader._c_parser() is None, reason="ruamel.yaml.clib not installed")


def _seen(result: Document | Diagnostic) -> Any:
    if isinstance(result, Diagnostic):
        return result
    # repr: nan == nan
    return repr(result.data), dict(result.values), dict(result.keys), dict(result.ends)


@needs_c
@pytest.mark.parametrize("plan", CORPUS, ids=[p.name for p in CORPUS])
def test_both_parsers_load_the_corpus_alike(plan: Path) -> None:
    raw = plan.read_bytes()
    assert _seen(load("p.yaml", raw)) == _seen(load("p.yaml", raw, pure=True))


@needs_c
@pytest.mark.parametrize("plan", CORPUS, ids=[p.name for p in CORPUS])
def test_both_parsers_give_the_corpus_the_same_diagnostics(
    plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = api.validate_paths([str(plan)]).diagnostics
    monkeypatch.setattr(loader, "_c_parser", lambda: None)
    assert api.validate_paths([str(plan)]).diagnostics == fast


@needs_c
def test_the_c_parser_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    used = []
    real = loader._c_parser()
    assert real is not None

    def spy(text: str) -> Any:
        used.append(text)
        return real(text)

    monkeypatch.setattr(loader, "_c_parser", lambda: spy)
    assert isinstance(load("p.yaml", b"a: ['1', 2]\n"), Document)  # quotes: not scanned
    assert used == ["a: ['1', 2]\n"]


@pytest.mark.parametrize(
    "raw",
    [
        b"a: \x07\n",  # a character YAML forbids
        b"a:\tb\n",  # a tab
        b"a: b\xc2\x85c\n",  # U+0085
        b"a: &x: 1\n",  # `x:` is one anchor name to YAML 1.2
        b"a: !\n",  # a bare non-specific tag
        b"[{a: 1}: 2]\n",  # a flow mapping as a key
    ],
)
def test_text_libyaml_reads_otherwise_goes_to_the_pure_parser(
    raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "_c_parser", lambda: pytest.fail("the C parser was asked"))
    load("p.yaml", raw)


@needs_c
@pytest.mark.parametrize(
    "raw",
    [
        b"a: {b: [1, 2], c: x\n",  # unclosed: the C parser's error, reworded by the pure one
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
    ],
)
def test_errors_and_ends_read_the_same_from_either_parser(raw: bytes) -> None:
    assert _seen(load("p.yaml", raw)) == _seen(load("p.yaml", raw, pure=True))


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
