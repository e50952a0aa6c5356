"""The "Regenerate" command of a generated module: a shell command that works when pasted.

The module is ASCII, and the command is copied from its source, so it must
read the same in the source as in the docstring: printable ASCII with no
double quote. A word of safe characters is written as is; other printable
ASCII goes in single quotes; anything else (a non-ASCII or non-UTF-8 file
name, a quote, a control character) in ANSI-C quotes, ``$'caf\\xc3\\xa9.yaml'``,
which bash, zsh, ksh and POSIX.1-2024 shells read, each byte outside
printable ASCII as ``\\xHH``.
"""

from __future__ import annotations

import os
import re

_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_ANSI_C = {ord("'"): "\\'", ord("\\"): "\\\\"}


def quote(word: str) -> str:
    """``word`` as one shell word, in printable ASCII without a double quote."""
    if word.startswith("-"):
        word = "./" + word  # never read as an option
    if _SAFE.fullmatch(word):
        return word
    if all(" " <= ch <= "~" for ch in word) and not any(ch in word for ch in "'\"\\"):
        return f"'{word}'"
    data = os.fsencode(word)  # a file name that is not UTF-8 comes back as its own bytes
    return "$'" + "".join(_ansi_c(byte) for byte in data) + "'"


def _ansi_c(byte: int) -> str:
    if byte in _ANSI_C:
        return _ANSI_C[byte]
    return chr(byte) if 0x20 <= byte <= 0x7E and byte != ord('"') else f"\\x{byte:02x}"


def regenerate(plan_path: str, *, piped: bool) -> str:
    """The command, run in the output directory, that builds the outputs again. A plan
    read from standard input or a pipe has no file to read again: the command reads it
    from standard input, under the name its outputs record."""
    if piped:
        return f"plancc build - --stdin-filename {quote(plan_path)} --out ."
    return f"plancc build {quote(plan_path)} --out ."
