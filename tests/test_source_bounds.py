"""The model-code reader bounded in time, memory and files (docs/sources.md, "Bounds").

Each case is model code a careless or hostile file could hold; each ends within a
second or two with its exact finding: a PC208 notice naming what was left unread,
or PC200 for a layer file that cannot be read. None is a traceback, none hangs,
and nothing outside the plan's source root is read.
"""

from __future__ import annotations

import ast
import errno
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc import api
from plancc.cli.app import app
from plancc.reading import read_regular
from plancc.source import bound, cache, limits, modules, resolver, scopes
from plancc.source.limits import Budget, OutOfWork
from plancc.source.modules import Module, SourceError, load_module
from plancc.source.reader import read_layer

PLAN = """\
plancc: 1
model: m
platform: a2a3
source_root: "."
tensors:
  a: {{shape: [{dim}], dtype: fp32}}
layers:
  l:
    source: {source}
    stages:
{stages}"""
LAYER = """\
import pypto.language as pl
{head}

@pl.jit.inline
def f(a: pl.Tensor[[{dim}], pl.FP32]):
{body}"""
KERNEL = '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="{hint}"):\n        a[0:1] = 1\n'
SOURCE_CODES = {f"PC20{i}" for i in range(10)}


def _layer(path: Path, head: list[str], dim: str = "4", body: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = LAYER.format(head="\n".join(head), dim=dim, body=body or KERNEL.format(hint="k"))
    path.write_text(text, encoding="utf-8")
    return path


def _check(
    root: Path,
    source: str = "m.py:f",
    stages: tuple[str, ...] = ("{name: s, kernel: k}",),
    dim: str = "4",
) -> list[tuple[str, str]]:
    """validate's source findings on a plan of one layer kind: (code, message)."""
    plan = root / "plan.yaml"
    lines = "".join(f"      - {s}\n" for s in stages)
    plan.write_text(PLAN.format(dim=dim, source=source, stages=lines), encoding="utf-8")
    report = api.validate_paths([str(plan)])
    return [(d.code, d.message) for d in report.diagnostics if d.code in SOURCE_CODES]


def _extract(root: Path, source: str = "m.py:f") -> tuple[str, list[str]]:
    """extract's output and its notices, run in ``root``."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(app, ["extract", source])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr.splitlines()


def _unresolved_dim(line: int) -> tuple[str, str]:
    return (
        "PC208",
        f"a dim of a (m.py:{line}) is not resolved statically (a constant chosen at import "
        "time?): those dims are not compared",
    )


# ---------------------------------------------------------------------------
# Constants


def test_a_constant_is_evaluated_once(tmp_path: Path) -> None:
    """`Xi = X(i-1) + X(i-1)` forty times: 2**40 evaluations when each name is evaluated
    where it is used; one each, memoised (past the budget without it: PC208)."""
    head = ["X0 = 1", *(f"X{i} = X{i - 1} + X{i - 1}" for i in range(1, 41))]
    _layer(tmp_path / "m.py", head, "X40 // X38")
    assert _check(tmp_path) == []
    out, notices = _extract(tmp_path)
    assert "  a: {shape: [X40 // X38], dtype: fp32}\n" in out
    assert "  X40: X39 + X39\n" in out
    assert notices == []


def test_a_config_property_is_evaluated_once(tmp_path: Path) -> None:
    """A config object's properties, each naming the one before twice: one evaluation
    each, as module constants."""
    head = ["class Config:", "    @property", "    def p0(self):", "        return self.base"]
    for i in range(1, 41):
        head += ["    @property", f"    def p{i}(self):"]
        head += [f"        return self.p{i - 1} + self.p{i - 1}"]
    _layer(tmp_path / "m.py", [*head, "", "M = Config(base=1)"], "M.p40 // M.p38")
    assert _check(tmp_path) == []


def test_a_chain_of_constants_does_not_nest(tmp_path: Path) -> None:
    """A thousand constants each naming the one before: evaluated deepest first, never a
    thousand calls deep."""
    head = ["Y0 = 2", *(f"Y{i} = Y{i - 1} + 1" for i in range(1, 1000))]
    _layer(tmp_path / "m.py", head, "Y999 - 997")
    assert _check(tmp_path) == []


def test_a_cycle_of_constants_is_unresolved(tmp_path: Path) -> None:
    head = ["Z0 = Z499 + 1", *(f"Z{i} = Z{i - 1} + 1" for i in range(1, 500))]
    _layer(tmp_path / "m.py", head, "Z499")
    assert _check(tmp_path) == [
        _unresolved_dim(504),
        (
            "PC208",
            "m.py:471: constant 'Z469' nests more than 96 names deep: not resolved "
            "statically; the dims that use it are not compared",
        ),
    ]


def test_a_power_tower_is_past_the_integer_bound(tmp_path: Path) -> None:
    """`Pi = P(i-1) ** 63`: 10**(63**5) if computed; the first past 2**63 is named."""
    head = ["P0 = 10", *(f"P{i} = P{i - 1} ** 63" for i in range(1, 6))]
    _layer(tmp_path / "m.py", head, "P5")
    assert _check(tmp_path) == [
        _unresolved_dim(10),
        (
            "PC208",
            "m.py:3: constant 'P1' is 2**63 or more in magnitude: not resolved statically; "
            "the dims that use it are not compared",
        ),
    ]
    out, notices = _extract(tmp_path)
    assert "  a: {shape: [UNRESOLVED], dtype: fp32}\n" in out
    assert notices == [
        "notice PC208: m.py:3: constant 'P1' is 2**63 or more in magnitude",
        "notice PC208: m.py:10: 'P5' not resolved",
    ]


def test_a_dim_of_thousands_of_digits(tmp_path: Path) -> None:
    """A literal of 4,816 digits (Python refuses to print more than 4,300): unresolved and
    named, never formatted."""
    _layer(tmp_path / "m.py", ["D = 0x" + "f" * 4000], "D")
    assert _check(tmp_path) == [
        _unresolved_dim(5),
        (
            "PC208",
            "m.py:2: constant 'D' is 2**63 or more in magnitude: not resolved statically; "
            "the dims that use it are not compared",
        ),
    ]
    _layer(tmp_path / "m.py", [], "4 * 2**62 + 1")
    assert _check(tmp_path)[1] == (
        "PC208",
        "m.py:5: '4 * 2 ** 62' is 2**63 or more in magnitude: not resolved statically; "
        "the dims that use it are not compared",
    )
    _layer(tmp_path / "m.py", [], "2**62 + (2**62 - 1)")
    assert _check(tmp_path, dim="9223372036854775807") == []  # the largest that resolves


def test_a_dim_nested_thousands_deep(tmp_path: Path) -> None:
    """`1 + 1 + … + 1` 2,900 times parses, but no recursive walk survives it: the part
    past 48 levels is cut where the module is parsed, and named."""
    _layer(tmp_path / "m.py", [], " + ".join(["1"] * 2900))
    assert _check(tmp_path) == [
        _unresolved_dim(5),
        (
            "PC208",
            "m.py:5: an expression nested more than 48 deep: not resolved statically; the "
            "part past that depth is not read",
        ),
    ]
    out, notices = _extract(tmp_path)
    assert "  a: {shape: [UNRESOLVED], dtype: fp32}\n" in out
    assert notices[0] == "notice PC208: m.py:5: an expression nested more than 48 deep"
    assert notices[1].startswith("notice PC208: m.py:5: '... + ... + 1 + 1 + 1")
    assert notices[1].endswith("' not resolved")


def test_deep_code_is_read_to_a_bound(tmp_path: Path) -> None:
    """An attribute chain thousands deep as a call, and an `elif` chain hundreds long (a
    block inside a block): bounded, named, no RecursionError. Thousands long, Python's
    parser refuses it (the same from every caller: PC200)."""
    body = "    x = a" + ".b" * 2900 + "(a)\n" + KERNEL.format(hint="k")
    _layer(tmp_path / "m.py", [], body=body)
    assert _check(tmp_path) == [
        (
            "PC208",
            "m.py:6: an expression nested more than 48 deep: not resolved statically; the "
            "part past that depth is not read",
        ),
    ]
    branches = "".join(f"    elif N == {i}:\n        pass\n" for i in range(1, 500))
    body = "    if N == 0:\n        pass\n" + branches + KERNEL.format(hint="k")
    _layer(tmp_path / "m.py", ["N = 499"], body=body)
    assert _check(tmp_path) == [
        (
            "PC208",
            "m.py:134: code nested more than 64 blocks deep (inlined helpers counted): not "
            "resolved statically; the checks of what it runs are skipped",
        ),
    ]
    branches = "".join(f"    elif N == {i}:\n        pass\n" for i in range(1, 3000))
    _layer(tmp_path / "m.py", ["N = 2999"], body="    if N == 0:\n        pass\n" + branches)
    assert _check(tmp_path) == [
        (
            "PC200",
            f"source of layer kind 'l' not checked: {tmp_path}/m.py nests too deeply to parse",
        )
    ]


# ---------------------------------------------------------------------------
# Kernels


@pytest.mark.parametrize("depth", [10, pytest.param(14, marks=pytest.mark.slow)])
def test_many_kernels_of_one_name_hint(tmp_path: Path, depth: int) -> None:
    """2**14 kernels named `k` from a helper tree: `k`, `k_0` … `k_16382`, each name found
    where the search for `k` stopped (it was quadratic: 19 s). bench/source.py times it."""
    helpers = ["", "@pl.jit.inline", "def h0(a):", KERNEL.format(hint="k")]
    for i in range(1, depth + 1):
        helpers += ["@pl.jit.inline", f"def h{i}(a):", f"    h{i - 1}(a)", f"    h{i - 1}(a)", ""]
    _layer(tmp_path / "m.py", helpers, body=f"    h{depth}(a)\n")
    reading = read_layer(str(tmp_path / "m.py"), "f")
    names = [k.name for k in reading.kernels]
    assert names == ["k", *(f"k_{n}" for n in range(2**depth - 1))]
    # `t` after `s` in the plan (a list without `deps`) and in the source (both write `a`).
    last = f"k_{2**depth - 2}"
    assert _check(tmp_path, stages=("{name: s, kernel: k}", f"{{name: t, kernel: {last}}}")) == []


@pytest.mark.parametrize("count", [512, pytest.param(4096, marks=pytest.mark.slow)])
def test_thousands_of_kernels_in_a_row(tmp_path: Path, count: int) -> None:
    """4,096 kernels, each after the one before: extract's `deps` reduction takes a step
    per direct dep (it compared every pair of earlier stages: cubic); found by the fuzz
    target, validating the skeleton took minutes."""
    body = "".join(KERNEL.format(hint=f"k{i}") for i in range(count))
    _layer(tmp_path / "m.py", [], body=body)
    out, notices = _extract(tmp_path)
    stages = [line for line in out.splitlines() if line.startswith("      - {name: k")]
    assert len(stages) == count
    assert stages[0] == "      - {name: k0, deps: [], kernel: k0}"
    assert (
        stages[-1] == f"      - {{name: k{count - 1}, deps: [k{count - 2}], kernel: k{count - 1}}}"
    )
    assert notices == []
    # Checked against its code, the skeleton reports nothing: PC204 compares each stage
    # with all before it as bit sets (it compared every pair: 8 million at 4,096).
    (tmp_path / "plan.yaml").write_text(out, encoding="utf-8")
    report = api.validate_paths([str(tmp_path / "plan.yaml")])
    assert [d.code for d in report.diagnostics] == []


def test_a_parameter_no_suffix_mends(tmp_path: Path) -> None:
    """A parameter name longer than a plan name may be, or not ASCII (Python allows
    `é`): extract renamed it with `_t` for ever."""
    long = "x" * 101
    body = f"    with pl.at(level=pl.Level.CORE_GROUP, name_hint='k'):\n        {long}[0:1] = 1\n"
    (tmp_path / "m.py").write_text(
        f"import pypto.language as pl\n\n@pl.jit.inline\ndef f({long}: pl.Tensor[[4], pl.FP32], "
        "é: pl.Tensor[[4], pl.FP32]):\n" + body,
        encoding="utf-8",
    )
    out, notices = _extract(tmp_path)
    assert f"  {'x' * 50}: {{shape: [4], dtype: fp32}}\n" in out
    assert notices == ["notice PC208: m.py:4: parameter 'é': not ASCII"]
    (tmp_path / "plan.yaml").write_text(out, encoding="utf-8")  # mapped by source_params
    assert [d.code for d in api.validate_paths([str(tmp_path / "plan.yaml")]).diagnostics] == []


def test_tasks_gathered_in_an_array_are_paid_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of 2**10 kernels waits on an array of all the tasks before it: n**2 / 2 deps,
    paid from the budget (here made small), not a free quadratic."""
    monkeypatch.setattr(limits, "MAX_WORK", 50_000)
    kernel = '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k", deps=[arr]) as t:\n'
    helpers = [
        "",
        "@pl.jit.inline",
        "def h0(a, arr):",
        kernel + "        a[0:1] = 1\n    arr[0] = t\n",
    ]
    for i in range(1, 11):
        helpers += ["@pl.jit.inline", f"def h{i}(a, arr):", f"    h{i - 1}(a, arr)"]
        helpers += [f"    h{i - 1}(a, arr)", ""]
    body = "    arr = pl.array.create(4, pl.TASK_ID)\n    h10(a, arr)\n"
    _layer(tmp_path / "m.py", helpers, body=body)
    assert _check(tmp_path) == [
        (
            "PC208",
            "m.py:61: f() needs more than 50,000 steps of work: not resolved statically; "
            "the rest of it is not read",
        )
    ]


def test_too_many_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scopes, "MAX_KERNELS", 100)
    body = "".join(KERNEL.format(hint=f"k{i}") for i in range(101))
    _layer(tmp_path / "m.py", [], body=body)
    reading = read_layer(str(tmp_path / "m.py"), "f")
    assert len(reading.kernels) == 100
    assert [(u.line, u.what, u.effect) for u in reading.unresolved] == [
        (5, "f() needs more than 100 kernels", "the rest of it is not read")
    ]


