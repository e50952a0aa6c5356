"""Silencing: per-warm `allow` with a `reason`, plan-wide `lint.ignore`, and what never silences.

Errors cannot be silenced: an `allow` or `ignore` naming an error id or an
unknown id is PC004 and has no effect. `--show-allowed` lists the silenced
warnings with their reasons; without it, no output format shows them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from plancc.api import validate_paths
from plancc.cli.app import app

# Two warms at one anchor: `first` fires PC107 (its consumer runs right after
# the anchor); `second` fires PC101 (shared anchor) and PC104 (s1, with a task,
# streams `a` before its consumer s2, and the warm lands from there).
PLAN = """\
plancc: 1
model: m
platform: a2a3
{lint}tensors:
  a: {{shape: [1048576], dtype: int8}}
  b: {{shape: [1048576], dtype: int8}}
layers:
  k:
    stages:
      - {{name: s0, task: t0}}
      - {{name: s1, task: t1, reads: [a]}}
      - {{name: gap}}
      - {{name: s2, reads: [b]}}
    warms:
      - name: first
        after: s0
        tensors: [a]
{first}      - name: second
        after: s0
        tensors: [b]
{second}"""


def _plan(lint: str = "", first: str = "", second: str = "") -> str:
    return PLAN.format(lint=lint, first=first, second=second)


def _at(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based line and column of the nth occurrence of needle in text."""
    lines = text.splitlines()
    hits = [(i + 1, line.index(needle) + 1) for i, line in enumerate(lines) if needle in line]
    return hits[nth]


def _after(text: str, nth: int) -> tuple[int, int]:
    """Where the nth warm's `after` value is: the position of warm rules."""
    line, col = _at(text, "after: s0", nth)
    return line, col + len("after: ")


def _codes(path: Path) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.col) for d in validate_paths([str(path)]).diagnostics]


def _allowed(path: Path) -> list[tuple[str, int, int, str]]:
    return [
        (a.diagnostic.code, a.diagnostic.line, a.diagnostic.col, a.reason)
        for a in validate_paths([str(path)]).allowed
    ]


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout


def test_unsilenced(write_plan: Callable[..., Path]) -> None:
    text = _plan()
    path = write_plan(text)
    assert _codes(path) == [
        ("PC107", *_after(text, 0)),
        ("PC101", *_after(text, 1)),
        ("PC104", *_after(text, 1)),
    ]
    assert _allowed(path) == []


def test_allow_silences_only_that_warms_warning(write_plan: Callable[..., Path]) -> None:
    # `second` allows PC101 and PC107: its PC101 goes, `first`'s PC107 stays,
    # its own PC104 (not allowed) stays, and its PC107 entry, which silences
    # nothing on this warm, is PC006.
    text = _plan(second="        allow: [PC101, PC107]\n        reason: measured, one scope wins\n")
    path = write_plan(text)
    assert _codes(path) == [
        ("PC107", *_after(text, 0)),
        ("PC104", *_after(text, 1)),
        ("PC006", *_at(text, "PC107")),
    ]
    assert _allowed(path) == [("PC101", *_after(text, 1), "measured, one scope wins")]


def test_lint_ignore_silences_plan_wide(write_plan: Callable[..., Path]) -> None:
    text = _plan(lint="lint:\n  ignore: [PC107, PC104]\n")
    path = write_plan(text)
    assert _codes(path) == [("PC101", *_after(text, 1))]
    assert _allowed(path) == [
        ("PC107", *_after(text, 0), "lint.ignore"),
        ("PC104", *_after(text, 1), "lint.ignore"),
    ]


