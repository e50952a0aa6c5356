"""Text helpers every layer may use: quoting plan text, plurals, shares and byte counts.

A leaf module (it imports nothing from plancc), so that messages, summaries and
output formats format numbers the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

SHOWN = 40  # characters of a value from the plan that a message quotes


def clip(text: str) -> str:
    """``text`` as a message quotes it: at most SHOWN characters, then an ellipsis, so a
    100,000-character value cannot become the message."""
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def json_kind(value: object) -> str:
    """What a message says of a value read from a JSON file the plan names (its `config`):
    a number as it is, anything else by its type only (``a string``, ``an object``). A plan
    can name any JSON file on the machine that checks it (a CI runner's credentials): its
    strings never reach a log, an annotation or a report."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def plural(n: int, word: str) -> str:
    """``1 warm``, ``3 warms``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def fmt_percent(share: Fraction) -> str:
    """A share as a percentage to one decimal, rounded down, so that a share just under a
    quarter never prints as 25.0 % (PC107's estimate, and the editor's hover of it)."""
    return f"{math.floor(share * 1000) / 10:.1f} %"


def fmt_share(share: Fraction, limits: Sequence[Fraction] = ()) -> str:
    """``share`` to two decimals, or as many more as it takes to compare with each of
    ``limits`` as the exact share does: one byte over L2 is ``1.000000005``, never
    ``1.00``, and a share under a 0.756 budget is never ``0.76``.

    The limits are decimals (1, a plan's `l2_fraction`), so enough digits always
    tell them apart from the share, or show them exactly when the share equals one.
    """
    digits = 2
    while True:
        scaled = round(share * 10**digits)  # exact, half to even: no float drift
        shown = Fraction(scaled, 10**digits)
        if all(_sign(shown - limit) == _sign(share - limit) for limit in limits):
            whole, decimals = divmod(scaled, 10**digits)
            return f"{whole}.{decimals:0{digits}d}"
        digits += 1


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def fmt_fraction(x: float) -> str:
    """A plan's fraction as written: the shortest text that reads back as it (``0.123456789``,
    not ``0.123457``); a whole number without ``.0``, as YAML has it (``1``)."""
    return repr(x).removesuffix(".0")


SMALL = 100_000  # below this, a size is given in bytes alone: never "0.0 MB"


def fmt_size(n: int) -> str:
    """``42.1 MB``, or ``16,384 B`` for a size that would round to a tenth of a MB or less."""
    return f"{n / 1e6:.1f} MB" if n >= SMALL else f"{n:,} B"


def fmt_bytes(n: int, l2: int | None = None, limit: Fraction | None = None) -> str:
    """``268,435,456 B = 268.4 MB = 256.0 MiB = 1.33× L2``: every unit users quote.

    The × L2 figure has two decimals, or as many more as it takes to compare with
    ``limit`` (the fraction it was compared with) as the exact share does: one
    byte over L2 must not print as 1.00×, nor a share over a 0.754 budget as 0.75×.
    """
    text = f"{n:,} B" if n < SMALL else f"{n:,} B = {n / 1e6:.1f} MB = {n / 2**20:.1f} MiB"
    if l2:
        text += f" = {fmt_share(Fraction(n, l2), [] if limit is None else [limit])}× L2"
    return text
