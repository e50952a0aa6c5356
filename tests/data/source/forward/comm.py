"""A layer whose rows cross ranks through an incore exchange between two kernels, and
a plain Python function given a tensor, which the reader cannot follow."""

import pypto.language as pl
import pypto.language.distributed as pld

T = 8
D = 64


@pl.jit.incore
def exchange(
    rows: pl.Tensor[[T, D], pl.BF16],
    gathered: pl.InOut[pl.Tensor[[T, D], pl.BF16]],
    window: pld.DistributedTensor[[T, D], pl.BF16],
    rank: pl.Scalar[pl.INT32],
):
    for peer in pl.range(2):
        pld.tensor.put(window, rows, peer)
    return gathered, window


def log_rows(rows):
    return rows


@pl.jit
def tp_layer(
    x: pl.Tensor[[T, D], pl.BF16],
    w_a: pl.Tensor[[D, D], pl.BF16],
    w_b: pl.Tensor[[D, D], pl.BF16],
    w_c: pl.Tensor[[D, D], pl.BF16],
    window: pld.DistributedTensor[[T, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
):
    part = pl.create_tensor([T, D], dtype=pl.BF16)
    full = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj_a") as a_tid:
        part[:, :] = pl.matmul(x, w_a, out_dtype=pl.BF16)
    full, window = exchange(part, full, window, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj_b"):
        y[:, :] = pl.matmul(full, w_b, out_dtype=pl.BF16)
    log_rows(y)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj_c"):
        x[:, :] = pl.matmul(x, w_c, out_dtype=pl.BF16)
    return y


# ruff: noqa
