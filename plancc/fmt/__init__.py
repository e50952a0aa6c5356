"""`plancc fmt`: one canonical layout for a plan, every comment kept.

The plan is read with ruamel's round-trip parser, whose events carry the
source position of every key, value, anchor and alias. From them a tree of
entries (a mapping's key and value, a sequence's item) is built, the comments
are found between the scalars and attached to entries, and the tree is laid
out again:

- keys in the contract's order (unknown keys after the known ones, as they
  were); dims, tensors, layer kinds and warms stay in the plan's order;
- a stage, a tensor, a `{tensor, flat}` or `{layer, repeat}` entry, `kinds`,
  and every list of scalars in flow style (``{name: q_proj, reads: [wq_a]}``)
  when it fits in 88 columns and holds no comment; everything else in block
  style, indented by two;
- one blank line before each top-level section (every key but `plancc`,
  `model`, `platform`, `budget` and `config`, which have none); elsewhere a
  blank line the author put between two entries is kept (runs become one);
- comments above the first key, set off from it by a blank line, are the
  file's header and stay at the top; any other comment on its own line stays
  before the entry that follows it, at that entry's indentation; a comment at
  the end of a line stays with the entry it follows: the last one to start or
  end on that line, or the flow collection that closes there around it (so a
  comment after an item of a flow list split over lines stays with that item,
  and the list is laid out in block style to hold it).

Scalars are copied as written (quotes, `0x10`, block scalars), so values
keep their meaning, with three exceptions that keep it where the layout moves
a scalar from a flow collection to block style: a plain scalar only a flow
collection lets stand (`c:` in ``{b: c:}``, `-`) is single-quoted; the lines of
a plain or quoted scalar written over several lines are indented two columns
in from its key (their leading spaces are no part of the value); a key written
over several lines is put on one, as YAML folds it (in double quotes when that
holds a line break). As a safety net the result
is read back with plancc's own loader and must hold the same document and the
same comments, or nothing is changed. Formatting is idempotent. A plan that
cannot be laid out is said and left as it is, and the other plans go on.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from plancc import write
from plancc.diagnostics import Diagnostic
from plancc.fmt.layout import FmtError, Layout, comments, scalar_span
from plancc.load import c_parser, inputs, load, unbroken
from plancc.load.lines import split as split_lines
from plancc.text import clip

__all__ = ["FmtError", "FmtRun", "format_plan", "run"]


def format_plan(label: str, raw: bytes) -> bytes | Diagnostic:
    """The canonical bytes of a plan, or the PC001 diagnostic that keeps it from being read."""
    doc = load(label, raw)
    if isinstance(doc, Diagnostic):
        return doc
    form = write.Form.of(raw)  # its BOM and line ending, kept
    text = form.text(raw)
    # Laid out with U+0085, U+2028, U+2029 and U+FEFF stood in for, as the loader reads
    # them (characters, which ruamel's round-trip reading takes as line breaks and
    # str.strip as blanks), and put back in the result.
    text, restore = unbroken(text)
    layout = Layout(text)
    try:
        out = layout.run()
    except YAMLError as exc:  # the round-trip reading refuses what the loader read
        reason = (str(exc).splitlines() or ["?"])[-1].strip()
        raise FmtError(f"its layout cannot be read ({reason})") from None
    if out is None:
        return raw  # no mapping at the top: nothing to lay out
    data = form.encode(out.translate(restore) if restore else out)
    again = load(label, data)
    if isinstance(again, Diagnostic) or _norm(again.data) != _norm(doc.data):
        raise FmtError("the canonical layout would change the plan's values")
    if sorted(c for _, _, c in comments(out, _scalar_spans(out))) != sorted(
        c
        for _, _, c in comments(text, layout.scalar_spans)  # as run() read them
    ):
        raise FmtError("the canonical layout would lose a comment")
    return data


def _scalar_spans(text: str) -> list[tuple[int, int]]:
    """Where the scalars of ``text`` (a layout just written) lie, so that a `#` in one is
    no comment: read by libyaml where it is installed, as the round-trip reading takes
    most of a `plancc fmt`; by that reading where libyaml is missing or refuses."""
    parser = c_parser()
    if parser is not None:
        spans = []
        try:
            events = parser(text)
            while (event := events.get_event()).__class__.__name__ != "StreamEndEvent":
                if event.__class__.__name__ in ("ScalarEvent", "AliasEvent"):
                    spans.append(scalar_span(text, event))
        except YAMLError:  # libyaml refuses what the round-trip reading takes: ask that
            pass
        else:
            return spans
    return Layout(text).spans()


def _norm(value: Any) -> Any:
    if isinstance(value, float):
        return ("float", repr(value) if not math.isnan(value) else "nan")
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


@dataclass(frozen=True)
class FmtRun:
    """What `plancc fmt` prints and its exit code; files are already written."""

    stdout: str
    exit_code: int
    skipped: tuple[inputs.Skipped, ...]
    # A plan whose file could not be rewritten, and why (an I/O error: the others are
    # written all the same, and the run exits 2).
    unwritten: tuple[str, ...] = ()


def run(
    paths: Sequence[str],
    *,
    check: bool = False,
    diff: bool = False,
    stdin_filename: str | None = None,
) -> FmtRun:
    """Format every plan the paths name: rewrite each in place (atomically, only when it
    changes), or with ``check`` list those that would change, or with ``diff`` print the
    change. A plan read from standard input or a pipe is printed, formatted. Raises
    ``inputs.InputError`` (usage); a plan that cannot be written (``write.WriteError``)
    is left as it is, named in ``unwritten``, and the others are written all the same."""
    found = inputs.collect(paths, stdin_filename)
    dry = check or diff
    if not dry and any(p.piped for p in found.plans) and len(found.plans) > 1:
        raise inputs.InputError("-: a plan from standard input is formatted alone")
    lines: list[str] = []
    unwritten: list[str] = []
    changed = refused = 0
    for plan, raw in found.read():
        after = _formatted(plan.label, raw, lines)
        if after is None:
            refused += 1
            continue
        if not dry and plan.piped:
            return FmtRun(after.decode("utf-8"), 1 if refused else 0, tuple(found.skipped))
        if after == raw:
            continue
        changed += 1
        if diff:
            lines += _diff(plan.label, raw, after)
        elif check:
            lines.append(f"{plan.label}: would be reformatted")
        else:
            try:
                write.replace(Path(plan.label), after)  # through a symlink, to its target
            except write.WriteError as exc:
                unwritten.append(str(exc))
                changed -= 1
                refused += 1
                continue
            lines.append(f"{plan.label}: formatted")
    if not diff:
        same = len(found.plans) - len(found.skipped) - changed - refused
        verb = "would be reformatted" if check else "formatted"
        tail = f"{changed} {verb}, {same} {'already formatted' if check else 'unchanged'}"
        lines.append(tail + (f", {refused} not formatted" if refused else ""))
    failed = refused > 0 or (dry and changed > 0)
    code = 2 if unwritten else 1 if failed else 0
    out = "".join(line + "\n" for line in lines)
    return FmtRun(out, code, tuple(found.skipped), tuple(unwritten))


def _formatted(label: str, raw: bytes, lines: list[str]) -> bytes | None:
    """The plan formatted, or None when it cannot be, with why appended to ``lines``."""
    try:
        after = format_plan(label, raw)
    except FmtError as exc:
        lines.append(f"{label}: cannot format: {exc}; left as it is")
        return None
    except Exception as exc:  # a fault of fmt's own: said, and the other plans go on
        why = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"
        lines.append(f"{label}: cannot format: {clip(why)}; left as it is")
        return None
    if isinstance(after, Diagnostic):
        d = after
        lines.append(f"{d.file}:{d.line}:{d.col}: {d.severity.value} {d.code}: {d.message}")
        lines.append(f"{d.file}: not formatted: it is not a readable plan (PC001)")
        return None
    return after


def _diff(label: str, before: bytes, after: bytes) -> list[str]:
    # Broken where plancc breaks lines (not at U+2028, as ``str.splitlines`` would).
    old = [line.rstrip("\r\n") for line in split_lines(before.decode("utf-8"))]
    new = [line.rstrip("\r\n") for line in split_lines(after.decode("utf-8"))]
    return list(difflib.unified_diff(old, new, label, label, lineterm=""))
