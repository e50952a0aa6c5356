"""A layer whose sizes come from the active preset, and whose split comes from `--tp`."""

import sys

import pypto.language as pl

from presets import ACTIVE as M

T = 4


def _tp_from_argv():
    for i, arg in enumerate(sys.argv):
        if arg == "--tp" and i + 1 < len(sys.argv):
            return int(sys.argv[i + 1])
    return 2


TP = _tp_from_argv()
D = M.hidden
LOCAL_D = D // TP


@pl.jit.inline
def toy(
    x: pl.Tensor[[T, D], pl.BF16],
    w_in: pl.Tensor[[D, LOCAL_D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, LOCAL_D], pl.BF16]],
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shard_mm"):
        y[:, :] = pl.matmul(x, w_in, out_dtype=pl.BF16)


# ruff: noqa
