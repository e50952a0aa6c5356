"""Grouped output projection: one name_hint used twice, reshape and slice aliases."""

import pypto.language as pl

from config import TINY as M

T_DYN = pl.dynamic("T_DYN")
D = M.hidden_size
O_GROUPS = M.o_groups
O_RANK = M.o_rank
GROUP_IN = M.q_dim // M.o_groups


@pl.jit.inline
def o_proj(
    attn: pl.Tensor[[T_DYN, M.q_dim], pl.BF16],
    wo_a: pl.Tensor[[O_GROUPS, O_RANK, GROUP_IN], pl.BF16],
    wo_b: pl.Tensor[[D, O_GROUPS * O_RANK], pl.INT8],
    out: pl.Tensor[[T_DYN, D], pl.BF16],
):
    t_dim = pl.tensor.dim(attn, 0)
    mid = pl.create_tensor([t_dim, O_GROUPS * O_RANK], dtype=pl.BF16)
    wo_a_rows = pl.reshape(wo_a, [O_GROUPS * O_RANK, GROUP_IN])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="group_mm"):
        for g in pl.range(O_GROUPS):
            a = attn[:, g * GROUP_IN : (g + 1) * GROUP_IN]
            w = wo_a_rows[g * O_RANK : (g + 1) * O_RANK, :]
            mid[:, g * O_RANK : (g + 1) * O_RANK] = pl.matmul(a, w, b_trans=True, out_dtype=pl.BF16)
    wo_b_half = pl.slice(wo_b, [D, O_GROUPS * O_RANK], [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="group_mm"):
        out[:, :] = pl.matmul(mid, wo_b_half, b_trans=True, out_dtype=pl.BF16)


# ruff: noqa
