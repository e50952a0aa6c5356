"""The dtype table (``dtypes.json``): each PyPTO dtype's name, its ``pl`` attribute and bits.

Data, like the platform table: a new dtype is a new row. Every list derived from it
(the schemas' enums, the text of PC023, docs/rules.md) is written by ``make regen``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DType:
    name: str
    pl_name: str  # the attribute of `pl` in generated code, e.g. BF16
    bits: int
    aliases: tuple[str, ...] = ()  # other frameworks' names for it (torch, numpy, short forms)


def _load() -> dict[str, DType]:
    raw = json.loads(Path(__file__).with_name("dtypes.json").read_text("utf-8"))
    return {
        name: DType(name=name, **{**row, "aliases": tuple(row.get("aliases", ()))})
        for name, row in raw.items()
    }


DTYPES: dict[str, DType] = _load()
