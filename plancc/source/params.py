"""A layer function's parameters: `pl.Tensor[[dims], pl.DTYPE]` annotations (also inside
`pl.Out[...]`, `pl.InOut[...]`), their dims evaluated from the module's constants.

A bare `pl.Tensor` parameter's shape is written where its callers annotate it: a
layer function may take its weights as bare `pl.Tensor` (Qwen3-14B's
`_decode_layer`), the shapes annotated on an entry that calls it, directly or through
other calls (the host entry `qwen3_decode_host` through `decode_fwd`). The callers are
looked for in the modules of the layer's own directory, and a call is one of the
function only when its name resolves to it as Python would resolve it there (the
module's own function of that name, or the one its imports bind: `from x import f`,
`import x` and `x.f`): a sibling module's function of the same name is another
function. A call whose name resolves to nothing readable is a PC208 note, never taken
for a caller. Callers are followed up through parameters passed on unchanged, up to
``MAX_HOPS`` calls; the first annotated parameter found gives the shape. Nothing is
run; a module that does not name the function is not parsed.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace

from plancc.source.modules import Module, SourceError, load_module, source_bytes
from plancc.source.reading import Param
from plancc.source.resolver import Resolver
from plancc.source.values import Dynamic, FuncV, dotted, int_or_none, walk
from plancc.text import clip

MAX_HOPS = 4
MAX_FILES = 64
_WRAPPERS = {"pl.Out", "pl.InOut", "pl.In"}

Target = tuple[str, int, str]  # a function: its module's real path, its line, its name


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


def modules_naming(resolver: Resolver, directory: str, name: str) -> list[Module]:
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


def calls_of(resolver: Resolver, mod: Module, name: str) -> list[tuple[ast.FunctionDef, ast.Call]]:
    """Each call of ``name`` (`name(...)`, `x.name(...)`) in a function of ``mod``, with
    the innermost function it is in: one walk of the module, paid from the reading's
    budget."""
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


def _identity(mod: Module, fn: ast.FunctionDef) -> tuple[str, int, str]:
    return (os.path.realpath(mod.path), fn.lineno, fn.name)


def _local(resolver: Resolver, caller: ast.FunctionDef, name: str) -> bool:
    """Whether ``name`` is a local of ``caller`` (a parameter, or bound in its body):
    Python looks it up there, not among the module's names."""
    if name in {a.arg for a in _args(caller)}:
        return True
    for node in walk(caller, resolver.budget):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound = node.id
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not caller:
            bound = node.name
        else:
            continue
        if bound == name:
            return True
    return False


def _callee(
    resolver: Resolver, mod: Module, caller: ast.FunctionDef, call: ast.Call
) -> Target | None:
    """The function ``call`` in ``caller`` (of ``mod``) calls, its name looked up as Python
    would; None when it resolves to no function the reader can read."""
    head = call.func
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or _local(resolver, caller, head.id):
        return None
    callee = resolver.dotted_value(mod, call.func)
    return _identity(callee.module, callee.node) if isinstance(callee, FuncV) else None


# A function, its parameters, and the layer parameter each of those stands for.
Hop = tuple[Target, list[ast.arg], dict[str, str]]
Unread = list[tuple[Module, ast.FunctionDef, ast.Call]]


def caller_shapes(
    resolver: Resolver, mod: Module, fn: ast.FunctionDef, wanted: set[str]
) -> dict[str, tuple[Module, ast.arg]]:
    """For each parameter of ``fn`` in ``wanted``, the annotated parameter of a caller
    that is passed to it (through unchanged parameters), with its module. When some are
    left without one, each call of a name the search met that resolves to nothing
    readable is noted (PC208): it might have been a caller, and is not guessed one."""
    found: dict[str, tuple[Module, ast.arg]] = {}
    todo: list[Hop] = [(_identity(mod, fn), _args(fn), {p: p for p in wanted})]
    seen: set[Target] = {_identity(mod, fn)}
    unread: Unread = []
    directory = os.path.dirname(mod.path)
    for _ in range(MAX_HOPS):
        later: list[Hop] = []
        for hop in todo:
            later += _hop(resolver, directory, hop, seen=seen, found=found, unread=unread)
        todo = later
        if not todo or wanted <= found.keys():
            break
    if not wanted <= found.keys():
        for caller_mod, caller, call in unread:
            resolver.note(
                caller_mod,
                call.lineno,
                f"call of '{clip(ast.unparse(call.func))}' in {caller.name}() is resolved to "
                "no function the reader can read",
                "the shapes it may pass are not taken",
            )
    return found


def _hop(
    resolver: Resolver,
    directory: str,
    hop: Hop,
    *,
    seen: set[Target],
    found: dict[str, tuple[Module, ast.arg]],
    unread: Unread,
) -> list[Hop]:
    """The calls of one function in ``directory``: the shapes they annotate (into
    ``found``), and their callers to follow next."""
    target, params, stands = hop
    later: list[Hop] = []
    for caller_mod in modules_naming(resolver, directory, target[2]):
        for caller, call in calls_of(resolver, caller_mod, target[2]):
            me = _identity(caller_mod, caller)
            if me in seen:
                continue
            callee = _callee(resolver, caller_mod, caller, call)
            if callee is None:
                unread.append((caller_mod, caller, call))
            if callee != target:
                continue
            onward = _follow(
                caller_mod, caller, call=call, params=params, stands=stands, found=found
            )
            if onward:
                seen.add(me)
                later.append((me, _args(caller), onward))
    return later


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
