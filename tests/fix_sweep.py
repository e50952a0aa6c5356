"""What the sweep of every fix runs (tests/test_fixes.py): each fix of a plan made three
ways, as the three outputs that offer it make it, and the checks every one must pass.

- the CLI's: ``plancc.edits.interpret.apply_fixes`` (what `validate --fix` writes, one
  fix a pass);
- SARIF's: the result's ``fixes[0]`` replacements (1-based lines and code-point
  columns, a BOM no column) made on the text, from the end;
- the editor's: the quick fix of the same title that the language server offers for
  the diagnostic it publishes (in-process: the function the server runs on a change),
  its workspace edit made on the text in the client's units (UTF-16).

A plan is also swept in three generated twins of the same tree: every collection in
block style, with a comment line above every entry and item and a comment at the end
of every line (``block_twin``); every top-level value in flow style on its line,
with a comment above and after it (``flow_twin``); and every top-level value in flow
style over several lines, each item and entry on its own line with an end-of-line
comment (``lines_twin``).
"""

from __future__ import annotations

import collections
import difflib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.workspace.position_codec import PositionCodec

from plancc.api import PlanResult, Validation, diagnose_plan
from plancc.diagnostics import Diagnostic
from plancc.edits.apply import fix_plan
from plancc.edits.interpret import FixError, apply_fixes, text_edits, yaml_text
from plancc.fixes import Fix, Remove, Replace, node_at, touched
from plancc.formats.sarif import sarif
from plancc.load import Document, lines, load
from plancc.load.inputs import PlanInput
from plancc.lsp import actions
from plancc.lsp.diagnostics import to_lsp
from plancc.lsp.index import Index, Text
from plancc.lsp.state import analyse

ROOT = Path(__file__).resolve().parent.parent
CODEC = PositionCodec()  # UTF-16, as the clients that do not say otherwise


# -- twins -----------------------------------------------------------------------------


class _Twin:
    def __init__(self) -> None:
        self.n = 0
        self.out: list[str] = []

    def note(self) -> str:
        self.n += 1
        return f"c{self.n}"

    def line(self, text: str) -> None:
        self.out.append(text)

    def entries(self, data: dict[str, Any], indent: int, *, first: str | None = None) -> None:
        """A block mapping's entries at ``indent``; ``first``: the dash its first key
        follows (``"- "`` at the dash's column), with no comment line above it."""
        pad = " " * indent
        for k, (key, value) in enumerate(data.items()):
            head = pad
            if k == 0 and first is not None:
                head = first
            else:
                self.line(f"{pad}# {self.note()}: {key}")
            self.value(f"{head}{yaml_text(key)}:", value, indent + 2)

    def value(self, head: str, value: Any, indent: int) -> None:
        if isinstance(value, dict) and value:
            self.line(f"{head}  # {self.note()}")
            self.entries(value, indent)
        elif isinstance(value, list) and value:
            self.line(f"{head}  # {self.note()}")
            self.items(value, indent)
        else:
            self.line(f"{head} {yaml_text(value)}  # {self.note()}")

    def items(self, data: list[Any], indent: int) -> None:
        pad = " " * indent
        for item in data:
            self.line(f"{pad}# {self.note()}")
            if isinstance(item, dict) and item:
                self.entries(item, indent + 2, first=f"{pad}- ")
            else:
                self.line(f"{pad}- {yaml_text(item)}  # {self.note()}")


def block_twin(data: dict[str, Any]) -> bytes:
    """``data`` with every collection in block style (an empty one ``[]``/``{}``), a
    comment line above every entry and item, and a comment ending every line."""
    twin = _Twin()
    twin.line("# the block twin")
    twin.entries(data, 0)
    return ("\n".join(twin.out) + "\n").encode("utf-8")


def flow_twin(data: dict[str, Any]) -> bytes:
    """``data`` with every top-level value in flow style on its own line, a comment line
    above it and a comment after it."""
    out = ["# the flow twin"]
    for n, (key, value) in enumerate(data.items()):
        out += [f"# about {key}", f"{yaml_text(key)}: {yaml_text(value)}  # after {n}"]
    return ("\n".join(out) + "\n").encode("utf-8")


def lines_twin(data: dict[str, Any]) -> bytes:
    """``data`` with every top-level value in flow style, each item and entry of every
    collection on a line of its own, ending in a comment (the first after its bracket,
    the last before the closing one: ``[a,  # c1`` / ``  b]  # c2``)."""
    twin = _Twin()
    out = ["# the lines twin"]
    for key, value in data.items():
        out += [f"# about {key}", f"{yaml_text(key)}: {_lined(twin, value, 2)}  # {twin.note()}"]
    return ("\n".join(out) + "\n").encode("utf-8")


