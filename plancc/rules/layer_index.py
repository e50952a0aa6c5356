"""A layer kind's stages indexed once, so that the placement rules ask each warm's
questions in O(log n), not with a scan of its stages: 1,000 warms at one anchor took
seconds when each warm scanned the stages between its anchor and its consumers."""

from __future__ import annotations

import bisect
from fractions import Fraction

from plancc import ir


def decimal(x: float) -> Fraction:
    """The value the plan wrote (``36.8``), not its nearest binary float."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


class LayerIndex:
    """One layer kind's readers, SDMA and streaming stages, and prefix sums."""

    def __init__(self, layer: ir.Layer) -> None:
        self.readers: dict[str, list[int]] = {}  # tensor -> the stages reading it, in order
        for s in layer.stages:
            for name in dict.fromkeys(s.reads):
                self.readers.setdefault(name, []).append(s.index)
        self.sdma = [s.index for s in layer.stages if s.sdma]
        self.streaming = [s.index for s in layer.stages if s.streams]
        # Over stages [0, i): the bytes streamed, the durations summed, those lacking one.
        self.streamed_before = [0]
        self.duration_before = [Fraction(0)]
        self.unmeasured_before = [0]
        for s in layer.stages:
            self.streamed_before.append(self.streamed_before[-1] + s.streams)
            d = s.duration_us
            self.duration_before.append(self.duration_before[-1] + (decimal(d) if d else 0))
            self.unmeasured_before.append(self.unmeasured_before[-1] + (d is None))

    def consumer(self, tensor: str, at: int) -> int | None:
        """The first stage after ``at`` that reads ``tensor``."""
        readers = self.readers.get(tensor, [])
        k = bisect.bisect_right(readers, at)
        return readers[k] if k < len(readers) else None

    @staticmethod
    def within(indices: list[int], start: int, end: int) -> list[int]:
        """The indices in [start, end], from a sorted list."""
        return indices[bisect.bisect_left(indices, start) : bisect.bisect_right(indices, end)]
