"""`plancc fmt`: one canonical layout, every comment kept, idempotent, atomic."""

from __future__ import annotations

import os
import random
import re
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.diagnostics import Diagnostic
from plancc.fmt import FmtError, format_plan
from plancc.load import load

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
CASES = sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
runner = CliRunner()

MESSY = """\
# header comment

layers:
  k:
    warms:
    - tensors: [w, v]   # issue order
      after: s0
      # why
      name: wm
    stages:
    - reads: [w]
      name: s0
      task: t0
    -   {name: s1, reads: [v],
         group: g}  # grouped
    - name: s2  # the long one
      reads: [w, v, a_very_long_tensor_name_one, a_very_long_tensor_name_two, another_one]
tensors:
  w: {dtype: bf16, shape: [64]}
  v:
    shape: [D]
    dtype: bf16
platform: a2a3
dims: {D: 64}


model: messy
plancc: 1
budget: {l2_fraction: 0.5}
lint:
  ignore: [PC101]
forward:
- {repeat: 2, layer: k}
# end of file
"""

CANONICAL = """\
# header comment

plancc: 1
model: messy
platform: a2a3
budget:
  l2_fraction: 0.5

dims:
  D: 64

tensors:
  w: {shape: [64], dtype: bf16}
  v: {shape: [D], dtype: bf16}

layers:
  k:
    stages:
      - {name: s0, task: t0, reads: [w]}
      - {name: s1, reads: [v], group: g}  # grouped
      - name: s2  # the long one
        reads:
          - w
          - v
          - a_very_long_tensor_name_one
          - a_very_long_tensor_name_two
          - another_one
    warms:
      # why
      - name: wm
        after: s0
        tensors: [w, v]  # issue order

forward:
  - {layer: k, repeat: 2}

lint:
  ignore: [PC101]

# end of file
"""


