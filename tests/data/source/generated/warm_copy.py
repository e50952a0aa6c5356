"""A generated warm function copied into the model's own code, renamed: the form of
`plancc build`'s module (templates/module.py.j2)."""

import pypto.language as pl

D = 128
LAYERS = 4


@pl.jit.inline
def prefetch_wo_copy(
    wo: pl.Tensor[[LAYERS * D, D], pl.BF16],
    layer_idx: pl.Scalar[pl.INT32],
    q_proj_tid: pl.Scalar[pl.TASK_ID],
    k_proj_tid: pl.Scalar[pl.TASK_ID],
    v_proj_tid: pl.Scalar[pl.TASK_ID],
):
    """Warm wo into L2 once q_proj, k_proj and v_proj have finished."""
    wo_slab: pl.Tensor[[D, D], pl.BF16] = pl.slice(
        wo,
        [D, D],
        [layer_idx * D, 0],
    )
    wo_flat = pl.reshape(wo_slab, [D * D])
    with pl.at(
        level=pl.Level.CORE_GROUP,
        name_hint="prefetch_wo",
        deps=[q_proj_tid, k_proj_tid, v_proj_tid],
    ):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wo_flat, warm_ctx)


# ruff: noqa
