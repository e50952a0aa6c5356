"""The YAML 1.2 core schema, as plancc reads scalars: a plain scalar's tag, and the
value of a scalar with its tag (or the PC001 message saying why it has none)."""

from __future__ import annotations

import re
from typing import Any

# A 64-bit signed integer: no number in a plan needs more; bigger ones only make
# trouble later.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
MERGE = "tag:yaml.org,2002:merge"

# The YAML 1.2 core schema (spec 1.2.2, 10.3.2), the only one a plain scalar is
# resolved by, whatever the YAML library would otherwise accept (`1_000`, `0b11`,
# timestamps) and whatever `%YAML` directive the document carries.
_CORE_NULL = re.compile(r"(?:null|Null|NULL|~|)\Z")
_CORE_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_CORE_INT = re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_CORE_FLOAT = re.compile(
    r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
)
_NUMBER_START = frozenset("0123456789+-.")


def core_tag(text: str) -> str:
    """The tag the YAML 1.2 core schema gives the plain scalar ``text``. The four
    kinds start with different characters, so one pattern at most is tried."""
    first = text[:1]
    if first in _NUMBER_START and first:
        if _CORE_INT.match(text):
            return INT
        return FLOAT if _CORE_FLOAT.match(text) else STR
    if first in ("", "n", "N", "~"):
        return NULL if _CORE_NULL.match(text) else STR
    if first in ("t", "T", "f", "F"):
        return BOOL if _CORE_BOOL.match(text) else STR
    return STR


def scalar(tag: str, text: str) -> Any:  # noqa: C901 (one branch per tag of the YAML core schema)
    """The value of a scalar with this tag; ValueError (the PC001 message) if none."""
    if tag == STR:
        return text
    if tag == NULL:
        return None
    if tag == BOOL:
        if text.lower() not in ("true", "false"):
            raise ValueError(f"invalid boolean {text[:40]!r}")
        return text.lower() == "true"
    if tag == INT:
        value = _core_int(text)
        if value is None:
            raise ValueError(f"invalid integer {text[:40]!r}")
        if not MIN_INT <= value <= MAX_INT:
            raise ValueError(f"integer {_digits(text)} does not fit in 64 bits")
        return value
    if tag == FLOAT:
        if not _CORE_FLOAT.match(text):
            raise ValueError(f"invalid number {text[:40]!r}")
        t = text.lower()
        if t.lstrip("+-") == ".inf":
            return float("-inf") if t.startswith("-") else float("inf")
        return float("nan") if t == ".nan" else float(t)
    raise ValueError(unsupported(tag))


def _core_int(text: str) -> int | None:
    """A YAML 1.2 core integer (an explicit ``!!int`` must be one too), or None."""
    if not _CORE_INT.match(text):
        return None
    base = {"0x": 16, "0o": 8}.get(text[:2], 10)
    digits = (text[2:] if base != 10 else text.lstrip("+-")).lstrip("0")  # 1.2: 0 is no octal
    if len(digits) > 30:
        return MAX_INT + 1  # 2**64 at least: no need to convert it (Python refuses past 4,300)
    value = int(digits or "0", base)
    return -value if text.startswith("-") else value


def _digits(text: str) -> str:
    """An integer as a message quotes it: a long one by its first digits and its length."""
    return text if len(text) <= 40 else f"{text[:20]}… ({len(text):,} digits)"


def unsupported(tag: str) -> str:
    """``tag !!binary is not supported``: a standard tag as the plan writes it."""
    shown = tag.replace("tag:yaml.org,2002:", "!!")
    return f"tag {shown} is not supported: a plan is plain data"
