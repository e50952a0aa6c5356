"""YAML syntax errors said in the plan's words, at the place to fix.

The YAML library describes its parser's state ("while parsing a flow
sequence", "expected <block end>, but found '?'"). A plan's author needs what
is wrong in the file and where: an unterminated quote or bracket is reported
where it opens, not where the file ends.
"""

from __future__ import annotations

import re
from typing import Any

from plancc.diagnostics import Pos

# The parser's token names, in words.
_TOKENS = {
    "<stream end>": "the end of the file",
    "<block end>": "the end of the block",
    "<block mapping start>": "a new mapping",
    "<block sequence start>": "a new list",
    "<document start>": "a '---' line",
    "?": "a complex key",
}
_OPENED = {"flow sequence": ("[", "]", "list"), "flow mapping": ("{", "}", "mapping")}


def _pos(mark: Any) -> Pos:
    return Pos(mark.line + 1, mark.column + 1)


def _words(text: str) -> str:
    for token, words in _TOKENS.items():
        text = text.replace(f"'{token}'", words).replace(token, words)
    return text


def explain(exc: Any) -> tuple[Pos, str, str | None]:
    """Where a ruamel ``MarkedYAMLError`` is to be fixed, what is wrong, and the fix."""
    context = exc.context or ""
    problem = exc.problem or ""
    at = exc.problem_mark or exc.context_mark
    here = _pos(at) if at is not None else Pos(1, 1)
    opened = _pos(exc.context_mark) if exc.context_mark is not None else here
    if context.startswith("expected a single document"):
        return (
            here,
            "a second YAML document starts here; a plan is one document",
            "remove the '---' line and what follows it, or move that to a file of its own",
        )
    if "quoted scalar" in context and "end of stream" in problem:
        return (
            opened,
            "the quoted string that opens here is never closed",
            "end it with the same quote character",
        )
    if "double-quoted scalar" in context and "escape" in problem:
        return (
            here,
            f"{problem.removeprefix('found ')} in a double-quoted string",
            "write \\\\ for a backslash, or use single quotes",
        )
    kind = next((k for k in _OPENED if k in context), None)
    if kind is not None:
        bracket, close, what = _OPENED[kind]
        return (
            opened,
            f"the {what} that opens with '{bracket}' here is not closed: "
            f"'{close}' or ',' expected at {here.line}:{here.col}",
            f"close it with '{close}', and separate its entries with ','",
        )
    block = re.match(r"while parsing a block (mapping|collection)", context)
    if block and problem.startswith("expected <block end>"):
        what = "mapping" if block[1] == "mapping" else "list"
        return (
            here,
            f"this line is indented unlike the {what} it belongs to (which starts at "
            f"{opened.line}:{opened.col})",
            "indent it as the other entries at its level, with spaces",
        )
    if problem == "mapping values are not allowed here":
        return (
            here,
            "': ' here would start a mapping inside a value",
            "quote the value, or check this line's indentation",
        )
    token = re.fullmatch(r"found character '(.*)' that cannot start any token", problem)
    if token:
        if token[1] == "\\t":
            return here, "a tab here: YAML indents with spaces", "replace the tab by spaces"
        return here, f"'{token[1]}' cannot start a plain value", "quote the value"
    alias = re.fullmatch(r"found undefined alias '(.*)'", problem)
    if alias:
        return (
            here,
            f"alias *{alias[1]} refers to no anchor &{alias[1]} defined before it",
            None,
        )
    return here, f"invalid YAML: {_words(problem or context or 'unreadable')}", None
