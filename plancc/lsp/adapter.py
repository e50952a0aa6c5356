"""Everything the language server takes from plancc's internals, in one place.

The server features import plancc only through this module, so that a rename
or a move inside the compiler is carried over here once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path

from plancc import ir
from plancc.api import PlanResult, diagnose_plan
from plancc.check import Allowed, catalog, lookup
from plancc.codes import BAD_SILENCE, Code, Severity
from plancc.diagnostics import COLUMN, Diagnostic, Pos, Where, where_of
from plancc.dtypes import DTYPES
from plancc.inputs import PlanInput
from plancc.load import Document, PathT, read_capped
from plancc.names import PLATFORMS, identifier_problem
from plancc.platforms import PLATFORMS as PLATFORM_TABLE
from plancc.source.cache import deadline as reading_deadline
from plancc.text import fmt_bytes

__all__ = [
    "COLUMN",
    "Allowed",
    "Code",
    "Diagnostic",
    "Document",
    "PathT",
    "PlanResult",
    "Pos",
    "Severity",
    "Where",
    "check_text",
    "code_doc",
    "consumer_order",
    "dtype_names",
    "fmt_bytes",
    "identifier_problem",
    "ir",
    "l2_bytes",
    "landing",
    "platform_names",
    "silenceable",
    "where_of",
]


def check_text(
    path: Path,
    text: str,
    unsaved: Mapping[Path, str],
    *,
    source_root: str | None = None,
    seconds: float | None = None,
) -> PlanResult:
    """The front end of `plancc validate` on an editor buffer: ``text`` checked as the
    file ``path`` (its `config` is read relative to it); ``unsaved`` holds the text of
    other open buffers, so an edited config is seen before it is saved. ``source_root``:
    as `--source-root`; ``seconds``: the bound of its model code's reading."""
    source = PlanInput(str(path), path)
    with reading_deadline(seconds):
        return diagnose_plan(
            source, text.encode("utf-8"), _reader(unsaved), source_root=source_root
        )


def _reader(unsaved: Mapping[Path, str]) -> Callable[[Path], bytes]:
    def read(path: Path) -> bytes:
        try:
            text = unsaved.get(path.resolve())
        except (OSError, RuntimeError):  # a symlink loop: reading the file reports it
            text = None
        return text.encode("utf-8") if text is not None else read_capped(path)

    return read


def code_doc(code: str) -> Code | None:
    return lookup(code.upper())


def silenceable() -> list[Code]:
    """The codes an `allow` or `lint.ignore` can silence: every warning but PC004, which
    reports a bad silence and is never silenced itself (``check``)."""
    return [c for c in catalog() if c.severity is Severity.WARNING and c is not BAD_SILENCE]


def dtype_names() -> list[str]:
    return list(DTYPES)


def platform_names() -> list[str]:
    return list(PLATFORMS)


def l2_bytes(plan: ir.Plan) -> int | None:
    return plan.platform.l2_bytes if plan.platform is not None else None


def platform_note(name: str) -> str | None:
    p = PLATFORM_TABLE.get(name)
    return p.note if p is not None else None


def _consumers(layer: ir.Layer, warm: ir.Warm) -> dict[str, ir.Stage]:
    """Each static warmed tensor's consumer: the first stage after the anchor reading it."""
    out: dict[str, ir.Stage] = {}
    if warm.anchor is None:
        return out
    for e in warm.entries:
        if e.tensor.static:
            for stage in layer.stages[warm.anchor + 1 :]:
                if e.tensor.name in stage.reads:
                    out[e.tensor.name] = stage
                    break
    return out


def consumer_order(layer: ir.Layer, warm: ir.Warm) -> list[int]:
    """The warm's entry indices in consumer order (PC102's fix): a stable sort by
    consumer, entries without a consumer keep their place after those with one."""
    at = {name: stage.index for name, stage in _consumers(layer, warm).items()}
    far = len(layer.stages)
    return sorted(range(len(warm.entries)), key=lambda i: at.get(warm.entries[i].tensor.name, far))


def landing(plan: ir.Plan, layer: ir.Layer, warm: ir.Warm) -> str:
    """The estimated landing of a warm, by PC107's arithmetic (docs/plan-format.md)."""
    consumers = _consumers(layer, warm)
    if warm.anchor is None or not consumers:
        return "no consumer after the anchor"
    first = min(consumers.values(), key=lambda s: s.index)
    between = layer.stages[warm.anchor + 1 : first.index]
    rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
    if not between:
        return f"first consumer '{first.name}' runs right after the anchor"
    durations = [s.duration_us for s in between]
    if rate is None or any(d is None for d in durations):
        return f"first consumer '{first.name}'; add `duration_us` to the stages before it"
    window = sum((Fraction(repr(d)) for d in durations if d is not None), Fraction(0))
    landed = window * rate / 1_000_000
    share = min(Fraction(1), landed / warm.bytes) if warm.bytes else Fraction(1)
    return (
        f"{math.floor(share * 1000) / 10:.1f} % of {warm.bytes:,} B in the {float(window):g} µs "
        f"before '{first.name}' at {rate / 1e9:g} GB/s"
    )
