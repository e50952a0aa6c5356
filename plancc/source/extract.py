"""`plancc extract PATH:FUNCTION…`: the plan skeleton of model code, in `plancc fmt`'s layout.

Each source is one layer kind: its tensors are the function's annotated tensor
parameters (dims from the module constants they use; a constant bound to the
model config, `D = M.hidden_size`, is written as the config key when `--config`
names a JSON file that has it), its stages are its kernels in program order
(`kernel`, the `task` the layer function binds for it, the tensors it reads,
and `deps`: the stages it waits for, transitively reduced), and its warms are
the `async_prefetch` scopes and generated-warm calls already in the code. A
parameter of one name that two layer kinds annotate differently becomes
`<kind>_<name>`, mapped back by the kind's `source_params`. What the reader
could not resolve is left out and named (PC208), never guessed.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from plancc.dtypes import DTYPES
from plancc.fmt_layout import Layout
from plancc.names import identifier_problem
from plancc.source.limits import OutOfWork
from plancc.source.modules import Module, SourceError
from plancc.source.reader import Reader
from plancc.source.reading import Reading
from plancc.source.resolver import Resolver
from plancc.source.root import split_source
from plancc.source.runs import ancestors
from plancc.source.values import ClassV, Dynamic, FreeNames, Instance
from plancc.text import clip

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _arithmetic(
    node: ast.expr, depth: int, leaf: Callable[[ast.expr, int], ast.expr | None]
) -> ast.expr | None:
    """``node`` as a dim expression: integer literals and ``_OPS`` kept, every other node
    put through ``leaf``; None where a part cannot be written (or nests past 32)."""
    if depth > 32:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        a = _arithmetic(node.left, depth + 1, leaf)
        b = _arithmetic(node.right, depth + 1, leaf)
        return None if a is None or b is None else ast.BinOp(a, node.op, b)
    return leaf(node, depth)


@dataclass
class Extracted:
    text: str
    notices: list[str] = field(default_factory=list)


@dataclass
class _Dims:
    resolver: Resolver
    config: dict[str, int]
    dims: dict[str, str] = field(default_factory=dict)  # name -> expression text
    values: dict[str, object] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    def expr(self, mod: Module, node: ast.expr) -> str:
        try:
            out = self.convert(mod, node, 0)
            value = self.resolver.const(mod, node) if out is None else None
        except OutOfWork as exc:
            where = f"{self.resolver.show(mod.path)}:{node.lineno}"
            self.notices.append(f"{where}: '{clip(ast.unparse(node))}' not resolved: {exc}")
            return self.dynamic("UNRESOLVED")
        if out is not None:
            return ast.unparse(out)
        if isinstance(value, Dynamic):
            return self.dynamic(value.name)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        where = f"{self.resolver.show(mod.path)}:{node.lineno}"
        self.notices.append(f"{where}: '{clip(ast.unparse(node))}' not resolved")
        return self.dynamic("UNRESOLVED")

    def dynamic(self, label: str) -> str:
        name = "".join(c if c.isalnum() else "_" for c in label).strip("_") or "DYN"
        if identifier_problem(name, reserved=True) is not None:
            name = "DYN"
        self.dims.setdefault(name, "dynamic")
        return name

    def convert(self, mod: Module, node: ast.expr, depth: int) -> ast.expr | None:
        return _arithmetic(node, depth, lambda leaf, d: self.leaf(mod, leaf, d))

    def leaf(self, mod: Module, node: ast.expr, depth: int) -> ast.expr | None:
        if isinstance(node, ast.Attribute):
            value = self.resolver.const(mod, node)
            if node.attr in self.config and self.config[node.attr] == value:
                return ast.Name(node.attr)
            derived = self.derived(mod, node, depth)
            if derived is not None:
                return derived
            return ast.Constant(value) if type(value) is int else None
        if isinstance(node, ast.Name):
            return self.name(mod, node.id, depth)
        return None

    def derived(self, mod: Module, node: ast.Attribute, depth: int) -> ast.expr | None:
        """A config property over config keys (`M.q_dim`: `num_heads * head_dim`)."""
        if not self.config:
            return None
        base = self.resolver.const(mod, node.value)
        if not isinstance(base, Instance):
            return None
        cls = self.resolver.global_callee(base.module, base.call.func)
        if not isinstance(cls, ClassV):
            return None
        for stmt in cls.node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == node.attr:
                ret = next((r for r in stmt.body if isinstance(r, ast.Return)), None)
                if ret is not None and ret.value is not None:
                    return self.over_self(base, ret.value, depth + 1)
        return None

    def over_self(self, base: Instance, node: ast.expr, depth: int) -> ast.expr | None:
        """A property's return value over `self.<config key>` attributes."""

        def leaf(node: ast.expr, depth: int) -> ast.expr | None:
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                value = self.resolver.attribute(base, node.attr)
                if node.value.id == "self" and self.config.get(node.attr) == value:
                    return ast.Name(node.attr)
            return None

        return _arithmetic(node, depth, leaf)

    def name(self, mod: Module, name: str, depth: int) -> ast.expr | None:
        value = self.resolver.const(mod, ast.Name(name))
        if isinstance(value, Dynamic):
            return ast.Name(self.dynamic(name if name not in self.dims else value.name))
        if type(value) is not int:
            return None
        if identifier_problem(name, reserved=True) is not None or name.endswith("_flat"):
            return ast.Constant(value)
        if name in self.dims:
            return ast.Name(name) if self.values.get(name) == value else ast.Constant(value)
        home, stmt = _defining(self.resolver, mod, name)
        expr: ast.expr | None = None
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and home:
            self.dims[name] = ""  # reserved while its expression converts
            self.values[name] = value
            expr = self.convert(home, stmt.value, depth + 1)
        text = ast.unparse(expr) if expr is not None else str(value)
        if expr is not None and isinstance(expr, ast.Name) and expr.id == name:
            text = str(value)
        self.dims[name] = text
        self.values[name] = value
        return ast.Name(name)


