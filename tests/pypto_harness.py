"""Harness modules that compile plancc's generated warms in PyPTO.

``tests/test_pypto_compile.py`` (opt-in: ``PLANCC_PYPTO_PY`` names a Python with PyPTO
installed) builds a plan, then writes, beside the generated ``<model>_warms.py``, a
harness module from the manifest: per warm, one ``@pl.jit`` function that takes tensors
of the manifest's shapes (a stacked tensor's whole stack), runs a producer scope
``with pl.at(level=pl.Level.CORE_GROUP, name_hint=STAGE) as TASK:`` for each anchor task,
and then calls the warm exactly as its docstring says (the indented block after "Call
it"), inside ``for INDEX in pl.range(LAYERS):`` when the call uses a stack's layer index.
Run by that Python, the harness lowers and compiles each function
(``fn.lower(*args)``, ``fn.compile(*args)``; with no sample tensors where a run-time
scalar or a dtype torch has no type for asks for it) and prints one JSON list: per warm,
the step that failed and PyPTO's message, or the kernels the compile wrote that issue a
prefetch (``tprefetch_async``).

Every name the docstring's call uses must be explained by the manifest (a tensor, a
task, a stack's index, a guard's run-time variable) or defined by the module (the warm,
a constant): anything else is a ``HarnessError``, since model code following the
docstring would not have it either.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The producer scopes copy one small tile, so each anchor has a real task.
PRODUCER_SHAPE = (16, 128)  # 512 B rows: an L2 line, so PyPTO prints no hint
PRODUCER_IN = "harness_in"
PRODUCER_OUT = "harness_out"
PRODUCER_TILE = "harness_tile"
RESERVED = frozenset({"pl", "torch", PRODUCER_IN, PRODUCER_OUT, PRODUCER_TILE})

# Plan dtype -> torch dtype, for the types PyPTO's JIT maps from torch (its
# _torch_dtype_to_pypto). A warm with any other dtype compiles from its signature.
TORCH_DTYPES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "bool": "bool",
    "fp8e4m3fn": "float8_e4m3fn",
    "fp8e5m2": "float8_e5m2",
    "fp8e8m0": "float8_e8m0fnu",
}

# Plan dtype -> PyPTO DataType attribute.
PL_DTYPES = {
    "bf16": "BF16",
    "fp16": "FP16",
    "fp32": "FP32",
    "fp8e4m3fn": "FP8E4M3FN",
    "fp8e5m2": "FP8E5M2",
    "fp8e8m0": "FP8E8M0",
    "hf8": "HF8",
    "fp4": "FP4",
    "hf4": "HF4",
    "int4": "INT4",
    "uint4": "UINT4",
    "int8": "INT8",
    "uint8": "UINT8",
    "int16": "INT16",
    "uint16": "UINT16",
    "int32": "INT32",
    "uint32": "UINT32",
    "int64": "INT64",
    "uint64": "UINT64",
    "bool": "BOOL",
}

_CALL_INTRO = re.compile(r"^Call it\b")


class HarnessError(Exception):
    """The module or manifest cannot be turned into a harness (says why)."""


@dataclass(frozen=True)
class Tensor:
    """A harness parameter: what the model passes (a stacked tensor's whole stack)."""

    name: str
    shape: tuple[int, ...]
    dtype: str  # plan dtype


@dataclass(frozen=True)
class Entry:
    """One warm's harness function and how to compile it."""

    warm: str
    function: str
    source: str
    tensors: tuple[Tensor, ...]
    signature: bool  # compile from the annotations (no sample tensors)
    constants: tuple[tuple[str, int], ...] = ()  # module constants the call needs


def call_block(doc: str) -> str:
    """The code after the docstring's "Call it ..." paragraph: its indented block,
    dedented."""
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if _CALL_INTRO.match(line)), None)
    if start is None:
        raise HarnessError("the docstring says nowhere how to call it (no 'Call it' line)")
    start = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    block: list[str] = []
    for line in lines[start:]:
        if line.strip() and not line.startswith("    "):
            break
        block.append(line)
    code = "\n".join(line[4:] for line in block).strip("\n")
    if not code:
        raise HarnessError("the docstring's 'Call it' line is followed by no indented call")
    return code + "\n"


def warm_docs(module: str) -> dict[str, str]:
    """Each ``@pl.jit.inline`` function's docstring, by function name."""
    tree = ast.parse(module)
    docs: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            docs[node.name] = ast.get_docstring(node) or ""
    return docs


