"""Cold start is a feature: `plancc validate` imports nothing it does not need: no
jinja2, and (through plancc.cli.launch) no command imports typer, click or pydantic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PLAN = ROOT / "tests" / "cases" / "valid" / "contract_example.yaml"

_PROBE = """
import json, sys
import plancc.cli.launch
sys.argv = ["plancc", *sys.argv[1:]]
try:
    plancc.cli.launch.main(sys.argv[1:])  # given argv: it exits as usual, so this runs on
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_after(*args: str, cwd: Path) -> tuple[int, set[str]]:
    """Run plancc ARGS in a fresh interpreter; its exit code and every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(proc.stderr.splitlines()[-1])
    return report["code"], set(report["modules"])


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_validate_does_not_import_jinja2(tmp_path: Path) -> None:
    code, modules = _modules_after("validate", str(PLAN), cwd=tmp_path)
    assert code == 0
    assert "plancc.validate" in modules  # the probe really ran a validation
    assert "plancc.resolve" in modules
    assert "jinja2" not in _tops(modules)
    assert "markupsafe" not in _tops(modules)
    assert not {"plancc.render", "plancc.write"} & modules


@pytest.mark.parametrize(
    "args",
    [
        ["validate", str(PLAN)],
        ["validate", "-q", "--format", "json", "--", str(PLAN)],
        ["build", str(PLAN), "--out", "out", "--check"],
    ],
)
def test_validate_and_build_load_no_typer_and_no_pydantic(tmp_path: Path, args: list[str]) -> None:
    code, modules = _modules_after(*args, cwd=tmp_path)
    assert code in (0, 1)
    assert "plancc.resolve" in modules
    assert not {"typer", "click", "pydantic", "pydantic_core", "jsonschema"} & _tops(modules)
    assert "plancc.cli.app" not in modules


@pytest.mark.parametrize(
    "args",
    [
        ["rules"],
        ["explain", "l2-budget"],
        ["schema"],
        ["fmt", "--check", str(PLAN)],
        ["report", str(PLAN), "-o", "page.html"],
        ["--debug", "--version"],
    ],
    ids=" ".join,
)
def test_every_command_starts_without_typer(tmp_path: Path, args: list[str]) -> None:
    # typer (with click and the pydantic it checks values with) is a third of a cold
    # start: plancc.cli.launch reads every command's plain arguments itself.
    code, modules = _modules_after(*args, cwd=tmp_path)
    assert code in (0, 1)
    assert not {"typer", "click", "pydantic", "pydantic_core"} & _tops(modules)


def test_help_still_goes_through_typer(tmp_path: Path) -> None:
    code, modules = _modules_after("validate", "--help", cwd=tmp_path)
    assert code == 0
    assert "typer" in _tops(modules)


def test_version_imports_no_pipeline(tmp_path: Path) -> None:
    code, modules = _modules_after("--version", cwd=tmp_path)
    assert code == 0
    assert not {"jinja2", "pydantic", "jsonschema", "ruamel"} & _tops(modules)
    assert not {m for m in modules if m.startswith("plancc.")} - {
        "plancc.cli.launch",
        "plancc.cli.options",
        "plancc.usage",
        "plancc.cli.commands",
        "plancc.cli",
        "plancc.cli.console",
    }


def test_a_plan_whose_model_code_is_absent_does_not_load_the_reader(tmp_path: Path) -> None:
    # Where the checkout its `source` names is missing (plancc's own CI, most machines
    # that only build), PC200 says so without importing the source reader.
    import shutil

    shutil.copytree(ROOT / "plans", tmp_path / "repo" / "plans")
    code, modules = _modules_after(
        "validate", "plans/deepseek_v4_flash.yaml", cwd=tmp_path / "repo"
    )
    assert code == 0
    assert "plancc.source.root" in modules
    assert "plancc.source.reader" not in modules
    assert "plancc.source.checks" not in modules


def test_make_compiles_the_package_when_it_makes_the_environment(tmp_path: Path) -> None:
    # Where PYTHONDONTWRITEBYTECODE is set (CI images, containers), no import writes
    # bytecode: every cold `plancc` from `make run`'s environment would compile what it
    # imports again (0.51x check-jsonschema's cold validate instead of 0.33x). The
    # Makefile compiles the package after installing it; compileall writes the bytecode
    # whatever that variable says.
    import importlib.util
    import os
    import shutil

    dry = subprocess.run(
        ["make", "-n", "-B", ".venv/.installed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    install = next(i for i, line in enumerate(dry) if "pip install" in line and "-e" in line)
    compile_line = next(line for line in dry[install:] if "compileall" in line)
    assert compile_line == ".venv/bin/python -m compileall -q plancc"
    (tmp_path / "plancc" / "lsp").mkdir(parents=True)  # a few modules, one in a subpackage
    for name in ("__init__.py", "api.py", "lsp/__init__.py"):
        shutil.copy(ROOT / "plancc" / name, tmp_path / "plancc" / name)
    subprocess.run(
        [sys.executable, *compile_line.split()[1:]],
        cwd=tmp_path,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=True,
    )
    sources = sorted((tmp_path / "plancc").rglob("*.py"))
    assert len(sources) == 3
    assert [p for p in sources if not Path(importlib.util.cache_from_source(str(p))).exists()] == []
