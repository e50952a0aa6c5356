"""A decode layer over stacked weights, in Qwen3-14B's form, that issues a warm plancc
generates: a join of the q, k and v projections warming one layer's slab of `wo`.
`attention` calls it as its docstring says, from the generated module (not read);
`attention_copied` calls a copy of it defined in another module (read: the generated
form); `attention_inlined` writes its body out."""

import pypto.language as pl

from tiny_warms import prefetch_wo
from warm_copy import prefetch_wo_copy

T = 8
D = 128
KV = 64
LAYERS = 4


@pl.jit.inline
def project(
    x: pl.Tensor,
    wq: pl.Tensor,
    wk: pl.Tensor,
    wv: pl.Tensor,
    q: pl.Tensor,
    k: pl.Tensor,
    v: pl.Tensor,
    base: pl.Scalar[pl.INDEX],
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q[:, :] = pl.matmul(x, wq[base : base + D, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_proj") as k_tid:
        k[:, :] = pl.matmul(x, wk[base : base + D, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="v_proj") as v_tid:
        v[:, :] = pl.matmul(x, wv[base : base + D, :])
    return q_tid, k_tid, v_tid


@pl.jit.inline
def attend(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, wo: pl.Tensor, y: pl.Tensor, base, tids):
    o = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="attn", deps=tids) as attn_tid:
        o[:, 0:KV] = pl.mul(pl.matmul(q[:, 0:KV], k), v)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="o_proj", deps=[attn_tid]):
        y[:, :] = pl.matmul(o, wo[base : base + D, :])


@pl.jit.inline
def attention(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    wk: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wv: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wo: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    k = pl.create_tensor([T, KV], dtype=pl.BF16)
    v = pl.create_tensor([T, KV], dtype=pl.BF16)
    q_tid, k_tid, v_tid = project(x, wq, wk, wv, q, k, v, base)
    prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid)
    attend(q, k, v, wo, y, base, [q_tid, k_tid, v_tid])


@pl.jit.inline
def attention_copied(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    wk: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wv: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wo: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    k = pl.create_tensor([T, KV], dtype=pl.BF16)
    v = pl.create_tensor([T, KV], dtype=pl.BF16)
    q_tid, k_tid, v_tid = project(x, wq, wk, wv, q, k, v, base)
    prefetch_wo_copy(wo, layer_idx, q_tid, k_tid, v_tid)
    attend(q, k, v, wo, y, base, [q_tid, k_tid, v_tid])


@pl.jit.inline
def attention_inlined(
    x: pl.Tensor[[T, D], pl.BF16],
    wq: pl.Tensor[[LAYERS * D, D], pl.BF16],
    wk: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wv: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    wo: pl.Tensor[[LAYERS * D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * D
    q = pl.create_tensor([T, D], dtype=pl.BF16)
    k = pl.create_tensor([T, KV], dtype=pl.BF16)
    v = pl.create_tensor([T, KV], dtype=pl.BF16)
    q_tid, k_tid, v_tid = project(x, wq, wk, wv, q, k, v, base)
    wo_slab: pl.Tensor[[D, D], pl.BF16] = pl.slice(wo, [D, D], [layer_idx * D, 0])
    wo_flat = pl.reshape(wo_slab, [D * D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_wo", deps=[q_tid, k_tid, v_tid]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wo_flat, warm_ctx)
    attend(q, k, v, wo, y, base, [q_tid, k_tid, v_tid])


# ruff: noqa