def test_the_budget_of_work_ends_a_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel of a thousand statements inlined 2**14 times: past the budget (here made
    small; 2,000,000 steps, some seconds, in use), a notice, not a hang."""
    monkeypatch.setattr(limits, "MAX_WORK", 50_000)
    big = '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):\n'
    big += "".join(f"        a[{i}:{i + 1}] = {i}\n" for i in range(1000))
    helpers = ["", "@pl.jit.inline", "def h0(a):", big]
    for i in range(1, 15):
        helpers += ["@pl.jit.inline", f"def h{i}(a):", f"    h{i - 1}(a)", f"    h{i - 1}(a)", ""]
    _layer(tmp_path / "m.py", helpers, body="    h14(a)\n")
    assert _check(tmp_path) == [
        (
            "PC208",
            "m.py:1079: f() needs more than 50,000 steps of work: not resolved statically; "
            "the rest of it is not read",
        )
    ]


# ---------------------------------------------------------------------------
# Files


def test_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "m.py")
    assert _check(tmp_path) == [
        ("PC200", f"source of layer kind 'l' not checked: {tmp_path}/m.py is not a regular file")
    ]


def test_a_device_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "m.py").symlink_to("/dev/zero")
    assert _check(tmp_path) == [
        ("PC200", f"source of layer kind 'l' not checked: {tmp_path}/m.py is not a regular file")
    ]


@pytest.fixture
def blocking(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Reads of the files named ``block*.py`` block, as a read of a file on a hung mount
    does: in the read system call, on a pipe nobody writes to (closed at the end, which
    lets the reads go)."""
    r, w = os.pipe()
    real = modules.read_regular

    def read(path: str | os.PathLike[str], limit: int) -> bytes:
        if os.path.basename(path).startswith("block"):
            os.read(r, 1)
        return real(path, limit)

    monkeypatch.setattr(modules, "read_regular", read)
    monkeypatch.setattr(modules, "READ_SECONDS", 0.3)
    yield
    os.close(w)
    for waiting in list(modules._reads.values()):
        waiting.thread.join(5)
    os.close(r)


