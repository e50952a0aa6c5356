"""A layer that runs one helper three times, as an MoE layer runs its gate per group:
each call inlines the helper again, with its branch on a run-time value and its helper
chosen at import time, so the reader meets each of them three times."""

import pypto.language as pl

from mix import mix

T = 4
D = 128


@pl.jit.inline
def gate(x: pl.Tensor[[T, D], pl.FP32], y: pl.Tensor[[T, D], pl.BF16], scale):
    mix(x, y)
    if scale > 0:
        y = pl.mul(y, scale)
    with pl.spmd(T, name_hint="gate_proj") as gate_tid:
        t = pl.tile.get_block_idx()
        y[t : t + 1, :] = pl.cast(x[t : t + 1, :], target_type=pl.BF16)
    return gate_tid


@pl.jit.inline
def routed_layer(
    x: pl.Tensor[[T, D], pl.FP32],
    w: pl.Tensor[[D, D], pl.BF16],
    out: pl.Tensor[[T, D], pl.BF16],
    scale: pl.Scalar[pl.FP32],
):
    y0 = pl.create_tensor([T, D], dtype=pl.BF16)
    y1 = pl.create_tensor([T, D], dtype=pl.BF16)
    y2 = pl.create_tensor([T, D], dtype=pl.BF16)
    gate(x, y0, scale)
    gate(x, y1, scale)
    gate(x, y2, scale)
    with pl.spmd(T, name_hint="out_proj") as out_tid:
        t = pl.tile.get_block_idx()
        out[t : t + 1, :] = pl.matmul(y2[t : t + 1, :], w, out_dtype=pl.BF16)
    return out


# ruff: noqa
