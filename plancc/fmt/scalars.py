"""How `plancc fmt` carries a scalar's source text into the canonical layout, which may
move it from a flow collection to block style, or put a key on one line: the text
changes there only as far as its value stays the same (plancc.fmt checks it does).
"""

from __future__ import annotations

import json
import re

_PROPERTIES = re.compile(r"^(?:[!&]\S*\s+)+")  # a scalar's tag and anchor


def quoted(text: str) -> str:
    """A plain scalar that only a flow collection lets stand unquoted (one that ends in
    `:`, as in ``{b: c:}``, or an indicator alone) in single quotes, which hold the same
    string in block style and in flow style; its anchor and tag kept. Else as it is."""
    props = _PROPERTIES.match(text)
    head, value = (props.group(), text[props.end() :]) if props else ("", text)
    if value.endswith(":") or value in ("-", "?"):
        return head + "'" + value.replace("'", "''") + "'"
    return text


def trimmed(block: str) -> str:
    """A block scalar's text without the empty lines after it (those no more indented
    than its first line of text: a line of more spaces holds the rest as content)."""
    lines = block.split("\n")
    content = [line for line in lines[1:] if line.strip(" ")]
    indent = len(content[0]) - len(content[0].lstrip(" ")) if content else 0
    while len(lines) > 1 and not lines[-1].strip(" ") and len(lines[-1]) <= indent:
        lines.pop()
    return "\n".join(lines)


def folded(text: str) -> str | None:
    """A plain or quoted scalar written over several lines (a key in a flow mapping), on
    one line, as YAML folds it: a line break between two lines of text is a space, one
    followed by blank lines a newline for each, in double quotes then; the spaces
    around a break go. None for a backslash in double quotes (it may escape a break)."""
    props = _PROPERTIES.match(text)
    head = props.group() if props else ""
    body = text[len(head) :]
    quote = body[:1] if body[:1] in ("'", '"') else ""
    if body[:1] in ("|", ">") or (quote == '"' and "\\" in body):
        return None
    lines = [line.strip(" \t") for line in body.removeprefix(quote).split("\n")]
    value, blank = lines[0], 0
    for at, line in enumerate(lines[1:], 2):
        if line or at == len(lines):
            value, blank = value + ("\n" * blank or " ") + line, 0
        else:
            blank += 1
    if "\n" not in value:
        return head + quote + value
    inner = value.removesuffix(quote)
    inner = inner.replace("''", "'") if quote == "'" else inner
    return head + json.dumps(inner, ensure_ascii=False)  # JSON's escapes are YAML's