def _lined(twin: _Twin, value: Any, indent: int) -> str:
    """``value`` in flow style, a line an item (their continuation lines at ``indent``)."""
    if isinstance(value, dict) and value:
        parts = [f"{yaml_text(k)}: {_lined(twin, v, indent + 2)}" for k, v in value.items()]
        brackets = "{}"
    elif isinstance(value, list) and value:
        parts = [_lined(twin, v, indent + 2) for v in value]
        brackets = "[]"
    else:
        return yaml_text(value)
    joined = "".join(f",  # {twin.note()}\n{' ' * indent}{part}" for part in parts[1:])
    return brackets[0] + parts[0] + joined + brackets[1]


def twins(raw: bytes) -> dict[str, bytes]:
    doc = load("plan", raw)
    if not isinstance(doc, Document) or not isinstance(doc.data, dict):
        return {}
    data = doc.data
    return {"block": block_twin(data), "flow": flow_twin(data), "lines": lines_twin(data)}


# -- the three outputs -----------------------------------------------------------------


@dataclass(frozen=True)
class Made:
    """One fix of a plan, made three ways."""

    diagnostic: Diagnostic
    fix: Fix
    cli: bytes | None  # None: the interpreter refused it
    sarif: bytes | None  # None: SARIF gives no replacements
    editor: bytes | None  # None: the editor offers no quick fix of its title


def made(path: Path, raw: bytes) -> tuple[PlanResult, list[Made]]:
    """Every fix of the plan at ``path`` (its text ``raw``), made by each output."""
    label = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    result = diagnose_plan(PlanInput(label, path), raw)
    if result.doc is None:
        return result, []
    text = raw.decode("utf-8")
    log = json.loads(sarif(Validation((result,))))["runs"][0]["results"]
    state = analyse(path.as_uri(), 1, text, {}, codec=CODEC, docs_url="")
    shown = to_lsp(state)
    ordered = sorted(result.diagnostics, key=lambda d: d.sort_key)
    assert [d.code for d in ordered] == [str(s.code) for s in shown[: len(ordered)]]
    out = []
    for k, d in enumerate(ordered):
        if d.fix is None:
            continue
        try:
            cli: bytes | None = apply_fixes(result.doc, [d.fix])
        except FixError:
            cli = None
        out.append(Made(d, d.fix, cli, _sarif(text, log[k]), _editor(state, shown[k], d.fix)))
    return result, out


def _sarif(text: str, result: dict[str, Any]) -> bytes | None:
    if "fixes" not in result:
        return None
    (change,) = result["fixes"][0]["artifactChanges"]
    starts = lines.starts(text)
    bom = 1 if text.startswith("\ufeff") else 0

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col - 1 + (bom if line == 1 else 0)

    for r in reversed(change["replacements"]):
        region = r["deletedRegion"]
        start = offset(region["startLine"], region["startColumn"])
        end = offset(region["endLine"], region["endColumn"])
        text = text[:start] + r["insertedContent"]["text"] + text[end:]
    return text.encode("utf-8")


def _editor(state: Any, shown: T.Diagnostic, fix: Fix) -> bytes | None:
    offered = [a for a in actions.code_actions(state, [shown]) if a.title == fix.title]
    if not offered:
        return None
    edit = offered[0].edit
    assert edit is not None
    assert edit.changes is not None
    return apply_lsp(state.text.source, edit.changes[state.uri]).encode("utf-8")


def apply_lsp(text: str, edits: list[T.TextEdit]) -> str:
    """``edits`` made on ``text`` as an LSP client makes them: lines at LF, CRLF, CR,
    columns in UTF-16 code units."""
    split = lines.split(text)
    starts = lines.starts(text)

    def offset(p: T.Position) -> int:
        if p.line >= len(split):
            return len(text)
        at = CODEC.position_from_client_units(split, p)
        return starts[at.line] + at.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


# -- what every fix must do --------------------------------------------------------------


def codes(result: PlanResult) -> collections.Counter[str]:
    return collections.Counter(d.code for d in result.diagnostics)


def findings(result: PlanResult) -> collections.Counter[tuple[str, str]]:
    return collections.Counter((d.code, d.message) for d in result.diagnostics)


def changed_lines(before: str, after: str) -> Iterator[int]:
    """The lines of ``before`` (0-based) that ``after`` changes: each replaced or deleted,
    and for lines inserted, the line before them."""
    a, b = lines.split(before), lines.split(after)
    for op, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            yield from range(i1, i2)
        elif op == "insert":
            yield max(i1 - 1, 0)


