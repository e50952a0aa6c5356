"""An MLP in the form of Qwen3-14B's decode layer: a residual cast and a critical wave
of gate/up SPMD dispatches unrolled over the K splits (one copy of each scope per
split, named as PyPTO names repeats), the deferred tiles in a parallel loop over
n with a range over k inside (one kernel each, bound per iteration: a task there
holds one tile's), then silu and the down projection, and a norm helper called twice."""

import pypto.language as pl

T = 16
D = 256
F = 512
K_SPLITS = 4
K_SLICE = D // K_SPLITS
TN = 32
N_TILES = F // TN
SPMD_N = 6


@pl.jit.inline
def norm(x: pl.Tensor, w: pl.Tensor, out: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms") as rms_tid:
        out[:, :] = pl.mul(x, w)
    return rms_tid


@pl.jit.inline
def mlp(
    x: pl.Tensor[[T, D], pl.FP32],
    w_norm: pl.Tensor[[1, D], pl.FP32],
    w_gate: pl.Tensor[[D, F], pl.BF16],
    w_up: pl.Tensor[[D, F], pl.BF16],
    w_down: pl.Tensor[[F, D], pl.BF16],
    y: pl.Out[pl.Tensor[[T, D], pl.FP32]],
):
    h = pl.create_tensor([T, D], dtype=pl.FP32)
    normed = pl.create_tensor([T, D], dtype=pl.BF16)
    gate = pl.create_tensor([T, F], dtype=pl.FP32)
    up = pl.create_tensor([T, F], dtype=pl.FP32)
    act = pl.create_tensor([T, F], dtype=pl.BF16)
    norm_tid = norm(x, w_norm, h)
    with pl.manual_scope():
        cast_tids = pl.array.create(K_SPLITS, pl.TASK_ID)
        for k_slice in pl.unroll(K_SPLITS):
            k0 = k_slice * K_SLICE
            with pl.at(
                level=pl.Level.CORE_GROUP, name_hint="residual_cast", deps=[norm_tid]
            ) as cast_tid:
                normed[:, k0 : k0 + K_SLICE] = pl.cast(h[:, k0 : k0 + K_SLICE], target_type=pl.BF16)
            cast_tids[k_slice] = cast_tid

        gate_tids = pl.array.create(N_TILES * K_SPLITS, pl.TASK_ID)
        up_tids = pl.array.create(N_TILES * K_SPLITS, pl.TASK_ID)
        for k_split in pl.unroll(K_SPLITS):
            gk0 = k_split * K_SLICE
            with pl.spmd(SPMD_N, name_hint="gate_proj", deps=[cast_tids[k_split]]) as gate_spmd_tid:
                n0 = pl.get_block_idx() * TN
                a = normed[:, gk0 : gk0 + K_SLICE]
                gate = pl.assemble(
                    gate, pl.matmul(a, w_gate[gk0 : gk0 + K_SLICE, n0 : n0 + TN]), [0, n0]
                )
            with pl.spmd(SPMD_N, name_hint="up_proj", deps=[cast_tids[k_split]]) as up_spmd_tid:
                n0 = pl.get_block_idx() * TN
                a = normed[:, gk0 : gk0 + K_SLICE]
                up = pl.assemble(up, pl.matmul(a, w_up[gk0 : gk0 + K_SLICE, n0 : n0 + TN]), [0, n0])
            for spmd_n in pl.unroll(SPMD_N):
                gate_tids[spmd_n * K_SPLITS + k_split] = gate_spmd_tid
                up_tids[spmd_n * K_SPLITS + k_split] = up_spmd_tid

        for n_out in pl.parallel(SPMD_N, N_TILES):
            n0 = n_out * TN
            for k_split in pl.range(K_SPLITS):
                k0 = k_split * K_SLICE
                with pl.at(
                    level=pl.Level.CORE_GROUP, name_hint="gate_proj", deps=[cast_tids[k_split]]
                ) as gate_tid:
                    gate = pl.assemble(
                        gate,
                        pl.matmul(
                            normed[:, k0 : k0 + K_SLICE], w_gate[k0 : k0 + K_SLICE, n0 : n0 + TN]
                        ),
                        [0, n0],
                    )
                gate_tids[n_out * K_SPLITS + k_split] = gate_tid
                with pl.at(
                    level=pl.Level.CORE_GROUP, name_hint="up_proj", deps=[cast_tids[k_split]]
                ) as up_tid:
                    up = pl.assemble(
                        up,
                        pl.matmul(
                            normed[:, k0 : k0 + K_SLICE], w_up[k0 : k0 + K_SLICE, n0 : n0 + TN]
                        ),
                        [0, n0],
                    )
                up_tids[n_out * K_SPLITS + k_split] = up_tid

        with pl.at(
            level=pl.Level.CORE_GROUP, name_hint="silu", deps=[gate_tids, up_tids]
        ) as silu_tid:
            act[:, :] = pl.cast(pl.mul(gate, up), target_type=pl.BF16)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj", deps=[silu_tid]) as down_tid:
            y[:, :] = pl.matmul(act, w_down)
    out_tid = norm(y, w_norm, y)
    return out_tid


# ruff: noqa