def test_allow_of_an_error_is_pc004_and_the_error_stays(write_plan: Callable[..., Path]) -> None:
    # The anchor loses its task: PC042 on both warms, which `first` tries to allow.
    text = _plan(first="        allow: [PC042]\n        reason: the model has no task id\n")
    text = text.replace("{name: s0, task: t0}", "{name: s0}")
    path = write_plan(text)
    report = validate_paths([str(path)])
    codes = [(d.code, d.line, d.col) for d in report.diagnostics]
    assert ("PC004", *_at(text, "PC042")) in codes
    assert [c for c in codes if c[0] == "PC042"] == [
        ("PC042", *_after(text, 0)),
        ("PC042", *_after(text, 1)),
    ]
    assert report.allowed == []
    assert report.errors == 2
    pc004 = next(d for d in report.diagnostics if d.code == "PC004")
    assert pc004.severity.value == "warning"
    assert "errors cannot be silenced" in pc004.message


def test_ignore_of_an_error_is_pc004_and_the_error_stays(write_plan: Callable[..., Path]) -> None:
    text = _plan(lint="lint:\n  ignore: [PC042]\n").replace("{name: s0, task: t0}", "{name: s0}")
    path = write_plan(text)
    codes = _codes(path)
    assert ("PC004", *_at(text, "PC042")) in codes
    assert [c for c in codes if c[0] == "PC042"] == [
        ("PC042", *_after(text, 0)),
        ("PC042", *_after(text, 1)),
    ]
    assert _allowed(path) == []


def test_unknown_ids_are_pc004(write_plan: Callable[..., Path]) -> None:
    text = _plan(
        lint="lint:\n  ignore: [PC999]\n",
        first="        allow: [PC1O7]\n        reason: typo\n",
    )
    path = write_plan(text)
    report = validate_paths([str(path)])
    bad = [(d.line, d.col) for d in report.diagnostics if d.code == "PC004"]
    assert bad == [_at(text, "PC999"), _at(text, "PC1O7")]
    assert all("not a rule id" in d.message for d in report.diagnostics if d.code == "PC004")
    # Nothing was silenced by them.
    assert {d.code for d in report.diagnostics} >= {"PC101", "PC104", "PC107"}
    assert report.allowed == []


def test_allow_without_reason_is_pc002_and_silences_nothing(
    write_plan: Callable[..., Path],
) -> None:
    text = _plan(second="        allow: [PC101]\n")
    path = write_plan(text)
    codes = _codes(path)
    assert "PC002" in [c[0] for c in codes]
    assert ("PC101", *_after(text, 1)) in codes
    assert _allowed(path) == []


SHOWN = {
    "lint": "lint:\n  ignore: [PC104]\n",
    "second": "        allow: [PC101]\n        reason: seed, one scope measured\n",
}


def test_show_allowed_text(write_plan: Callable[..., Path]) -> None:
    text = _plan(**SHOWN)
    path = write_plan(text)
    code, out = _run("validate", str(path), "--format", "text")
    assert code == 0
    assert "PC101" not in out
    assert "PC104" not in out
    code, out = _run("validate", str(path), "--format", "text", "--show-allowed")
    assert code == 0
    lines = out.splitlines()
    allowed = [i for i, line in enumerate(lines) if ": allowed warning " in line]
    assert len(allowed) == 2
    line, col = _after(text, 1)
    assert lines[allowed[0]].startswith(f"{path.as_posix()}:{line}:{col}: allowed warning PC101:")
    assert "shares anchor" in lines[allowed[0]]
    assert lines[allowed[0] + 1].strip() == (
        "reason: allow on warm 'second': seed, one scope measured"
    )  # text says which warm; JSON and SARIF carry the reason alone
    assert "PC104" in lines[allowed[1]]
    assert lines[allowed[1] + 1].strip() == "reason: lint.ignore"
    # Silenced warnings are not counted.
    assert lines[-1] == "0 errors, 1 warning in 1 plan"


