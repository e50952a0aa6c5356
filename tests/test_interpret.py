"""The one interpreter of a fix (plancc.edits.interpret), on small texts: the exact bytes
each edit makes, in flow and block style, with comments, a BOM and every kind of line
break. Every fix of every case goes through it in tests/test_fixes.py."""

from __future__ import annotations

import pytest

from plancc.edits.interpret import FixError, apply_fixes, text_edits
from plancc.fixes import Append, Edit, Fix, Remove, Reorder, Replace
from plancc.load import Document, load


def _fixed(text: str, *edits: Edit) -> str:
    doc = load("p.yaml", text.encode())
    assert isinstance(doc, Document)
    return apply_fixes(doc, [Fix("t", edits)]).decode()


BLOCK = """\
a:
  # about x
  - x   # x's
  # about y
  - y  # y's
  - z
budget: 1
"""

LINES = "t: [wo_a,   # A's note\n   wo_b,   # B's note\n   wo_a]   # dup's note\nb: 1\n"


@pytest.mark.parametrize(
    ("text", "edits", "want"),
    [
        pytest.param(  # the item with its comment lines and its end-of-line comment
            BLOCK,
            [Remove(("a",), (1,))],
            BLOCK.replace("  # about y\n  - y  # y's\n", ""),
            id="remove-block-item",
        ),
        pytest.param(  # the list emptied: `[]` after its key, the next key kept
            "a:  # the list\n  - x  # x's\n  - y\nbudget: 1\n",
            [Remove(("a",), (0, 1))],
            "a: []  # the list\nbudget: 1\n",
            id="empty-block-list",
        ),
        pytest.param(
            "k:\n  warms:\n    - name: w\n      tensors: [x]\nbudget: 0.5\n",
            [Remove(("k", "warms"), (0,))],
            "k:\n  warms: []\nbudget: 0.5\n",
            id="empty-nested-block-list",
        ),
        pytest.param(
            "a:\n- x\n- y\nb: 1\n", [Remove(("a",), (0, 1))], "a: []\nb: 1\n", id="indentless"
        ),
        pytest.param(  # a dash alone on its line, its comment beside it
            "w:\n  - # the first\n    name: a\n  -\n\n    name: b\nz: 1\n",
            [Remove(("w",), (0,))],
            "w:\n  -\n\n    name: b\nz: 1\n",
            id="dash-alone",
        ),
        pytest.param(
            "a: [x, y, z]  # c\n", [Remove(("a",), (0,))], "a: [y, z]  # c\n", id="flow-first"
        ),
        pytest.param(
            "a: [x, y, z]  # c\n", [Remove(("a",), (2,))], "a: [x, y]  # c\n", id="flow-last"
        ),
        pytest.param("a: [x, y, z]\n", [Remove(("a",), (0, 1, 2))], "a: []\n", id="flow-emptied"),
        # A flow list a line an item: each item's comment goes with it, and only with it.
        pytest.param(
            LINES, [Remove(("t",), (0,))], LINES.replace("wo_a,   # A's note", ""), id="lines-first"
        ),
        pytest.param(
            LINES,
            [Remove(("t",), (1,))],
            LINES.replace("   wo_b,   # B's note\n", ""),
            id="lines-middle",
        ),
        pytest.param(  # the bracket moves up; B's comment stays, the removed item's goes
            LINES,
            [Remove(("t",), (2,))],
            "t: [wo_a,   # A's note\n   wo_b]   # B's note\nb: 1\n",
            id="lines-last",
        ),
        pytest.param(
            LINES, [Remove(("t",), (1, 2))], "t: [wo_a]   # A's note\nb: 1\n", id="lines-last-two"
        ),
        pytest.param(
            "w: [{name: o, tensors: [a]},  # o\n   {name: z, tensors: [b]}]  # z\n",
            [Remove(("w",), (1,))],
            "w: [{name: o, tensors: [a]}]  # o\n",
            id="lines-last-warm",
        ),
        pytest.param(  # a comment line above an item is its own; the next item's stays
            "t: [\n  # about a\n  a,  # A\n  # about b\n  b,  # B\n]\n",
            [Remove(("t",), (0,))],
            "t: [\n  # about b\n  b,  # B\n]\n",
            id="lines-trailing-comma",
        ),
        pytest.param(  # the first item after the bracket, the next one with a comment line
            "t: [a,  # A\n  # about b\n  b]  # B\n",
            [Remove(("t",), (0,))],
            "t: [\n  # about b\n  b]  # B\n",
            id="lines-first-before-a-comment-line",
        ),
        pytest.param(  # more after the bracket: it stays on its line, the comments too
            "w: [{t: [a,  # A\n  # about b\n  b]}]  # w\n",
            [Remove(("w", 0, "t"), (1,))],
            "w: [{t: [a  # A\n  ]}]  # w\n",
            id="lines-last-before-more",
        ),
        pytest.param(  # no comment to keep: the bracket joins the item before
            "w: [{t: [a,\n  b]},\n  {t: [c]}]\n",
            [Remove(("w", 0, "t"), (1,))],
            "w: [{t: [a]},\n  {t: [c]}]\n",
            id="lines-last-before-more-no-comment",
        ),
        pytest.param(
            "w: [{name: a, after: s, tensors: [x]}]  # read by nobody\nb: {c: 1}\n",
            [Remove(("w",), (0,))],
            "w: []  # read by nobody\nb: {c: 1}\n",
            id="flow-emptied-never-brackets-twice",
        ),
        pytest.param(  # the keys' lines, each with its comment line
            "w:\n  - name: a\n    # why\n    allow: [PC1]\n    reason: r\n    tensors: [x]\nz: 1\n",
            [Remove(("w", 0), ("allow", "reason"))],
            "w:\n  - name: a\n    tensors: [x]\nz: 1\n",
            id="remove-keys",
        ),
        pytest.param(
            "a: 1\nlint: {ignore: [PC1]}", [Remove((), ("lint",))], "a: 1\n", id="last-line"
        ),
        pytest.param(
            "a: [x, y, z]  # c\n", [Reorder(("a",), (2, 0, 1))], "a: [z, x, y]  # c\n", id="flow"
        ),
        pytest.param(  # each item moves with its own comments
            "a:\n  # x first\n  - x   # x's\n  - y  # y's\n",
            [Reorder(("a",), (1, 0))],
            "a:\n  - y  # y's\n  # x first\n  - x   # x's\n",
            id="block-reorder",
        ),
        pytest.param(  # PC103's: appended, then the list in consumer order
            "a: [x]\n", [Append(("a",), ("z",)), Reorder(("a",), (1, 0))], "a: [z, x]\n", id="pc103"
        ),
        pytest.param(
            "a:\n  - x  # x's\n", [Append(("a",), ("y",))], "a:\n  - x  # x's\n  - y\n", id="block"
        ),
        pytest.param(  # a mapping appended to a block list is a block mapping
            "w:\n  - {name: a}\n",
            [Append(("w",), ({"name": "b", "tensors": ["x", "y"]},))],
            "w:\n  - {name: a}\n  - name: b\n    tensors: [x, y]\n",
            id="block-mapping",
        ),
        pytest.param(  # no final line break: one before the new line
            "a:\n  - x", [Append(("a",), ("y",))], "a:\n  - x\n  - y", id="no-final-break"
        ),
        pytest.param(
            "w:\n  - {name: a, after: s}\n",
            [Replace(("w", 0, "allow"), ["PC1"]), Replace(("w", 0, "reason"), "why not")],
            'w:\n  - {name: a, after: s, allow: [PC1], reason: "why not"}\n',
            id="add-keys-flow",
        ),
        pytest.param(
            "w:\n  - name: a\n    after: s  # the anchor\n",
            [Replace(("w", 0, "allow"), ["PC1"]), Replace(("w", 0, "reason"), "why not")],
            "w:\n  - name: a\n    after: s  # the anchor\n"
            '    allow: [PC1]\n    reason: "why not"\n',
            id="add-keys-block",
        ),
        pytest.param(  # only what differs: the comments of what stays, stay
            "w:\n  - name: a\n    after: s  # the anchor\n    tensors: [x]  # one\n",
            [Replace(("w",), [{"name": "a", "after": "t", "tensors": ["x", "y"]}])],
            "w:\n  - name: a\n    after: t  # the anchor\n    tensors: [x, y]  # one\n",
            id="replace-structure",
        ),
        pytest.param(
            "x: 'q'  # c\ny: 2\n", [Replace(("x",), "r")], "x: r  # c\ny: 2\n", id="scalar"
        ),
        pytest.param("d:\n", [Replace(("d",), [1])], "d: [1]\n", id="empty-value"),
        pytest.param(
            "a:\n  - x\n  - y\nb: 1\n",
            [Replace(("a",), "z")],
            "a: z\nb: 1\n",
            id="block-list-to-a-scalar",
        ),
        pytest.param(  # a block scalar ends at its last line: the blank line after stays
            "k:\n  w:\n    name: x\n    allow: [PC103]\n    reason: >-\n      why\n      not\n"
            "\nh:  # next\n  w: 1\n",
            [Remove(("k", "w"), ("allow", "reason"))],
            "k:\n  w:\n    name: x\n\nh:  # next\n  w: 1\n",
            id="remove-a-block-scalar-before-a-blank-line",
        ),
        pytest.param(  # its line break, the comment and the blank line after it stay
            "a:\n  reason: |\n    why\n  # c\n\nb: 1\n",
            [Replace(("a", "reason"), "new")],
            "a:\n  reason: new\n  # c\n\nb: 1\n",
            id="replace-a-block-scalar",
        ),
        pytest.param(  # after the scalar's last line, not after the blank line
            "a:\n  - x\n  - |\n    why\n\nb: 1\n",
            [Append(("a",), ("z",))],
            "a:\n  - x\n  - |\n    why\n  - z\n\nb: 1\n",
            id="append-after-a-block-scalar",
        ),
        pytest.param(  # `|+` keeps its blank lines: they are its value, and go with it
            "a:\n  n: 1\n  r: |+\n    why\n\nb: 1\n",
            [Remove(("a",), ("r",))],
            "a:\n  n: 1\nb: 1\n",
            id="remove-a-kept-block-scalar",
        ),
    ],
)
def test_the_bytes_an_edit_makes(text: str, edits: list[Edit], want: str) -> None:
    assert _fixed(text, *edits) == want


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_line_breaks_and_the_bom_stay(newline: str, bom: str) -> None:
    text = bom + BLOCK.replace("\n", newline)
    got = _fixed(text, Remove(("a",), (1,)), Append(("a",), ("w",)))
    want = BLOCK.replace("  # about y\n  - y  # y's\n", "").replace("  - z\n", "  - z\n  - w\n")
    assert got == bom + want.replace("\n", newline)


