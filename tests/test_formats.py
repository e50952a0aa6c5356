"""Report formats: text (exact bytes, colour), json, github annotations and SARIF 2.1.0."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from jsonschema import Draft4Validator
from typer.testing import CliRunner

from plancc.api import Validation as Report
from plancc.api import validate_paths
from plancc.check import catalog as all_codes
from plancc.cli.app import app
from plancc.cli.commands import Format, _colour, _emit
from plancc.formats import github as fmt_github
from plancc.formats import sarif as fmt_sarif
from plancc.formats import text as fmt_text

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

PLAN_A = """\
plancc: 1
model: a
platform: a2a3
dims: {D: 64, E: "D % 64"}
tensors: {w: {shape: [D, DD], dtype: bf16}}
layers: {k: {stages: [{name: s0, reads: [w, x]}]}}
"""
PLAN_B = """\
plancc: 1
model: b
platform: a2a3
tensors: {w: {shape: [64], dtype: bf16}}
layers: {k: {stages: [{name: s0}]}}
lint: {ignore: [PC999]}
"""
SUMMARY = "0 warms, 0 B warmed, L2 peak 0 B = 0.00× L2 (budget 0.75)"

TEXT = f"""\
a.yaml:4:18: error PC012: dim 'E' 'D % 64' is 0; a dimension must be ≥ 1
a.yaml:5:26: error PC010: unknown dim 'DD'
    did you mean 'D'?
a.yaml:6:45: error PC010: unknown tensor 'x'
a.yaml: {SUMMARY}
b.yaml:6:17: warning PC004: lint.ignore names 'PC999', which is not a rule id; it silences nothing
    `plancc rules` lists every id
b.yaml: {SUMMARY}
3 errors, 1 warning in 2 plans
"""

GITHUB = """\
::error file=a.yaml,line=4,col=18,title=PC012::dim 'E' 'D %25 64' is 0; a dimension must be ≥ 1
::error file=a.yaml,line=5,col=26,title=PC010::unknown dim 'DD'%0Adid you mean 'D'?
::error file=a.yaml,line=6,col=45,title=PC010::unknown tensor 'x'
::warning file=b.yaml,line=6,col=17,title=PC004::lint.ignore names 'PC999', which is not a rule \
id; it silences nothing%0A`plancc rules` lists every id
"""


@pytest.fixture
def plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two plans in the working directory: three errors in a.yaml, one warning in b.yaml."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(PLAN_A, "utf-8")
    (tmp_path / "b.yaml").write_text(PLAN_B, "utf-8")
    return ["b.yaml", "a.yaml"]  # reports are sorted by file, whatever the argument order


@pytest.fixture
def report(plans: list[str]) -> Report:
    return validate_paths(plans)


def _run(args: list[str], **env: str) -> Any:
    env.setdefault("GITHUB_ACTIONS", "")
    return CliRunner().invoke(app, args, env=env)


# -- text ------------------------------------------------------------------------------------


def test_text_exact_bytes(report: Report) -> None:
    assert fmt_text.text(report) == TEXT


def test_text_through_the_cli(plans: list[str]) -> None:
    result = _run(["validate", *plans])
    assert result.exit_code == 1
    assert result.stdout == TEXT
    assert result.stderr == ""


def test_text_quiet_has_no_summary(plans: list[str]) -> None:
    result = _run(["validate", "--quiet", *plans])
    assert result.stdout == "".join(
        line + "\n"
        for line in TEXT.splitlines()
        if SUMMARY not in line and " in 2 plans" not in line
    )


def test_text_clean_plan_is_only_the_summary(plans: list[str]) -> None:
    result = _run(["validate", "b.yaml"])  # a warning only: exit 0
    assert result.exit_code == 0
    last = result.stdout.splitlines()[-2:]
    assert last == [f"b.yaml: {SUMMARY}", "0 errors, 1 warning in 1 plan"]


WARNED = """\
plancc: 1
model: {model}
platform: a2a3
tensors: {{w: {{shape: [64], dtype: bf16}}, v: {{shape: [64], dtype: bf16}}}}
layers: {{k: {{stages: [{{name: s0, task: t0}}, {{name: g}}, {{name: s1, reads: [w]}}], warms: \
[{{name: x, after: s0, tensors: [w]}}, {{name: y, after: s0, tensors: [v], allow: [PC101], \
reason: measured}}]}}}}
"""


def _warned_plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two plans in the working directory, each with a warning (PC041) and a silenced one."""
    monkeypatch.chdir(tmp_path)
    for model in ("a", "b"):
        (tmp_path / f"{model}.yaml").write_text(WARNED.format(model=model), "utf-8")
    return ["b.yaml", "a.yaml"]