def test_show_allowed_json(write_plan: Callable[..., Path]) -> None:
    text = _plan(**SHOWN)
    path = write_plan(text)
    code, out = _run("validate", str(path), "--format", "json")
    assert code == 0
    plain = json.loads(out)
    assert "allowed" not in plain
    assert [d["code"] for d in plain["diagnostics"]] == ["PC107"]
    assert plain["warnings"] == 1
    assert "PC101" not in out
    assert "PC104" not in out

    code, out = _run("validate", str(path), "--format", "json", "--show-allowed")
    assert code == 0
    shown = json.loads(out)
    assert shown["diagnostics"] == plain["diagnostics"]
    assert shown["warnings"] == 1
    assert [(a["code"], a["line"], a["col"], a["warm"], a["reason"]) for a in shown["allowed"]] == [
        ("PC101", *_after(text, 1), "second", "seed, one scope measured"),
        ("PC104", *_after(text, 1), None, "lint.ignore"),
    ]
    assert all(a["severity"] == "warning" and a["message"] for a in shown["allowed"])


def test_github_and_sarif_show_allowed_only_when_asked(write_plan: Callable[..., Path]) -> None:
    text = _plan(lint="lint:\n  ignore: [PC101, PC104, PC107]\n")
    path = write_plan(text)
    code, out = _run("validate", str(path), "--format", "github")
    assert (code, out) == (0, "")
    code, out = _run("validate", str(path), "--format", "sarif")
    assert code == 0
    assert json.loads(out)["runs"][0]["results"] == []

    line, col = _after(text, 1)
    code, out = _run("validate", str(path), "--format", "github", "--show-allowed")
    assert code == 0
    notices = out.splitlines()
    assert f"notice file={path.as_posix()},line={line},col={col},title=PC101 (allowed)" in [
        n.split("::")[1] for n in notices
    ]
    assert sorted(n.split("title=")[1].split(" ")[0] for n in notices) == [
        "PC101",
        "PC104",
        "PC107",
    ]
    assert all(n.endswith("%0Aallowed: lint.ignore") for n in notices)

    code, out = _run("validate", str(path), "--format", "sarif", "--show-allowed")
    assert code == 0
    results = json.loads(out)["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["PC101", "PC104", "PC107"]
    assert all(
        r["suppressions"] == [{"kind": "inSource", "justification": "lint.ignore"}] for r in results
    )


def test_strict_makes_warnings_fail(write_plan: Callable[..., Path]) -> None:
    path = write_plan(_plan())
    assert _run("validate", str(path), "-q")[0] == 0
    assert _run("validate", str(path), "-q", "--strict")[0] == 1


def test_strict_passes_when_every_warning_is_silenced(write_plan: Callable[..., Path]) -> None:
    path = write_plan(
        _plan(
            lint="lint:\n  ignore: [PC107]\n",
            second="        allow: [PC101, PC104]\n        reason: measured\n",
        )
    )
    assert _codes(path) == []
    assert _run("validate", str(path), "-q", "--strict")[0] == 0


def test_pc004_cannot_be_silenced(write_plan: Callable[..., Path]) -> None:
    # A silence naming an error or a non-rule is always reported: ignoring PC004
    # would hide exactly the mistake it exists to show.
    path = write_plan(_plan(lint="lint:\n  ignore: [PC004, PC999, PC031]\n"))
    assert [c[0] for c in _codes(path)].count("PC004") == 2
    assert _allowed(path) == []


def test_a_silence_naming_pc004_says_pc004_cannot_be_silenced(
    write_plan: Callable[..., Path],
) -> None:
    # PC004 fires on this warm (PC999), so "does not fire" would be false: the
    # entry silences nothing because PC004 is never silenced.
    text = _plan(
        lint="lint:\n  ignore: [PC004]\n",
        first="        allow: [PC107, PC999, PC004]\n        reason: measured\n",
    )
    path = write_plan(text)
    found = [
        (d.code, d.line, d.col, d.message)
        for d in validate_paths([str(path)]).diagnostics
        if d.code in ("PC004", "PC006")
    ]
    assert found == [
        ("PC006", *_at(text, "PC004"), "lint.ignore names PC004, which cannot be silenced"),
        (
            "PC004",
            *_at(text, "PC999"),
            "allow on warm 'first' names 'PC999', which is not a rule id; it silences nothing",
        ),
        (
            "PC006",
            *_at(text, "PC004", 1),
            "allow on warm 'first' names PC004, which cannot be silenced",
        ),
    ]
