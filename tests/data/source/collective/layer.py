"""A tensor-parallel layer in pypto-lib's idiom (dspark's decode_o_proj.py): an incore
all-to-all whose barrier is a helper's notify and wait, a projection, and a
reduce-scatter scope that pushes its partial rows with pld.tensor.put."""

import pypto.language as pl
import pypto.language.distributed as pld

TP = 2
T = 8
D = 64


@pl.jit.inline
def group_barrier(
    signal: pld.DistributedTensor[[TP, 1], pl.INT32],
    rank: pl.Scalar[pl.INT32],
):
    for peer in pl.range(TP):
        if peer != rank:
            pld.system.notify(
                target=signal, peer=peer, offsets=[rank, 0], value=1, op=pld.NotifyOp.AtomicAdd
            )
    for source in pl.range(TP):
        if source != rank:
            pld.system.wait(signal=signal, offsets=[source, 0], expected=1, cmp=pld.WaitCmp.Ge)
    return signal


@pl.jit.incore
def heads_a2a(
    heads: pl.Tensor[[T, D], pl.BF16],
    local: pl.InOut[pl.Tensor[[T, D], pl.BF16]],
    window: pld.DistributedTensor[[T, D], pl.BF16],
    signal: pld.DistributedTensor[[TP, 1], pl.INT32],
    rank: pl.Scalar[pl.INT32],
):
    for peer in pl.range(TP):
        pld.tensor.put(dst=window, peer=peer, src=heads)
    signal = group_barrier(signal, rank)
    for row in pl.range(T):
        local[row : row + 1, 0:D] = window[row : row + 1, 0:D]
    return local, signal


@pl.jit
def tp_layer(
    x: pl.Tensor[[T, D], pl.BF16],
    w_o: pl.Tensor[[D, D], pl.BF16],
    window: pld.DistributedTensor[[T, D], pl.BF16],
    signal: pld.DistributedTensor[[TP, 1], pl.INT32],
    out_window: pld.DistributedTensor[[T, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.BF16]],
    rank: pl.Scalar[pl.INT32],
):
    local = pl.create_tensor([T, D], dtype=pl.BF16)
    local, signal = heads_a2a(x, local, window, signal, rank)
    partial = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="o_proj") as o_tid:
        partial[:, :] = pl.matmul(local, w_o, out_dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="reduce_scatter", deps=[o_tid]):
        for peer in pl.range(TP):
            pld.tensor.put(dst=out_window, peer=peer, src=partial)
        y[:, :] = out_window[0:T, 0:D]
    return y


# ruff: noqa
