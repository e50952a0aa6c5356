"""Files as users keep them: every writer (`build`, `fmt`, `validate --fix`, `suggest --fix`)
goes through ``plancc.write``, writes through a symlink to its target, keeps the plan's BOM,
line endings and the file's mode, refuses a read-only or hard-linked file with a message
(writing nothing), and removes the temporary files a killed write left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import measure_example as ex
import pytest
from typer.testing import CliRunner

from plancc import write
from plancc.cli.app import app
from plancc.write import Form

ROOT = Path(__file__).resolve().parent.parent
PC102 = (ROOT / "tests/cases/rules/pc102_graph_consumer_order.yaml").read_text("utf-8")
EARLY = (
    (ROOT / "tests/data/suggest/flash_csa_graph.yaml")
    .read_text("utf-8")
    .replace(
        "{name: prefetch_o_proj_w, after: q_proj, tensors: [wo_a, wo_b]}",
        "{name: prefetch_o_proj_w, after: rms_norm, tensors: [wo_b]}  # too early",
    )
)
UNFORMATTED = "model: m\nplancc: 1  # the version\nplatform: a2a3\n"
BUILT = """\
plancc: 1
model: demo
platform: a2a3
tensors: {wa: {shape: [64, 32], dtype: bf16}}
layers:
  k:
    stages:
      - {name: s0, task: s0_tid}
      - {name: s1, duration_us: 500}
      - {name: s2, reads: [wa]}
    warms: [{name: w, after: s0, tensors: [wa]}]
"""


@dataclass(frozen=True)
class Writer:
    """A command that rewrites ``file``, in a directory: how to make the file, and run it."""

    name: str
    before: str  # the plan's text (LF)
    args: Callable[[str], list[str]]  # the command line, given the file's name
    file: str = "p.yaml"  # the file it writes (build: its output)
    said: str = ""  # what it prints when it wrote

    def run(self, where: Path) -> tuple[int, str]:
        cwd = os.getcwd()
        os.chdir(where)
        try:
            result = CliRunner().invoke(app, self.args("p.yaml"), env={"NO_COLOR": "1"})
        finally:
            os.chdir(cwd)
        return result.exit_code, result.output


PLAN_WRITERS = [
    Writer("fmt", UNFORMATTED, lambda p: ["fmt", p], said="p.yaml: formatted"),
    Writer("fix", PC102, lambda p: ["validate", "--fix", p], said="p.yaml: fixed PC102"),
    Writer(
        "suggest",
        EARLY,
        lambda p: ["suggest", p, "--top", "1", "--fix"],
        said="csa: wrote warm q_proj: wo_a, wo_b",
    ),
]
BUILD = Writer("build", BUILT, lambda p: ["build", p, "--out", "."], file="demo_warms.py")
WRITERS = [*PLAN_WRITERS, BUILD]


def _ids(writers: list[Writer]) -> list[str]:
    return [w.name for w in writers]


def _setup(tmp_path: Path, w: Writer, data: bytes | None = None) -> Path:
    """The plan in ``tmp_path``; for build, an output with other bytes to replace."""
    (tmp_path / "p.yaml").write_bytes(w.before.encode() if data is None else data)
    if w is BUILD:
        (tmp_path / w.file).write_bytes(b"# an older build\n")
    return tmp_path / w.file


def _ran(tmp_path: Path, w: Writer) -> str:
    code, out = w.run(tmp_path)
    assert code in (0, 1), out  # written; a finding may be left
    assert w.said in out, out
    return out


# -- symlinks --------------------------------------------------------------------------------


@pytest.mark.parametrize("w", WRITERS, ids=_ids(WRITERS))
def test_a_symlink_is_written_through_to_its_target(tmp_path: Path, w: Writer) -> None:
    real_dir = tmp_path / "kept"
    real_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    target = real_dir / "target"
    _setup(work, w)
    (work / w.file).rename(target)
    (work / w.file).symlink_to(target)
    before = target.read_bytes()
    _ran(work, w)
    assert (work / w.file).is_symlink()
    assert os.readlink(work / w.file) == str(target)
    assert target.read_bytes() != before
    assert sorted(p.name for p in real_dir.iterdir()) == ["target"]  # no temporary file left


def test_build_writes_through_a_chain_of_links_and_refuses_a_loop(tmp_path: Path) -> None:
    _setup(tmp_path, BUILD)
    (tmp_path / "demo_warms.py").rename(tmp_path / "real.py")
    (tmp_path / "middle.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "demo_warms.py").symlink_to(tmp_path / "middle.py")
    _ran(tmp_path, BUILD)
    assert (tmp_path / "real.py").read_text("utf-8").startswith('"""L2 warms')
    (tmp_path / "demo_warms.py").unlink()
    (tmp_path / "middle.py").unlink()
    (tmp_path / "demo_warms.py").symlink_to(tmp_path / "middle.py")
    (tmp_path / "middle.py").symlink_to(tmp_path / "demo_warms.py")
    code, out = BUILD.run(tmp_path)
    assert code == 2
    assert "demo_warms.py: cannot write: " in out
    assert (tmp_path / "demo_warms.py").is_symlink()


