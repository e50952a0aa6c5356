"""A layer whose weights are bare `pl.Tensor`s, each annotated by the caller that
Python's own lookup leads to: `w` by this module's host through its `device_fwd`,
`v` by an entry that imports this module (`import layer as lay`); `scratch` by
nobody. Its projection is a helper of a module it imports whole (`kern.proj`), and
it hands a tensor to a name no module binds (`ghost.log`)."""

import pypto.language as pl

import ghost
import kern

T = 8
D = 64


@pl.jit.inline
def _layer(
    x: pl.Tensor[[T, D], pl.BF16],
    w: pl.Tensor,
    v: pl.Tensor,
    scratch: pl.Tensor,
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    h = pl.create_tensor([T, D], dtype=pl.BF16)
    h_tid = kern.proj(x, w, h)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mix", deps=[h_tid]):
        y[:, :] = pl.matmul(h, v, out_dtype=pl.BF16)
        scratch[:, :] = y
    ghost.log(y)
    return y


@pl.jit
def device_fwd(x: pl.Tensor, w: pl.Tensor, v: pl.Tensor, scratch: pl.Tensor, y: pl.Out[pl.Tensor]):
    return _layer(x, w, v, scratch, y)


@pl.jit.host
def layer_host(
    x: pl.Tensor[[T, D], pl.BF16],
    w: pl.Tensor[[D, D], pl.BF16],
    v: pl.Tensor,
    scratch: pl.Tensor,
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    return device_fwd(x, w, v, scratch, y)


# ruff: noqa
