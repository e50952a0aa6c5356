"""A layer that starts with the import-time helper, then a kernel of its own."""

import pypto.language as pl

from mix import mix

T = 4
D = 128


@pl.jit.inline
def mixed_layer(
    x: pl.Tensor[[T, D], pl.FP32],
    w: pl.Tensor[[D, D], pl.BF16],
    out: pl.Tensor[[T, D], pl.BF16],
):
    y = pl.create_tensor([T, D], dtype=pl.BF16)
    mix(x, y)
    with pl.spmd(T, name_hint="out_proj") as out_tid:
        t = pl.tile.get_block_idx()
        out[t : t + 1, :] = pl.matmul(y[t : t + 1, :], w, out_dtype=pl.BF16)
    return out


# ruff: noqa
