"""Fixes applied to a plan's text, through `plancc fmt`'s layout, and `validate --fix`.

The plan is read as `fmt` reads it (``fmt_layout``: a tree of entries with their
comments), the edits change that tree, and `fmt` writes it out: comments stay with
the entries they belong to, and the result is in the canonical layout. A removed
item takes its own comments with it; the comment lines before it go to the entry
after it.

One pass applies every chosen fix against the plan as it was read: fixes whose
paths overlap (one a prefix of the other) are left to the next pass, except removals
of different items of one list, which compose. ``fix_plan`` runs passes, re-validating
after each, until no fix applies (at most ``MAX_PASSES``): like ruff, a fix that
uncovers another finding with a fix is followed by it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from types import MappingProxyType

from plancc import write
from plancc.api import (
    PlanResult,
    UsageError,
    Validation,
    diagnose_plan,
    unique_models,
)
from plancc.diagnostics import Diagnostic
from plancc.fixes import Append, Edit, Fix, Path, Remove, Reorder, Replace, Value
from plancc.fmt.layout import Entry, FmtError, Layout, Node, _name
from plancc.load import inputs, load
from plancc.load.inputs import PlanInput

MAX_PASSES = 10  # a fix never leads back to a finding (tested); this only bounds a loop

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class FixError(Exception):
    """A fix does not apply to this text (its path is gone): left for the next run."""


def chosen(fixes: Sequence[Fix]) -> list[Fix]:
    """The fixes one pass applies, in order: each whose paths overlap none of those before
    it (removals of items of one list excepted)."""
    out: list[Fix] = []
    taken: list[Edit] = []
    for fix in fixes:
        if fix in out:
            continue  # the same fix from two findings (stale entries of one list)
        if any(_clash(a, b) for a in fix.edits for b in taken):
            continue
        out.append(fix)
        taken += fix.edits
    return out


def _clash(a: Edit, b: Edit) -> bool:
    """Whether two edits touch one node: one's path is the other's or inside it; but
    removals of items of one list compose, and removing a mapping's keys leaves the
    other keys' nodes be."""
    if isinstance(a, Remove) and isinstance(b, Remove) and a.path == b.path:
        return False
    short, long = (a, b) if len(a.path) <= len(b.path) else (b, a)
    if long.path[: len(short.path)] != short.path:
        return False
    if isinstance(short, Remove) and len(long.path) > len(short.path):
        keys = [k for k in short.items if isinstance(k, str)]
        return not keys or long.path[len(short.path)] in keys
    return True


def apply(text: str, fixes: Sequence[Fix]) -> str:
    """``text`` (a plan) with ``fixes`` applied, in `fmt`'s layout. Raises ``FixError``
    when a path names nothing, ``FmtError`` when the plan cannot be laid out."""
    editor = _Editor()
    out = Layout(text).run(lambda root: editor.run(root, fixes))
    if out is None:
        raise FixError("the plan has no mapping at the top")
    return out


@dataclass
class _Editor:
    removed: set[int] = field(default_factory=set)  # ids of the entries removed

    def run(self, root: Node, fixes: Sequence[Fix]) -> None:
        for fix in fixes:
            for edit in fix.edits:
                self.edit(root, edit)
        self.sweep(root)

    def edit(self, root: Node, edit: Edit) -> None:
        if isinstance(edit, Replace):
            parent = _find(root, edit.path[:-1])
            key = edit.path[-1]
            found = _entry(parent, key)
            if found is not None:
                found.value = _node(edit.value)
            elif parent.kind == "map" and isinstance(key, str):
                parent.entries.append(_new(_node(key), _node(edit.value)))
            else:
                raise FixError(f"no item {key} at {edit.path[:-1]}")
        elif isinstance(edit, Reorder):
            seq = _seq(root, edit.path)
            items = list(seq.entries)
            for slot, source in zip(sorted(edit.order), edit.order, strict=True):
                seq.entries[slot] = items[_index(items, source)]
        elif isinstance(edit, Append):
            seq = _seq(root, edit.path)
            seq.entries += [_new(None, _node(v)) for v in edit.items]
        else:
            node = _find(root, edit.path)
            for item in edit.items:
                found = _entry(node, item)
                if found is None:
                    raise FixError(f"no item {item} at {edit.path}")
                self.removed.add(id(found))

    def sweep(self, node: Node) -> None:
        """Drop the removed entries; the comment lines before one go to the entry after it."""
        kept: list[Entry] = []
        moved: list[str | None] = []
        for e in node.entries:
            if id(e) in self.removed:
                moved += e.leading
                continue
            if moved:
                e.leading = [*moved, *e.leading]
                moved = []
            self.sweep(e.value)
            kept.append(e)
        node.entries = kept


def _index(items: list[Entry], i: int) -> int:
    if not 0 <= i < len(items):
        raise FixError(f"no item {i}")
    return i


def _entry(node: Node, key: str | int) -> Entry | None:
    if node.kind == "seq" and isinstance(key, int):
        return node.entries[key] if 0 <= key < len(node.entries) else None
    if node.kind == "map" and isinstance(key, str):
        return next((e for e in node.entries if _name(e) == key), None)
    return None


def _find(root: Node, path: Path) -> Node:
    node = root
    for part in path:
        found = _entry(node, part)
        if found is None:
            raise FixError(f"nothing at {path}")
        node = found.value
    return node