def spanned_lines(doc: Document, fix: Fix) -> set[int]:
    """The lines (0-based) the nodes ``fix`` edits span, worked out from the loader's
    positions alone (not the interpreter's): each node's lines, the comment lines right
    above it, and its key's; for a list whose items move, the list's; for a key added,
    its mapping's last line and its key's."""
    text = Text(doc.raw.decode("utf-8"))
    index = Index(text, doc)
    out: set[int] = set()
    for edit in fix.edits:
        if isinstance(edit, Replace) and index.extent(edit.path) is None:
            # A key added: after its mapping's last entry.
            out.update(_node_lines(text, index, edit.path[:-1]))
        elif isinstance(edit, Remove):
            for path in touched(edit):
                out.update(_node_lines(text, index, path))
                item = index.extent(path)
                whole = index.value_span(edit.path)
                if item is not None and whole is not None and text.slice(whole)[:1] in "[{":
                    out.add(item.start[0] - 1)  # the separator before it, on its own line
            key = index.key_span(edit.path)
            if key is not None:  # a list emptied: `[]` after its key
                out.add(key.start[0])
        else:
            out.update(_node_lines(text, index, edit.path))
    return out


def check(path: Path, raw: bytes, uncovers: set[str] = frozenset()) -> int:  # type: ignore[assignment]
    """Every fix of the plan made three ways, each checked: the text loads, the finding
    is gone, no code fires more often (but those in ``uncovers``), the three texts are
    equal, and only the lines the edited nodes span changed. How many fixes were made."""
    result, fixes = made(path, raw)
    if not fixes:
        return 0
    assert result.doc is not None
    before_codes, before = codes(result), findings(result)
    source = PlanInput(str(path), path)
    text = raw.decode("utf-8")
    for m in fixes:
        what = f"{path.name}: {m.diagnostic.code} {m.fix.title}"
        assert m.cli is not None, f"{what}: refused: {_why(result.doc, m.fix)}"
        assert m.sarif == m.cli, f"{what}: SARIF differs"
        assert m.editor == m.cli, f"{what}: the editor differs"
        after = diagnose_plan(source, m.cli)
        assert after.doc is not None, f"{what}: does not load"
        key = (m.diagnostic.code, m.diagnostic.message)
        assert findings(after)[key] < before[key], f"{what}: still there"
        more = {c for c, n in codes(after).items() if n > before_codes[c] and c not in uncovers}
        assert not more, f"{what}: raises {sorted(more)}"
        spans = spanned_lines(result.doc, m.fix)
        outside = set(changed_lines(text, m.cli.decode("utf-8"))) - spans
        assert not outside, f"{what}: changes lines {sorted(outside)} outside {sorted(spans)}"
        lost = comments(text, own_lines(result.doc, m.fix)) - comments(m.cli.decode("utf-8"))
        assert not lost, f"{what}: loses the comments {sorted(lost)} of what it keeps"
    return len(fixes)


_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#.*$")


def comments(text: str, leave: set[int] = frozenset()) -> collections.Counter[str]:  # type: ignore[assignment]
    """The end-of-line and whole-line comments of ``text``, but those on the lines (0-based)
    ``leave``."""
    out: collections.Counter[str] = collections.Counter()
    for k, line in enumerate(lines.split(text)):
        m = _COMMENT.search(line.rstrip("\r\n"))
        if m is not None and k not in leave:
            out[m.group()] += 1
    return out


def own_lines(doc: Document, fix: Fix) -> set[int]:
    """The lines (0-based) whose comments ``fix`` may take: those of each node it removes
    or replaces (with its key's and the comment lines right above it), from the loader's
    positions alone. A fix keeps every other comment (a neighbour's, the list's)."""
    text = Text(doc.raw.decode("utf-8"))
    index = Index(text, doc)
    out: set[int] = set()
    for edit in fix.edits:
        paths = touched(edit) if isinstance(edit, Remove) else (edit.path,)
        for path in paths if isinstance(edit, Remove | Replace) else ():
            out.update(_node_lines(text, index, path))
    return out


def _node_lines(text: Text, index: Index, path: tuple[str | int, ...]) -> range:
    """The lines (0-based) of the node at ``path``: its key's, its own, and the comment
    lines right above them; none when there is no such node."""
    extent, key = index.extent(path), index.key_span(path)
    if extent is None:
        return range(0)
    first = min(extent.start[0], key.start[0] if key is not None else extent.start[0])
    while first > 0 and text.line(first - 1).lstrip().startswith("#"):
        first -= 1
    return range(first, extent.end[0] + 1)


def _why(doc: Document, fix: Fix) -> str:
    try:
        text_edits(doc, [fix])
    except FixError as exc:
        return str(exc)
    return "?"


# -- mutants: what an error's neighbours' fixes may do -------------------------------------

_REFERENCES = ("reads", "deps", "after", "tensors", "layer", "tensor")


