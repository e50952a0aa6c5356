"""A layer taking its weights as bare `pl.Tensor`: the shapes are annotated on the host
entry, two calls up; one parameter no caller annotates."""

import pypto.language as pl

T = 8
D = 64


@pl.jit.inline
def _layer(
    x: pl.Tensor[[T, D], pl.BF16],
    w_proj: pl.Tensor,
    scratch: pl.Tensor,
    y: pl.Out[pl.Tensor],
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
        y[:, :] = pl.matmul(x, w_proj, out_dtype=pl.BF16)
        scratch[:, :] = y
    return y


@pl.jit
def device_fwd(x: pl.Tensor, w_proj: pl.Tensor, scratch: pl.Tensor, y: pl.Out[pl.Tensor]):
    return _layer(x, w_proj, scratch, y)


@pl.jit.host
def layer_host(
    x: pl.Tensor[[T, D], pl.BF16],
    w_proj: pl.Tensor[[D, D], pl.BF16],
    scratch: pl.Tensor,
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    return device_fwd(x, w_proj, scratch, y)


# ruff: noqa