def _timed_check(root: Path, source: str) -> tuple[list[tuple[str, str]], float]:
    start = time.monotonic()
    found = _check(root, source=source)
    return found, time.monotonic() - start


@pytest.mark.usefixtures("blocking")
def test_a_model_file_that_blocks_on_read_is_pc208_after_its_bound(tmp_path: Path) -> None:
    """Given up on after READ_SECONDS, then at once while that read still waits: a check
    never waits on it twice."""
    _layer(tmp_path / "block.py", [])
    message = f"source of layer kind 'l' not checked: {tmp_path}/block.py"
    found, seconds = _timed_check(tmp_path, "block.py:f")
    assert found == [("PC208", f"{message} was not read within 0.3 s: it blocks on read")]
    assert 0.3 <= seconds < 2
    cache.clear()
    found, seconds = _timed_check(tmp_path, "block.py:f")
    assert found == [("PC208", f"{message} blocks on read: an earlier read of it still waits")]
    assert seconds < 0.3


@pytest.mark.usefixtures("blocking")
def test_an_imported_module_that_blocks_on_read_is_named(tmp_path: Path) -> None:
    _layer(tmp_path / "m.py", ["from blocked import D"], "D")
    (tmp_path / "blocked.py").write_text("D = 4\n", encoding="utf-8")
    found, seconds = _timed_check(tmp_path, "m.py:f")
    assert found == [
        _unresolved_dim(5),
        (
            "PC208",
            "m.py:2: import 'blocked': blocked.py was not read within 0.3 s: it blocks on "
            "read: not resolved statically; its names are not read",
        ),
    ]
    assert seconds < 2


