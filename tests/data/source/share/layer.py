"""An MLP whose gate weight is split by columns between an SPMD kernel (the first 6
blocks) and a parallel loop (the other 11); the down weight is sliced in a form the
reader does not follow (its columns from a loop step of 2), so it is read whole."""

import pypto.language as pl

HIDDEN = 256
INTER = 17 * 128
TN = 128
BLOCKS = 6
TILES = INTER // TN


@pl.jit.inline
def mlp(
    x: pl.Tensor[[16, HIDDEN], pl.BF16],
    w_gate: pl.Tensor[[HIDDEN, INTER], pl.BF16],
    w_down: pl.Tensor[[HIDDEN, INTER], pl.BF16],
    out: pl.Tensor[[16, INTER], pl.FP32],
):
    with pl.spmd(BLOCKS, name_hint="gate_proj") as gate_tid:
        blk = pl.get_block_idx()
        c0 = blk * TN
        a = x[:, 0:HIDDEN]
        w = w_gate[0:HIDDEN, c0 : c0 + TN]
        acc = pl.matmul(a, w, out_dtype=pl.FP32)
        out = pl.assemble(out, acc, [0, c0])
    for n in pl.parallel(BLOCKS, TILES):
        n0 = n * TN
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate_proj"):
            w = w_gate[0:HIDDEN, n0 : n0 + TN]
            acc = pl.matmul(x[:, 0:HIDDEN], w, out_dtype=pl.FP32)
            out = pl.assemble(out, acc, [0, n0])
    for m in pl.range(0, TILES, 2):
        m0 = m * TN
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj"):
            w = w_down[0:HIDDEN, m0 : m0 + TN]
            acc = pl.matmul(x[:, 0:HIDDEN], w, out_dtype=pl.FP32)
            out = pl.assemble(out, acc, [0, m0])
    return gate_tid
