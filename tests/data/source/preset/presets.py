"""Model sizes chosen when the module runs: a variant from the environment or the
command line, a preset table indexed by it, each preset a config object."""

import os
import sys
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Sizes:
    name: str
    hidden: int
    heads: int
    max_seq: int = 0

    @property
    def head_dim(self):
        return self.hidden // self.heads


SMALL = Sizes(name="small", hidden=256, heads=4)
LARGE = Sizes(name="large", hidden=1024, heads=8)
PRESETS = {p.name: p for p in (SMALL, LARGE)}
VARIANT_ENV = "TOY_VARIANT"


def _variant():
    chosen = os.environ.get(VARIANT_ENV, "large")
    for i, arg in enumerate(sys.argv):
        if arg == "--variant" and i + 1 < len(sys.argv):
            chosen = sys.argv[i + 1]
    return chosen.strip().lower()


VARIANT = _variant()
ACTIVE = replace(PRESETS[VARIANT], max_seq=2048)
