"""Collectives: the inter-rank primitives a kernel calls, and the engine that runs each.

A kernel that calls one (a TP all-to-all, a reduce-scatter, an MoE dispatch) is a
collective, and `plancc extract` says so at its stage: `collective: ENGINE`, the engine
that moves its data (``plancc.tables.engines``), read from PyPTO's sources at e2d0f78
(docs/sources.md, "Collectives"): every primitive there runs on the vector core, its
bulk transfers (TPUT, TGET, remote loads and stores) through a UB staging tile on the
core's own MTE pipes, its signals (TNOTIFY) as scalar atomic stores: `mte`. None uses
SDMA: the SDMA workspace is only `pl.prefetch.make_context`'s. A primitive that did
would be ``engine="sdma"`` here, and its stage `collective: sdma`.

Names are matched as model code writes them, under the `pld` alias of
`pypto.language.distributed` (as the reader matches `pl.` for `pypto.language`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plancc.source.limits import Budget
from plancc.source.modules import Module
from plancc.source.values import dotted, walk_body
from plancc.tables.engines import ENGINES


@dataclass(frozen=True)
class Primitive:
    how: str  # what runs it, as PyPTO lowers it: a few words for a comment
    engine: str = "mte"  # the engine that moves its data: a key of ``tables.engines``


_TPUT = Primitive("TPUT through a UB tile, vector-core MTE")
_TGET = Primitive("TGET through a UB tile, vector-core MTE")
_STORE = Primitive("a tile to the peer, vector-core MTE")
_LOAD = Primitive("a tile from the peer, vector-core MTE")
_COMPOSITE = Primitive("TPUT or remote loads and stores, vector-core MTE")

PRIMITIVES: dict[str, Primitive] = {
    "pld.tensor.put": _TPUT,
    "pld.tile.put": _TPUT,
    "pld.tensor.get": _TGET,
    "pld.tile.get": _TGET,
    "pld.tensor.remote_store": _STORE,
    "pld.tile.remote_store": _STORE,
    "pld.remote_store": _STORE,
    "pld.tile.remote_load": _LOAD,
    "pld.remote_load": _LOAD,
    "pld.tensor.allreduce": _COMPOSITE,
    "pld.tensor.allgather": _COMPOSITE,
    "pld.tensor.reduce_scatter": _COMPOSITE,
    "pld.tensor.all_to_all": _COMPOSITE,
    "pld.tensor.all_to_all_v": _COMPOSITE,
    "pld.tensor.broadcast": _COMPOSITE,
    "pld.tensor.barrier": Primitive("notify and wait, no data"),
    "pld.system.notify": Primitive("TNOTIFY, a scalar store"),
    "pld.system.wait": Primitive("TWAIT, a poll"),
    "pld.system.defer_wait": Primitive("a scheduler counter, no data"),
}


def called(module: Module, nodes: Sequence[ast.AST], budget: Budget) -> tuple[str, ...]:
    """The inter-rank primitives a kernel body (``nodes``, of ``module``) calls, also
    through the functions of its module it calls by name (`tp_group_barrier`'s notify
    and wait), in the order met, each once."""
    found: dict[str, None] = {}
    seen: set[str] = set()
    todo: list[Sequence[ast.AST]] = [nodes]
    while todo:
        for node in todo.pop(0):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            helper = module.globals.get(name) if isinstance(node.func, ast.Name) else None
            if name in PRIMITIVES:
                found.setdefault(name)
            elif isinstance(helper, ast.FunctionDef) and name not in seen:
                seen.add(name)
                todo.append(list(walk_body(helper.body, budget)))
    return tuple(found)


def engine(names: Iterable[str]) -> str:
    """The engine of a collective calling the primitives ``names``: `sdma` when any of
    them moves its data by SDMA (PC105 names what the warm contends with), else `mte`."""
    return "sdma" if any(ENGINES[PRIMITIVES[n].engine].sdma for n in names) else "mte"


def comment(names: Sequence[str]) -> str:
    """The YAML comment `extract` writes above a collective's stage: each primitive with
    what runs it, the evidence for its `collective` key."""
    return "# collective: " + ", ".join(f"{n} ({PRIMITIVES[n].how})" for n in names)


__all__ = ["PRIMITIVES", "Primitive", "called", "comment", "engine"]
