"""Hand-written in the form of pypto-facts "Cross-layer, prefix and guarded warms":
per-layer slices (DeepSeek V4 decode_fwd's form), a warm of the next layer's slices
issued after a TaskId of this layer (tests/test_pypto_compile.py)."""

import pypto.language as pl

D = 512
Q_LORA = 256
KV = 128


@pl.jit.inline
def prefetch_next_q(
    wq_a: pl.Tensor[[D, Q_LORA], pl.BF16],
    wkv: pl.Tensor[[D, KV], pl.BF16],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm the next layer's wq_a, wkv into L2 once moe has finished.

    Call it in every layer but the last, right after the anchor stage returns its
    TaskId, with the next layer's tensors (wq_a_next, wkv_next), in layer layer_idx of
    NUM_LAYERS: the last layer has no next one to warm:

        if layer_idx < NUM_LAYERS - 1:
            prefetch_next_q(wq_a_next, wkv_next, moe_tid)
    """
    wq_a_flat = pl.reshape(wq_a, [D * Q_LORA])
    wkv_flat = pl.reshape(wkv, [D * KV])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_next_q", deps=[after]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wq_a_flat, warm_ctx)
        pl.prefetch.async_prefetch(wkv_flat, warm_ctx)
