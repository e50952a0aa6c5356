"""The layout holds: plancc's folders stand in a few tiers and import only their own
tier or a lower one, with no cycle between modules or between folders (lazy imports
included), and every output format the command line offers is registered.

A unit is a module at plancc's root or a folder under it (a folder stands for all of
its modules). The tiers are the ones docs/architecture.md describes.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plancc"

# Lowest first. A unit may import from its own tier or a lower one.
TIERS: list[set[str]] = [
    # leaves: text, files, tables and data with no plan in them
    {
        "plancc",
        "plancc.text",
        "plancc.usage",
        "plancc.reading",
        "plancc.write",
        "plancc.expr",
        "plancc.schedule",
        "plancc.fixes",
        "plancc.tables",
        "plancc.schema",
    },
    # the core: codes, diagnostics, the resolved plan, the YAML reading
    {"plancc.codes", "plancc.diagnostics", "plancc.ir", "plancc.load"},
    # the stages and what they share
    {
        "plancc.validate",
        "plancc.resolve",
        "plancc.facts",
        "plancc.rules",
        "plancc.check",
        "plancc.source",
        "plancc.render",
        "plancc.runtime",
        "plancc.fmt",
        "plancc.measure",
    },
    # the library's entry points
    {"plancc.api"},
    # the features built on them
    {"plancc.edits", "plancc.formats", "plancc.lsp", "plancc.report_html", "plancc.suggest"},
    # the command line
    {"plancc.cli", "plancc.__main__"},
]
MAX_ROOT_MODULES = 16


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _unit(module: str) -> str:
    """The root module or the folder ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def _tier(module: str) -> int:
    unit = _unit(module)
    for i, tier in enumerate(TIERS):
        if unit in tier:
            return i
    raise AssertionError(f"{unit} is in no tier of tests/test_architecture.py")


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


def test_size_is_measured_per_function_never_per_file() -> None:
    """The per-module line cap is retired (files are cut by concern); what bounds a
    function's size and complexity stays: ruff's C901 and PLR0915, for plancc too."""
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]["lint"]
    assert {"C90", "PL"} <= set(ruff["select"])
    ignored = {*ruff["ignore"], *(c for k, v in ruff["per-file-ignores"].items() for c in v)}
    assert not {"C90", "C901", "PL", "PLR", "PLR0915"} & ignored


def test_every_module_is_in_a_tier() -> None:
    for module in MODULES:
        _tier(module)


def test_the_root_holds_a_handful_of_core_modules() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_downwards(module: str) -> None:
    upward = {m for m in GRAPH[module] if _tier(m) > _tier(module)}
    assert not upward, f"{module} (tier {_tier(module)}) imports from above: {sorted(upward)}"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for used in sorted(graph.get(node, ())):
            if state.get(used) == 1:
                return [*path[path.index(used) :], used] if used in path else [node, used]
            if used not in state:
                found = visit(used, [*path, used])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    cycle = _cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_cycle_between_folders() -> None:
    # A folder is one room: a folder importing another that imports it back would run an
    # arrow up the house, whatever its modules do.
    units: dict[str, set[str]] = {}
    for module, used in GRAPH.items():
        units.setdefault(_unit(module), set()).update(
            _unit(m) for m in used if _unit(m) not in (_unit(module), "plancc")
        )
    cycle = _cycle(units)
    assert cycle is None, "folder cycle: " + " -> ".join(cycle or [])


def test_cycles_are_found() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_has_the_edges_it_judges() -> None:
    # The tests above cannot pass vacuously: the graph has edges, lazy ones too.
    assert "plancc.codes" in GRAPH["plancc.diagnostics"]
    assert "plancc.check" in GRAPH["plancc.cli.commands"]  # a lazy import, inside a command
    assert _tier("plancc.cli.commands") > _tier("plancc.check")


def test_the_command_line_offers_every_registered_format() -> None:
    from plancc.cli.commands import Format
    from plancc.formats import FORMATS

    assert [f.value for f in Format] == ["auto", *FORMATS]


def test_docs_architecture_lists_these_tiers() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Import tiers", 1)[1].split("\n## ", 1)[0]
    listed = [
        {f"plancc.{n.strip('/')}" if n != "plancc" else n for n in re.findall(r"`([^`]+)`", line)}
        for line in section.splitlines()
        if re.match(r"\d+\. ", line)
    ]
    assert listed == TIERS


def test_docs_architecture_says_what_each_module_and_folder_is_for() -> None:
    """Every root module and every folder has its row in "The house by concern"."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The house by concern", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \|", section, re.M)
    named = {
        "plancc" if row == "__init__.py" else "plancc." + row.removesuffix(".py").rstrip("/")
        for row in rows
    }
    assert named == {_unit(m) for m in MODULES}