def mutants(raw: bytes) -> Iterator[tuple[str, bytes, str, str]]:
    """The plan with one name it refers to (an item of `reads`, `deps`, a warm's
    `after` or `tensors`, a forward item's `layer`) misspelt: a near typo (its last
    letter twice: PC010 guesses the name back, mostly) and a far one (nothing is near
    it), neither a word of the plan already. Each as (where, the text, the name, the
    typo)."""
    doc = load("plan", raw)
    if not isinstance(doc, Document):
        return
    text = raw.decode("utf-8")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    seen: set[int] = set()
    for path in doc.values:
        name = _reference(doc.data, path)
        at = doc.values.where(path)
        if name is None or at is None:
            continue
        start = _offset(text, at)
        if not text.startswith(name, start) or start in seen:
            continue  # quoted, or an alias's copy: the text is elsewhere
        seen.add(start)
        for typo in (name + name[-1], "zz_" + name[::-1] + "_zz"):
            if typo not in words:
                mutated = text[:start] + typo + text[start + len(name) :]
                yield "/".join(map(str, path)), mutated.encode("utf-8"), name, typo


def _reference(data: Any, path: tuple[str | int, ...]) -> str | None:
    node = node_at(data, path)
    if not isinstance(node, str) or len(path) < 2:
        return None
    key = path[-1] if isinstance(path[-1], str) else path[-2]
    in_layers = path[0] == "layers" and key in ("reads", "deps", "after", "tensors", "tensor")
    return node if in_layers or (path[0] == "forward" and key == "layer") else None


def _offset(text: str, where: int) -> int:
    starts = lines.starts(text)
    return starts[(where >> 32) - 1] + (where & 0xFFFFFFFF) - 1


def removed(raw: bytes, passes: Sequence[Sequence[Fix]]) -> Iterator[tuple[str, ...]]:
    """What the fixes of ``passes`` (made a pass at a time, from ``raw``) removed, each when
    it did: a warm by its name, a warm's tensor as (warm, tensor)."""
    for made in passes:
        doc = load("plan", raw)
        assert isinstance(doc, Document)
        for edit in (e for fix in made for e in fix.edits):
            for path in touched(edit) if isinstance(edit, Remove) else ():
                node = node_at(doc.data, path)
                if path[-2:-1] == ("warms",) and isinstance(node, dict):
                    yield (str(node.get("name")),)
                elif path[-2:-1] == ("tensors",) and path[-4:-3] == ("warms",):
                    warm = node_at(doc.data, path[:-2])
                    t = node.get("tensor") if isinstance(node, dict) else node
                    yield (str(warm.get("name")), str(t))
        raw = apply_fixes(doc, made)


def fixed_listed(path: Path, raw: bytes) -> collections.Counter[tuple[str, ...]]:
    """What `validate --fix --unsafe-fixes` of the plan keeps: ``check_mutant``'s ``kept``."""
    return _listed(fix_plan(PlanInput(str(path), path), raw, unsafe=True).after)


def check_mutant(
    path: Path, raw: bytes, kept: collections.Counter[tuple[str, ...]], typo: str, name: str
) -> bool:
    """`validate --fix --unsafe-fixes` of a mutant removes no warm, and no tensor of a warm
    below the times it is listed, that the plan with its error fixed keeps (``kept``:
    ``fixed_listed`` of the plan as written). False when the mutant is not one: PC010
    guesses another name than ``name`` for ``typo`` (the plan "with its error fixed" is
    another plan)."""
    source = PlanInput(str(path), path)
    for d in diagnose_plan(source, raw).diagnostics:
        edit = d.fix.edits[0] if d.fix is not None and d.code == "PC010" else None
        if isinstance(edit, Replace) and edit.value != name and typo in d.message:
            return False
    fixed = fix_plan(source, raw, unsafe=True)
    left = _listed(fixed.after, typo, name)
    for gone in {tuple(name if x == typo else x for x in r) for r in removed(raw, fixed.passes)}:
        assert left[gone] >= kept[gone], (
            f"{gone}: removed by {[f.title for _, f in fixed.applied]}, kept once fixed"
        )
    return True


def _listed(raw: bytes, typo: str = "", name: str = "") -> collections.Counter[tuple[str, ...]]:
    """How often each warm, and each (warm, tensor), is listed (``typo`` read as ``name``)."""
    out: collections.Counter[tuple[str, ...]] = collections.Counter()
    doc = load("plan", raw)
    layers = (
        doc.data.get("layers") if isinstance(doc, Document) and isinstance(doc.data, dict) else None
    )
    for layer in layers.values() if isinstance(layers, dict) else ():
        found = layer.get("warms") if isinstance(layer, dict) else None
        for warm in found if isinstance(found, list) else ():
            if isinstance(warm, dict) and isinstance(warm.get("name"), str):
                out[(warm["name"],)] += 1
                for item in warm.get("tensors") or ():
                    t = str(item.get("tensor") if isinstance(item, dict) else item)
                    out[(warm["name"], name if t == typo else t)] += 1
    return out
