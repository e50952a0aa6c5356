"""Run-time choices of model code, made where the code makes them: at their default.

A module picks some of its constants when it runs: `os.environ.get(NAME, default)`,
a function that scans `sys.argv` for `--tp` and otherwise returns its default
(dspark's `TP_SIZE = _parse_tp_argv()`), one that reads an environment variable and
`--variant` (DeepSeek V4 Pro's `ACTIVE_VARIANT`), and a preset table indexed by
such a choice (`KERNEL_PRESETS[ACTIVE_VARIANT]`). The reader takes the default, or
the value a define gives (`extract --define NAME=VALUE`, a plan's `source_defines`),
and notes the choice (PC208) with the value taken. A define names the environment
variable, the command-line option without its dashes (`tp`, `variant`) or the
constant (`TP_SIZE`). Nothing is run: a function whose default is not a plain
`return` of a constant (after assignments of constants) is no choice of this kind.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from plancc.source.modules import Module
from plancc.source.values import UNKNOWN, Instance, dotted


class Resolver(Protocol):
    """What of ``resolver.Resolver`` a choice is read with (it calls this module)."""

    defines: Mapping[str, object]
    locals: list[dict[str, Any]]
    naming: list[tuple[Module, str, int]]

    def const(self, mod: Module, node: ast.expr, self_obj: Any = None) -> Any: ...

    def note(
        self, mod: Module, line: int, what: str, effect: str = ..., *, choice: bool = False
    ) -> None: ...


_ENV = ("os.environ.get", "os.getenv")
_STR_METHODS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lower": str.lower,
    "upper": str.upper,
}


def _names(resolver: Resolver, mod: Module, fn: ast.AST) -> list[tuple[str, str]]:
    """What a define may call the choice ``fn`` makes: its environment variables and its
    `--options`, each with how the code reads it."""
    out: list[tuple[str, str]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and dotted(node.func) in _ENV and node.args:
            env = resolver.const(mod, node.args[0])
            if isinstance(env, str):
                out.append((env, f"environment variable {env}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.rstrip("=")
            if text.startswith("--") and text[2:].replace("-", "_").isidentifier():
                out.append((text[2:].replace("-", "_"), f"command-line option {text}"))
    return list(dict.fromkeys(out))


def reads_run_time(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        name = dotted(node) if isinstance(node, ast.Attribute) else ""
        if name in ("sys.argv", "os.environ") or (
            isinstance(node, ast.Call) and dotted(node.func) in _ENV
        ):
            return True
    return False


def chosen(resolver: Resolver, mod: Module, name: str, stmt: ast.stmt, fn: Any) -> Any:
    """`NAME = f()` where ``f`` (a FuncV) reads `sys.argv` or the environment: the value
    it returns when nothing is given (or a define's), noted; None when it is no such
    choice."""
    node = fn.node
    if node.args.args or not reads_run_time(node):
        return None
    local: dict[str, Any] = {}
    value: Any = UNKNOWN
    for s in node.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            local[s.targets[0].id] = _value(resolver, fn.module, s.value, local)
        elif isinstance(s, ast.Return) and s.value is not None:
            value = _value(resolver, fn.module, s.value, local)
    if not isinstance(value, (int, str, bool)):
        return None
    names = [*_names(resolver, fn.module, node), (name, f"constant {name}")]
    return _take(resolver, mod, stmt.lineno, name, default=value, names=names)


def env_default(resolver: Resolver, mod: Module, call: ast.Call) -> Any:
    """`os.environ.get(NAME, default)` at the top of a module: the default (or a
    define's value), noted."""
    if dotted(call.func) not in _ENV or not call.args:
        return None
    env = resolver.const(mod, call.args[0])
    default = resolver.const(mod, call.args[1]) if len(call.args) > 1 else None
    if not isinstance(env, str) or not isinstance(default, (int, str, bool)):
        return None
    where = resolver.naming[-1] if resolver.naming else (mod, env, call.lineno)
    names = [(env, f"environment variable {env}")]
    return _take(resolver, where[0], where[2], where[1] or env, default=default, names=names)


def _take(
    resolver: Resolver,
    mod: Module,
    line: int,
    name: str,
    *,
    default: Any,
    names: list[tuple[str, str]],
) -> Any:
    given = next(((n, how) for n, how in names if n in resolver.defines), None)
    how = names[0][1]
    if given is not None:
        value = resolver.defines[given[0]]
        resolver.note(
            mod,
            line,
            f"{name} is chosen at run time ({how}): taken as {value!r}, "
            f"as defined ({given[0]}={value})",
            "the define (`source_defines`, `--define`) picked it",
            choice=True,
        )
        return value
    key = names[0][0]
    resolver.note(
        mod,
        line,
        f"{name} is chosen at run time ({how}): taken as {default!r}, its default",
        f"`--define {key}=VALUE` (extract) or `source_defines: {{{key}: VALUE}}` picks another",
        choice=True,
    )
    return default


def _value(resolver: Resolver, mod: Module, node: ast.expr, local: dict[str, Any]) -> Any:
    """A choice function's value: locals, constants, env defaults, `.strip()`-like calls."""
    if isinstance(node, ast.Name) and node.id in local:
        return local[node.id]
    if isinstance(node, ast.Call):
        if dotted(node.func) in _ENV and len(node.args) > 1:
            return _value(resolver, mod, node.args[1], local)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _STR_METHODS and not node.args:
            base = _value(resolver, mod, func.value, local)
            return _STR_METHODS[func.attr](base) if isinstance(base, str) else UNKNOWN
        if dotted(func) == "int" and len(node.args) == 1:
            base = _value(resolver, mod, node.args[0], local)
            return int(base) if isinstance(base, (int, str)) and str(base).isdigit() else UNKNOWN
    return resolver.const(mod, node)


def table(resolver: Resolver, mod: Module, node: ast.expr, self_obj: Any) -> Any:  # noqa: C901 (one branch per kind of table expression)
    """A preset table and its entries: tuples, dicts, dict comprehensions over a tuple,
    a subscript of one, and `replace(preset, field=...)` (a preset with fields changed)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(resolver.const(mod, e, self_obj) for e in node.elts)
    if isinstance(node, ast.Dict):
        keys = [resolver.const(mod, k, self_obj) if k else UNKNOWN for k in node.keys]
        return {k: v for k, v in zip(keys, node.values, strict=True) if k is not UNKNOWN}
    if isinstance(node, ast.DictComp) and len(node.generators) == 1:
        gen = node.generators[0]
        items = resolver.const(mod, gen.iter, self_obj)
        if not isinstance(gen.target, ast.Name) or not isinstance(items, tuple) or gen.ifs:
            return UNKNOWN
        out: dict[Any, Any] = {}
        for item in items:
            resolver.locals.append({gen.target.id: item})
            try:
                key = resolver.const(mod, node.key, self_obj)
                if key is not UNKNOWN:
                    out[key] = resolver.const(mod, node.value, self_obj)
            finally:
                resolver.locals.pop()
        return out
    if isinstance(node, ast.Subscript):
        base = resolver.const(mod, node.value, self_obj)
        key = resolver.const(mod, node.slice, self_obj)
        if isinstance(base, dict) and key in base:
            found = base[key]
            return resolver.const(mod, found, self_obj) if isinstance(found, ast.expr) else found
        return UNKNOWN
    if isinstance(node, ast.Call) and dotted(node.func) in ("replace", "dataclasses.replace"):
        base = resolver.const(mod, node.args[0], self_obj) if node.args else UNKNOWN
        if isinstance(base, Instance) and base.module is mod:
            changed = ast.Call(
                base.call.func, base.call.args, [*node.keywords, *base.call.keywords]
            )
            return Instance(mod, changed)
    return UNKNOWN
