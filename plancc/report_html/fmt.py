"""Numbers as the report writes them: the units plancc's messages use, fixed decimals."""

from __future__ import annotations

from fractions import Fraction

from plancc import ir
from plancc.text import fmt_fraction, fmt_share


def mb(n: int) -> str:
    """``100.7 MB`` (10**6 bytes), or exact bytes under 0.1 MB, as the rules' messages say."""
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} B"


def mib(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n % 2**20 == 0 else f"{n / 2**20:.1f} MiB"


def num(x: float, digits: int = 1) -> str:
    """``120``, ``36.8``: at most ``digits`` decimals, no trailing zeros."""
    text = f"{x:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fraction(x: Fraction) -> str:
    return fmt_fraction(float(x))


def share(n: int, capacity: int, plan: ir.Plan) -> str:
    """``n`` as × L2, told apart from both limits it is judged by (summary's rule)."""
    return fmt_share(Fraction(n, capacity), (Fraction(1), plan.l2_fraction))


def px(x: float) -> str:
    """An SVG coordinate: one decimal at most, so the bytes never depend on float noise."""
    return num(round(x, 1), 1)