def _defining(resolver: Resolver, mod: Module, name: str) -> tuple[Module | None, ast.stmt | None]:
    """The module and statement that bind ``name`` (through `from x import name`)."""
    for _ in range(32):
        stmt = mod.globals.get(name)
        if not isinstance(stmt, ast.ImportFrom):
            return mod, stmt
        alias = next((a for a in stmt.names if (a.asname or a.name) == name), None)
        other = resolver.sibling(mod, stmt.module or "", stmt.level, stmt.lineno)
        if alias is None or other is None:
            return None, None
        mod, name = other, alias.name
    return None, None


def extract(  # noqa: C901, PLR0912, PLR0915 (the skeleton written key by key in fmt order)
    sources: Sequence[str],
    kinds: Sequence[str] = (),
    config: str | None = None,
    model: str | None = None,
) -> Extracted:
    """The plan skeleton of ``sources`` (each `PATH:FUNCTION`; a layer kind each, named by
    ``kinds`` in order or after the function). SourceError when one cannot be read."""
    config_keys: dict[str, int] = {}
    if config is not None:
        config_keys = _config(config)
    for source in sources:
        path, function = split_source(source)
        if not path or not function.isidentifier():
            raise SourceError(f"{source}: not PATH:FUNCTION (a Python file and a function in it)")
    paths = [os.path.abspath(split_source(s)[0]) for s in sources]
    root = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else "."
    resolver = Resolver(root)  # one for all sources: each module is read once
    readings: list[tuple[str, Reading]] = []
    for i, (source, path) in enumerate(zip(sources, paths, strict=True)):
        function = split_source(source)[1]
        reading = Reader(resolver).read(path, function)
        kind = kinds[i] if i < len(kinds) else function
        readings.append((kind, reading))
    read_notes = len(resolver.notes)  # those after it are the dims' own
    dims = _Dims(resolver, config_keys)
    notices: list[str] = []
    # Tensors: each parameter once, or once per kind where the kinds disagree.
    seen: dict[str, tuple[list[str], str]] = {}
    clash: set[str] = set()
    per_kind: dict[str, dict[str, tuple[list[str], str]]] = {}
    for kind, reading in readings:
        mine: dict[str, tuple[list[str], str]] = {}
        for p in reading.params.values():
            if not p.tensor:
                continue
            if p.dtype not in DTYPES:
                notices.append(f"{reading.file}:{p.line}: parameter '{p.name}': dtype not read")
                continue
            shape = [dims.expr(reading.module, d) for d in p.dims]
            mine[p.name] = (shape, p.dtype)
            if p.name in seen and seen[p.name] != mine[p.name]:
                clash.add(p.name)
            seen.setdefault(p.name, mine[p.name])
        per_kind[kind] = mine
    lines = [
        f"# Extracted by plancc extract from {', '.join(sources)}.",
        "plancc: 1",
        f"model: {model or _model_name(readings)}",
        "platform: a2a3",
    ]
    if config is not None:
        lines.append(f"config: {config}")
    rel_root = os.path.relpath(root)
    lines.append(f"source_root: {_scalar(rel_root.replace(os.sep, '/'))}")
    if dims.dims:
        lines.append("dims:")
        lines += [f"  {n}: {_scalar(v)}" for n, v in dims.dims.items()]
    lines.append("tensors:")
    names: dict[tuple[str, str], str] = {}
    emitted: set[str] = set()
    for kind, mine in per_kind.items():
        for param, (shape, dtype) in mine.items():
            name = f"{kind}_{param}" if param in clash else param
            names[(kind, param)] = name
            if name not in emitted:
                emitted.add(name)
                lines.append(f"  {name}: {{shape: [{', '.join(shape)}], dtype: {dtype}}}")
    lines.append("layers:")
    for (kind, reading), source, path in zip(readings, sources, paths, strict=True):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        suffix = f"_{kind}" if len(readings) > 1 else ""
        lines += _layer(
            kind,
            reading=reading,
            source=f"{rel}:{split_source(source)[1]}",
            names=names,
            notices=notices,
            suffix=suffix,
        )
    notices += [f"{u.file}:{u.line}: {u.what}" for _, r in readings for u in r.unresolved]
    notices += [f"{u.file}:{u.line}: {u.what}" for u in resolver.notes[read_notes:]]
    notices += dims.notices
    text = "\n".join(lines) + "\n"
    out = Layout(text).run()
    return Extracted(out if out is not None else text, notices)


