"""Row normalization: the capture form binds the task callers gate on."""

import pypto.language as pl

from config import TINY as M

T_DYN = pl.dynamic("T_DYN")
D = M.hidden_size
ROWS = 8


@pl.jit.inline
def rms_norm(
    x: pl.Tensor[[T_DYN, D], pl.BF16],
    w: pl.Tensor[[D], pl.BF16],
    out: pl.Tensor[[T_DYN, D], pl.BF16],
):
    t_dim = pl.tensor.dim(x, 0)
    with pl.spmd(t_dim // ROWS, name_hint="rms_norm") as norm_tid:
        r = pl.tile.get_block_idx() * ROWS
        rows = pl.cast(x[r : r + ROWS, 0:D], target_type=pl.FP32)
        scale = pl.cast(pl.reshape(w, [1, D]), pl.FP32)
        out[r : r + ROWS, 0:D] = pl.cast(pl.col_expand_mul(rows, scale), target_type=pl.BF16)
    return norm_tid


# ruff: noqa
