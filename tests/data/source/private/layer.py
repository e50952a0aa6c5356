"""A private layer function: private task variables, a parameter the plan reserves
(`x_flat`), a kernel hint YAML reads as a boolean, a scope without a name_hint that
joins the run of the kernel it waits on, and a size bound again under its own name."""

import pypto.language as pl

from consts import LAYER_BLOCKS, ROWS

CACHE_BLOCKS = LAYER_BLOCKS  # the same value, bound again in this module
H = 64


@pl.jit.inline
def _mix_layer(
    x_flat: pl.Tensor[[ROWS, H], pl.BF16],
    cache: pl.Tensor[[CACHE_BLOCKS, H], pl.BF16],
    w_in: pl.Tensor[[H, H], pl.BF16],
    w_out: pl.Tensor[[H, H], pl.BF16],
    y: pl.Out[pl.Tensor[[ROWS, H], pl.BF16]],
):
    h = pl.create_tensor([ROWS, H], dtype=pl.BF16)
    g = pl.create_tensor([ROWS, H], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mix_in") as _in_tid:
        h[:, :] = pl.matmul(x_flat, w_in, out_dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="true") as _gate_tid:
        g[:, :] = pl.add(cache[0:ROWS, :], 0.0)
    with pl.at(level=pl.Level.CORE_GROUP, deps=[_in_tid, _gate_tid]) as _:
        h[:, :] = pl.mul(h, g)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mix_out") as _out_tid:
        y[:, :] = pl.matmul(h, w_out, out_dtype=pl.BF16)


@pl.jit.inline
def _no_kernels(x: pl.Tensor[[ROWS, H], pl.BF16]):
    return x


@pl.jit
def _unshaped(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x


# ruff: noqa
