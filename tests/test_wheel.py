"""A non-editable install works: the wheel ships the schemas and templates, and its plancc runs.

The wheel is built offline from a copy of the sources (so the checkout gets no build/
or egg-info), then installed without dependencies into a fresh venv that sees this
environment's site-packages through a .pth line. That line adds the directory only:
the .pth files in it (the editable install of plancc) are not run, so the venv's
``plancc`` is the wheel's. The whole module takes a few seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # `make test` skips it; .ci/run runs it

ROOT = Path(__file__).parent.parent
PLAN = ROOT / "tests" / "cases" / "valid" / "contract_example.yaml"


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(cwd)},
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("plancc", "schemas", "templates"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    dist = base / "dist"
    built = _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--wheel-dir",
        dist,
        src,
        cwd=base,
    )
    assert built.returncode == 0, built.stderr
    (found,) = dist.glob("plancc-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path) -> Path:
    home = wheel.parent.parent / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", home, cwd=wheel.parent)
    assert made.returncode == 0, made.stderr
    python = home / "bin" / "python"
    purelib = _run(
        python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=home
    )
    deps = sysconfig.get_paths()["purelib"]  # pydantic, jsonschema, ... of this environment
    (Path(purelib.stdout.strip()) / "plancc-test-deps.pth").write_text(deps + "\n")
    installed = _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        wheel,
        cwd=home,
    )
    assert installed.returncode == 0, installed.stderr
    return home


def test_the_wheel_ships_schemas_templates_and_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "plancc/schemas/warm-plan.schema.json" in names
    assert "plancc/py.typed" in names
    assert "plancc/tables/platforms.json" in names
    for folder, package in (("schemas", "plancc/schemas"), ("templates", "plancc/templates")):
        shipped = sorted(p.name for p in (ROOT / folder).iterdir() if p.is_file())
        assert shipped, folder
        for name in shipped:
            assert f"{package}/{name}" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "plancc = plancc.cli.launch:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_installed_plancc_is_the_wheel(venv: Path, tmp_path: Path) -> None:
    probe = _run(
        venv / "bin" / "python",
        "-c",
        "import plancc, plancc.tables.resources as r\n"
        "print(plancc.__file__)\n"
        "print(r.resource_dir('schemas').joinpath('warm-plan.schema.json'))\n"
        "for f in r.resource_dir('templates').iterdir(): print(f)\n",
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    lines = probe.stdout.splitlines()
    assert len(lines) >= 3
    for line in lines:
        assert Path(line).is_relative_to(venv), line
        assert Path(line).is_file(), line


def test_the_installed_plancc_validates(venv: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    shutil.copy2(PLAN, plan)
    ok = _run(venv / "bin" / "plancc", "validate", "--format", "json", "plan.yaml", cwd=tmp_path)
    assert (ok.returncode, ok.stderr) == (0, "")
    data = json.loads(ok.stdout)
    assert (data["diagnostics"], data["errors"], data["warnings"]) == ([], 0, 0)
    plan.write_text(PLAN.read_text("utf-8").replace("dtype: int8", "dtype: int7", 1))
    bad = _run(venv / "bin" / "plancc", "validate", "-q", "plan.yaml", cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stdout.startswith("plan.yaml:20:48: error PC023: unknown dtype 'int7'")


def test_the_installed_plancc_prints_the_schema(venv: Path, tmp_path: Path) -> None:
    result = _run(venv / "bin" / "plancc", "schema", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (ROOT / "schemas" / "warm-plan.schema.json").read_text("utf-8")


def test_the_installed_plancc_renders_with_its_templates(venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy2(PLAN, tmp_path / "plan.yaml")
    result = _run(venv / "bin" / "plancc", "build", "plan.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    module = out / "deepseek_v4_flash_warms.py"
    assert module.exists()
    compile(module.read_text("utf-8"), str(module), "exec")