def test_a_comment_on_the_first_line_after_a_bom() -> None:
    # The first line is the comment of the first key: it goes with it, the BOM stays.
    text = "\ufeff# the lint\nlint: {ignore: [PC1]}\na: 1\n"
    assert _fixed(text, Remove((), ("lint",))) == "\ufeffa: 1\n"


def test_unicode_line_separators_are_characters() -> None:
    # U+2028, U+0085, U+2029 in a comment: the lines after it are where LSP counts them.
    text = "# a\u2028b\x85c\u2029d\na:\n  - x\n  - y\n"
    assert _fixed(text, Remove(("a",), (1,))) == "# a\u2028b\x85c\u2029d\na:\n  - x\n"


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (Remove(("a",), (0,)), "a[0] is written once for several places (a YAML alias)"),
        (Append(("b",), ("z",)), "b is written once for several places (a YAML alias)"),
        (Replace(("c", "k"), 2), "c.k is written once for several places (a YAML alias)"),
        (Remove(("d",), (5,)), "no list at d"),
        (Remove(("f",), (5,)), "no item 5 at f"),
        (Reorder(("d",), (0, 1)), "no list at d"),
    ],
)
def test_what_is_not_offered(edit: Edit, why: str) -> None:
    doc = load("p.yaml", b"a: &l [x, y]\nb: *l\nc: &m {k: 1}\ne: *m\nd: 1\nf: [1]\n")
    assert isinstance(doc, Document)
    with pytest.raises(FixError) as raised:
        text_edits(doc, [Fix("t", (edit,))])
    assert str(raised.value) == why