def _warned(file: str) -> list[str]:
    return [
        f"{file}:5:156: warning PC041: tensor 'v' is read by no stage of layer kind 'k': "
        "warming it is pure overhead",
        f"{file}:5:142: allowed warning PC101: warm 'y' shares anchor 's0' with warm 'x': two "
        "scopes split the SDMA bandwidth",
        "    reason: allow on warm 'y': measured",
    ]


def test_text_ends_each_plan_with_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each plan's diagnostics and silenced warnings, then its summary; the totals last.
    result = _run(["validate", "--show-allowed", *_warned_plans(tmp_path, monkeypatch)])
    assert result.exit_code == 0
    summary = "2 warms, 256 B warmed, L2 peak 256 B = 0.00× L2 (budget 0.75)"
    assert result.stdout.splitlines() == [
        *_warned("a.yaml"),
        f"a.yaml: {summary}",
        *_warned("b.yaml"),
        f"b.yaml: {summary}",
        "0 errors, 2 warnings in 2 plans",
    ]


def test_build_text_ends_each_plan_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "out").mkdir()
    result = _run(
        ["build", "--out", "out", "--show-allowed", *_warned_plans(tmp_path, monkeypatch)]
    )
    assert result.exit_code == 0
    line = "2 warms, 256 B warmed, L2 peak 0.00× L2 -> written: out/{0}_warms.py, out/{0}_warms"
    assert result.stdout.splitlines() == [
        *_warned("a.yaml"),
        f"a.yaml: {line.format('a')}.manifest.json",
        *_warned("b.yaml"),
        f"b.yaml: {line.format('b')}.manifest.json",
        "0 errors, 2 warnings in 2 plans; 4 written, 0 unchanged",
    ]
    result = _run(["build", "--out", "out", "--check", "--quiet", "b.yaml", "a.yaml"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [_warned("a.yaml")[0], _warned("b.yaml")[0]]


def test_text_colour(report: Report) -> None:
    coloured = fmt_text.text(report, colour=True)
    assert coloured.startswith("\033[1ma.yaml:4:18:\033[0m \033[1;31merror\033[0m PC012: ")
    assert "\033[1;33mwarning\033[0m PC004" in coloured
    assert "    \033[2mdid you mean 'D'?\033[0m\n" in coloured
    plain = coloured
    for code in ("\033[1;31m", "\033[1;33m", "\033[1m", "\033[2m", "\033[0m"):
        plain = plain.replace(code, "")
    assert plain == TEXT


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("tty", "no_color", "coloured"),
    [
        (True, None, True),
        (True, "1", False),
        (True, "0", False),  # any non-empty value, even "0", disables it (no-color.org)
        (True, "", True),  # set but empty: as if unset
        (False, None, False),
        (False, "", False),
    ],
)
def test_colour_only_on_a_terminal_without_no_color(
    report: Report,
    monkeypatch: pytest.MonkeyPatch,
    tty: bool,
    no_color: str | None,
    coloured: bool,
) -> None:
    out = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    _emit(report, Format.auto, quiet=False, show_allowed=False)
    assert ("\033[" in out.getvalue()) is coloured
    assert out.getvalue() == fmt_text.text(report, colour=coloured)


def _on_a_pty(args: list[str], cwd: Path, **env: str) -> bytes:
    """Run `python -m plancc ARGS` with its stdout on a pseudo-terminal; what it printed."""
    master, slave = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "plancc", *args],
        cwd=cwd,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env={**environment, **env},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 1
    return b"".join(chunks)


def test_colour_on_a_real_terminal(plans: list[str], tmp_path: Path) -> None:
    assert b"\033[1;31merror\033[0m" in _on_a_pty(["validate", *plans], tmp_path)
    assert b"\033[" not in _on_a_pty(["validate", *plans], tmp_path, NO_COLOR="1")
    assert b"\033[1;31merror\033[0m" in _on_a_pty(["validate", *plans], tmp_path, NO_COLOR="")


def test_validate_and_build_decide_colour_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "")
    monkeypatch.setattr(sys, "stdout", _Terminal())
    assert _colour()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _colour()


# -- json ------------------------------------------------------------------------------------