def _layer(  # noqa: C901 (the skeleton written key by key in fmt order)
    kind: str,
    *,
    reading: Reading,
    source: str,
    names: dict[tuple[str, str], str],
    notices: list[str],
    suffix: str,
) -> list[str]:
    """One layer kind; its warms' names end in ``suffix`` (warm names are plan-wide)."""
    mapping = {names[(kind, p)]: p for (k, p) in names if k == kind and names[(k, p)] != p}
    lines = [f"  {kind}:", f"    source: {_scalar(source)}"]
    if mapping:
        pairs = ", ".join(f"{t}: {p}" for t, p in mapping.items())
        lines.append(f"    source_params: {{{pairs}}}")
    lines.append("    stages:")
    anc = ancestors(reading)
    stages = [k for k in reading.kernels if not k.opaque and k.name]
    stage_bits = sum(1 << k.index for k in stages)
    task_of: dict[int, str] = {}
    for t in sorted(reading.tasks.values(), key=lambda t: t.line):
        if len(t.kernels) == 1 and not t.opaque:
            (only,) = t.kernels
            task_of.setdefault(only, t.name)
    by_index = {k.index: k for k in stages}
    for k in stages:
        entry = [f"name: {k.name}"]
        if k.index in task_of:
            entry.append(f"task: {task_of[k.index]}")
        reads = [names[(kind, p)] for p in reading.params if p in k.reads and (kind, p) in names]
        if reads:
            entry.append(f"reads: [{', '.join(reads)}]")
        entry.append(f"kernel: {k.name}")
        direct = _direct(anc, anc[k.index] & stage_bits)
        entry.append(f"deps: [{', '.join(by_index[j].name for j in direct)}]")
        lines.append(f"      - {{{', '.join(entry)}}}")
    warm_lines: list[str] = []
    stage_of_task = {task_of[i]: by_index[i].name for i in task_of if i in by_index}
    used = FreeNames()
    for w in reading.warms:
        anchor = _anchor(reading, w.deps, task_of, by_index)
        tensors = [names.get((kind, t)) for t in w.tensors]
        if anchor is None or None in tensors or not w.name_hint:
            notices.append(f"{w.file}:{w.line}: warm '{w.name_hint}' left out: anchor not read")
            continue
        name = used.take(w.name_hint + suffix)
        warm_lines += [
            f"      - name: {name}",
            f"        name_hint: {w.name_hint}",
            f"        after: {anchor}",
            f"        tensors: [{', '.join(t for t in tensors if t)}]",
        ]
    for c in reading.calls:
        tensors = [names.get((kind, t)) if t else None for t in c.tensors]
        anchor = stage_of_task.get(c.task or "")
        if anchor is None or None in tensors:
            notices.append(f"{c.file}:{c.line}: call of '{c.function}' left out: not read")
            continue
        used.taken.add(c.function)
        warm_lines += [
            f"      - name: {c.function}",
            f"        after: {anchor}",
            f"        tensors: [{', '.join(t for t in tensors if t)}]",
        ]
    if warm_lines:
        lines += ["    warms:", *warm_lines]
    return lines


def _direct(anc: list[int], earlier: int) -> list[int]:
    """The transitive reduction of one kernel's ``earlier`` (a bit set of the stages that
    run before it): those no other of them runs after, in program order. The latest
    is direct; what it runs after is covered; the latest not covered is next: a step
    per direct dep, never a pair of stages."""
    direct: list[int] = []
    left = earlier
    while left:
        j = left.bit_length() - 1
        direct.append(j)
        left &= ~(anc[j] | (1 << j))
    return sorted(direct)


def _anchor(
    reading: Reading, deps: frozenset[int], task_of: dict[int, str], by_index: Mapping[int, object]
) -> str | None:
    """The stage whose task a warm scope waits for: one kernel with a task."""
    if len(deps) != 1:
        return None
    (k,) = deps
    if k not in task_of or k not in by_index:
        return None
    return reading.kernels[k].name


def _model_name(readings: list[tuple[str, Reading]]) -> str:
    stem = readings[0][1].module.name if readings else "model"
    name = "".join(c if c.isalnum() else "_" for c in stem).lstrip("_0123456789")
    return name or "model"


def _scalar(text: str) -> str:
    """A YAML scalar: plain when it reads back as the same string."""
    plain = text and text[0].isalnum() and all(c.isalnum() or c in "_./:*+-() " for c in text)
    if plain and ": " not in text and not text.endswith(":"):
        return text
    return json.dumps(text)


def _config(path: str) -> dict[str, int]:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(4 * 1024 * 1024 + 1))
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read config {path}: {exc}") from None
    if not isinstance(data, dict):
        raise SourceError(f"config {path} is not a JSON object")
    return {k: v for k, v in data.items() if type(v) is int}


__all__ = ["Extracted", "extract"]
