"""A decode block with its own warm, anchored on a task its helper binds; a forward
that runs it over stacked weights, one slice per layer; a test entry that runs it
alone; and a stage tiled by a loop that binds its task once per tile."""

import pypto.language as pl

T = 8
D = 64
LAYERS = 4
TILE = 16


@pl.jit.inline
def block(
    x: pl.Tensor[[T, D], pl.BF16],
    w_norm: pl.Tensor[[1, D], pl.FP32],
    w_up: pl.Tensor[[D, D], pl.BF16],
    w_down: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    h = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="norm") as norm_tid:
        h[:, :] = pl.mul(x, w_norm)
    w_down_flat = pl.reshape(w_down, [D * D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_down", deps=[norm_tid]):
        ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(w_down_flat, ctx)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="up"):
        h[:, :] = pl.matmul(h, w_up, out_dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="down"):
        y[:, :] = pl.matmul(h, w_down, out_dtype=pl.BF16)
    return y


@pl.jit
def block_test(
    x: pl.Tensor[[T, D], pl.BF16],
    w_norm: pl.Tensor[[1, D], pl.FP32],
    w_up: pl.Tensor[[D, D], pl.BF16],
    w_down: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    block(x, w_norm, w_up, w_down, y)
    return y


@pl.jit
def forward(
    x: pl.Tensor[[T, D], pl.BF16],
    w_norm: pl.Tensor[[LAYERS, D], pl.FP32],
    w_up: pl.Tensor[[LAYERS * D, D], pl.BF16],
    w_down: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    for layer in range(LAYERS):
        norm_l = pl.slice(w_norm, [1, D], [layer, 0])
        up_l = pl.slice(w_up, [D, D], [layer * D, 0])
        down_l = pl.slice(w_down, [D, D], [layer * D, 0])
        block(x, norm_l, up_l, down_l, y)
        x = y
    return y


@pl.jit
def tiled(
    x: pl.Tensor[[T, D], pl.BF16],
    w_out: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale") as scale_tid:
        x[:, :] = pl.mul(x, 0.5)
    for t in range(D // TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="out_tile") as out_tid:
            y[:, t * TILE : (t + 1) * TILE] = pl.matmul(x, w_out[:, t * TILE : (t + 1) * TILE])
    return y


# ruff: noqa
