"""A decode step written as a `@pl.program` class that a function builds."""

import pypto.language as pl

B = 4
H = 128


def build_step_program():
    @pl.program
    class Step:
        @pl.function(type=pl.FunctionType.Opaque)
        def step(
            self,
            x: pl.Tensor[[B, H], pl.BF16],
            w: pl.Tensor[[H, H], pl.BF16],
            y: pl.Out[pl.Tensor[[B, H], pl.BF16]],
        ):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="step_mm") as mm_tid:
                y[:, :] = pl.matmul(x, w, out_dtype=pl.BF16)
            return y

    return Step


# ruff: noqa