def _kmsg() -> bool:
    """Whether /proc/kmsg opens here (as root, with CAP_SYSLOG): a file whose reads wait
    for the kernel's next message."""
    try:
        os.close(os.open("/proc/kmsg", os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _kmsg(), reason="/proc/kmsg does not open here (root only)")
def test_proc_kmsg_as_model_code_is_pc208_at_once(tmp_path: Path) -> None:
    """It says it is a regular file, and its reads wait; kept non-blocking, the read says
    so at once (the whole validate hung on it)."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        PLAN.format(dim=4, source="kmsg:f", stages="      - {name: s}\n").replace(
            'source_root: "."', "source_root: /proc"
        ),
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "plancc", "validate", str(plan)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (
        f"{plan}:9:13: notice PC208: source of layer kind 'l' not checked: /proc/kmsg blocks "
        "on read: it waits for data\n"
    ) in run.stdout


@pytest.mark.skipif(not _kmsg(), reason="/proc/kmsg does not open here (root only)")
def test_read_regular_never_waits_on_proc_kmsg() -> None:
    with pytest.raises(OSError, match="blocks on read: it waits for data") as caught:
        read_regular("/proc/kmsg", 1 << 20)
    assert caught.value.errno == errno.EAGAIN


def test_a_file_that_becomes_a_fifo_after_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test on the path passes (a regular file then), the open finds a FIFO: refused
    on the opened descriptor, at once."""
    fifo = tmp_path / "m.py"
    os.mkfifo(fifo)
    monkeypatch.setattr(os.path, "isfile", lambda _: True)  # the test before the swap
    outcome: list[str] = []

    def load() -> None:
        try:
            load_module(str(fifo))
        except SourceError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert outcome == [f"{fifo} is not a regular file"]


def test_a_relative_import_stays_inside_the_root(tmp_path: Path) -> None:
    """`from ...secret import SECRET` two levels above the root: named, never parsed."""
    (tmp_path / "secret.py").write_text("SECRET = 7\n", encoding="utf-8")
    root = tmp_path / "root"
    _layer(root / "pkg" / "m.py", ["from ...secret import SECRET"], "SECRET")
    assert _check(root, source="pkg/m.py:f", dim="7") == [
        (
            "PC208",
            "a dim of a (pkg/m.py:5) is not resolved statically (a constant chosen at import "
            "time?): those dims are not compared",
        ),
        (
            "PC208",
            f"pkg/m.py:2: import '...secret' resolves outside the source root ({tmp_path}/"
            "secret.py): not resolved statically; its names are not read",
        ),
    ]
    assert not [p for p in modules._CACHE if "secret" in p]  # nothing parsed
    out, notices = _extract(root / "pkg")
    assert "  a: {shape: [UNRESOLVED], dtype: fp32}\n" in out
    assert notices == [
        f"notice PC208: m.py:2: import '...secret' resolves outside the source root "
        f"({tmp_path}/secret.py)",
        "notice PC208: m.py:5: 'SECRET' not resolved",
    ]


def test_a_link_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "dims.py").write_text("D = 7\n", encoding="utf-8")
    root = tmp_path / "root"
    _layer(root / "m.py", ["from lib.dims import D"], "D")
    (root / "lib").symlink_to(tmp_path / "outside")
    found = _check(root, dim="7")
    assert found[1] == (
        "PC208",
        f"m.py:2: import 'lib.dims' resolves outside the source root ({root}/lib/dims.py): "
        "not resolved statically; its names are not read",
    )


