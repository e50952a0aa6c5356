"""The projection helper `layer.py` calls as `kern.proj`."""

import pypto.language as pl


@pl.jit.inline
def proj(x: pl.Tensor, w: pl.Tensor, h: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj") as proj_tid:
        h[:, :] = pl.matmul(x, w, out_dtype=pl.BF16)
    return proj_tid


# ruff: noqa
