"""Hand-written in the form of pypto-facts "Cross-layer, prefix and guarded warms":
the next layer's slab of a stacked weight, called under `if` so the last layer
addresses no slab past the stack (tests/test_pypto_compile.py)."""

import pypto.language as pl

LAYERS = 4
ROWS = 256
COLS = 512


@pl.jit.inline
def prefetch_next_w(
    w: pl.Tensor[[LAYERS * ROWS, COLS], pl.BF16],
    layer_idx: pl.Scalar[pl.INT32],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm the next layer's w into L2 once moe has finished.

    Call it in layer layer_idx right after the anchor stage returns its TaskId, with
    the next layer's index; the last layer issues none:

        if layer_idx < LAYERS - 1:
            prefetch_next_w(w, layer_idx + 1, moe_tid)
    """
    w_slab: pl.Tensor[[ROWS, COLS], pl.BF16] = pl.slice(w, [ROWS, COLS], [layer_idx * ROWS, 0])
    w_flat = pl.reshape(w_slab, [ROWS * COLS])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_next_w", deps=[after]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(w_flat, warm_ctx)