def test_a_link_to_a_file_not_there_yet_creates_it(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(BUILT, "utf-8")
    (tmp_path / "gen").mkdir()
    (tmp_path / "demo_warms.py").symlink_to(tmp_path / "gen" / "module.py")
    _ran(tmp_path, BUILD)
    assert (tmp_path / "demo_warms.py").is_symlink()
    assert (tmp_path / "gen" / "module.py").read_text("utf-8").startswith('"""L2 warms')


# -- BOM and line endings --------------------------------------------------------------------


FORMS = {"crlf+bom": Form(bom=True, newline="\r\n"), "cr": Form(newline="\r"), "lf": Form()}


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
@pytest.mark.parametrize("w", PLAN_WRITERS, ids=_ids(PLAN_WRITERS))
def test_a_plan_keeps_its_bom_and_line_endings(tmp_path: Path, w: Writer, form: Form) -> None:
    plan = _setup(tmp_path, w, form.encode(w.before))
    _ran(tmp_path, w)
    after = plan.read_bytes()
    assert after != form.encode(w.before)
    assert Form.of(after) == form
    assert form.encode(form.text(after)) == after  # no other line ending crept in


def test_the_same_text_in_any_form_gets_the_same_fix(tmp_path: Path) -> None:
    """A lone-CR plan is fixed as its LF twin is, then kept in CR."""
    fixed = {}
    for name, form in FORMS.items():
        where = tmp_path / name
        where.mkdir()
        (where / "p.yaml").write_bytes(form.encode(EARLY))
        _ran(where, PLAN_WRITERS[2])
        fixed[name] = form.text((where / "p.yaml").read_bytes())
    assert fixed["cr"] == fixed["lf"] == fixed["crlf+bom"]


@pytest.mark.parametrize(
    ("raw", "form"),
    [
        (b"a\nb\r\n", Form()),
        (b"a\r\nb\n", Form(newline="\r\n")),
        (b"a\rb", Form(newline="\r")),
        (b"\xef\xbb\xbfone line", Form(bom=True)),
        (b"", Form()),
    ],
)
def test_form_is_the_first_line_ending_and_the_bom(raw: bytes, form: Form) -> None:
    assert Form.of(raw) == form
    assert "\r" not in form.text(raw)
    assert not form.text(raw).startswith("\ufeff")


def test_form_never_takes_unicode_line_separators_for_line_endings() -> None:
    raw = "a: 1  # \u2028 \u0085 \u2029\r\nb: 2\r\n".encode()
    form = Form.of(raw)
    assert form.text(raw) == "a: 1  # \u2028 \u0085 \u2029\nb: 2\n"
    assert form.encode(form.text(raw)) == raw


# -- mode, read-only files, hard links ---------------------------------------------------------


@pytest.mark.parametrize("w", WRITERS, ids=_ids(WRITERS))
def test_the_file_keeps_its_mode(tmp_path: Path, w: Writer) -> None:
    plan = _setup(tmp_path, w)
    plan.chmod(0o640)
    _ran(tmp_path, w)
    assert plan.stat().st_mode & 0o7777 == 0o640


@pytest.mark.parametrize("w", WRITERS, ids=_ids(WRITERS))
def test_a_read_only_file_is_refused_and_left_as_it_is(tmp_path: Path, w: Writer) -> None:
    plan = _setup(tmp_path, w)
    plan.chmod(0o444)  # root may write it all the same: refused by its mode
    before = plan.read_bytes()
    code, out = w.run(tmp_path)
    assert code == 2, out
    assert f"{w.file}: is read-only; not rewritten (make it writable first)" in out
    assert plan.read_bytes() == before
    assert plan.stat().st_mode & 0o777 == 0o444
    assert not list(tmp_path.glob(".plancc-*"))


@pytest.mark.parametrize("w", WRITERS, ids=_ids(WRITERS))
def test_a_hard_linked_file_is_refused_and_both_names_kept(tmp_path: Path, w: Writer) -> None:
    plan = _setup(tmp_path, w)
    os.link(plan, tmp_path / "other.name")
    before = plan.read_bytes()
    code, out = w.run(tmp_path)
    assert code == 2, out
    assert f"{w.file}: has 2 hard links; not rewritten" in out
    assert plan.read_bytes() == before
    assert plan.stat().st_ino == (tmp_path / "other.name").stat().st_ino
    assert not list(tmp_path.glob(".plancc-*"))


def test_build_refuses_before_writing_any_output(tmp_path: Path) -> None:
    """A refused manifest stops the module's write too: never a mixed pair."""
    (tmp_path / "p.yaml").write_text(BUILT, "utf-8")
    (tmp_path / "demo_warms.manifest.json").write_text("{}", "utf-8")
    (tmp_path / "demo_warms.manifest.json").chmod(0o444)
    code, out = BUILD.run(tmp_path)
    assert code == 2, out
    assert "is read-only" in out
    assert not (tmp_path / "demo_warms.py").exists()


def test_unchanged_bytes_are_never_refused(tmp_path: Path) -> None:
    """Nothing to write: a read-only, hard-linked plan already formatted is fine."""
    plan = tmp_path / "p.yaml"
    plan.write_text("plancc: 1\nmodel: m\nplatform: a2a3\n", "utf-8")
    os.link(plan, tmp_path / "other.name")
    plan.chmod(0o444)
    code, out = PLAN_WRITERS[0].run(tmp_path)
    assert (code, out) == (0, "0 formatted, 1 unchanged\n")


TYPO = """\
plancc: 1
model: m_{x}
platform: a2a3
tensors: {{w: {{shape: [64], dtype: bf16}}}}
layers: {{k: {{stages: [{{name: s0, reads: [ww]}}]}}}}
"""


@pytest.mark.parametrize("how", ["read-only", "hard-linked"])
def test_fix_writes_every_plan_it_can_and_names_each_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """As ruff's --fix: one plan that cannot be rewritten stops none of the others; each
    outcome is said, the report (of the plans as they now stand) printed, and the run
    exits 2 (an I/O error happened)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    for x in "abc":
        (tmp_path / "d" / f"{x}.yaml").write_text(TYPO.format(x=x), "utf-8")
    b = tmp_path / "d/b.yaml"
    if how == "read-only":
        b.chmod(0o444)
        refusal = "d/b.yaml: is read-only; not rewritten (make it writable first)"
    else:
        os.link(b, tmp_path / "other.name")
        refusal = "d/b.yaml: has 2 hard links; not rewritten, as a new file would leave the "
        refusal += "other names on the old bytes (copy it to a file of its own first)"
    run = CliRunner().invoke(
        app, ["validate", "--fix", "--unsafe-fixes", "d"], env={"NO_COLOR": "1"}
    )
    assert run.exit_code == 2, run.output
    assert run.stderr == f"plancc: {refusal}\n"
    assert run.stdout == (
        "d/a.yaml: fixed PC010: replace 'ww' with 'w'\n"
        "d/c.yaml: fixed PC010: replace 'ww' with 'w'\n"
        "d/a.yaml: 0 warms, 0 B warmed, L2 peak 0 B = 0.00× L2 (budget 0.75)\n"
        "d/b.yaml:5:42: error PC010: unknown tensor 'ww'\n"
        "    did you mean 'w'?\n"
        "d/b.yaml: 0 warms, 0 B warmed, L2 peak 0 B = 0.00× L2 (budget 0.75)\n"
        "d/c.yaml: 0 warms, 0 B warmed, L2 peak 0 B = 0.00× L2 (budget 0.75)\n"
        "1 error, 0 warnings in 3 plans\n"
    )
    for x in "ac":
        fixed = TYPO.format(x=x).replace("[ww]", "[w]")
        assert (tmp_path / f"d/{x}.yaml").read_text("utf-8") == fixed
    assert b.read_text("utf-8") == TYPO.format(x="b")
    assert not list((tmp_path / "d").glob(".plancc-*"))


UNFORMATTED = """\
plancc: 1
model:   m_{x}
platform: a2a3
tensors: {{w: {{shape: [64], dtype: bf16}}}}
layers: {{k: {{stages: [{{name: s0, reads: [w]}}]}}}}
"""


def test_fmt_writes_every_plan_it_can_and_names_each_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As --fix: one plan fmt cannot rewrite stops none of the others; it is named on
    stderr, counted as not formatted, left as it is, and the run exits 2."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    for x in "abc":
        (tmp_path / "d" / f"{x}.yaml").write_text(UNFORMATTED.format(x=x), "utf-8")
    b = tmp_path / "d/b.yaml"
    b.chmod(0o444)
    run = CliRunner().invoke(app, ["fmt", "d"], env={"NO_COLOR": "1"})
    assert run.exit_code == 2, run.output
    assert run.stderr == (
        "plancc: d/b.yaml: is read-only; not rewritten (make it writable first)\n"
    )
    assert run.stdout == (
        "d/a.yaml: formatted\nd/c.yaml: formatted\n2 formatted, 0 unchanged, 1 not formatted\n"
    )
    from plancc.fmt import format_plan

    for x in "ac":
        formatted = format_plan("p", UNFORMATTED.format(x=x).encode())
        assert isinstance(formatted, bytes)
        assert formatted != UNFORMATTED.format(x=x).encode()
        assert (tmp_path / f"d/{x}.yaml").read_bytes() == formatted
    assert b.read_text("utf-8") == UNFORMATTED.format(x="b")
    assert not list((tmp_path / "d").glob(".plancc-*"))


# -- temporary files of killed writes ----------------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("w", WRITERS, ids=_ids(WRITERS))
def test_the_next_write_removes_a_killed_write_s_temp_file(tmp_path: Path, w: Writer) -> None:
    _setup(tmp_path, w)
    dead = tmp_path / f".plancc-{_dead_pid()}-abcd_123.tmp"
    dead.write_bytes(b"partial")
    alive = tmp_path / f".plancc-{os.getppid()}-efgh_456.tmp"  # a write still running
    alive.write_bytes(b"partial")
    _ran(tmp_path, w)
    assert not dead.exists()
    assert alive.exists()


# The fix in a child process stops after staging its file (as if the disk stalled),
# and is killed there: a real SIGKILL at a deterministic point.
_STALLED = textwrap.dedent(
    """
    import sys, time
    from plancc import write
    def stall(src, dst):
        print("staged", file=sys.stderr, flush=True)
        time.sleep(120)
    write.os.replace = stall
    from plancc.cli.app import app
    app(sys.argv[1:])
    """
)


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
@pytest.mark.parametrize("w", PLAN_WRITERS[1:], ids=_ids(PLAN_WRITERS[1:]))
def test_a_fix_killed_while_writing_loses_nothing_and_its_temp_file_goes_next_time(
    tmp_path: Path, w: Writer
) -> None:
    plan = _setup(tmp_path, w)
    before = plan.read_bytes()
    with subprocess.Popen(
        [sys.executable, "-c", _STALLED, *w.args(str(plan))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stderr is not None
            assert child.stderr.readline() == "staged\n"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    [leftover] = [p.name for p in tmp_path.iterdir() if p.name != "p.yaml"]
    assert write._LEFTOVER.fullmatch(leftover)
    assert plan.read_bytes() == before  # the kill lost nothing
    _ran(tmp_path, w)
    assert [p.name for p in tmp_path.iterdir()] == ["p.yaml"]


# -- the other writers: `schema -o`, `measure --out`; devices -----------------------------------


def test_build_never_renames_over_a_device_a_link_names(tmp_path: Path) -> None:
    """Written through, a link to /dev/null would have made it a file (as root)."""
    (tmp_path / "p.yaml").write_text(BUILT, "utf-8")
    (tmp_path / "demo_warms.py").symlink_to("/dev/null")
    code, out = BUILD.run(tmp_path)
    assert code == 2, out
    assert "demo_warms.py (a link to /dev/null): is not a regular file (a FIFO, a device)" in out
    assert Path("/dev/null").is_char_device()
    assert not (tmp_path / "demo_warms.manifest.json").exists()  # nothing of the build


def test_a_fifo_output_is_refused_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(BUILT, "utf-8")
    os.mkfifo(tmp_path / "demo_warms.py")
    code, out = BUILD.run(tmp_path)
    assert code == 2, out
    assert "demo_warms.py: is not a regular file (a FIFO, a device); not replaced" in out
    assert (tmp_path / "demo_warms.py").is_fifo()


def test_schema_out_writes_as_every_writer(tmp_path: Path) -> None:
    target = tmp_path / "kept" / "schema.json"
    target.parent.mkdir()
    target.write_text("old\n", "utf-8")
    target.chmod(0o640)
    (tmp_path / "schema.json").symlink_to(target)
    run = CliRunner().invoke(app, ["schema", "-o", str(tmp_path / "schema.json")])
    assert run.exit_code == 0, run.output
    assert (tmp_path / "schema.json").is_symlink()
    assert target.read_text("utf-8").startswith("{")
    assert target.stat().st_mode & 0o777 == 0o640
    target.chmod(0o444)
    run = CliRunner().invoke(app, ["schema", "-o", str(target)])
    assert run.exit_code == 2
    assert f"{target}: is read-only; not rewritten (make it writable first)" in run.output


def test_measure_out_writes_as_every_writer(tmp_path: Path) -> None:
    manifest = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
    ex.write_example(tmp_path, json.loads(manifest.read_text("utf-8"))["forward"]["kinds"])
    out = tmp_path / "report.txt"
    os.link(tmp_path / "bench-warm.log", out)  # a file with another name
    args = [*ex.example_args(str(manifest), str(tmp_path)), "--out", str(out)]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 2, run.output
    assert f"{out}: has 2 hard links; not rewritten" in run.output
    out.unlink()
    run = CliRunner().invoke(app, args)
    assert run.exit_code in (0, 1), run.output
    assert out.read_text("utf-8").startswith("plancc measure: deepseek_v4_flash on a2a3")
