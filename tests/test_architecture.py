"""The layout holds: plancc's modules import only downwards, with no cycle (lazy imports
included), and every output format the command line offers is registered.

The layer order is the one docs/architecture.md describes; a module may import from
its own layer or a lower one, never from a higher one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plancc"

# Lowest first. A package's name stands for all of its modules.
LAYERS: list[set[str]] = [
    {
        "plancc",
        "plancc.dtypes",
        "plancc.platforms",
        "plancc.text",
        "plancc.resources",
        "plancc.shell",
        "plancc.fmt_layout",
    },
    {"plancc.codes", "plancc.expr", "plancc.graph"},
    {"plancc.diagnostics"},
    {"plancc.names", "plancc.yaml_messages"},
    {"plancc.ir", "plancc.load", "plancc.model", "plancc.inputs"},
    {"plancc.liveness", "plancc.validate"},
    {"plancc.metrics", "plancc.resolve", "plancc.rules"},
    {
        "plancc.check",
        "plancc.summary",
        "plancc.render",
        "plancc.write",
        "plancc.orphans",
        "plancc.runtime",
    },
    {"plancc.api", "plancc.fmt", "plancc.measure"},
    {"plancc.formats", "plancc.lsp", "plancc.report_html"},
    {"plancc.console", "plancc.cli", "plancc.__main__"},
]
MAX_LINES = 420  # "no module over ~400 lines"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int:
    name = module
    while True:
        for i, layer in enumerate(LAYERS):
            if name in layer:
                return i
        if "." not in name:
            raise AssertionError(f"{module} is in no layer of tests/test_architecture.py")
        name = name.rsplit(".", 1)[0]


def _imports(module: str) -> set[str]:
    """Every plancc module ``module`` imports, anywhere in its body (lazy, TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{module}: plancc imports are absolute"
            base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_downwards(module: str) -> None:
    upward = {m for m in GRAPH[module] if _layer(m) > _layer(module)}
    assert not upward, f"{module} (layer {_layer(module)}) imports from above: {sorted(upward)}"


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for used in sorted(GRAPH[module]):
            if state.get(used) == 1:
                cycle = [*path[path.index(used) :], used] if used in path else [module, used]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if used not in state:
                visit(used, [*path, used])
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])


def test_the_graph_has_the_edges_it_judges() -> None:
    # The tests above cannot pass vacuously: the graph has edges, lazy ones too.
    assert "plancc.codes" in GRAPH["plancc.diagnostics"]
    assert "plancc.check" in GRAPH["plancc.cli"]  # a lazy import, inside a command
    assert _layer("plancc.cli") > _layer("plancc.check")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_about_400_lines(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines"


def test_the_command_line_offers_every_registered_format() -> None:
    from plancc.cli import Format
    from plancc.formats import FORMATS

    assert [f.value for f in Format] == ["auto", *FORMATS]


def test_docs_architecture_lists_these_layers() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Import layers", 1)[1].split("\n## ", 1)[0]
    listed = [
        {f"plancc.{n.strip('/')}" if n != "plancc" else n for n in re.findall(r"`([^`]+)`", line)}
        for line in section.splitlines()
        if re.match(r"\d+\. ", line)
    ]
    assert listed == LAYERS
