"""An entry whose `_layer` is bound at run time: the call is resolved to no function,
so what it annotates is not taken (a notice, as `scratch` has no shape otherwise)."""

from typing import Any

import pypto.language as pl

T = 8
D = 64

_layer: Any = None


@pl.jit.host
def late_host(
    x: pl.Tensor[[T, D], pl.BF16],
    w: pl.Tensor[[D, T], pl.BF16],
    v: pl.Tensor[[D, T], pl.BF16],
    scratch: pl.Tensor[[T, T], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    return _layer(x, w, v, scratch, y)


# ruff: noqa
