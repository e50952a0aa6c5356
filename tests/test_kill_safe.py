"""A build killed while writing: its temporary files go at the next build, and a mixed
module/manifest pair (a kill between the two renames) is refused by plancc.runtime and
named by `build --check`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from plancc import write
from plancc.api import build
from plancc.runtime import ModuleMismatchError, load_manifest

PLAN = """\
plancc: 1
model: demo
platform: a2a3
dims: {{D: {d}}}
tensors:
  wa: {{shape: [D, 32], dtype: bf16}}
layers:
  k:
    stages:
      - {{name: s0, task: s0_tid}}
      - {{name: s1, duration_us: 500}}
      - {{name: s2, reads: [wa]}}
    warms: [{{name: w, after: s0, tensors: [wa]}}]
"""


def _plan(tmp_path: Path, d: int = 64) -> Path:
    plan = tmp_path / "demo.yaml"
    plan.write_text(PLAN.format(d=d), encoding="utf-8")
    return plan


def _built(tmp_path: Path, out: str, d: int) -> Path:
    (tmp_path / out).mkdir()
    result = build([str(_plan(tmp_path, d))], str(tmp_path / out))
    assert result.exit_code == 0, [x.message for x in result.report.diagnostics]
    return tmp_path / out


def _kill_once_staged(script: str, *args: str) -> None:
    """Run ``script`` in a child and kill it (SIGKILL) once it prints that its temp file is
    staged, as a crash or an OOM kill would, mid-write."""
    with subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "staged\n"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has it (until the kernel reuses it, much later)


def test_a_build_removes_the_temp_files_of_killed_builds_and_only_those(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    dead = f".plancc-{_dead_pid()}-abcd_123.tmp"
    alive = f".plancc-{os.getppid()}-efgh_456.tmp"  # a build still writing: not ours to take
    others = [".plancc-notes.tmp", "plancc-1-abcdefgh.tmp", ".plancc-1-abcdefgh.tmp.bak"]
    for name in [dead, alive, *others]:
        (out / name).write_bytes(b"partial")
    (out / f".plancc-{_dead_pid()}-dir_0000.tmp").mkdir()  # not a file: left alone
    result = build([str(_plan(tmp_path))], str(out))
    assert result.exit_code == 0
    left = sorted(p.name for p in out.iterdir())
    assert dead not in left
    assert set(left) >= {alive, *others}
    assert "demo_warms.py" in left


def test_check_never_removes_anything(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    dead = out / f".plancc-{_dead_pid()}-abcd_123.tmp"
    dead.write_bytes(b"partial")
    build([str(_plan(tmp_path))], str(out), compare=True)
    assert dead.exists()


# The build in a child process stops after staging its files (as if the disk stalled),
# and is killed there: a real SIGKILL at a deterministic point.
_STALLED_BUILD = textwrap.dedent(
    """
    import sys, time
    from plancc import write
    def stall(src, dst):
        print("staged", flush=True)
        time.sleep(120)
    write.os.replace = stall
    from plancc.api import build
    build([sys.argv[1]], sys.argv[2])
    """
)


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_build_killed_while_writing_leaves_temp_files_the_next_build_removes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = _plan(tmp_path)
    _kill_once_staged(_STALLED_BUILD, str(plan), str(out))
    leftovers = sorted(p.name for p in out.iterdir())
    assert len(leftovers) == 2
    assert all(write._LEFTOVER.fullmatch(name) for name in leftovers)
    assert build([str(plan)], str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["demo_warms.manifest.json", "demo_warms.py"]


def _mixed_pair(tmp_path: Path) -> Path:
    """A new module beside an old manifest: what a kill between the two renames leaves."""
    old = _built(tmp_path, "old", 64)
    new = _built(tmp_path, "new", 128)
    (old / "demo_warms.py").write_bytes((new / "demo_warms.py").read_bytes())
    return old


def test_runtime_refuses_a_manifest_beside_another_build_s_module(tmp_path: Path) -> None:
    old = _mixed_pair(tmp_path)
    manifest = old / "demo_warms.manifest.json"
    with pytest.raises(ModuleMismatchError) as err:
        load_manifest(manifest)
    message = str(err.value)
    assert message.startswith(f"{manifest}: {old / 'demo_warms.py'} is not the module")
    assert "come from different builds; run plancc build again" in message
    assert load_manifest(json.loads(manifest.read_text("utf-8"))).model == "demo"  # no file


def test_runtime_refuses_a_manifest_whose_module_is_missing(tmp_path: Path) -> None:
    out = _built(tmp_path, "out", 64)
    (out / "demo_warms.py").unlink()
    with pytest.raises(ModuleMismatchError, match="cannot read its module"):
        load_manifest(out / "demo_warms.manifest.json")


def test_runtime_takes_the_pair_it_was_built_with(tmp_path: Path) -> None:
    out = _built(tmp_path, "out", 64)
    assert load_manifest(out / "demo_warms.manifest.json").model == "demo"


def test_build_check_names_a_mixed_pair(tmp_path: Path) -> None:
    old = _mixed_pair(tmp_path)
    result = build([str(_plan(tmp_path, 128))], str(old), compare=True)
    status = {f.path.name: f.status for f in result.out_of_date}
    # The module is the one this plan builds; its manifest is from the other build.
    assert status == {"demo_warms.manifest.json": write.Status.MISMATCHED}
    assert result.exit_code == 1
    # A build heals the pair; then nothing is out of date.
    assert build([str(_plan(tmp_path, 128))], str(old)).exit_code == 0
    assert build([str(_plan(tmp_path, 128))], str(old), compare=True).out_of_date == []


_STALLED_FMT = textwrap.dedent(
    """
    import sys, time
    from plancc import write
    def stall(src, dst):
        print("staged", flush=True)
        time.sleep(120)
    write.os.replace = stall
    from plancc import fmt
    fmt.run([sys.argv[1]])
    """
)


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_fmt_killed_while_writing_leaves_a_temp_file_the_next_fmt_removes(
    tmp_path: Path,
) -> None:
    from plancc import fmt

    plan = tmp_path / "demo.yaml"
    plan.write_text(PLAN.format(d=64).replace("plancc: 1\nmodel: demo", "model: demo\nplancc: 1"))
    before = plan.read_bytes()
    _kill_once_staged(_STALLED_FMT, str(plan))
    [leftover] = [p.name for p in tmp_path.iterdir() if p.name != "demo.yaml"]
    assert write._LEFTOVER.fullmatch(leftover)
    assert plan.read_bytes() == before  # the kill lost nothing
    alive = f".plancc-{os.getppid()}-efgh_456.tmp"  # a build still writing: not ours to take
    others = [alive, ".plancc-notes.tmp", "other.yaml"]
    for name in others:
        (tmp_path / name).write_bytes(b"partial")
    assert fmt.run([str(plan)]).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["demo.yaml", *others])
    assert plan.read_text().startswith("plancc: 1\nmodel: demo\n")
    # --check and --diff write nothing, so they remove nothing either
    (tmp_path / leftover).write_bytes(b"partial")
    fmt.run([str(plan)], check=True)
    assert (tmp_path / leftover).exists()