def _fmt(text: str) -> str:
    out = format_plan("p.yaml", text.encode())
    assert isinstance(out, bytes)
    return out.decode()


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    from plancc.cli.app import app

    result = runner.invoke(app, ["fmt", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_the_canonical_layout() -> None:
    assert _fmt(MESSY) == CANONICAL
    assert _fmt(CANONICAL) == CANONICAL


def test_values_do_not_change() -> None:
    before, after = load("p.yaml", MESSY.encode()), load("p.yaml", CANONICAL.encode())
    assert not isinstance(before, Diagnostic)
    assert not isinstance(after, Diagnostic)
    assert before.data == after.data


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
def test_the_shipped_plans_are_canonical(path: Path) -> None:
    assert format_plan(str(path), path.read_bytes()) == path.read_bytes()


@pytest.mark.parametrize("path", PLANS + CASES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fmt_is_idempotent_and_keeps_every_value(path: Path) -> None:
    raw = path.read_bytes()
    once = format_plan(str(path), raw)  # also checks values and comments (FmtError)
    if isinstance(once, Diagnostic):
        assert once.code == "PC001"
        return
    assert format_plan(str(path), once) == once


def test_scalars_are_kept_as_written() -> None:
    text = (
        "plancc: 1\nmodel: 'q'\nplatform: \"a2a3\"\ndims:\n  A: 0x10\n  B: 1_000\n"
        "tensors: {}\nlayers:\n  k:\n    stages: [{name: s, streams: 427.8 MB}]\n"
        "    warms:\n      - name: w\n        after: s\n        tensors: [t]\n"
        "        reason: >-\n          folded\n          text\n\n        allow: [PC103]\n"
    )
    out = _fmt(text)
    assert "  A: 0x10\n  B: 1_000\n" in out
    assert "model: 'q'\nplatform: \"a2a3\"\n" in out
    assert "      - {name: s, streams: 427.8 MB}\n" in out
    assert out.endswith(
        "        allow: [PC103]\n        reason: >-\n          folded\n          text\n"
    )


def test_a_block_scalar_is_indented_two_columns_in_from_its_key() -> None:
    text = (
        "plancc: 1\nlayers:\n    k:\n        warms:\n        -   reason: |\n"
        "                a\n                  b\n            name: w\n"
    )
    assert _fmt(text).endswith(
        "layers:\n  k:\n    warms:\n      - name: w\n"
        "        reason: |\n          a\n            b\n"
    )


def test_crlf_and_a_bom_stay() -> None:
    out = format_plan("p.yaml", b"\xef\xbb\xbfmodel: m\r\nplancc: 1\r\n")
    assert out == b"\xef\xbb\xbfplancc: 1\r\nmodel: m\r\n"


def test_the_first_line_ending_is_kept_throughout() -> None:
    assert format_plan("p.yaml", b"model: m\rplancc: 1\r\n") == b"plancc: 1\rmodel: m\r"


def test_an_alias_that_would_come_before_its_anchor_is_refused() -> None:
    text = "tensors:\n  t: {shape: [&n 4], dtype: bf16}\ndims:\n  D: *n\nplancc: 1\n"
    with pytest.raises(FmtError, match="would put alias \\*n before its anchor"):
        format_plan("p.yaml", text.encode())


def test_a_shared_shape_keeps_its_anchor_first() -> None:
    text = "tensors:\n  a: {shape: &sq [D, D], dtype: bf16}\n  b: {shape: *sq, dtype: bf16}\n"
    assert _fmt(text) == text


def test_a_comment_in_a_flow_list_over_several_lines_stays_with_its_item() -> None:
    text = (
        "plancc: 1\nlayers:\n  k:\n    stages:\n      - name: s1\n        reads: [\n"
        "          w1,  # the first\n          w2,  # the second\n        ]\n"
        "    warms:\n      - name: wm\n        tensors: [\n          # leading w1\n"
        "          w1,\n          w2   # on w2\n        ]\n"
    )
    assert _fmt(text).endswith(
        "    stages:\n      - name: s1\n        reads:\n"
        "          - w1  # the first\n          - w2  # the second\n"
        "    warms:\n      - name: wm\n        tensors:\n"
        "          # leading w1\n          - w1\n          - w2  # on w2\n"
    )


def test_a_comment_after_a_flow_entry_stays_with_that_entry() -> None:
    text = (
        "plancc: 1\nlayers:\n  k:\n    stages: [\n      {name: s0, reads: [w]},  # first\n"
        "      {name: s1,  # second\n       reads: [v]}\n    ]\n"
    )
    assert _fmt(text).endswith(
        "    stages:\n      - {name: s0, reads: [w]}  # first\n"
        "      - name: s1  # second\n        reads: [v]\n"
    )


def test_a_plain_scalar_only_a_flow_collection_allows_is_quoted() -> None:
    # `-` before `}` is the string "-"; in block style it would start a sequence. (`c:`
    # before `}` is no longer such a case: both loader paths refuse it, as libyaml does.)
    text = "plancc: 1\nmodel: {b: -}\nlint: {ignore: [&x PC1, -]}\n"
    assert _fmt(text) == ("plancc: 1\nmodel:\n  b: '-'\n\nlint:\n  ignore: [&x PC1, '-']\n")


def test_a_tab_the_loader_reads_fmt_reads_too() -> None:
    # a tab as separation and inside a plain scalar is YAML that libyaml (and so the
    # loader) reads; fmt's round-trip reading once raised ruamel's ScannerError on it
    text = "plancc:\t1\nmodel: a\tb  # note\nlint: {ignore:\t[PC101]}\n"
    assert _fmt(text) == "plancc: 1\nmodel: a\tb  # note\n\nlint:\n  ignore: [PC101]\n"


def test_a_scalar_over_several_lines_is_indented_under_its_key() -> None:
    text = (
        "plancc: 1\nlayers:\n  k:\n    stages: [{name: a\n      b, task: t}]\n"
        '    warms:\n      - {name: w, reason: "two\n   lines"}\n'
    )
    assert _fmt(text).endswith(
        "    stages:\n      - name: a\n          b\n        task: t\n"
        '    warms:\n      - name: w\n        reason: "two\n          lines"\n'
    )


def test_a_line_of_a_flow_collection_that_starts_with_dots_is_indented() -> None:
    # at column 0, `...` would end the document
    assert _fmt("{plancc: 1, model: a\n...}\n") == "plancc: 1\nmodel: a\n  ...\n"


def test_a_key_over_several_lines_in_a_flow_mapping_is_put_on_one() -> None:
    text = "plancc: 1\nlayers:\n  k:\n    stages:\n      - {name: q_proj, a\n  b, 'c\n\n d'}\n"
    out = _fmt(text)
    assert out.endswith('    stages:\n      - name: q_proj\n        a b:\n        "c\\nd":\n')


def test_a_line_of_spaces_that_is_content_of_a_block_scalar_is_kept() -> None:
    text = "plancc: 1\nmodel: |\n  lit\n      \n"  # the value is "lit\n    \n"
    assert _fmt(text) == text


def test_a_top_level_that_is_not_a_mapping_is_left_as_it_is() -> None:
    assert format_plan("p.yaml", b"- a\n-   b\n") == b"- a\n-   b\n"


# -- the command -------------------------------------------------------------------------------


@pytest.fixture
def messy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "messy.yaml"
    path.write_text(MESSY)
    return path


def test_fmt_rewrites_in_place_keeping_the_mode(messy: Path) -> None:
    messy.chmod(0o640)
    assert _run("messy.yaml") == (0, "messy.yaml: formatted\n1 formatted, 0 unchanged\n", "")
    assert messy.read_text() == CANONICAL
    assert stat.S_IMODE(messy.stat().st_mode) == 0o640
    mtime = messy.stat().st_mtime_ns
    assert _run("messy.yaml") == (0, "0 formatted, 1 unchanged\n", "")
    assert messy.stat().st_mtime_ns == mtime  # an unchanged plan is not touched
    assert not [p for p in messy.parent.iterdir() if p.name.startswith(".plancc-")]


def test_fmt_writes_through_a_symlink(messy: Path) -> None:
    (messy.parent / "link.yaml").symlink_to(messy)
    assert _run("link.yaml")[0] == 0
    assert (messy.parent / "link.yaml").is_symlink()
    assert messy.read_text() == CANONICAL


def test_check_lists_what_would_change_and_writes_nothing(messy: Path) -> None:
    (messy.parent / "clean.yml").write_text(CANONICAL.replace("messy", "clean"))
    code, out, _ = _run("--check", ".")
    assert (code, out) == (
        1,
        "messy.yaml: would be reformatted\n1 would be reformatted, 1 already formatted\n",
    )
    assert messy.read_text() == MESSY
    assert _run("--check", "clean.yml") == (0, "0 would be reformatted, 1 already formatted\n", "")


def test_diff_prints_the_change_and_writes_nothing(messy: Path) -> None:
    code, out, _ = _run("--diff", "messy.yaml")
    assert code == 1
    assert out.startswith("--- messy.yaml\n+++ messy.yaml\n@@ ")
    assert "\n-plancc: 1\n" in out
    assert "\n+  w: {shape: [64], dtype: bf16}\n" in out
    assert messy.read_text() == MESSY


def test_diff_counts_lines_as_the_loader_does(messy: Path) -> None:
    """U+2028, U+0085 and U+2029 in a comment are characters (issue 40, point 2): the
    diff's hunk is at the line an editor shows, and the comment one line of it (it was
    split there, as ``str.splitlines`` splits, and every later line counted 3 too far)."""
    messy.write_text("# a\u2028b\x85c\u2029d\nplancc: 1\nmodel:   m\n")
    code, out, _ = _run("--diff", "messy.yaml")
    assert (code, out) == (
        1,
        "--- messy.yaml\n+++ messy.yaml\n@@ -1,3 +1,3 @@\n"
        " # a\u2028b\x85c\u2029d\n plancc: 1\n-model:   m\n+model: m\n",
    )


def test_a_plan_that_is_not_yaml_is_refused(messy: Path) -> None:
    bad = messy.parent / "bad.yaml"
    bad.write_text("plancc: 1\nmodel: [\n")
    code, out, _ = _run("bad.yaml", "messy.yaml")
    assert code == 1
    first, *rest = out.splitlines()
    assert first.startswith("bad.yaml:")  # the diagnostic validate gives
    assert " error PC001: " in first
    assert rest == [
        "bad.yaml: not formatted: it is not a readable plan (PC001)",
        "messy.yaml: formatted",
        "1 formatted, 0 unchanged, 1 not formatted",
    ]
    assert bad.read_text() == "plancc: 1\nmodel: [\n"


def test_a_plan_fmt_cannot_lay_out_is_left_as_it_is(messy: Path) -> None:
    messy.write_text("tensors:\n  t: {shape: [&n 4], dtype: bf16}\ndims:\n  D: *n\nplancc: 1\n")
    code, out, _ = _run("messy.yaml")
    assert code == 1
    assert out.startswith(
        "messy.yaml: cannot format: the canonical order would put alias *n before its anchor"
    )


def test_standard_input_is_formatted_to_standard_output(messy: Path) -> None:
    assert _run("-", stdin=MESSY) == (0, CANONICAL, "")
    code, out, _ = _run("--check", "-", "--stdin-filename", "x.yaml", stdin=MESSY)
    assert (code, out.splitlines()[0]) == (1, "x.yaml: would be reformatted")
    code, _, err = _run("-", "messy.yaml", stdin=MESSY)
    assert (code, err) == (2, "plancc: -: a plan from standard input is formatted alone\n")


def test_no_temporary_file_is_left_when_the_directory_is_read_only(messy: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    messy.parent.chmod(0o555)
    try:
        code, _, err = _run("messy.yaml")
    finally:
        messy.parent.chmod(0o755)
    assert code == 2
    assert err.startswith(f"plancc: {messy.parent / 'messy.yaml'}: cannot write:")
    assert messy.read_text() == MESSY


def test_a_directory_formats_its_plans_and_names_what_it_skipped(messy: Path) -> None:
    (messy.parent / "sub.yaml").mkdir()
    (messy.parent / ".hidden.yaml").write_text(MESSY)
    code, out, err = _run(".")
    assert code == 0
    assert out == "messy.yaml: formatted\n1 formatted, 0 unchanged\n"
    assert err == "plancc: skipped sub.yaml: is a directory\n"
    assert (messy.parent / ".hidden.yaml").read_text() == MESSY


def _mutations(count: int) -> list[bytes]:
    """Plans of the corpus with lines indented, dedented, swapped, commented, blanked."""
    rng = random.Random(11)
    texts = [p.read_text("utf-8").split("\n") for p in PLANS + CASES]
    extra = ["# c", "", "  # x", "x: 1", "- a", "  - {a: b}  # z"]
    ends = ["  # e", " #x", ",", " [", " &a", " *a"]
    out = []
    for _ in range(count):
        lines = list(rng.choice(texts))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(lines))
            op = rng.randrange(5)
            if op == 0:
                lines[i] = "  " + lines[i]
            elif op == 1:
                lines[i] = lines[i][2:]
            elif op == 2:
                lines.insert(i, rng.choice(extra))
            elif op == 3:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] += rng.choice(ends)
        out.append("\n".join(lines).encode())
    return out


@pytest.mark.slow
def test_broken_and_odd_plans_are_formatted_idempotently_or_left_alone() -> None:
    for raw in _mutations(150):
        try:
            once = format_plan("p.yaml", raw)
        except FmtError:
            continue  # left as it is, said so: never a changed value or a lost comment
        if isinstance(once, bytes):
            assert format_plan("p.yaml", once) == once, raw.decode()


# Scalars YAML reads in one context and not another, and line breaks where a flow
# collection allows them: what a hand-edited plan holds and fmt must lay out.
_ODD = ["c:", "...", "---", "a: b", "x #y", "'q'", '"d\\"q"', "- z", "? k", "a\n  b", "&x v", "*x"]
_ODD += ["a\n\n  b", "!t v", "|\n  lit", ">-\n  fold\n  ed", "{b: c:}", "[a, ...]", "'it''s'"]
_ODD += ['"a\n  b"', "'a\n  b'", "a,b", "x]", "1:2", "::", "-", "a:b", "http://x", "a #", "''"]
_ODD += ['""', "~", "null", "0x1F", "1_000", ".inf", "a\tb", "a  b", "|\n  lit\n      \n"]


def _odd_plans(count: int, seed: int = 5) -> list[bytes]:
    """Plans of the corpus with a value replaced by an odd scalar, or a line broken
    inside a flow collection, or a comment after a value in one, one to three times."""
    rng = random.Random(seed)
    texts = [p.read_text("utf-8") for p in PLANS + CASES]
    out = []
    for _ in range(count):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            spots = [m.start(1) for m in re.finditer(r"[:,\[-] (\S)", text)]
            at = rng.choice(spots)
            end = at
            while end < len(text) and text[end] not in ",]}\n":
                end += 1
            op = rng.randrange(3)
            if op == 0:
                text = text[:at] + rng.choice(_ODD) + text[end:]
            elif op == 1:  # the line broken here, going on as deep or deeper
                start = text.rfind("\n", 0, at) + 1
                indent = len(text[start:]) - len(text[start:].lstrip(" "))
                text = text[:at] + "\n" + " " * (indent + rng.choice([0, 1, 2, 4, 6])) + text[at:]
            else:
                pad = " " * rng.choice([2, 4, 6, 8])
                text = text[:at] + rng.choice(_ODD) + " # c\n" + pad + text[end:]
        out.append(text.encode())
    return out


def refusals(plans: list[bytes]) -> tuple[int, int, list[bytes]]:
    """How many of ``plans`` load, and which of those fmt refuses; every other one is
    formatted idempotently (format_plan itself checks values and comments)."""
    loadable, refused = 0, []
    for raw in plans:
        doc = load("p.yaml", raw)
        if isinstance(doc, Diagnostic) or not isinstance(doc.data, dict):
            continue
        loadable += 1
        try:
            once = format_plan("p.yaml", raw)
        except FmtError:
            refused.append(raw)
            continue
        assert format_plan("p.yaml", once) == once, raw.decode()
    return loadable, len(refused), refused


@pytest.mark.slow
def test_fmt_refuses_few_plans_with_odd_scalars() -> None:
    # Of 3,000 such plans (`python -m tests.test_fmt 3000`), 1,147 load: fmt refused
    # 97 of them (8.5 %) before it quoted, re-indented and folded scalars, none since
    # (an alias the contract's key order would put before its anchor still is).
    loadable, refused, plans = refusals(_odd_plans(300))
    assert loadable > 80
    assert refused == 0, [p.decode() for p in plans]


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    loadable, refused, _ = refusals(_odd_plans(count))
    print(f"fmt refused {refused} of {loadable} loadable plans ({refused / loadable:.2%})")


def test_the_written_layout_is_read_once_by_libyaml_for_its_comments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The round-trip reading is most of a `plancc fmt`: the layout it wrote is checked for
    # lost comments through libyaml's events, and through that reading only without them.
    import plancc.fmt as fmt_module
    from plancc.fmt import layout as fmt_layout

    text = "plancc: 1\nmodel: a  # the model\nlint: {ignore: ['#x', PC101]}  # why\n"
    reads: list[str] = []
    real = fmt_layout.Layout.spans

    def counted(self: fmt_layout.Layout) -> list[tuple[int, int]]:
        reads.append(self.text)
        return real(self)

    monkeypatch.setattr(fmt_layout.Layout, "spans", counted)
    expected = "plancc: 1\nmodel: a  # the model\n\nlint:  # why\n  ignore: ['#x', PC101]\n"
    assert _fmt(text) == expected
    assert reads == []
    monkeypatch.setattr(fmt_module, "c_parser", lambda: None)
    assert _fmt(text) == expected
    assert len(reads) == 1


# U+0085, U+2028 and U+2029 are characters to the loader (YAML 1.2), in a comment or a
# scalar alike; so is a U+FEFF past the start. fmt keeps each, where it stood.
_BREAKLIKE = (
    "model: 'm\u2028n'  # NEL\x85here\n"
    "plancc: 1\n"
    "# LS\u2028and PS\u2029alone\n"
    "platform: a2a3\n"
    "dims: {D: 4}\n"
    "tensors:\n"
    "  w: {dtype: bf16, shape: [D]}  # x\ufeffy\n"
    "  v:\n"
    "    shape: [4]\n"
    "    dtype: bf\x85\n"
    "layers:\n"
    "  k:\n"
    "    stages:\n"
    "    - {name: s0, task: t0, reads: [w]}\n"
    "    doc: |\n"
    "      a\u2029b\n"
)


def test_line_break_like_characters_are_kept_where_they_stand() -> None:
    once = _fmt(_BREAKLIKE)
    assert once == (
        "plancc: 1\n"
        "model: 'm\u2028n'  # NEL\x85here\n"
        "# LS\u2028and PS\u2029alone\n"
        "platform: a2a3\n"
        "\n"
        "dims:\n"
        "  D: 4\n"
        "\n"
        "tensors:\n"
        "  w: {shape: [D], dtype: bf16}  # x\ufeffy\n"
        "  v: {shape: [4], dtype: bf\x85}\n"
        "\n"
        "layers:\n"
        "  k:\n"
        "    stages:\n"
        "      - {name: s0, task: t0, reads: [w]}\n"
        "    doc: |\n"
        "      a\u2029b\n"
    )
    assert _fmt(once) == once


def test_a_plan_fmt_cannot_read_for_its_layout_is_said_and_the_others_go_on(
    messy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ruamel.yaml.parser import ParserError

    from plancc.fmt import layout as fmt_layout

    (messy.parent / "a.yaml").write_text("plancc: 1\nmodel: a\n")
    (messy.parent / "b.yaml").write_text("plancc: 1\nmodel: b\n")
    real = fmt_layout.Layout.run

    def refusing(self: fmt_layout.Layout) -> str | None:
        if "model: a" in self.text:
            raise ParserError(None, None, "expected <block end>, but found '<scalar>'")
        if "model: b" in self.text:
            raise KeyError("b")
        return real(self)

    monkeypatch.setattr(fmt_layout.Layout, "run", refusing)
    code, out, err = _run(".")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "a.yaml: cannot format: its layout cannot be read (expected <block end>, but found"
        " '<scalar>'); left as it is",
        "b.yaml: cannot format: internal error: KeyError: 'b'; left as it is",
        "messy.yaml: formatted",
        "1 formatted, 0 unchanged, 2 not formatted",
    ]
    assert messy.read_text() == CANONICAL


@pytest.mark.slow
def test_every_plan_keeps_its_line_break_like_characters() -> None:
    # Each corpus plan with U+0085, U+2028 and U+2029 in every comment and after every
    # `name: ` value's first character: fmt lays out each one the loader reads, and
    # keeps every such character (format_plan itself checks values and comments).
    odd = "\x85\u2028\u2029"
    formatted = 0
    for path in PLANS + CASES:
        text = path.read_text("utf-8").replace("# ", "# a" + odd)
        text = re.sub(r"(name: [A-Za-z])", lambda m: m[1] + odd, text)
        doc = load("p.yaml", text.encode())
        if isinstance(doc, Diagnostic) or not isinstance(doc.data, dict):
            continue
        try:
            once = format_plan("p.yaml", text.encode())
        except FmtError:
            continue  # said and left as it is (an alias the key order would misplace)
        assert isinstance(once, bytes)
        out = once.decode()
        assert [out.count(c) for c in odd] == [text.count(c) for c in odd], path
        formatted += 1
    assert formatted > 150