def _seq(root: Node, path: Path) -> Node:
    node = _find(root, path)
    if node.kind != "seq":
        raise FixError(f"no list at {path}")
    return node


def _new(key: Node | None, value: Node) -> Entry:
    return Entry(key, value, line=-1, col=0, depth=0)


def _node(value: Value) -> Node:
    """``value`` as the layout's node, read from its YAML text."""
    root = Layout(f"x: {yaml_text(value)}\n").parse()
    assert root is not None
    return root.entries[0].value


def yaml_text(value: Value) -> str:
    """``value`` in YAML flow style: a name plain, any other string quoted (as the
    editor writes a fix, too)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_text(k)}: {yaml_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    if isinstance(value, str) and _PLAIN.fullmatch(value) and value.lower() not in _WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


_WORDS = {"null", "true", "false", "nan", "inf"}


# -- validate --fix -------------------------------------------------------------------------


@dataclass(frozen=True)
class Fixed:
    """One plan after `--fix`: its text before and after, the fixes applied (in passes),
    and the check of the text after."""

    label: str
    before: bytes
    after: bytes
    applied: tuple[tuple[Diagnostic, Fix], ...]
    result: PlanResult
    refused: str | None = None  # why the fixes were not applied (the layout refused)

    @property
    def changed(self) -> bool:
        return self.after != self.before


def fix_plan(
    source: PlanInput,
    raw: bytes,
    *,
    unsafe: bool = False,
    source_root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> Fixed:
    """Apply the plan's fixes (safe ones; with ``unsafe`` every one) until none applies,
    re-validating after each pass; the result holds the findings that remain."""

    def diagnose(source: PlanInput, raw: bytes) -> PlanResult:
        return diagnose_plan(source, raw, source_root=source_root, overrides=overrides)

    result = diagnose(source, raw)
    applied: list[tuple[Diagnostic, Fix]] = []
    text = raw
    for _ in range(MAX_PASSES):
        found = [
            (d, d.fix) for d in result.diagnostics if d.fix is not None and (unsafe or d.fix.safe)
        ]
        picked = chosen([f for _, f in found])
        if not picked:
            break
        try:
            new = _apply_bytes(text, picked)
        except (FixError, FmtError) as exc:
            return Fixed(source.label, raw, text, tuple(applied), result, str(exc))
        if new == text:
            break
        applied += [(d, f) for d, f in found if f in picked]
        text = new
        result = diagnose(source, text)
    return Fixed(source.label, raw, text, tuple(applied), result)


def _apply_bytes(raw: bytes, fixes: Sequence[Fix]) -> bytes:
    form = write.Form.of(raw)  # its BOM and line ending, kept
    out = form.encode(apply(form.text(raw), fixes))
    if isinstance(load("fixed", out), Diagnostic):  # a safety net: the text must read back
        raise FixError("the fixed plan would not read back")
    return out


@dataclass(frozen=True)
class FixRun:
    """`validate --fix` or `--diff`: each plan fixed, and the report of what remains."""

    plans: tuple[Fixed, ...]
    report: Validation

    @property
    def changed(self) -> list[Fixed]:
        return [f for f in self.plans if f.changed]

    def lines(self) -> list[str]:
        """What was fixed, one line per fix, and what could not be."""
        out = []
        for f in self.plans:
            out += [f"{f.label}: fixed {d.code}: {fix.title}" for d, fix in f.applied]
            if f.refused is not None:
                out.append(f"{f.label}: not fixed: {f.refused}")
        return out

    def said(self, *, unsafe: bool) -> str:
        """What `--fix` says before the report: each fix, and how many unsafe ones are left."""
        lines = self.lines()
        left = sum(1 for d in self.report.diagnostics if d.fix is not None and not d.fix.safe)
        if left and not unsafe:
            lines.append(f"{left} more fixable with --unsafe-fixes")
        return "".join(line + "\n" for line in lines)

    def diff(self) -> str:
        lines: list[str] = []
        for f in self.changed:
            old = f.before.decode("utf-8").splitlines()
            new = f.after.decode("utf-8").splitlines()
            lines += difflib.unified_diff(old, new, f.label, f.label, lineterm="")
        return "".join(line + "\n" for line in lines)


def fix_paths(
    paths: Sequence[str],
    *,
    unsafe: bool = False,
    dry: bool = False,
    stdin: str | None = None,
    root: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
) -> FixRun:
    """Fix every plan the paths name, in place (atomically, only when it changed), or with
    ``dry`` (`--diff`) write nothing; ``stdin``: `--stdin-filename`, ``root``:
    `--source-root`, ``overrides``: `--set`. Raises ``UsageError`` for usage and I/O problems."""
    try:
        found = inputs.collect(paths, stdin)
        if not dry and any(p.piped for p in found.plans):
            raise UsageError("-: --fix rewrites plan files in place; use --diff for standard input")
        plans = [
            fix_plan(source, raw, unsafe=unsafe, source_root=root, overrides=overrides)
            for source, raw in found.read()
        ]
        if not dry:
            for f in plans:
                if f.changed:
                    write.replace(FilePath(os.path.realpath(f.label)), f.after)
    except inputs.InputError as exc:
        raise UsageError(str(exc)) from None
    except write.WriteError as exc:
        raise UsageError(str(exc)) from None
    results = tuple(unique_models([f.result for f in plans]))
    return FixRun(tuple(plans), Validation(results, tuple(found.skipped)))