def test_json(plans: list[str]) -> None:
    result = _run(["validate", "--format", "json", *plans])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {"diagnostics", "errors", "warnings", "notices", "plans"}
    assert (data["errors"], data["warnings"]) == (3, 1)
    assert data["diagnostics"][1] == {
        "file": "a.yaml",
        "line": 5,
        "col": 26,
        "severity": "error",
        "code": "PC010",
        "message": "unknown dim 'DD'",
        "hint": "did you mean 'D'?",  # as text prints it under the message
        "fix": {  # a guess at what was meant: unsafe
            "title": "replace 'DD' with 'D'",
            "safety": "unsafe",
            "edits": [{"op": "replace", "path": ["tensors", "w", "shape", 1], "value": "D"}],
        },
    }
    assert [d.get("hint") for d in data["diagnostics"]] == [
        None,
        "did you mean 'D'?",
        None,
        "`plancc rules` lists every id",
    ]
    for d in data["diagnostics"]:
        assert list(d)[:6] == ["file", "line", "col", "severity", "code", "message"]
    got = [(d["file"], d["line"], d["col"], d["severity"], d["code"]) for d in data["diagnostics"]]
    assert got == [
        ("a.yaml", 4, 18, "error", "PC012"),
        ("a.yaml", 5, 26, "error", "PC010"),
        ("a.yaml", 6, 45, "error", "PC010"),
        ("b.yaml", 6, 17, "warning", "PC004"),
    ]
    assert [(p["file"], p["model"]) for p in data["plans"]] == [("a.yaml", "a"), ("b.yaml", "b")]
    assert result.stderr == ""


