"""A sibling with its own `_layer` and `device_fwd` of other parameters, and a host that
annotates other shapes: its calls are of its own functions, never of layer.py's."""

import pypto.language as pl

T = 8
D = 64


@pl.jit.inline
def _layer(w: pl.Tensor, x: pl.Tensor, v: pl.Tensor, scratch: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="other"):
        y[:, :] = pl.matmul(x, w, out_dtype=pl.BF16)
    return y


@pl.jit
def device_fwd(w: pl.Tensor, x: pl.Tensor, v: pl.Tensor, scratch: pl.Tensor, y: pl.Out[pl.Tensor]):
    return _layer(w, x, v, scratch, y)


@pl.jit.host
def decoy_host(
    w: pl.Tensor[[T, T], pl.FP32],
    x: pl.Tensor[[D, T], pl.FP32],
    v: pl.Tensor[[T, T], pl.FP32],
    scratch: pl.Tensor[[T, T], pl.FP32],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    return device_fwd(w, x, v, scratch, y)


# ruff: noqa
