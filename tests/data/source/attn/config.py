"""A tiny model configuration, in the form model repositories keep one."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TinyConfig:
    hidden_size: int
    num_heads: int
    head_dim: int
    q_rank: int
    o_groups: int
    o_rank: int

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim


TINY = TinyConfig(
    hidden_size=256,
    num_heads=4,
    head_dim=64,
    q_rank=128,
    o_groups=2,
    o_rank=64,
)

BATCH = 2
SEQ = 2
# ruff: noqa
