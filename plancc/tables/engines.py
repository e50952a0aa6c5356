"""The engines that move a collective's data: the values of a stage's `collective` key.

A stage that is an inter-rank collective (a TP all-to-all, a reduce-scatter, an MoE
dispatch or combine) says so with `collective: ENGINE` (docs/plan-format.md, plancc's
addition), ENGINE one of these rows. PC105 judges a warm alive across any collective,
whatever its engine: the seed's measured slowdown (MoE `combine`, 40.5 → 115.4 µs with
a warm in flight) was of a put-based collective, which PyPTO runs on the vector core's
MTE pipes, not by SDMA (docs/sources.md, "Collectives"). The engine is said, so that
a message and `plancc suggest` name what the warm contends with.

Data, not if-chains: a new engine is a new row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    name: str  # the key's value
    label: str  # how a message names it, in parentheses after the collective's name
    means: str  # what it is, for the docs and the schema's description
    sdma: bool  # the engine is SDMA: the stage uses SDMA, as `sdma: true` says


ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine(
            "mte",
            "vector-core MTE",
            "put/get/notify on the vector core's MTE pipes",
            sdma=False,
        ),
        Engine("sdma", "SDMA", "driven by SDMA", sdma=True),
    )
}

__all__ = ["ENGINES", "Engine"]
