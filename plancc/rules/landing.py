"""PC107's landing arithmetic as a value: the rule (in placement.py) decides with it, and
`plancc report` draws it, so the page can never say other than the rule."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from plancc import ir


@dataclass(frozen=True)
class Landing:
    """PC107's arithmetic for one warm, shared by the rule and `plancc report`, which draws it.

    The window is the sum of the `duration_us` of the stages strictly between the
    anchor and the first consumer, known only when each of them has one.
    """

    anchor: ir.Stage
    consumers: dict[str, ir.Stage]  # static tensor -> its consumer
    bytes: int  # the warm's static bytes
    rate: int | None  # the platform's single-stream SDMA rate, B/s
    window_us: Fraction | None

    @property
    def first(self) -> ir.Stage:
        return min(self.consumers.values(), key=lambda s: s.index)

    @property
    def landed(self) -> Fraction | None:
        """Bytes the platform's rate moves in the window."""
        if self.window_us is None or self.rate is None:
            return None
        return self.window_us * self.rate / 1_000_000

    @property
    def share(self) -> Fraction | None:
        landed = self.landed
        return None if landed is None else min(Fraction(1), landed / self.bytes)

    def transfer_us(self, nbytes: int) -> Fraction | None:
        """How long the platform's rate takes to move ``nbytes``."""
        return None if self.rate is None else Fraction(nbytes * 1_000_000, self.rate)

    @property
    def fires(self) -> bool:
        landed = self.landed
        if landed is not None:
            return 4 * landed < self.bytes
        return self.first.index == self.anchor.index + 1


def estimate(
    plan: ir.Plan, layer: ir.Layer, at: int, consumers: dict[str, ir.Stage], nbytes: int
) -> Landing | None:
    """The landing of a warm anchored at stage ``at`` whose static tensors (``nbytes``) are
    consumed by ``consumers``; None without a consumer or bytes."""
    if not consumers or nbytes == 0:
        return None
    rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
    first = min(s.index for s in consumers.values())
    durations = [s.duration_us for s in layer.stages[at + 1 : first]]
    window = None
    if durations and rate is not None and all(d is not None for d in durations):
        window = sum((decimal(d) for d in durations if d is not None), Fraction(0))
    return Landing(layer.stages[at], consumers, nbytes, rate, window)


def decimal(x: float) -> Fraction:
    """The value the plan wrote (``36.8``), not its nearest binary float."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)
