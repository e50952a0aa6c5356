"""The command line: exit codes, options, commands, and never a traceback.

In-process through typer's CliRunner (fast), plus a few real ``python -m plancc`` runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from plancc import __version__, api
from plancc.check import catalog as all_codes
from plancc.check import check
from plancc.cli.app import app
from plancc.cli.options import COMMANDS, Option
from plancc.codes import STAGE_CODES
from plancc.diagnostics import Diagnostic
from plancc.load import inputs, load
from plancc.resolve import resolve
from plancc.validate import validate

ROOT = Path(__file__).parent.parent
CASES = sorted((ROOT / "tests" / "cases").rglob("*.yaml"))

CLEAN = """\
plancc: 1
model: clean
platform: a2a3
tensors: {w: {shape: [64], dtype: bf16}}
layers: {k: {stages: [{name: s0, reads: [w]}]}}
"""
WARNING = CLEAN.replace("clean", "warned") + "lint: {ignore: [PC999]}\n"
ERROR = CLEAN.replace("clean", "broken").replace("reads: [w]", "reads: [ww]")


def _run(*args: str, **env: str) -> Any:
    env.setdefault("GITHUB_ACTIONS", "")
    env.setdefault("NO_COLOR", "1")
    return CliRunner().invoke(app, list(args), env=env)


@pytest.fixture
def plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, text in (("clean", CLEAN), ("warning", WARNING), ("error", ERROR)):
        (tmp_path / f"{name}.yaml").write_text(text, "utf-8")
    return tmp_path


# -- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["clean.yaml"], 0),
        (["warning.yaml"], 0),
        (["--strict", "warning.yaml"], 1),
        (["--strict", "clean.yaml"], 0),
        (["error.yaml"], 1),
        (["clean.yaml", "error.yaml"], 1),
        (["clean.yaml", "missing.yaml"], 2),
    ],
)
def test_exit_codes(plans: Path, args: list[str], code: int) -> None:
    result = _run("validate", *args)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output


def test_a_clean_plan_prints_only_its_summary(plans: Path) -> None:
    result = _run("validate", "clean.yaml")
    assert result.stdout == (
        "clean.yaml: 0 warms, 0 B warmed, L2 peak 0 B = 0.00× L2 (budget 0.75)\n"
        "0 errors, 0 warnings in 1 plan\n"
    )


def test_quiet_prints_diagnostics_only(plans: Path) -> None:
    result = _run("validate", "--quiet", "clean.yaml", "error.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "error.yaml:5:42: error PC010: unknown tensor 'ww'\n    did you mean 'w'?\n"
    )
    assert _run("validate", "-q", "clean.yaml").stdout == ""


def test_strict_output_is_the_same_only_the_exit_code_differs(plans: Path) -> None:
    lax, strict = _run("validate", "warning.yaml"), _run("validate", "--strict", "warning.yaml")
    assert (lax.exit_code, strict.exit_code) == (0, 1)
    assert lax.stdout == strict.stdout
    assert "warning PC004" in strict.stdout


def test_a_directory_means_its_yaml_and_yml_files_but_not_hidden_ones(plans: Path) -> None:
    (plans / "notes.txt").write_text("not a plan")
    (plans / "other.yml").write_text("not: [valid")
    (plans / ".hidden.yaml").write_text("not: [valid")
    result = _run("validate", "-q", "-f", "json", ".")
    assert result.exit_code == 1
    files = {d["file"] for d in json.loads(result.stdout)["diagnostics"]}
    assert files == {"error.yaml", "other.yml", "warning.yaml"}
    summary = _run("validate", ".").stdout.splitlines()[-1]
    assert summary == "2 errors, 1 warning in 4 plans"


def test_an_empty_directory_is_exit_2(plans: Path) -> None:
    (plans / "empty").mkdir()
    (plans / "empty" / ".hidden.yaml").write_text(CLEAN)
    result = _run("validate", "empty")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "plancc: empty: no *.yaml or *.yml plans in this directory\n"


def test_unreadable_directory_entries_are_skipped_and_named(plans: Path) -> None:
    (plans / "d").mkdir()
    (plans / "d" / "dir.yaml").mkdir()
    (plans / "d" / "broken.yml").symlink_to(plans / "nowhere.yaml")
    os.mkfifo(plans / "d" / "fifo.yaml")
    (plans / "d" / "ok.yaml").write_text(CLEAN)
    result = _run("validate", "d")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "0 errors, 0 warnings in 1 plan"
    assert result.stderr == (
        "plancc: skipped d/broken.yml: No such file or directory\n"
        "plancc: skipped d/dir.yaml: is a directory\n"
        "plancc: skipped d/fifo.yaml: not a file\n"
    )
    json_run = _run("validate", "-f", "json", "d")
    assert json.loads(json_run.stdout)["errors"] == 0  # stdout stays one JSON document
    assert json_run.stderr == result.stderr


def test_an_unreadable_plan_named_on_the_command_line_is_exit_2(plans: Path) -> None:
    (plans / "gone.yaml").symlink_to(plans / "nowhere.yaml")
    result = _run("validate", "clean.yaml", "gone.yaml")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "plancc: gone.yaml: cannot read: No such file or directory\n"


@pytest.mark.parametrize("command", [["validate", "--fix"], ["validate"], ["fmt"]])
@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("nowhere.yaml", "No such file or directory"),
        ("loop.yaml", "Too many levels of symbolic links"),
    ],
)
def test_a_dangling_or_looping_link_is_a_file_that_cannot_be_read(
    plans: Path, command: list[str], link: str, why: str
) -> None:
    """Under --fix it was taken for standard input ("-: --fix rewrites plan files in place")."""
    (plans / "loop.yaml").symlink_to(plans / "loop.yaml")
    (plans / "d.yaml").symlink_to(plans / link)
    result = _run(*command, "d.yaml")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"plancc: d.yaml: cannot read: {why}\n"


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_missing_path_is_one_line_on_stderr_and_nothing_on_stdout(plans: Path, fmt: str) -> None:
    result = _run("validate", "--format", fmt, "clean.yaml", "missing.yaml")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "plancc: missing.yaml: no such file or directory\n"


def test_arguments_in_any_order_give_the_same_report(plans: Path) -> None:
    one = _run("validate", "clean.yaml", "error.yaml", "warning.yaml")
    two = _run("validate", "warning.yaml", "./error.yaml", "clean.yaml", "error.yaml")
    assert one.stdout == two.stdout
    assert one.stdout.count("PC010") == 1  # a plan named twice is checked once


@pytest.mark.parametrize(
    "second",
    [
        "{root}/clean.yaml",  # absolute
        "{root}/../{name}/clean.yaml",  # through ..
        ".",  # its directory
        "{root}",
        "link.yaml",  # a symlink to it
        "hard.yaml",  # a hard link
    ],
)
def test_one_file_under_two_spellings_is_one_plan(plans: Path, second: str) -> None:
    (plans / "link.yaml").symlink_to(plans / "clean.yaml")
    os.link(plans / "clean.yaml", plans / "hard.yaml")
    other = second.format(root=plans, name=plans.name)
    for args in (["clean.yaml", other], [other, "clean.yaml"]):
        result = _run("validate", "-f", "json", *args)
        data = json.loads(result.stdout)
        assert "PC011" not in {d["code"] for d in data["diagnostics"]}, args
        if other in (str(plans), "."):
            continue  # the directory adds the other plans
        assert result.exit_code == 0, result.stdout
        assert len(data["plans"]) == 1, args


def test_a_file_given_twice_keeps_its_first_spelling(plans: Path) -> None:
    absolute = (plans / "error.yaml").as_posix()
    assert [p.label for p in inputs.collect(["error.yaml", absolute]).plans] == ["error.yaml"]
    assert [p.label for p in inputs.collect([absolute, "error.yaml"]).plans] == [absolute]
    both = inputs.collect(["clean.yaml", ".", absolute]).plans
    assert [p.label for p in both] == ["clean.yaml", "error.yaml", "warning.yaml"]
    result = _run("validate", "-q", absolute, "error.yaml")
    assert result.stdout.count("PC010") == 1
    assert result.stdout.startswith(f"{absolute}:5:42: error PC010")


def test_two_plans_with_the_same_model_are_pc011(plans: Path) -> None:
    (plans / "copy.yaml").write_text(CLEAN)
    result = _run("validate", "-q", "copy.yaml", "clean.yaml")
    assert result.exit_code == 1
    # Plans are taken in file order: the later file is the duplicate.
    assert result.stdout == (
        "copy.yaml:2:8: error PC011: model 'clean' is also the model of clean.yaml\n"
        "    each plan's outputs are named after its model\n"
    )


def test_two_plans_whose_models_differ_only_in_case_are_pc011(plans: Path) -> None:
    (plans / "upper.yaml").write_text(CLEAN.replace("model: clean", "model: Clean"))
    result = _run("validate", "-q", "upper.yaml", "clean.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "upper.yaml:2:8: error PC011: model 'Clean' differs only in case from 'clean', "
        "the model of clean.yaml\n"
        "    each plan's outputs are named after its model, "
        "and a case-insensitive filesystem sees one name\n"
    )


def test_two_plans_missing_their_model_are_not_pc011(plans: Path) -> None:
    for name in ("x.yaml", "y.yaml"):
        (plans / name).write_text(CLEAN.replace("model: clean\n", "model: [1]\n"))
    result = _run("validate", "-q", "-f", "json", "x.yaml", "y.yaml")
    codes = [d["code"] for d in json.loads(result.stdout)["diagnostics"]]
    assert codes == ["PC002", "PC002"]


# -- other commands --------------------------------------------------------------------------


def test_version() -> None:
    result = _run("--version")
    assert (result.exit_code, result.stdout) == (0, f"plancc {__version__}\n")


@pytest.mark.parametrize("code", ["PC030", "pc030"])
def test_explain(code: str) -> None:
    result = _run("explain", code)
    assert result.exit_code == 0
    pc030 = next(c for c in all_codes() if c.id == "PC030")
    assert result.stdout == f"PC030 {pc030.name} (error)\n\n{pc030.doc}\n"
    assert "L2" in pc030.doc


@pytest.mark.parametrize("name", ["l2-budget", "L2-Budget"])
def test_explain_takes_the_names_rules_prints(name: str) -> None:
    assert _run("explain", name).stdout == _run("explain", "PC032").stdout
    for line in _run("rules").stdout.splitlines():
        code, _, rule = line.split()
        assert _run("explain", rule).stdout.startswith(f"{code} {rule} ")


def test_explain_a_core_code() -> None:
    result = _run("explain", "PC013")
    assert result.stdout.startswith("PC013 bad-identifier (error)\n\n")
    assert "at most 100\ncharacters long" in result.stdout


@pytest.mark.parametrize(
    ("code", "stderr"),
    [
        ("PC999", "plancc: unknown code 'PC999'\n"),
        ("PC0013", "plancc: unknown code 'PC0013'; did you mean 'PC013'?\n"),
        (
            "PC10",
            "plancc: unknown code 'PC10'; codes that start with it: "
            + ", ".join(c.id for c in all_codes() if c.id.startswith("PC10"))
            + "\n",
        ),
        ("pc9", "plancc: unknown code 'pc9'\n"),
        ("l2-budgett", "plancc: unknown code 'l2-budgett'; did you mean 'l2-budget'?\n"),
    ],
)
def test_explain_an_unknown_code_is_exit_2(code: str, stderr: str) -> None:
    result = _run("explain", code)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == stderr


def test_rules_lists_every_code() -> None:
    result = _run("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    codes = all_codes()
    assert lines == [f"{c.id}  {c.severity.value:<7}  {c.name}" for c in codes]
    ids = [c.id for c in codes]
    assert {c.id for c in STAGE_CODES} <= set(ids)  # the stages' codes, not only the rules'
    assert ids == sorted(ids)
    assert lines[0] == "PC001  error    yaml-syntax"
    assert "PC004  warning  bad-silence" in lines


def test_shell_completion_is_offered() -> None:
    result = _run("--help")
    assert result.exit_code == 0
    assert "--install-completion" in result.stdout
    assert "--show-completion" in result.stdout


def test_usage_errors_are_exit_2_without_traceback() -> None:
    for args in (["validate"], ["validate", "--bogus", "x"], ["explain"], ["nope"], []):
        result = _run(*args)
        assert result.exit_code == 2, args
        assert "Traceback" not in result.output


# -- internal errors -------------------------------------------------------------------------


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom")


def test_an_internal_error_is_one_line_and_exit_2(
    plans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "diagnose_plan", _explode)
    result = _run("validate", "clean.yaml")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "plancc: internal error: RuntimeError: boom\n"


def test_debug_shows_the_traceback(plans: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "diagnose_plan", _explode)
    result = _run("--debug", "validate", "clean.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert 'raise RuntimeError("boom")' in result.stderr
    assert result.stderr.endswith("plancc: internal error: RuntimeError: boom\n")
    # --debug lasts one run only
    assert "Traceback" not in _run("validate", "clean.yaml").stderr


# -- no input gives a traceback --------------------------------------------------------------


@pytest.mark.parametrize("plan", CASES, ids=lambda p: str(p.relative_to(ROOT / "tests" / "cases")))
def test_no_case_gives_a_traceback(plan: Path) -> None:
    for fmt in ("text", "json", "github", "sarif"):
        result = _run("validate", "--format", fmt, str(plan))
        assert result.exit_code in (0, 1), result.output
        assert result.stderr == ""


_PIECES = [
    "plancc: 1\n",
    "model: m\n",
    "platform: a2a3\n",
    "tensors:\n",
    "  w: ",
    "{shape: [",
    "D",
    ", ",
    "64",
    "], dtype: bf16}\n",
    "layers:\n",
    "  k:\n",
    "    stages:\n",
    "      - {name: s0, task: t, reads: [w]}\n",
    "    warms:\n",
    "      - {name: a, after: s0, tensors: [w]}\n",
    "dims: {D: ",
    "D * 2",
    "}\n",
    "forward: [k, {layer: k, repeat: ",
    "]\n",
    "&x ",
    "*x",
    "!!str ",
    "[",
    "]",
    "{",
    "}",
    ": ",
    "- ",
    "\n",
    "  ",
    "0",
    "-1",
    "1.5",
    ".nan",
    "~",
    "'",
    '"',
    "#",
    "\t",
    "é",
    "\x00",
    "\ufeff",
    "99999999999999999999999",
    "lint: {ignore: [PC999]}\n",
    "config: c.json\n",
]


@pytest.mark.slow
@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_no_input_raises(pieces: list[str]) -> None:
    raw = "".join(pieces).encode("utf-8", "surrogatepass")
    doc = load("fuzz.yaml", raw)  # every stage, as diagnose_plan runs them
    if isinstance(doc, Diagnostic):
        assert doc.code == "PC001"
        return
    validated = validate(doc)
    plan, _ = resolve(validated)
    if plan is not None:
        check(plan)


# -- real processes --------------------------------------------------------------------------


def _python_m(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-m", "plancc", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_python_m_plancc(plans: Path) -> None:
    version = _python_m("--version", cwd=plans)
    assert (version.returncode, version.stdout, version.stderr) == (
        0,
        f"plancc {__version__}\n",
        "",
    )
    ok = _python_m("validate", "clean.yaml", cwd=plans)
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout.endswith("0 errors, 0 warnings in 1 plan\n")
    bad = _python_m("validate", "-q", "error.yaml", cwd=plans)
    assert bad.returncode == 1
    assert (
        bad.stdout == "error.yaml:5:42: error PC010: unknown tensor 'ww'\n    did you mean 'w'?\n"
    )
    missing = _python_m("validate", "-f", "json", "missing.yaml", cwd=plans)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == "plancc: missing.yaml: no such file or directory\n"


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["validate", "-f", "json", "--bogus", "x.yaml"],
            "plancc: no such option: --bogus (try 'plancc validate --help')\n",
        ),
        (["validate"], "plancc: missing argument 'PATH' (try 'plancc validate --help')\n"),
        (["nope"], "plancc: no such command 'nope' (try 'plancc --help')\n"),
        ([], "plancc: missing command (try 'plancc --help')\n"),
        (
            ["build", "clean.yaml"],
            "plancc: missing option '--out' / '-o' (try 'plancc build --help')\n",
        ),
        (["explain", "PC030", "PC031"], None),
        (
            ["validate", "-f", "xml", "clean.yaml"],
            "plancc: invalid value for '--format' / '-f': 'xml' is not one of 'auto', 'text',"
            " 'json', 'github', 'sarif' (try 'plancc validate --help')\n",
        ),
        (["validate", "--stric", "clean.yaml"], None),
        (["--bogus"], None),
    ],
)
def test_a_usage_error_is_one_line_on_stderr(
    plans: Path, args: list[str], stderr: str | None
) -> None:
    proc = _python_m(*args, cwd=plans)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.startswith("plancc: ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.endswith("\n")
    if stderr is not None:
        assert proc.stderr == stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_names_values_by_metavar_not_python_type(command: str) -> None:
    # `--out DIR`, `PATH...`, `[text|json]`: never `<str>`, `<list[str]>` or `{paths}`.
    text = _run(command, "--help").stdout
    assert text.startswith(f"Usage: plancc {command} [OPTIONS]")
    assert not re.search(r"<(str|int|bool|list)\b|\{|\b(str|int|bool)\b|list\[", text), text
    for p in COMMANDS[command].params:
        shown = p.metavar if isinstance(p.decl, Option) else p.decl.metavar
        assert p.flag or (shown is not None and shown in text), p.name


@pytest.mark.slow
def test_help_version_and_completion_still_work(plans: Path) -> None:
    for args, usage in (
        (["--help"], "Usage: plancc [OPTIONS] COMMAND"),
        (["validate", "--help"], "Usage: plancc validate [OPTIONS]"),
        (["build", "--help"], "Usage: plancc build [OPTIONS]"),
    ):
        proc = _python_m(*args, cwd=plans)
        assert (proc.returncode, proc.stderr) == (0, ""), args
        assert proc.stdout.startswith(usage)
    # Shell named, not detected from the processes above (`make` is none of typer's shells).
    named = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    proc = _python_m("--show-completion", "bash", cwd=plans, **named)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "_PLANCC_COMPLETE" in proc.stdout
    complete = {"_PLANCC_COMPLETE": "complete_bash", "COMP_WORDS": "plancc val", "COMP_CWORD": "1"}
    proc = _python_m(cwd=plans, **complete)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "validate\n", "")
    proc = _python_m("explain", "PC999", cwd=plans)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "plancc: unknown code 'PC999'\n")


@pytest.mark.slow
def test_an_ascii_terminal_gets_escapes_not_a_crash(plans: Path) -> None:
    (plans / "dim.yaml").write_text(
        CLEAN.replace("model: clean", "model: dim\ndims: {D: 64, E: 'D % 64'}"), "utf-8"
    )
    ascii_ = {"PYTHONIOENCODING": "ascii"}
    text = _python_m("validate", "dim.yaml", cwd=plans, **ascii_)
    assert (text.returncode, text.stderr) == (1, "")
    assert "a dimension must be \\u2265 1" in text.stdout
    assert "= 0.00\\u00d7 L2" in text.stdout
    for fmt in ("json", "sarif"):  # the escape keeps them valid JSON, with the same content
        utf8 = _python_m("validate", "-f", fmt, "dim.yaml", cwd=plans)
        proc = _python_m("validate", "-f", fmt, "dim.yaml", cwd=plans, **ascii_)
        assert (proc.returncode, proc.stderr) == (1, "")
        assert proc.stdout.isascii()
        assert json.loads(proc.stdout) == json.loads(utf8.stdout)
    explain = _python_m("explain", "PC012", cwd=plans, **ascii_)
    assert (explain.returncode, explain.stderr) == (0, "")
    missing = _python_m("validate", "é.yaml", cwd=plans, **ascii_)
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1
    assert "no such file or directory" in missing.stderr


def test_the_shipped_plans_validate(tmp_path: Path) -> None:
    count = len(list((ROOT / "plans").glob("*.yaml")))
    result = _python_m("validate", str(ROOT / "plans"), cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, ""), result.stdout
    # One PC200 each: no pypto-lib checkout beside this one, their sources are not checked.
    assert result.stdout.count("warning PC200") == count
    assert result.stdout.endswith(f"\n0 errors, {count} warnings in {count} plans\n")


def test_a_closed_stdout_is_not_an_internal_error(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # `plancc rules | head -0`: the reader is gone before plancc writes
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "plancc", "rules"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert proc.returncode == 2
    assert proc.stderr == ""


@pytest.mark.parametrize("args", [("validate", "plans"), ("rules",), ("--version",), ("--help",)])
@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        (None, "standard output is closed"),  # `plancc … >&-`
        ("/dev/full", "No space left on device"),
    ],
)
def test_output_that_cannot_be_written_is_one_line_and_exit_2(
    args: tuple[str, ...], stdout: str | None, message: str
) -> None:
    if stdout is not None and not Path(stdout).exists():
        pytest.skip(f"{stdout} is not on this system")
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(open(stdout, "w")) if stdout else None
        proc = subprocess.run(
            [sys.executable, "-m", "plancc", *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=target,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
            # No stdout at all: the child starts with file descriptor 1 closed.
            preexec_fn=None if target else (lambda: os.close(1)),
        )
    assert (proc.returncode, proc.stderr) == (2, f"plancc: cannot write output: {message}\n")
