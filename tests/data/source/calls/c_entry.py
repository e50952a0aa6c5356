"""An entry that imports the layer's module whole and calls `lay._layer`."""

import pypto.language as pl

import layer as lay

T = 8
D = 64


@pl.jit
def entry(
    x: pl.Tensor,
    w: pl.Tensor,
    v: pl.Tensor[[D, D], pl.BF16],
    scratch: pl.Tensor,
    y: pl.Out[pl.Tensor],
):
    return lay._layer(x, w, v, scratch, y)


# ruff: noqa
