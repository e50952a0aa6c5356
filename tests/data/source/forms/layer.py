"""Layers that issue the newer forms of a warm plancc generates, in pypto-lib's idioms:
a prefix of an o-projection weight's first groups (DeepSeek V4 Pro's `wo_a`), a warm
guarded by the context length (Qwen3-14B's `wo`), and a warm of the next layer's slab
of a stacked weight, spared the last layer. Each is written out in the layer, and
called from a generated module that is not read (`tiny_forms_warms`)."""

import pypto.language as pl

from tiny_forms_warms import prefetch_next_wq, prefetch_wo, prefetch_wo_a_head

T = 8
D = 128
GROUPS = 16
HALF = 8
O_LORA = 64
GROUP_IN = 128
LAYERS = 4


@pl.jit.inline
def attention_prefix(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wo_a: pl.Tensor[[GROUPS, O_LORA, GROUP_IN], pl.BF16],
    y: pl.Out[pl.Tensor[[T, O_LORA], pl.BF16]],
):
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq)
    wo_a_rows: pl.Tensor[[HALF, O_LORA, GROUP_IN], pl.BF16] = pl.slice(
        wo_a, [HALF, O_LORA, GROUP_IN], [0, 0, 0]
    )
    wo_a_flat = pl.reshape(wo_a_rows, [HALF * O_LORA * GROUP_IN])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_wo_a_head", deps=[q_tid]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wo_a_flat, warm_ctx)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj_a", deps=[q_tid]):
        y[:, :] = pl.matmul(q[:, 0:GROUP_IN], wo_a[0, :, :])


@pl.jit.inline
def attention_prefix_called(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wo_a: pl.Tensor[[GROUPS, O_LORA, GROUP_IN], pl.BF16],
    y: pl.Out[pl.Tensor[[T, O_LORA], pl.BF16]],
):
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq)
    prefetch_wo_a_head(wo_a, q_tid)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj_a", deps=[q_tid]):
        y[:, :] = pl.matmul(q[:, 0:GROUP_IN], wo_a[0, :, :])


@pl.jit.inline
def attention_guarded(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wo: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    ctx_len: pl.Scalar[pl.INT32],
):
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq)
    wo_flat = pl.reshape(wo, [D * D])
    if ctx_len <= 2272:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_wo", deps=[q_tid]):
            warm_ctx = pl.prefetch.make_context()
            pl.prefetch.async_prefetch(wo_flat, warm_ctx)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="o_proj", deps=[q_tid]):
        y[:, :] = pl.matmul(q, wo)


@pl.jit.inline
def attention_guarded_called(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wo: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    ctx_len: pl.Scalar[pl.INT32],
):
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq)
    prefetch_wo(wo, ctx_len, q_tid)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="o_proj", deps=[q_tid]):
        y[:, :] = pl.matmul(q, wo)


@pl.jit.inline
def decoder(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    w_down: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq[base : base + D, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj", deps=[q_tid]) as down_tid:
        y[:, :] = pl.matmul(q, w_down[base : base + D, :])
    if layer_idx < LAYERS - 1:
        prefetch_next_wq(wq, layer_idx + 1, down_tid)


@pl.jit.inline
def decoder_inlined(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    w_down: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq[base : base + D, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj", deps=[q_tid]) as down_tid:
        y[:, :] = pl.matmul(q, w_down[base : base + D, :])
    if layer_idx < LAYERS - 1:
        wq_slab: pl.Tensor[[D, D], pl.BF16] = pl.slice(wq, [D, D], [(layer_idx + 1) * D, 0])
        wq_flat = pl.reshape(wq_slab, [D * D])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_next_wq", deps=[down_tid]):
            warm_ctx = pl.prefetch.make_context()
            pl.prefetch.async_prefetch(wq_flat, warm_ctx)


@pl.jit.inline
def decoder_guarded(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    w_down: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
    ctx_len: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq[base : base + D, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj", deps=[q_tid]) as down_tid:
        y[:, :] = pl.matmul(q, w_down[base : base + D, :])
    if layer_idx < LAYERS - 1:
        wq_slab: pl.Tensor[[D, D], pl.BF16] = pl.slice(wq, [D, D], [(layer_idx + 1) * D, 0])
        wq_flat = pl.reshape(wq_slab, [D * D])
        if ctx_len <= 2272:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_next_wq", deps=[down_tid]):
                warm_ctx = pl.prefetch.make_context()
                pl.prefetch.async_prefetch(wq_flat, warm_ctx)


# ruff: noqa
