"""Hand-written in the form of pypto-facts "Cross-layer, prefix and guarded warms":
a prefix of whole leading-dim groups, sliced with its type annotated then reshaped
flat, or reshaped flat then sliced (tests/test_pypto_compile.py)."""

import pypto.language as pl

GROUPS = 8
ROWS = 128
COLS = 512


@pl.jit.inline
def prefetch_head(
    w: pl.Tensor[[GROUPS, ROWS, COLS], pl.BF16],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm rows [0, 2) of w into L2 once q_proj has finished.

    Call it right after the anchor stage returns its TaskId:

        prefetch_head(w, q_tid)
    """
    w_rows: pl.Tensor[[2, ROWS, COLS], pl.BF16] = pl.slice(w, [2, ROWS, COLS], [0, 0, 0])
    w_flat = pl.reshape(w_rows, [2 * ROWS * COLS])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_head", deps=[after]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(w_flat, warm_ctx)


@pl.jit.inline
def prefetch_middle(
    w: pl.Tensor[[GROUPS, ROWS, COLS], pl.BF16],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm rows [2, 5) of w into L2 once q_proj has finished.

    Call it right after the anchor stage returns its TaskId:

        prefetch_middle(w, q_tid)
    """
    w_all = pl.reshape(w, [GROUPS * ROWS * COLS])
    w_flat = pl.slice(w_all, [3 * ROWS * COLS], [2 * ROWS * COLS])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_middle", deps=[after]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(w_flat, warm_ctx)
