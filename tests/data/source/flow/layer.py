"""Order carried by values: a tile computed in one scope and assembled by the next (as
DeepSeek V3.2's `q_head_proj` and `q_head_proj_write`); a scope that binds the same
names again before it uses them (`acc`, a loop's `k0`), or uses one as a
comprehension's own (no order); and a row assembled into the output outside any
kernel (as Qwen3-32B's `attn_out`), which a later scope reads; a helper called inside
a kernel that writes the tensor a later scope reads (as dspark's `rms_norm`)."""

import pypto.language as pl

B = 4
D = 256
TILE = 64


@pl.jit.inline
def _scale_rows(x: pl.Tensor, out: pl.Tensor):
    out[:, :] = pl.mul(x, 0.5)


@pl.jit.inline
def attend(
    x: pl.Tensor[[B, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wk: pl.Tensor[[D, D], pl.BF16],
    wo: pl.Tensor[[D, D], pl.BF16],
    y: pl.Out[pl.Tensor[[B, D], pl.FP32]],
):
    xs = pl.create_tensor([B, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        _scale_rows(x, xs)
    q = pl.create_tensor([B, D], dtype=pl.BF16)
    for q0 in pl.parallel(0, D, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj"):
            acc = pl.matmul(xs[:, 0:TILE], wq[0:TILE, q0 : q0 + TILE], out_dtype=pl.FP32)
            for k0 in pl.range(TILE, D, TILE):
                acc = pl.matmul_acc(acc, xs[:, k0 : k0 + TILE], wq[k0 : k0 + TILE, q0 : q0 + TILE])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_write"):
            q = pl.assemble(q, pl.cast(acc, target_type=pl.BF16), [0, q0])

    k = pl.create_tensor([B, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_proj"):
        heads = [k0 // TILE for k0 in range(0, D, TILE)]
        acc = pl.matmul(x[:, 0:TILE], wk[0:TILE, :], out_dtype=pl.FP32)
        for k0 in pl.range(TILE, D, TILE):
            acc = pl.matmul_acc(acc, x[:, k0 : k0 + TILE], wk[k0 : k0 + TILE, :])
        k = pl.assemble(k, pl.cast(acc, target_type=pl.BF16), [0, 0])

    attn = pl.create_tensor([B, D], dtype=pl.BF16)
    for b in pl.parallel(B):
        row = pl.create_tensor([1, D], dtype=pl.BF16)
        for h in pl.spmd(D // TILE, name_hint="score"):
            s = pl.mul(
                q[b : b + 1, h * TILE : (h + 1) * TILE], k[b : b + 1, h * TILE : (h + 1) * TILE]
            )
            row = pl.assemble(row, s, [0, h * TILE])
        attn = pl.assemble(attn, row, [b, 0])

    with pl.at(level=pl.Level.CORE_GROUP, name_hint="out_proj"):
        y[:, :] = pl.matmul(attn, wo, out_dtype=pl.FP32)


# ruff: noqa
