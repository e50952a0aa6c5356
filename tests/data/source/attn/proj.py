"""Q and KV projections: a for-form kernel, two capture-form kernels, a tuple returned."""

import pypto.language as pl

from config import TINY as M

T_DYN = pl.dynamic("T_DYN")
D = M.hidden_size
Q_RANK = M.q_rank
Q_DIM = M.q_dim
HEAD_DIM = M.head_dim
N_TILE = 64


@pl.jit.inline
def project(
    x: pl.Tensor[[T_DYN, D], pl.BF16],
    wq_a: pl.Tensor[[D, Q_RANK], pl.BF16],
    wq_b: pl.Tensor[[Q_RANK, Q_DIM], pl.INT8],
    wkv: pl.Tensor[[D, HEAD_DIM], pl.BF16],
    q: pl.Tensor[[T_DYN, Q_DIM], pl.BF16],
    kv: pl.Tensor[[T_DYN, HEAD_DIM], pl.BF16],
    late_dep: pl.Scalar[pl.TASK_ID],
):
    t_dim = pl.tensor.dim(x, 0)
    qr = pl.create_tensor([t_dim, Q_RANK], dtype=pl.BF16)
    for n in pl.spmd(Q_RANK // N_TILE, name_hint="qa_matmul"):
        col = n * N_TILE
        w_chunk = wq_a[:, col : col + N_TILE]
        qr[:, col : col + N_TILE] = pl.matmul(x, w_chunk, out_dtype=pl.BF16)
    with pl.spmd(Q_DIM // N_TILE, name_hint="qb_matmul") as q_tid:
        col = pl.tile.get_block_idx() * N_TILE
        q[:, col : col + N_TILE] = pl.matmul(qr, wq_b[:, col : col + N_TILE], out_dtype=pl.BF16)
    # Off the critical path: waits one hop behind the norm.
    with pl.spmd(HEAD_DIM // N_TILE, name_hint="kv_matmul", deps=[late_dep]) as kv_tid:
        col = pl.tile.get_block_idx() * N_TILE
        kv_cols = pl.matmul(x, wkv[:, col : col + N_TILE], out_dtype=pl.BF16)
        kv = pl.assemble(kv, kv_cols, [0, col])
    return q_tid, kv_tid


# ruff: noqa