def test_json_clean(plans: list[str], tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(PLAN_B.replace("model: b", "model: c").split("lint")[0])
    result = _run(["validate", "-f", "json", "c.yaml"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["diagnostics"], data["errors"], data["warnings"]) == ([], 0, 0)


def test_json_usage_error_prints_nothing_on_stdout(plans: list[str]) -> None:
    result = _run(["validate", "-f", "json", "a.yaml", "missing.yaml"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "plancc: missing.yaml: no such file or directory\n"


# -- github ----------------------------------------------------------------------------------


def test_github_exact(report: Report) -> None:
    assert fmt_github.github(report) == GITHUB


@pytest.mark.parametrize(("env", "fmt"), [("true", "github"), ("", "text"), ("false", "text")])
def test_github_is_chosen_automatically_on_actions(plans: list[str], env: str, fmt: str) -> None:
    result = _run(["validate", *plans], GITHUB_ACTIONS=env)
    assert result.stdout == (GITHUB if fmt == "github" else TEXT)


def test_explicit_format_wins_on_actions(plans: list[str]) -> None:
    result = _run(["validate", "--format", "text", *plans], GITHUB_ACTIONS="true")
    assert result.stdout == TEXT


def test_github_escapes_properties_and_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    name = "odd,name:100%.yaml"
    (tmp_path / name).write_text(PLAN_A, "utf-8")
    out = fmt_github.github(validate_paths([name]))
    first = out.splitlines()[0]
    assert first == (
        "::error file=odd%2Cname%3A100%25.yaml,line=4,col=18,title=PC012::"
        "dim 'E' 'D %25 64' is 0; a dimension must be ≥ 1"
    )
    assert "%0Adid you mean 'D'?" in out
    assert out.count("\n") == 3  # one line per annotation: newlines are escaped


def test_escaping_rules() -> None:
    assert fmt_github._escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert fmt_github._escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"


# -- sarif -----------------------------------------------------------------------------------


def test_the_vendored_sarif_schema_is_unmodified() -> None:
    digest = hashlib.sha256(SARIF_SCHEMA.read_bytes()).hexdigest()
    assert digest == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    assert digest in (SARIF_SCHEMA.parent / "README.md").read_text("utf-8")


def sarif_validator() -> Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text("utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def test_sarif_is_valid_sarif_2_1_0(plans: list[str]) -> None:
    result = _run(["validate", "--format", "sarif", *plans])
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    errors = [e.message for e in sarif_validator().iter_errors(log)]
    assert errors == []
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "plancc"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [c.id for c in all_codes()]
    for r, c in zip(rules, all_codes(), strict=True):
        assert r["name"] == c.name
        # SARIF's levels are error, warning and note: a notice is a note.
        level = {"notice": "note"}.get(c.severity.value, c.severity.value)
        assert r["defaultConfiguration"]["level"] == level
        assert r["fullDescription"]["text"] == c.doc
    got = [
        (
            res["ruleId"],
            rules[res["ruleIndex"]]["id"],
            res["level"],
            res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            res["locations"][0]["physicalLocation"]["region"]["startLine"],
            res["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for res in run["results"]
    ]
    assert got == [
        ("PC012", "PC012", "error", "a.yaml", 4, 18),
        ("PC010", "PC010", "error", "a.yaml", 5, 26),
        ("PC010", "PC010", "error", "a.yaml", 6, 45),
        ("PC004", "PC004", "warning", "b.yaml", 6, 17),
    ]
    assert run["results"][1]["message"]["text"] == "unknown dim 'DD' (did you mean 'D'?)"
    assert run["columnKind"] == "unicodeCodePoints"  # columns count characters, as plancc's do


@pytest.mark.parametrize(
    ("name", "uri"),
    [
        ("my plans/100%:a.yaml", "my%20plans/100%25%3Aa.yaml"),
        ("é.yaml", "%C3%A9.yaml"),
        (os.fsdecode(b"caf\xe9.yaml"), "caf%E9.yaml"),  # not UTF-8: the byte itself
    ],
)
def test_sarif_uris_are_percent_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, uri: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my plans").mkdir()
    Path(name).write_text(PLAN_A, "utf-8")
    log = json.loads(fmt_sarif.sarif(validate_paths([name])))
    assert list(sarif_validator().iter_errors(log)) == []
    uris = {
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for res in log["runs"][0]["results"]
    }
    assert uris == {uri}
    assert unquote(uri, errors="surrogateescape") == name


def test_sarif_with_suppressed_results_is_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = json.loads(
        fmt_sarif.sarif(validate_paths(_warned_plans(tmp_path, monkeypatch)), show_allowed=True)
    )
    assert list(sarif_validator().iter_errors(log)) == []
    suppressed = [r for r in log["runs"][0]["results"] if "suppressions" in r]
    assert [(r["ruleId"], r["suppressions"][0]["justification"]) for r in suppressed] == [
        ("PC101", "measured")  # the reason alone
    ] * 2


def test_sarif_without_results_is_valid(plans: list[str], tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(PLAN_B.replace("model: b", "model: c").split("lint")[0])
    log = json.loads(fmt_sarif.sarif(validate_paths(["c.yaml"])))
    assert list(sarif_validator().iter_errors(log)) == []
    assert log["runs"][0]["results"] == []


def test_build_check_sarif_lists_each_stale_or_missing_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(PLAN_B.replace("model: b", "model: c").split("lint")[0], "utf-8")
    Path("my out").mkdir()
    assert _run(["build", "c.yaml", "--out", "my out"]).exit_code == 0
    fresh = json.loads(
        _run(["build", "c.yaml", "--out", "my out", "--check", "-f", "sarif"]).stdout
    )
    assert fresh["runs"][0]["results"] == []
    Path("my out/c_warms.manifest.json").unlink()
    with Path("my out/c_warms.py").open("a", encoding="utf-8") as module:
        module.write("# edited\n")
    result = _run(["build", "c.yaml", "--out", "my out", "--check", "-f", "sarif"])
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [*(c.id for c in all_codes()), "stale-output"]
    short = "A generated output is missing, or differs from what `plancc build` would write."
    doc = f"{short}\n\nFix: run the same `plancc build` without `--check`, and commit the result."
    assert rules[-1] == {
        "id": "stale-output",
        "name": "stale-output",
        "shortDescription": {"text": short},
        "fullDescription": {"text": doc},
        "help": {"text": doc},
        "defaultConfiguration": {"level": "error"},
    }
    where = {"startLine": 1, "startColumn": 1}
    assert [
        (
            res["ruleId"],
            rules[res["ruleIndex"]]["id"],
            res["level"],
            res["message"]["text"],
            res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            res["locations"][0]["physicalLocation"]["region"],
        )
        for res in run["results"]
    ] == [
        (
            "stale-output",
            "stale-output",
            "error",
            "my out/c_warms.py is stale; run plancc build to regenerate it",
            "my%20out/c_warms.py",
            where,
        ),
        (
            "stale-output",
            "stale-output",
            "error",
            "my out/c_warms.manifest.json is missing; run plancc build to regenerate it",
            "my%20out/c_warms.manifest.json",
            where,
        ),
    ]


def test_the_sarif_schema_catches_a_broken_log(report: Report) -> None:
    log = json.loads(fmt_sarif.sarif(report))
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["runs"][0]["tool"]["driver"]["name"]
    messages = sorted(e.message for e in sarif_validator().iter_errors(log))
    assert len(messages) == 2, messages
