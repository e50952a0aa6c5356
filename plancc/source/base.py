"""What the source checks share: where sources are, one layer kind's reading, the
checker's positions and reports, the source's order of kernels."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from plancc import ir
from plancc.codes import Code
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.model import Plan as ModelPlan
from plancc.source.reading import Kernel, Reading
from plancc.validate import Validated


def source_root(plan_file: str, declared: str | None, override: str | None) -> str:
    """Where the `source` paths start: ``--source-root``, else `source_root` relative to the
    plan's directory, else that directory."""
    if override is not None:
        return os.path.abspath(override)
    base = os.path.dirname(os.path.abspath(plan_file)) if plan_file != "-" else os.getcwd()
    return os.path.normpath(os.path.join(base, declared or "."))


def split_source(source: str) -> tuple[str, str]:
    path, _, function = source.rpartition(":")
    return path, function


def ancestors(reading: Reading) -> list[int]:
    """Bit j of entry i is set when kernel j runs before kernel i in the source (a path of
    `deps=` and last-writer edges leads from j to i)."""
    anc: list[int] = []
    for k in reading.kernels:
        bits = 0
        for d in k.deps | k.after:
            if d < k.index:
                bits |= anc[d] | (1 << d)
        anc.append(bits)
    return anc


@dataclass
class LayerReading:
    kind: str
    layer: ir.Layer
    reading: Reading
    param_of: dict[str, str]  # plan tensor -> source parameter
    tensor_of: dict[str, str]  # source parameter -> plan tensor


class Checker:
    def __init__(self, v: Validated, plan: ir.Plan, override: str | None) -> None:
        assert v.plan is not None
        self.v = v
        self.model: ModelPlan = v.plan
        self.plan = plan
        self.override = override
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
    ) -> None:
        """``warm``: the plan warm it is about, whose `allow` may silence it."""
        d = diag(self.plan.file, pos, code, message, hint)
        self.out.append((d, () if warm is None else (warm,)))

    def stage_at(self, it: LayerReading, s: ir.Stage, key: str | None = None) -> Pos:
        path: tuple[str | int, ...] = ("layers", it.kind, "stages", s.index)
        return self.at(*path, key) if key else self.at(*path)

    def warms_at(self, it: LayerReading) -> Pos:
        if self.model.layers[it.kind].warms:
            return self.v.key_at("layers", it.kind, "warms")
        return self.at("layers", it.kind, "source")


def run_names(run: list[Kernel]) -> str:
    if len(run) == 1:
        return f"kernel {run[0].name}"
    if len(run) == 2:
        return f"kernels {run[0].name}, {run[1].name}"
    return f"kernels {run[0].name} … {run[-1].name}"


def closest(name: str, names: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, list(names), n=1)
    return f"did you mean '{found[0]}'?" if found else None
