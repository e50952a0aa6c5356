"""Every code is documented: `plancc explain` for each; docs/rules.md generated from the catalog.

docs/rules.md is generated from the rules' docstrings (the same text `plancc
explain` prints). Regenerate it after changing a docstring with

    .venv/bin/python -m tests.test_rules_doc
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.check import catalog as all_codes
from plancc.check import lookup
from plancc.cli.app import app
from plancc.diagnostics import Severity
from plancc.rules import RULES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules.md"
PLACEMENT = [c.id for c in all_codes() if c.id.startswith("PC1")]  # PC1nn: placement


def render_rules_doc() -> str:
    codes = all_codes()
    out = [
        "# Rule reference",
        "",
        "<!-- Generated from the rule docstrings by `python -m tests.test_rules_doc`; do not",
        "     edit by hand. `plancc explain PCnnn` prints the same text. -->",
        "",
        "Every diagnostic `plancc` reports, with its severity. Errors make `validate`",
        "and `build` exit 1; warnings exit 0 unless `--strict`. A warning is silenced",
        "for one warm by `allow: [PCnnn]` with a `reason`, or for the whole plan by",
        "`lint.ignore`; errors cannot be silenced (PC004). The contract is",
        "[plan-format.md](plan-format.md).",
        "",
        'A rule that knows the answer says it as a fix ("its fix" below): edits on',
        "plan paths that `plancc validate --fix` applies and the editor offers. A *safe*",
        "fix changes order, or removes what does nothing; an *unsafe* one moves a warm",
        "in time, changes what it lands or guesses a name, and is applied only with",
        '`--unsafe-fixes` ([cli.md](cli.md), "Fixes").',
        "",
        "| id | severity | name | fires when |",
        "| --- | --- | --- | --- |",
    ]
    for c in codes:
        summary = c.doc.split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
        out.append(f"| [{c.id}](#{c.id.lower()}) | {c.severity.value} | {c.name} | {summary} |")
    judged = {r.id: r for r in RULES}
    for c in codes:
        head = f"`{c.name}` · {c.severity.value}"
        r = judged.get(c.id)
        if r is not None and (r.loss or r.amount):  # what `plancc suggest` reads of it
            amount = f"`{r.amount}`" if r.amount else ""
            what = ("a loss" + (f" of {amount}" if amount else "")) if r.loss else f"by {amount}"
            head += f" · `suggest`: {what}"
        out += ["", f"## {c.id}", "", head, "", c.doc]
    return "\n".join(out) + "\n"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _listed() -> list[tuple[str, str, str]]:
    code, out, _ = _run("rules")
    assert code == 0
    rows = []
    for line in out.splitlines():
        cid, severity, name = line.split()
        rows.append((cid, severity, name))
    return rows


def _reportable() -> set[str]:
    """Every code the source can report: the rules' ids and every "PCnnn" literal."""
    found = {r.id for r in RULES}
    for path in (ROOT / "plancc").rglob("*.py"):
        found |= set(re.findall(r"[\"'](PC\d{3})[\"']", path.read_text("utf-8")))
    return found


def test_rules_lists_the_catalog() -> None:
    assert [(c, s, n) for c, s, n in _listed()] == [
        (c.id, c.severity.value, c.name) for c in all_codes()
    ]


@pytest.mark.parametrize("cid", sorted({c.id for c in all_codes()} | _reportable()))
def test_explain_every_code(cid: str) -> None:
    found = lookup(cid)
    assert found is not None, f"{cid} is reported somewhere but not in the catalog"
    code, out, _ = _run("explain", cid)
    assert code == 0
    assert out.startswith(f"{cid} {found.name} ({found.severity.value})\n\n")
    assert found.doc.strip()
    assert found.doc in out


def test_every_reportable_code_is_listed() -> None:
    listed = {c for c, _, _ in _listed()}
    assert _reportable() <= listed


def test_explain_is_case_insensitive() -> None:
    assert _run("explain", "pc101")[0] == 0


def test_explain_unknown_code() -> None:
    code, out, err = _run("explain", "PC199")
    assert code == 2
    assert out == ""
    assert "unknown code 'PC199'" in err


@pytest.mark.parametrize("cid", PLACEMENT)
def test_placement_rule_docs(cid: str) -> None:
    """Each placement rule says what fires it, why (the seed's numbers) and how to fix it."""
    c = lookup(cid)
    assert c is not None
    assert c.severity is Severity.WARNING
    assert "Fires" in c.doc or "fires" in c.doc
    assert "Why:" in c.doc
    assert "seed" in c.doc
    assert re.search(r"\d+(\.\d+)? ?(µs|%|MB|GB/s)", c.doc), "the measured evidence, with numbers"
    assert "Fix:" in c.doc


def test_rules_doc_is_current() -> None:
    assert DOC.read_text("utf-8") == render_rules_doc(), (
        "docs/rules.md is stale: run .venv/bin/python -m tests.test_rules_doc"
    )


if __name__ == "__main__":
    DOC.write_text(render_rules_doc(), encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
