"""What the SDMA and streaming rules (PC105, PC106) ask of a layer kind, indexed once:
each warm's question costs O(log n), not a scan of the stages it is alive across
(1,000 warms at one anchor took seconds when each scanned)."""

from __future__ import annotations

import bisect

from plancc import ir


class LayerIndex:
    """A layer kind's SDMA and streaming stages, and the bytes streamed before each."""

    def __init__(self, layer: ir.Layer) -> None:
        self.sdma = [s.index for s in layer.stages if s.sdma]
        self.streaming = [s.index for s in layer.stages if s.streams]
        self.streamed_before = [0]  # over stages [0, i)
        for s in layer.stages:
            self.streamed_before.append(self.streamed_before[-1] + s.streams)

    @staticmethod
    def within(indices: list[int], start: int, end: int) -> list[int]:
        """The indices in [start, end], from a sorted list."""
        return indices[bisect.bisect_left(indices, start) : bisect.bisect_right(indices, end)]


_last: dict[int, tuple[ir.Layer, LayerIndex]] = {}


def layer_index(layer: ir.Layer) -> LayerIndex:
    """The index of ``layer``, built once while the rules of one plan run (by identity:
    hashing a layer would cost a scan of it)."""
    found = _last.get(id(layer))
    if found is None or found[0] is not layer:
        if len(_last) > 64:
            _last.clear()
        found = _last[id(layer)] = (layer, LayerIndex(layer))
    return found[1]
