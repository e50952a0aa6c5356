"""Everything the language server takes from plancc's internals, in one place.

The server features import plancc only through this module, so that a rename
or a move inside the compiler is carried over here once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from plancc import ir
from plancc.api import PlanResult, diagnose_plan
from plancc.check import Allowed, catalog, lookup
from plancc.codes import BAD_SILENCE, Code, Severity
from plancc.diagnostics import COLUMN, Diagnostic, Pos, Where, where_of
from plancc.edits.apply import Fixed, fix_loop
from plancc.edits.interpret import FixError, TextEdit, diff_edits, text_edits
from plancc.facts import Facts
from plancc.facts.analysis import Analysis, LayerFacts, WarmFacts
from plancc.facts.crossing import successors
from plancc.fixes import Append, Edit, Fix, Remove, Reorder, Replace, node_at
from plancc.fixes import Path as FixPath
from plancc.load import Document, PathT, read_config_file
from plancc.load.inputs import PlanInput
from plancc.load.lines import split as split_lines
from plancc.load.lines import starts as line_starts
from plancc.source.cache import deadline as reading_deadline
from plancc.source.modules import yielding
from plancc.source.root import NO_SOURCE
from plancc.tables.dtypes import DTYPES
from plancc.tables.engines import ENGINES
from plancc.tables.names import PLATFORMS, identifier_problem
from plancc.tables.platforms import PLATFORMS as PLATFORM_TABLE
from plancc.text import fmt_bytes, fmt_percent, fmt_size

__all__ = [
    "COLUMN",
    "NO_SOURCE",
    "Allowed",
    "Analysis",
    "Append",
    "Code",
    "Diagnostic",
    "Document",
    "Edit",
    "Facts",
    "Fix",
    "FixError",
    "FixPath",
    "Fixed",
    "LayerFacts",
    "PathT",
    "PlanResult",
    "Pos",
    "Remove",
    "Reorder",
    "Replace",
    "Severity",
    "TextEdit",
    "WarmFacts",
    "Where",
    "alive_next",
    "check_text",
    "code_doc",
    "diff_edits",
    "dtype_names",
    "fix_loop",
    "fmt_bytes",
    "fmt_percent",
    "fmt_size",
    "identifier_problem",
    "ir",
    "l2_bytes",
    "line_starts",
    "node_at",
    "platform_names",
    "read_config_file",
    "silenceable",
    "split_lines",
    "successors",
    "text_edits",
    "where_of",
    "yielding",
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
        return text.encode("utf-8") if text is not None else read_config_file(path)

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


def engines() -> list[tuple[str, str]]:
    """A `collective`'s values, each with what it means."""
    return [(e.name, e.means) for e in ENGINES.values()]


def l2_bytes(plan: ir.Plan) -> int | None:
    return plan.platform.l2_bytes if plan.platform is not None else None


def platform_note(name: str) -> str | None:
    p = PLATFORM_TABLE.get(name)
    return p.note if p is not None else None


def alive_next(facts: Facts, warm: ir.Warm) -> str:
    """A cross-layer warm's stages alive in the next layer, per next layer kind: where it
    holds L2 after the boundary (its crossings, as the rules judged them)."""
    out = []
    for p in facts.placed:
        c = p.crossing
        if c is None or c.original.name != warm.name:
            continue
        sched = c.joined.schedule
        alive = [
            c.stage(i).name
            for i in sched.order()
            if i >= c.offset and c.warm.alive_at(sched.start[i])
        ]
        out.append(f"{', '.join(alive) or 'no stage'} of `{c.target.name}`")
    return "; ".join(out)
