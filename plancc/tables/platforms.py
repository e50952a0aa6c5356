"""The platform table (``platforms.json``): L2 size and SDMA provider per platform.

Data, not if-chains: a new platform is a new row. ``sdma_bytes_per_s`` is the
measured single-stream SDMA rate (285 GB/s on a2a3, from the seed document).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Platform:
    name: str
    l2_bytes: int | None
    sdma: bool
    sdma_bytes_per_s: int | None
    note: str


def _load() -> dict[str, Platform]:
    raw = json.loads(Path(__file__).with_name("platforms.json").read_text("utf-8"))
    return {name: Platform(name=name, **row) for name, row in raw.items()}


PLATFORMS: dict[str, Platform] = _load()
