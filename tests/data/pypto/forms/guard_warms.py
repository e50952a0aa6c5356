"""Hand-written in the form of pypto-facts "Cross-layer, prefix and guarded warms":
a warm issued only while a run-time scalar admits it, one `if` around the scope per
guard (nested, never `and`) (tests/test_pypto_compile.py)."""

import pypto.language as pl

ROWS = 256
COLS = 512


@pl.jit.inline
def prefetch_short_ctx(
    wo: pl.Tensor[[ROWS, COLS], pl.BF16],
    ctx: pl.Scalar[pl.INT32],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm wo into L2 once attend has finished, while ctx <= 2272.

    Call it right after the anchor stage returns its TaskId:

        prefetch_short_ctx(wo, ctx, attn_tid)
    """
    wo_flat = pl.reshape(wo, [ROWS * COLS])
    if ctx <= 2272:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_short_ctx", deps=[after]):
            warm_ctx = pl.prefetch.make_context()
            pl.prefetch.async_prefetch(wo_flat, warm_ctx)


@pl.jit.inline
def prefetch_mid_ctx(
    wo: pl.Tensor[[ROWS, COLS], pl.BF16],
    ctx: pl.Scalar[pl.INT32],
    batch: pl.Scalar[pl.INT32],
    after: pl.Scalar[pl.TASK_ID],
):
    """Warm wo into L2 once attend has finished, while ctx >= 512 and batch < 32.

    Call it right after the anchor stage returns its TaskId:

        prefetch_mid_ctx(wo, ctx, batch, attn_tid)
    """
    wo_flat = pl.reshape(wo, [ROWS * COLS])
    if ctx >= 512:  # noqa: SIM102 (PyPTO's code generation refuses `and`)
        if batch < 32:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_mid_ctx", deps=[after]):
                warm_ctx = pl.prefetch.make_context()
                pl.prefetch.async_prefetch(wo_flat, warm_ctx)
