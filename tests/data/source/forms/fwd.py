"""A forward in DeepSeek V4 Flash's form: each weight kind one parameter stacked over
all layers, each layer given its annotated slices, and a warm of the next layer's q/kv
slices issued between one layer's MoE and the next layer's attention, under the `if`
that spares the last layer (pypto-facts.md, "Cross-layer, prefix and guarded warms")."""

import pypto.language as pl

from tiny_forms_warms import prefetch_next_qkv

T = 8
D = 128
Q_LORA = 64
KV = 32
LAYERS = 4


@pl.jit.inline
def attention(
    x: pl.Tensor[[T, D], pl.BF16],
    wq_a: pl.Tensor[[D, Q_LORA], pl.BF16],
    wkv: pl.Tensor[[D, KV], pl.BF16],
    y: pl.Out[pl.Tensor[[T, Q_LORA], pl.BF16]],
):
    normed = pl.create_tensor([T, D], dtype=pl.BF16)
    kv = pl.create_tensor([T, KV], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_norm"):
        normed[:, :] = pl.mul(x, 0.5)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qr_proj"):
        y[:, :] = pl.matmul(normed, wq_a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="kv_proj"):
        kv[:, :] = pl.matmul(normed, wkv)


@pl.jit.inline
def moe(x: pl.Tensor[[T, D], pl.BF16]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="moe_combine") as moe_tid:
        x[:, :] = pl.mul(x, 2.0)
    return moe_tid


@pl.jit
def decode_fwd(
    x: pl.Tensor[[T, D], pl.BF16],
    wq_a: pl.Tensor[[LAYERS * D, Q_LORA], pl.BF16],
    wkv: pl.Tensor[[LAYERS * D, KV], pl.BF16],
    y: pl.Out[pl.Tensor[[T, Q_LORA], pl.BF16]],
):
    for layer in pl.range(LAYERS):
        wq_a_l: pl.Tensor[[D, Q_LORA], pl.BF16] = pl.slice(wq_a, [D, Q_LORA], [layer * D, 0])
        wkv_l: pl.Tensor[[D, KV], pl.BF16] = pl.slice(wkv, [D, KV], [layer * D, 0])
        attention(x, wq_a_l, wkv_l, y)
        moe_tid = moe(x)
        if layer < LAYERS - 1:
            wq_a_next: pl.Tensor[[D, Q_LORA], pl.BF16] = pl.slice(
                wq_a, [D, Q_LORA], [(layer + 1) * D, 0]
            )
            wkv_next: pl.Tensor[[D, KV], pl.BF16] = pl.slice(wkv, [D, KV], [(layer + 1) * D, 0])
            prefetch_next_qkv(wq_a_next, wkv_next, moe_tid)


# ruff: noqa
