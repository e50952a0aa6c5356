"""A helper whose implementation is picked when the module is imported."""

import os

import pypto.language as pl

D = 128
T_DYN = pl.dynamic("T_DYN")
MIX_IMPL = os.environ.get("TINY_MIX_IMPL", "split").lower()


@pl.jit.inline
def _mix_split(x: pl.Tensor[[T_DYN, D], pl.FP32], y: pl.Tensor[[T_DYN, D], pl.BF16]):
    for t in pl.spmd(4, name_hint="mix_rows"):
        y[t : t + 1, :] = pl.cast(x[t : t + 1, :], target_type=pl.BF16)


@pl.jit.inline
def _mix_fused(x: pl.Tensor[[T_DYN, D], pl.FP32], y: pl.Tensor[[T_DYN, D], pl.BF16]):
    with pl.spmd(4, name_hint="mix_fused") as _mix_tid:
        t = pl.tile.get_block_idx()
        y[t : t + 1, :] = pl.cast(x[t : t + 1, :], target_type=pl.BF16)


def _bind_mix():
    if MIX_IMPL == "split":

        @pl.jit.inline
        def mix(x: pl.Tensor[[T_DYN, D], pl.FP32], y: pl.Tensor[[T_DYN, D], pl.BF16]):
            _mix_split(x, y)
            return y

    else:

        @pl.jit.inline
        def mix(x: pl.Tensor[[T_DYN, D], pl.FP32], y: pl.Tensor[[T_DYN, D], pl.BF16]):
            _mix_fused(x, y)
            return y

    return mix


mix = _bind_mix()
# ruff: noqa