def module_names(module: str) -> set[str]:
    """The names the module defines at top level (its constants and functions)."""
    names: set[str] = set()
    for node in ast.parse(module).body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _as_list(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _used_names(code: str) -> list[str]:
    """Names the code reads, in first-use order."""
    loads = [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    ]
    loads.sort(key=lambda n: (n.lineno, n.col_offset))
    return list(dict.fromkeys(n.id for n in loads))


def _stack_shape(tensor: Mapping[str, Any]) -> tuple[int, ...]:
    shape = tuple(int(d) for d in tensor["shape"])
    stacked = tensor.get("stacked")
    if stacked is None:
        return shape
    return (int(stacked["layers"]) * shape[0], *shape[1:])


def _tensor_type(shape: Iterable[int], dtype: str) -> str:
    return f"pl.Tensor[[{', '.join(str(d) for d in shape)}], pl.{PL_DTYPES[dtype]}]"


def _indent(code: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line.strip() else line for line in code.splitlines(True))


def _layer_bound(tree: ast.Module) -> tuple[str, str] | None:
    """The layer index and layer count of the call's ``if INDEX < COUNT - 1:``, which
    keeps the forward's last layer from warming a layer past the end."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
            continue
        test = node.test
        (op,), (right,) = test.ops, test.comparators
        if (
            isinstance(op, ast.Lt)
            and isinstance(test.left, ast.Name)
            and isinstance(right, ast.BinOp)
            and isinstance(right.op, ast.Sub)
            and isinstance(right.left, ast.Name)
            and isinstance(right.right, ast.Constant)
            and right.right.value == 1
        ):
            return test.left.id, right.left.id
    return None


@dataclass(frozen=True)
class _Roles:
    """What each name a warm's call may use stands for, from the manifest."""

    tensors: dict[str, Mapping[str, Any]]  # a tensor this layer reads, or a whole stack
    nexts: dict[str, Mapping[str, Any]]  # <tensor>_next: the next layer's slice of a tensor
    tasks: dict[str, str]  # task variable -> anchor stage (the producer's name_hint)
    indices: dict[str, int]  # a layer index (a loop variable) -> its number of layers
    counts: dict[str, int]  # the `if`'s layer count, where the module does not define it
    runtime: dict[str, str]  # a guard's run-time variable -> its scalar type

    @classmethod
    def of(
        cls, warm: Mapping[str, Any], tree: ast.Module, defined: set[str], layers: int
    ) -> _Roles:
        stacked = [t for t in warm["tensors"] if t.get("stacked")]
        indices = {t["stacked"]["index"]: int(t["stacked"]["layers"]) for t in stacked}
        tensors = {t["name"]: t for t in warm["tensors"]}
        nexts: dict[str, Mapping[str, Any]] = {}
        counts: dict[str, int] = {}
        if warm.get("next_layer"):
            bound = _layer_bound(tree)
            if bound is None:
                raise HarnessError(
                    f"warm {warm['name']!r}: a cross-layer warm called with no "
                    "`if INDEX < LAYERS - 1:` around it: the last layer would warm a layer "
                    "past the forward"
                )
            index, count = bound
            indices.setdefault(index, layers)
            if count not in defined:
                counts[count] = indices[index]
            for t in warm["tensors"]:
                if not t.get("stacked"):
                    del tensors[t["name"]]
                    nexts[f"{t['name']}_next"] = t
        tasks = dict(zip(_as_list(warm["task"]), _as_list(warm["after"]), strict=True))
        runtime = {g["source"]: "INT32" for g in warm.get("guards") or []}
        return cls(tensors, nexts, tasks, indices, counts, runtime)


@dataclass
class _Uses:
    """The names a warm's call reads, sorted by what they stand for."""

    tensors: list[str]
    nexts: list[str]
    tasks: list[str]
    indices: list[str]
    counts: list[str]
    runtime: list[str]
    imports: set[str]


def _uses(name: str, code: str, roles: _Roles, defined: set[str]) -> _Uses:
    uses = _Uses([], [], [], [], [], [], set())
    kinds: list[tuple[Mapping[str, Any], list[str]]] = [
        (roles.tensors, uses.tensors),
        (roles.nexts, uses.nexts),
        (roles.tasks, uses.tasks),
        (roles.indices, uses.indices),
        (roles.counts, uses.counts),
        (roles.runtime, uses.runtime),
    ]
    for used in _used_names(code):
        if used in RESERVED - {"pl"} or used.startswith("harness_"):
            raise HarnessError(f"warm {name!r}: the call uses {used!r}, a name the harness keeps")
        found = next((names for table, names in kinds if used in table), None)
        if found is not None:
            found.append(used)
        elif used in defined:
            uses.imports.add(used)
        elif used != "pl":
            raise HarnessError(
                f"warm {name!r}: its call uses {used!r}, which is neither a tensor, a task, a "
                "layer index nor a guard of the manifest, nor a name the module defines"
            )
    missing = [t for t in roles.tasks if t not in uses.tasks]
    if missing:
        raise HarnessError(f"warm {name!r}: its call passes no {', '.join(missing)}")
    if len(uses.indices) > 1:
        raise HarnessError(f"warm {name!r}: its call uses two layer indices ({uses.indices})")
    return uses


def _producers(tasks: Sequence[str], roles: _Roles) -> str:
    """One scope per anchor task, named after its stage, that copies a small tile."""
    rows, cols = PRODUCER_SHAPE
    return "".join(
        f"with pl.at(level=pl.Level.CORE_GROUP, name_hint={roles.tasks[task]!r}) as {task}:\n"
        f"    {PRODUCER_TILE} = pl.load({PRODUCER_IN}, [0, 0], [{rows}, {cols}])\n"
        f"    {PRODUCER_OUT} = pl.store({PRODUCER_TILE}, [0, 0], {PRODUCER_OUT})\n"
        for task in tasks
    )


def _next_slices(code: str, uses: _Uses, roles: _Roles) -> tuple[list[Tensor], str]:
    """A cross-layer warm of tensors that are not stacked, called with the next layer's
    tensors (``<tensor>_next``): the model holds each weight kind stacked over all layers
    and takes annotated per-layer slices (pypto-facts, "Per-layer slices"). The harness
    takes each stack under the tensor's name, and slices the next layer's at the top of
    the call's ``if`` (so the last layer slices nothing past the stack)."""
    if not uses.nexts:
        return [], code
    (index,) = uses.indices
    layers = roles.indices[index]
    stacks: list[Tensor] = []
    slices = ""
    for var in uses.nexts:
        t = roles.nexts[var]
        shape = tuple(int(d) for d in t["shape"])
        stacks.append(Tensor(t["name"], (layers * shape[0], *shape[1:]), t["dtype"]))
        dims = ", ".join(str(d) for d in shape)
        offset = ", ".join([f"({index} + 1) * {shape[0]}"] + ["0"] * (len(shape) - 1))
        slices += (
            f"{var}: {_tensor_type(shape, t['dtype'])} = "
            f"pl.slice({t['name']}, [{dims}], [{offset}])\n"
        )
    tree = ast.parse(code)
    guard = next(n for n in ast.walk(tree) if isinstance(n, ast.If))
    guard.body[:0] = ast.parse(slices).body
    return stacks, ast.unparse(tree) + "\n"


def entry(
    warm: Mapping[str, Any], doc: str, defined: set[str], layers: int = 2
) -> tuple[Entry, set[str]]:
    """The harness function of one manifest warm, and the module names it imports.
    ``layers``: the forward's, for a cross-layer warm whose layer index is no stack's."""
    name = warm["name"]
    code = call_block(doc)
    roles = _Roles.of(warm, ast.parse(code), defined, layers)
    uses = _uses(name, code, roles, defined)
    tensors = [
        Tensor(n, _stack_shape(roles.tensors[n]), roles.tensors[n]["dtype"]) for n in uses.tensors
    ]
    stacks, code = _next_slices(code, uses, roles)
    tensors += stacks
    body = _producers(uses.tasks, roles) + code
    if uses.indices:
        index = uses.indices[0]
        body = f"for {index} in pl.range({roles.indices[index]}):\n" + _indent(body, 4)
    params = [f"    {t.name}: {_tensor_type(t.shape, t.dtype)}," for t in tensors]
    params.append(f"    {PRODUCER_IN}: {_tensor_type(PRODUCER_SHAPE, 'fp32')},")
    params.append(f"    {PRODUCER_OUT}: pl.Out[{_tensor_type(PRODUCER_SHAPE, 'fp32')}],")
    params += [f"    {r}: pl.Scalar[pl.{roles.runtime[r]}] = pl.RUNTIME," for r in uses.runtime]
    function = f"compile_{name}"
    source = (
        f"@pl.jit\ndef {function}(\n" + "\n".join(params) + "\n):\n"
        f"{_indent(body, 4)}    return {PRODUCER_OUT}\n"
    )
    signature = bool(uses.runtime) or any(t.dtype not in TORCH_DTYPES for t in tensors)
    constants = tuple((c, roles.counts[c]) for c in uses.counts)
    return Entry(name, function, source, tuple(tensors), signature, constants), uses.imports


_RUNNER = """

ENTRIES = {entries}


def prefetching(kernels: Path) -> list[str]:
    # The kernels the compile wrote that issue a prefetch: the warms' scopes.
    files = [p for p in kernels.rglob("*") if p.is_file()]
    return sorted({{p.stem for p in files if "tprefetch_async" in p.read_text()}})


def main() -> None:
    results = []
    for warm, fn, tensors, signature in ENTRIES:
        args = [] if signature else [
            torch.empty(shape, dtype=getattr(torch, dtype)) for shape, dtype in tensors
        ]
        result = {{"warm": warm, "failed": None, "error": None, "kernels": []}}
        for step in ("lower", "compile"):
            try:
                compiled = getattr(fn, step)(*args)
            except Exception as exc:  # PyPTO's message is the result
                result["failed"] = step
                result["error"] = f"{{type(exc).__name__}}: {{exc}}"
                break
        else:
            result["kernels"] = prefetching(compiled.output_dir / "kernels")
        results.append(result)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
"""


def harness(module: str, module_name: str, manifest: Mapping[str, Any]) -> str:
    """The harness module's source: one ``@pl.jit`` function per warm and a runner."""
    docs = warm_docs(module)
    defined = module_names(module)
    entries: list[Entry] = []
    imports: set[str] = set()
    layers = int((manifest.get("forward") or {}).get("layers", 2))
    for warm in manifest["warms"]:
        if warm["name"] not in docs:
            raise HarnessError(f"the module defines no function {warm['name']!r}")
        e, names = entry(warm, docs[warm["name"]], defined, layers)
        entries.append(e)
        imports |= names
    rows = []
    producer = (list(PRODUCER_SHAPE), "float32")
    for e in entries:
        tensors = [(list(t.shape), TORCH_DTYPES.get(t.dtype)) for t in e.tensors]
        tensors += [producer, producer]
        rows.append(f"    ({e.warm!r}, {e.function}, {tensors!r}, {e.signature!r}),")
    head = (
        '"""Harness written by tests/pypto_harness.py: compiles each warm of '
        f'{module_name} in PyPTO."""\n\n'
        "import json\nfrom pathlib import Path\n\n"
        "import pypto.language as pl\n"
        "import torch\n"
        f"import {module_name}  # noqa: F401 (it imports, even with no warm to call)\n"
    )
    if imports:
        head += f"from {module_name} import {', '.join(sorted(imports))}\n"
    constants = dict(c for e in entries for c in e.constants)
    if constants:
        head += "\n" + "".join(f"{c} = {v}\n" for c, v in sorted(constants.items()))
    functions = "\n\n".join(e.source for e in entries)
    runner = _RUNNER.format(entries="[\n" + "\n".join(rows) + "\n]")
    return head + "\n\n" + functions + runner


def reshape_in_scope(module: str) -> str:
    """The module with every warm's flat views assigned inside its scope, the first rule
    of pypto-facts ("Reshape outside the scope"): PyPTO must refuse it."""
    tree = ast.parse(module)
    moved = 0
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        first = next((i for i, s in enumerate(fn.body) if _is_reshape(s)), None)
        scope = next((n for n in ast.walk(fn) if isinstance(n, ast.With)), None)
        if first is None or scope is None:
            continue
        # The reshape and what is built from it before the scope (a slice of the flat
        # view) move together; the guards' `if`s stay where they are.
        views = [s for s in fn.body[first:] if isinstance(s, ast.Assign | ast.AnnAssign)]
        fn.body = [s for s in fn.body if s not in views]
        scope.body = views + scope.body
        moved += 1
    if not moved:
        raise HarnessError("no warm function with a reshape and a scope")
    return ast.unparse(tree) + "\n"


def guards_joined(module: str) -> str:
    """The module with every two nested guards joined by ``and`` (pypto-facts: "`and` in
    the condition fails in code generation"): PyPTO must refuse it, in ``compile``."""
    tree = ast.parse(module)
    joined = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or node.orelse or len(node.body) != 1:
            continue
        inner = node.body[0]
        if isinstance(inner, ast.If) and not inner.orelse:
            node.test = ast.BoolOp(ast.And(), [node.test, inner.test])
            node.body = inner.body
            joined += 1
    if not joined:
        raise HarnessError("no two nested guards to join")
    return ast.unparse(tree) + "\n"


def _is_reshape(stmt: ast.stmt) -> bool:
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "reshape"
    )


def results(stdout: str) -> list[dict[str, Any]]:
    """The runner's JSON list (its last line: PyPTO may print before it)."""
    lines = stdout.strip().splitlines()
    if not lines:
        raise HarnessError("the harness printed nothing")
    parsed: list[dict[str, Any]] = json.loads(lines[-1])
    return parsed
