"""What a line is, once for every part of plancc: a line ends at LF, CRLF or a lone CR.

That is LSP's model (its positions count lines so), YAML 1.2's (U+0085, U+2028 and
U+2029 are ordinary characters to it: the loader reads them so, ``unbroken``), and
not Python's ``str.splitlines``, which also breaks at those three, at VT, FF and the
file and group separators. The loader's positions, the editor server's lines and
the fix interpreter's offsets all count lines here, so a position means one place
in all three.
"""

from __future__ import annotations

import re

BREAK = re.compile(r"\r\n|\r|\n")


def split(text: str) -> list[str]:
    """``text``'s lines, each with its line break (``str.splitlines(True)`` at LF, CRLF
    and CR only); no line after a final break, and none for an empty text."""
    out: list[str] = []
    start = 0
    for m in BREAK.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (the first is 0; a final break
    starts an empty last line)."""
    return [0, *(m.end() for m in BREAK.finditer(text))]


def newline(text: str) -> str:
    """The line break ``text`` uses (its first), LF when it has none."""
    m = BREAK.search(text)
    return m.group() if m else "\n"
