"""A layer function's parameters: `pl.Tensor[[dims], pl.DTYPE]` annotations (also inside
`pl.Out[...]`, `pl.InOut[...]`), their dims evaluated from the module's constants.

A bare `pl.Tensor` parameter's shape is written where its callers annotate it: a
layer function may take its weights as bare `pl.Tensor` (Qwen3-14B's
`_decode_layer`), the shapes annotated on an entry that calls it, directly or through
other calls (the host entry `qwen3_decode_host` through `decode_fwd`). The callers are
looked for in the modules of the layer's own directory, by name, and followed up
through parameters passed on unchanged, up to ``MAX_HOPS`` calls; the first annotated
parameter found gives the shape. Nothing is run; a module that does not name the
function is not parsed.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace

from plancc.source.modules import Module, SourceError, load_module, source_bytes
from plancc.source.reading import Param
from plancc.source.resolver import Resolver
from plancc.source.values import Dynamic, dotted, int_or_none

MAX_HOPS = 4
MAX_FILES = 64
_WRAPPERS = {"pl.Out", "pl.InOut", "pl.In"}


def tensor_annotation(ann: ast.expr | None) -> ast.expr | None:
    """`pl.Tensor` or `pl.Tensor[...]` inside any `pl.Out[...]`-like wrapper, else None."""
    while isinstance(ann, ast.Subscript) and dotted(ann.value) in _WRAPPERS:
        ann = ann.slice
    if isinstance(ann, ast.Subscript) and dotted(ann.value) == "pl.Tensor":
        return ann
    return ann if ann is not None and dotted(ann) == "pl.Tensor" else None


def _shaped(arg: ast.arg) -> bool:
    return isinstance(tensor_annotation(arg.annotation), ast.Subscript)


def _args(fn: ast.FunctionDef) -> list[ast.arg]:
    return [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]


def _modules(resolver: Resolver, directory: str, name: str) -> list[Module]:
    """The modules of ``directory`` whose text names ``name``: read as every module is
    (regular files, never waited on, capped; none outside the root)."""
    out: list[Module] = []
    try:
        files = sorted(f for f in os.listdir(directory) if f.endswith(".py"))[:MAX_FILES]
    except OSError:
        return out
    needle = name.encode()
    for f in files:
        path = os.path.join(directory, f)
        try:
            if not resolver.inside(path) or needle not in source_bytes(path):
                continue
            out.append(load_module(path))
        except SourceError:
            continue
    return out


def _calls(resolver: Resolver, mod: Module, name: str) -> list[tuple[ast.FunctionDef, ast.Call]]:
    """Each call of ``name`` in a function of ``mod``, with the innermost function it is
    in: one walk of the module, paid from the reading's budget."""
    out: list[tuple[ast.FunctionDef, ast.Call]] = []
    todo: list[tuple[ast.AST, ast.FunctionDef | None]] = [(mod.tree, None)]
    while todo:
        node, fn = todo.pop()
        resolver.budget.spend()
        if isinstance(node, ast.FunctionDef):
            fn = node
        elif isinstance(node, ast.Call) and fn is not None:
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called == name:
                out.append((fn, node))
        todo += reversed([(child, fn) for child in ast.iter_child_nodes(node)])  # in order
    return out


def caller_shapes(
    resolver: Resolver, mod: Module, fn: ast.FunctionDef, wanted: set[str]
) -> dict[str, tuple[Module, ast.arg]]:
    """For each parameter of ``fn`` in ``wanted``, the annotated parameter of a caller
    that is passed to it (through unchanged parameters), with its module."""
    found: dict[str, tuple[Module, ast.arg]] = {}
    # (function name, its parameters, the layer parameter each stands for)
    todo: list[tuple[str, list[ast.arg], dict[str, str]]] = [
        (fn.name, _args(fn), {p: p for p in wanted})
    ]
    seen: set[str] = set()
    directory = os.path.dirname(mod.path)
    for _ in range(MAX_HOPS):
        later: list[tuple[str, list[ast.arg], dict[str, str]]] = []
        for name, params, stands in todo:
            for caller_mod in _modules(resolver, directory, name):
                for caller, call in _calls(resolver, caller_mod, name):
                    if caller is fn or f"{caller_mod.path}:{caller.name}" in seen:
                        continue
                    onward = _follow(
                        caller_mod, caller, call=call, params=params, stands=stands, found=found
                    )
                    if onward:
                        seen.add(f"{caller_mod.path}:{caller.name}")
                        later.append((caller.name, _args(caller), onward))
        todo = later
        if not todo or wanted <= found.keys():
            break
    return found


def _follow(
    mod: Module,
    caller: ast.FunctionDef,
    *,
    call: ast.Call,
    params: list[ast.arg],
    stands: dict[str, str],
    found: dict[str, tuple[Module, ast.arg]],
) -> dict[str, str]:
    """What one call gives: the shapes it annotates (into ``found``), and the caller's
    bare parameters passed on, each to the layer parameter it stands for."""
    passed = _passed(params, call)
    own = {a.arg: a for a in _args(caller)}
    onward: dict[str, str] = {}
    for param, layer_param in stands.items():
        arg = own.get(passed.get(param, ""))
        if arg is None or layer_param in found:
            continue
        if _shaped(arg):
            found[layer_param] = (mod, arg)
        elif tensor_annotation(arg.annotation) is not None:
            onward[arg.arg] = layer_param
    return onward


def _passed(params: list[ast.arg], call: ast.Call) -> dict[str, str]:
    """Parameter -> the name of the variable the call passes to it (plain names only)."""
    out: dict[str, str] = {}
    for p, a in zip(params, call.args, strict=False):
        if isinstance(a, ast.Name):
            out[p.arg] = a.id
    for kw in call.keywords:
        if kw.arg and isinstance(kw.value, ast.Name):
            out[kw.arg] = kw.value.id
    return out


def read_params(resolver: Resolver, mod: Module, fn: ast.FunctionDef) -> dict[str, Param]:
    """``fn``'s parameters; a bare `pl.Tensor`'s shape from its callers where one has it."""
    out: dict[str, Param] = {}
    for arg in _args(fn):
        out[arg.arg] = read_param(resolver, mod, arg)
    bare = {p.name for p in out.values() if p.bare}
    if bare:
        for name, (caller, arg) in caller_shapes(resolver, mod, fn, bare).items():
            shaped = read_param(resolver, caller, arg)
            out[name] = replace(
                shaped,
                name=name,
                line=out[name].line,
                bare=True,
                module=caller,
                origin=f"{resolver.show(caller.path)}:{arg.lineno}",
            )
    return out


def read_param(resolver: Resolver, mod: Module, arg: ast.arg) -> Param:
    ann = tensor_annotation(arg.annotation)
    if ann is None:
        return Param(arg.arg, arg.lineno, False)
    if not isinstance(ann, ast.Subscript):  # a bare `pl.Tensor`: its callers say
        return Param(arg.arg, arg.lineno, True, bare=True)
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    dims: tuple[ast.expr, ...] = ()
    dtype = None
    if parts and isinstance(parts[0], (ast.List, ast.Tuple)):
        dims = tuple(parts[0].elts)
    if len(parts) > 1:
        d = dotted(parts[1])
        if d.startswith("pl."):
            dtype = d[3:].lower()
    consts = [resolver.const(mod, d) for d in dims]
    values = tuple(int_or_none(v) for v in consts)
    dynamic = tuple(isinstance(v, Dynamic) for v in consts)
    return Param(arg.arg, arg.lineno, True, dims, values, dtype, dynamic)
