"""The attention layer of the tiny model: the function a plan's `source` names."""

import pypto.language as pl

from config import TINY as M, BATCH, SEQ
from norm import rms_norm
from oproj import o_proj
from proj import project

T = BATCH * SEQ
D = M.hidden_size
Q_RANK = M.q_rank
Q_DIM = M.q_dim
HEAD_DIM = M.head_dim
O_GROUPS = M.o_groups
O_RANK = M.o_rank
GROUP_IN = Q_DIM // O_GROUPS
USE_SHIFT = False


@pl.jit.inline
def attention(
    x: pl.Tensor[[T, D], pl.BF16],
    norm_w: pl.Tensor[[D], pl.BF16],
    wq_a: pl.Tensor[[D, Q_RANK], pl.BF16],
    wq_b: pl.Tensor[[Q_RANK, Q_DIM], pl.INT8],
    wkv: pl.Tensor[[D, HEAD_DIM], pl.BF16],
    wo_a: pl.Tensor[[O_GROUPS, O_RANK, GROUP_IN], pl.BF16],
    wo_b: pl.Tensor[[D, O_GROUPS * O_RANK], pl.INT8],
    out: pl.InOut[pl.Tensor[[T, D], pl.BF16]],
):
    x_normed = pl.create_tensor([T, D], dtype=pl.BF16)
    rms_tid = rms_norm(x, norm_w, x_normed)
    late_dep = pl.system.task_dummy(deps=[rms_tid])
    q = pl.create_tensor([T, Q_DIM], dtype=pl.BF16)
    kv = pl.create_tensor([T, HEAD_DIM], dtype=pl.BF16)
    q_tid, kv_tid = project(x_normed, wq_a, wq_b, wkv, q, kv, late_dep)
    if USE_SHIFT:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift"):
            q[:, :] = pl.add(q, 1.0)
    # The o-projection weights, warmed once q is written.
    wo_a_flat = pl.reshape(wo_a, [O_GROUPS * O_RANK * GROUP_IN])
    wo_b_flat = pl.reshape(wo_b, [D * O_GROUPS * O_RANK])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_o", deps=[q_tid]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wo_a_flat, warm_ctx)
        pl.prefetch.async_prefetch(wo_b_flat, warm_ctx)
    attn = pl.create_tensor([T, Q_DIM], dtype=pl.BF16)
    with pl.spmd(T, name_hint="attend", deps=[kv_tid]) as attn_tid:
        row = pl.tile.get_block_idx()
        attn[row : row + 1, :] = pl.mul(q[row : row + 1, :], kv[row : row + 1, 0:1])
    o_proj(attn, wo_a, wo_b, out)
    return out


@pl.jit
def attention_test(
    x: pl.Tensor[[T, D], pl.BF16],
    norm_w: pl.Tensor[[D], pl.BF16],
    wq_a: pl.Tensor[[D, Q_RANK], pl.BF16],
    wq_b: pl.Tensor[[Q_RANK, Q_DIM], pl.INT8],
    wkv: pl.Tensor[[D, HEAD_DIM], pl.BF16],
    wo_a: pl.Tensor[[O_GROUPS, O_RANK, GROUP_IN], pl.BF16],
    wo_b: pl.Tensor[[D, O_GROUPS * O_RANK], pl.INT8],
    out: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    attention(x, norm_w, wq_a, wq_b, wkv, wo_a, wo_b, out)
    return out


# ruff: noqa
