"""A `@pl.program` class as a layer: Qwen3-32B's and DeepSeek V3.2's programs are classes
built inside a function (`def build_qwen3_decode_program(): @pl.program class ...`);
the layer is its entry method, named by the class or by the function that builds it."""

from __future__ import annotations

import ast

from plancc.source.modules import Module
from plancc.source.values import dotted


def program_entry(mod: Module, name: str) -> ast.FunctionDef | None:
    """The entry of a `@pl.program` class named ``name``, or of the one a top-level
    function ``name`` builds (`def build_program(): @pl.program class P: ...`): its
    `pl.FunctionType.Opaque` (or `Orchestration`) `@pl.function`, else its first method.
    None when there is no such class."""
    home = mod.globals.get(name)
    for cls in ast.walk(home if isinstance(home, ast.FunctionDef) else mod.tree):
        if not isinstance(cls, ast.ClassDef) or not any(
            dotted(d) == "pl.program" for d in cls.decorator_list
        ):
            continue
        if cls.name != name and not isinstance(home, ast.FunctionDef):
            continue
        methods = [m for m in cls.body if isinstance(m, ast.FunctionDef)]
        for m in methods:
            for d in m.decorator_list:
                kinds = [dotted(k.value) for k in getattr(d, "keywords", []) if k.arg == "type"]
                if kinds and kinds[0].rsplit(".", 1)[-1] in ("Opaque", "Orchestration"):
                    return m
        return methods[0] if methods else None
    return None
