"""The thresholds the rules and `plancc suggest` judge by, each named once.

The L2 budget is the plan's own (`budget.l2_fraction`, its default declared with the
schema in ``plancc.schema.declared``); the platform's L2 size and SDMA rate are the
platform table's. What is left are two fractions of the seed's lessons:

- ``NEGLIGIBLE``: a part under 1 % of its whole makes no difference. A tensor under
  1 % of a warm's bytes rides along with the rest (a 16 KB scale vector beside its
  33.6 MB matrix): PC103 does not ask for it, PC107 does not judge the warm by its
  consumer, `suggest` never adds it to a warm it enumerates; weights streaming beside
  a warm under 1 % of its bytes do not compete with it (PC104).
- ``LANDS``: a warm lands when the window before its first consumer moves at least a
  quarter of its bytes at the single-stream SDMA rate (PC107).
"""

from __future__ import annotations

from fractions import Fraction

NEGLIGIBLE = Fraction(1, 100)
LANDS = Fraction(1, 4)


def negligible(part: int | Fraction, whole: int | Fraction) -> bool:
    """Whether ``part`` is under ``NEGLIGIBLE`` of ``whole`` (nothing is of nothing)."""
    # Cross-multiplied: no Fraction made for two integers (suggest asks a million times).
    return part * NEGLIGIBLE.denominator < NEGLIGIBLE.numerator * whole


def kept(sizes: dict[str, int]) -> list[str]:
    """The names whose size is not negligible against the sizes' sum, in their order."""
    total = sum(sizes.values())
    return [name for name, n in sizes.items() if not negligible(n, total)]


def share(part: int | Fraction, whole: int | Fraction) -> int:
    """``part`` in whole steps of ``NEGLIGIBLE`` of ``whole`` (whole percent): two parts
    less than a negligible share apart compare equal, and a negligible one is 0."""
    return int(part // (NEGLIGIBLE * whole)) if whole else 0
