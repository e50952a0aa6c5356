"""The README's tour shows real output: each console block is run and compared."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
BLOCKS = re.findall(
    r"```console\n(\$ mkdir -p build\n)?\$ \.venv/bin/plancc ([^\n]*)\n(.*?)```", README, re.S
)
# The tour's edits of the CSA warm, each applied before the block that shows it:
# block -> (where the warm starts, the text replaced, its replacement).
EDITS = {
    1: ("after: q_proj", "tensors: [wo_a, wo_b]", "tensors: [wo_a, wo_b, wq_b]"),  # break it
    2: ("name: prefetch_o_proj_w_csa", "after: q_proj", "after: rms_norm"),  # anchor early
}


def test_the_tour_has_its_blocks() -> None:
    assert [args.split()[0] for _, args, _ in BLOCKS] == [
        "validate",
        "validate",
        "validate",
        "explain",
        "suggest",
        "build",
        "measure",
        "report",
    ]


MAKE_RUN = "plancc build plans/*.yaml --out build"


def _make_run() -> None:
    """What `make run` does in a fresh clone, before the tour: every plan built."""
    Path("build").mkdir(exist_ok=True)
    plans = sorted(str(p) for p in Path("plans").glob("*.yaml"))
    built = CliRunner().invoke(app, ["build", *plans, "--out", "build"])
    assert built.exit_code == 0, built.stdout


def test_make_run_builds_what_the_tour_assumes() -> None:
    assert f"$(BIN)/{MAKE_RUN}\n" in (ROOT / "Makefile").read_text("utf-8")
    assert "make run    # creates .venv, builds every plan in plans/ into build/" in README


def test_the_test_counts_are_said_once() -> None:
    """The README says how many tests run; the Makefile's comment gave counts of its own,
    which went stale (4,163 and 4,685 beside the README's 4,500 and 560 more)."""
    assert re.search(r"about [\d,]+ tests", README)
    assert not re.search(r"\d,\d{3}", (ROOT / "Makefile").read_text("utf-8"))


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_tour_block_prints_what_the_readme_shows(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "plans", tmp_path / "plans")  # a clean checkout: no build/ yet
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    mkdir, args, shown = BLOCKS[index]
    if args.startswith(("build", "measure")):  # after `make run`, as a fresh clone has it
        _make_run()
    if mkdir:
        (tmp_path / "build").mkdir(exist_ok=True)
    if index in EDITS:
        start, old, new = EDITS[index]
        plan = tmp_path / "plans" / "deepseek_v4_flash.yaml"
        text = plan.read_text("utf-8")
        warm = text.index(start, text.index("csa:"))
        at = text.index(old, warm)
        plan.write_text(text[:at] + new + text[at + len(old) :], "utf-8")
    argv = [a for arg in shlex.split(args) for a in sorted(map(str, Path().glob(arg))) or [arg]]
    result = CliRunner().invoke(app, argv, env={"NO_COLOR": "1", "GITHUB_ACTIONS": ""})
    if shown:  # a block without output only promises the command runs cleanly
        assert result.stdout == shown
    assert result.exit_code == (1 if index == 1 else 0), result.stdout


def _docs() -> list[Path]:
    """Every Markdown file of the repository (not the virtual environment or a build)."""
    skip = {".venv", ".git", "build", "dist", "node_modules"}
    return sorted(
        p
        for p in ROOT.rglob("*.md")
        if not skip & set(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)
    )


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_docs_link_only_to_files_in_the_repository() -> None:
    """A user has the repository, not the files its authors had beside it: every relative
    link of every Markdown file names a file or directory inside the repository, and no
    doc points at the brief's `../shared` tree."""
    bad = []
    docs = _docs()
    assert ROOT / "docs" / "architecture.md" in docs
    for doc in docs:
        text = doc.read_text("utf-8")
        assert "../shared" not in text, doc
        for target in LINK.findall(re.sub(r"```.*?```", "", text, flags=re.S)):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or a place in the same page
            path = (doc.parent / target.split("#")[0]).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{doc.relative_to(ROOT)}: {target}")
    assert bad == []


def _collected(marker: str) -> int:
    """How many tests `pytest -m MARKER` runs (skipped ones included), as collected."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", marker],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"^(\d+)(?:/\d+)? tests? collected", out, re.M)
    assert found is not None, out[-500:]
    return int(found[1])


@pytest.mark.slow  # collects every test module again
def test_the_readme_counts_the_tests_a_fresh_clone_runs() -> None:
    """The README's figures, rounded to two significant digits as it gives them."""
    said = re.search(
        r"`make test` runs about ([\d,]+) tests; `make test\s+SLOW=1` about ([\d,]+)", README
    )
    assert said is not None
    fast, slow = (int(n.replace(",", "")) for n in said.groups())
    assert (fast, slow) == (_round(_collected("not slow")), _round(_collected("slow")))


def _round(n: int) -> int:
    return int(float(f"{n:.2g}"))
