"""Where the source checks put what they find: one layer kind's reading beside the plan,
the plan's positions, and the findings with the warm whose `allow` may silence each."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from plancc import ir
from plancc.codes import Code
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.fixes import Fix
from plancc.schema.plan import Plan as ModelPlan
from plancc.source.reading import Reading
from plancc.source.warm_forms import OutsideCall
from plancc.validate import Validated


@dataclass
class LayerReading:
    kind: str
    layer: ir.Layer
    reading: Reading
    param_of: dict[str, str]  # plan tensor -> source parameter
    tensor_of: dict[str, str]  # source parameter -> plan tensor
    plan_params: tuple[ir.Param, ...] = ()  # the plan's params: its guards' variables
    forward_layers: int | None = None  # the forward's layers: a cross-layer warm's test
    # A cross-layer warm's calls outside the layer function (warm_forms.outside_calls),
    # for each such warm the reading does not issue.
    outside: dict[str, list[OutsideCall]] = field(default_factory=dict)


class Findings:
    """The findings of one plan's source checks, at the plan's positions."""

    def __init__(self, v: Validated, plan: ir.Plan) -> None:
        assert v.plan is not None
        self.v = v
        self.model: ModelPlan = v.plan
        self.plan = plan
        self.out: list[tuple[Diagnostic, tuple[ir.Warm, ...]]] = []

    def at(self, *path: str | int) -> Pos:
        return self.v.at(*path)

    def report(
        self,
        pos: Pos,
        code: Code,
        message: str,
        hint: str | None = None,
        warm: ir.Warm | None = None,
        *,
        fix: Fix | None = None,
    ) -> None:
        """``warm``: the plan warm it is about, whose `allow` may silence it."""
        d = diag(self.plan.file, pos, code, message, hint, fix=fix)
        self.out.append((d, () if warm is None else (warm,)))

    def stage_at(self, it: LayerReading, s: ir.Stage, key: str | None = None) -> Pos:
        path: tuple[str | int, ...] = ("layers", it.kind, "stages", s.index)
        return self.at(*path, key) if key else self.at(*path)

    def warms_at(self, it: LayerReading) -> Pos:
        if self.model.layers[it.kind].warms:
            return self.v.key_at("layers", it.kind, "warms")
        return self.at("layers", it.kind, "source")


def closest(name: str, names: Iterable[str]) -> str | None:
    found = nearest(name, names)
    return f"did you mean '{found}'?" if found else None


def nearest(name: str, names: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, list(names), n=1)
    return found[0] if found else None
