"""Go to definition, find references and rename.

Dims, tensors, layer kinds, stages (within their layer kind) and warms are
defined in the plan; a config key's definition is its key in the config file.
Rename changes a tensor, dim, stage or warm everywhere the plan spells it,
expressions included; a new name must be a usable identifier (PC013's test).
"""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from plancc.lsp import adapter as pc
from plancc.lsp.index import Occurrence, Span, Text
from plancc.lsp.state import PlanState

RENAMEABLE = ("tensor", "dim", "stage", "warm")


def config_path(state: PlanState) -> Path | None:
    """The real path of the plan's `config` file, relative to the plan, when it names one."""
    doc = state.result.doc
    config = doc.data.get("config") if doc is not None and isinstance(doc.data, dict) else None
    if not isinstance(config, str) or not config or "\0" in config:
        return None
    return real_path(state.path.parent / config)


def real_path(path: Path) -> Path | None:
    """``path`` with symlinks and ``..`` resolved; None for one that cannot be (a loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _at(state: PlanState, position: lsp.Position) -> Occurrence | None:
    return state.index.at(state.point(position)) if state.index is not None else None


def definition(
    state: PlanState, position: lsp.Position, unsaved: dict[Path, str]
) -> list[lsp.Location]:
    occ = _at(state, position)
    if occ is None or state.index is None:
        return []
    if occ.kind == "config":
        where = _config_key(state, occ.name, unsaved)
        return [where] if where is not None else []
    found = state.index.definition(occ)
    return [lsp.Location(state.uri, state.range(found.span))] if found is not None else []


def _config_key(state: PlanState, name: str, unsaved: dict[Path, str]) -> lsp.Location | None:
    path = config_path(state)
    if path is None:
        return None
    try:
        source = unsaved.get(path) or pc.read_config_file(path).decode("utf-8")  # capped
    except (OSError, ValueError):
        return None
    m = re.search(r'"' + re.escape(name) + r'"\s*:', source)
    if m is None:
        return None
    text = Text(source)
    start, end = text.point(m.start()), text.point(m.start() + len(name) + 2)
    # Code points: a config key is ASCII in practice, where every unit counts one.
    rng = lsp.Range(lsp.Position(*start), lsp.Position(*end))
    return lsp.Location(path.as_uri(), rng)


def references(state: PlanState, position: lsp.Position, declaration: bool) -> list[lsp.Location]:
    occ = _at(state, position)
    if occ is None or state.index is None:
        return []
    return [
        lsp.Location(state.uri, state.range(o.span))
        for o in state.index.same(occ)
        if declaration or not o.definition
    ]


def prepare_rename(state: PlanState, position: lsp.Position) -> lsp.Range | None:
    occ = _at(state, position)
    if occ is None or occ.kind not in RENAMEABLE:
        return None
    return state.range(occ.span)


def rename(state: PlanState, position: lsp.Position, new_name: str) -> lsp.WorkspaceEdit | None:
    occ = _at(state, position)
    if occ is None or occ.kind not in RENAMEABLE or state.index is None:
        return None
    reserved = occ.kind in ("tensor", "dim", "warm")
    problem = pc.identifier_problem(new_name, reserved=reserved)
    taken = new_name != occ.name and new_name in state.index.names(occ.kind, occ.scope)
    if problem is None and taken:  # two definitions would become one name: PC011
        problem = f"'{new_name}' is another {occ.kind}" + (f" of {occ.scope}" if occ.scope else "")
    if problem is not None:  # pygls answers with this error: its code (-32602) and message
        raise JsonRpcInvalidParams(f"cannot rename {occ.kind} '{occ.name}': {problem}")
    edits = [lsp.TextEdit(state.range(o.span), new_name) for o in _spelled(state, occ)]
    return lsp.WorkspaceEdit(changes={state.uri: edits})


def _spelled(state: PlanState, occ: Occurrence) -> list[Occurrence]:
    """Every occurrence of the name; for a dim, also where an expression spells it."""
    assert state.index is not None
    return [o for o in state.index.same(occ) if _is_name(state, o.span, occ.name)]


def _is_name(state: PlanState, span: Span, name: str) -> bool:
    return state.text.slice(span) == name
