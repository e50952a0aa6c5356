"""How figures are printed: µs to one decimal, signed deltas with a real minus sign (as
the seed writes them), bandwidth in GB/s (TB/s from 1,000 GB/s), bytes with their MB."""

from __future__ import annotations

MINUS = "\u2212"


def signed_us(x: float) -> str:
    return f"{x:+.1f}".replace("-", MINUS)


def signed_pct(x: float) -> str:
    return f"{x:+.2f} %".replace("-", MINUS)


def bandwidth(bytes_per_us: float) -> str:
    """Bytes per µs as the seed writes bandwidth: ``285 GB/s``, ``2.9 TB/s``."""
    gbps = bytes_per_us / 1000
    return f"{gbps / 1000:.1f} TB/s" if gbps >= 999.5 else f"{gbps:.0f} GB/s"


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"
