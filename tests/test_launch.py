"""plancc.cli.launch: whatever it reads itself, from the commands' declarations, gives the
same output and exit code as typer's path, and anything else is left to typer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plancc.cli import app as cli
from plancc.cli import console, launch
from plancc.cli.options import COMMANDS, Option
from tests.test_cli import CLEAN, ERROR, WARNING


@pytest.fixture
def plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two like directories, ``ours`` and ``typers`` (a build writes), in ``ours``."""
    monkeypatch.setenv("GITHUB_ACTIONS", "")
    monkeypatch.setenv("NO_COLOR", "1")
    for side in ("ours", "typers"):
        for name, text in (("clean", CLEAN), ("warning", WARNING), ("error", ERROR)):
            (tmp_path / side).mkdir(exist_ok=True)
            (tmp_path / side / f"{name}.yaml").write_text(text, "utf-8")
    monkeypatch.chdir(tmp_path / "ours")
    return tmp_path


READ = [
    ["validate", "clean.yaml"],
    ["validate", "warning.yaml", "--strict"],
    ["validate", "-q", "error.yaml", "clean.yaml"],
    ["validate", "--format", "json", "error.yaml"],
    ["validate", "--format=sarif", "warning.yaml"],
    ["validate", "-f", "github", "--show-allowed", "error.yaml"],
    ["validate", "--format", "text", "--format", "json", "clean.yaml"],
    ["validate", "missing.yaml"],
    ["validate", ".", "--quiet"],
    ["validate", "--", "clean.yaml"],
    ["validate", "--stdin-filename", "x.yaml", "clean.yaml"],
    ["build", "clean.yaml", "--out", "out"],
    ["build", "clean.yaml", "-o", "out", "--check"],
    ["build", "--out=out", "error.yaml", "--format", "json"],
    ["build", "warning.yaml", "--strict", "-o", "out", "-q"],
    ["build", "clean.yaml", "--out", "clean.yaml"],
    ["--debug", "validate", "clean.yaml"],
    ["--version"],
    ["--version", "nope", "--bogus"],
    ["rules"],
    ["explain", "PC030"],
    ["explain", "l2-budget"],
    ["explain", "PC10"],
    ["schema"],
    ["fmt", "--check", "clean.yaml", "warning.yaml"],
    ["fmt", "--diff", "error.yaml"],
    ["report", "clean.yaml", "-o", "clean.html"],
]
LEFT_TO_TYPER = [
    [],
    ["validate"],
    ["validate", "--help"],
    ["--help"],
    ["--bogus", "validate", "clean.yaml"],
    ["--install-completion"],
    ["validate", "--bogus", "clean.yaml"],
    ["validate", "--format", "yaml", "clean.yaml"],
    ["validate", "--format", "JSON", "clean.yaml"],
    ["validate", "--format"],
    ["validate", "-fjson", "clean.yaml"],
    ["validate", "-qf", "json", "clean.yaml"],
    ["validate", "--strict=1", "clean.yaml"],
    ["validate", "-f=json", "clean.yaml"],
    ["validate", "--stdin-filename", "-q", "clean.yaml"],
    ["validate", "--out", "out", "clean.yaml"],
    ["validate", "--str", "clean.yaml"],
    ["build", "clean.yaml"],
    ["build", "--check", "--out", "out"],
    ["rules", "extra"],
    ["explain"],
    ["explain", "PC030", "PC031"],
    ["report", "clean.yaml", "--measure"],
    ["measure", "--baseline", "b.log"],  # --manifest is required
    ["nope"],
]


def _exit(run: object) -> int:
    with pytest.raises(SystemExit) as exc:
        run()  # type: ignore[operator]
    return int(exc.value.code or 0)


def _through_typer(argv: list[str]) -> int:
    sys.argv = ["plancc", *argv]
    return _exit(cli.main)


@pytest.mark.parametrize("argv", READ, ids=" ".join)
def test_what_launch_reads_runs_as_typer_runs_it(
    argv: list[str],
    plans: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "argv", sys.argv)
    monkeypatch.setitem(console.state, "debug", False)
    assert launch.parse(argv) is not None
    ours = _exit(lambda: launch.main(argv))
    ours_out = capsys.readouterr()
    monkeypatch.chdir(plans / "typers")
    theirs = _through_typer(argv)
    theirs_out = capsys.readouterr()
    assert (ours, ours_out.out, ours_out.err) == (theirs, theirs_out.out, theirs_out.err)
    assert ours_out.out or ours_out.err  # it printed something to compare


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_is_left_to_typer(argv: list[str], plans: Path) -> None:
    assert launch.parse(argv) is None


def test_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_PLANCC_COMPLETE", "bash_complete")
    assert launch.parse(["validate", "clean.yaml"]) is None


def test_what_is_left_gets_typers_message(
    plans: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["plancc", "validate", "--format", "yaml", "clean.yaml"])
    assert _exit(launch.main) == 2
    assert capsys.readouterr().err.startswith("plancc: invalid value for '--format' / '-f'")


def test_the_console_script_leaves_at_once_with_all_its_output(
    plans: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the console script, launch ends the process without tearing it down: what it
    # printed must all be out first, through a pipe, with the exit code.
    many = "".join(f"  t{i}: {{shape: [{i + 1}], dtype: nope}}\n" for i in range(400))
    plan = "plancc: 1\nmodel: many\nplatform: a2a3\ntensors:\n" + many
    (plans / "ours" / "many.yaml").write_text(plan + "layers: {k: {stages: [{name: s}]}}\n")
    argv = ["validate", "--format", "json", "many.yaml", "clean.yaml"]
    proc = subprocess.run(
        [sys.executable, "-m", "plancc", *argv], capture_output=True, text=True, check=False
    )
    assert _exit(lambda: launch.main(argv)) == proc.returncode == 1
    assert proc.stdout == capsys.readouterr().out
    assert len(json.loads(proc.stdout)["diagnostics"]) == 400


@pytest.mark.parametrize("name", ["", *COMMANDS], ids=lambda n: n or "(root)")
def test_dash_h_is_help_on_every_command(
    name: str, plans: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plancc CMD -h` is `plancc CMD --help`, also through the console script (which
    leaves both to typer, also after other arguments); no command takes `-h` for itself."""
    monkeypatch.setattr(sys, "argv", sys.argv)
    before = [name] if name else []
    shown = []
    for argv in ([*before, "--help"], [*before, "-h"], [*before, "clean.yaml", "-h"]):
        if not name and len(argv) > 1:
            continue  # the root takes no arguments
        assert launch.parse(argv) is None
        sys.argv = ["plancc", *argv]  # typer reads the process's arguments
        assert _exit(lambda argv=argv: launch.main(argv)) == 0
        shown.append(capsys.readouterr())
    assert shown[0].out.startswith("Usage: plancc")
    assert {(s.out, s.err) for s in shown} == {(shown[0].out, "")}
    assert "-h, --help" in shown[0].out
    for c in COMMANDS.values():
        names = [n for p in c.params if isinstance(p.decl, Option) for n in p.decl.names]
        assert "-h" not in names, c.name


@pytest.mark.parametrize(("plan", "code"), [("clean.yaml", 0), ("error.yaml", 1), ("nope.yaml", 2)])
def test_a_closed_stderr_changes_no_exit_code(plans: Path, plan: str, code: int) -> None:
    # `2>&-`: Python starts with sys.stderr None; the report still goes to stdout.
    shell = f'"{sys.executable}" -m plancc validate {plan} 2>&-'
    proc = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, check=False)
    assert proc.returncode == code
    assert proc.stdout.startswith(plan) or code == 2