def test_an_import_that_cannot_be_read_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An imported module that does not parse, is a FIFO, or is one too many: named, not
    silently unknown."""
    names = {"ok": "G", "consts": "D", "dims": "E", "ok2": "H", "more": "F"}
    _layer(
        tmp_path / "m.py",
        [f"from {m} import {n}" for m, n in names.items()],
        "+".join(names.values()),
    )
    for m, n in names.items():
        (tmp_path / f"{m}.py").write_text(f"{n} = 4\n", encoding="utf-8")
    (tmp_path / "consts.py").write_text("D = (\n", encoding="utf-8")
    (tmp_path / "dims.py").unlink()
    os.mkfifo(tmp_path / "dims.py")
    monkeypatch.setattr(resolver, "MAX_MODULES", 3)  # the layer's own module, ok and ok2
    effect = "not resolved statically; its names are not read"
    assert _check(tmp_path) == [
        _unresolved_dim(9),
        (
            "PC208",
            f"m.py:3: import 'consts': consts.py:1: does not parse: '(' was never closed: {effect}",
        ),
        ("PC208", f"m.py:4: import 'dims': dims.py is not a regular file: {effect}"),
        ("PC208", f"m.py:6: import 'more': more than 3 modules would be read: {effect}"),
    ]


def test_callers_are_looked_for_within_the_bounds(tmp_path: Path) -> None:
    """A bare `pl.Tensor` parameter's shape is looked for in its directory's modules: a
    FIFO there is not waited on, and a link to an entry outside the root is not read
    (it would say [8]: PC207)."""
    root = tmp_path / "root"
    _layer(root / "m.py", [])
    text = (root / "m.py").read_text(encoding="utf-8")
    (root / "m.py").write_text(text.replace("a: pl.Tensor[[4], pl.FP32]", "a: pl.Tensor"))
    os.mkfifo(root / "fifo.py")
    (tmp_path / "entry.py").write_text(
        "import pypto.language as pl\nfrom m import f\n\n"
        "def entry(a: pl.Tensor[[8], pl.FP32]):\n    f(a)\n",
        encoding="utf-8",
    )
    (root / "entry.py").symlink_to(tmp_path / "entry.py")
    found: list[list[tuple[str, str]]] = []
    checker = threading.Thread(target=lambda: found.append(_check(root)), daemon=True)
    checker.start()
    checker.join(timeout=20)
    assert found == [[]]


def test_opaque_code_repeated_is_paid_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2**12 `while` blocks from a helper tree: each is a kernel waiting for all before it
    (n**2 / 2 edges, some gigabytes at 2**14), paid from the budget (here made small)."""
    monkeypatch.setattr(limits, "MAX_WORK", 200_000)
    helpers = ["", "@pl.jit.inline", "def h0(a):", "    while a:\n        pass\n"]
    for i in range(1, 13):
        helpers += ["@pl.jit.inline", f"def h{i}(a):", f"    h{i - 1}(a)", f"    h{i - 1}(a)", ""]
    _layer(tmp_path / "m.py", helpers, body="    h12(a)\n")
    assert _check(tmp_path) == [
        (
            "PC208",
            "m.py:5: a loop or try block outside a kernel: not resolved statically; the "
            "checks of what it runs are skipped",
        ),
        (
            "PC208",
            "m.py:70: f() needs more than 200,000 steps of work: not resolved statically; "
            "the rest of it is not read",
        ),
        ("PC202", "stage 's': kernel 'k' is no kernel of f() (m.py)"),
    ]


def test_unbound_names_are_worked_out_once_a_reading() -> None:
    """A layer calling a warm at many lines: its module's names and its function's
    scoping are worked out once, each node walked spent from the reading's budget (a walk
    of the whole module at each call was quadratic and unbudgeted: 300 calls in a module
    of 2,000 statements took 7 s to extract)."""
    text = "".join(f"X{i} = {i}\n" for i in range(50)) + "def f(a):\n" + "    g(a, b, X3)\n" * 20
    module = Module("m.py", "m", ast.parse(text), {})
    walks: list[int] = []
    walk = bound._bound

    def counted(body: list[ast.stmt], budget: Budget) -> Iterator[str]:
        walks.append(1)
        return walk(body, budget)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bound, "_bound", counted)
        budget = Budget()
        judge = bound.Unbound(budget)
        for line in range(52, 72):
            assert judge(module, "f", line, ["a", "b", "X3", "len"]) == ("b",)
    assert walks == [1]
    assert budget.limit - budget.left >= 50  # the module's statements, spent once
    with pytest.raises(OutOfWork):
        bound.Unbound(Budget(20))(module, "f", 52, ["b"])
