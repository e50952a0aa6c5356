"""Every file a command line names is read as a regular file, opened without blocking and
never read past a cap: a FIFO, a device or an endless file is one line and exit 2.

Each case runs under an alarm: a read that blocks (a FIFO's open waits for a writer)
is interrupted and fails the test instead of hanging it."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import measure_fixtures as fx
import pytest
from typer.testing import CliRunner

from plancc.cli.app import app
from plancc.load import read_config_file
from plancc.measure import files
from plancc.reading import open_regular, read_regular
from plancc.suggest.fix import _write
from plancc.usage import UsageError

ROOT = Path(__file__).resolve().parent.parent
FLASH = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
EP2 = ({41237: fx.spread(34423.7)}, {41301: fx.spread(33424.2)})


def _blocked(signum: int, frame: FrameType | None) -> None:
    raise TimeoutError("blocked")


@pytest.fixture(autouse=True)
def alarm() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _blocked)
    signal.setitimer(signal.ITIMER_REAL, 20)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "merged_swimlane_1.json"  # a trace's name: --trace DIR finds it too
    os.mkfifo(path)
    return path


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.stdout == ""
    return result.exit_code, result.stderr


def _logs(tmp: Path) -> tuple[str, str]:
    base, warm = tmp / "b.log", tmp / "w.log"
    base.write_text(fx.bench_log(EP2[0]), encoding="utf-8")
    warm.write_text(fx.bench_log(EP2[1]), encoding="utf-8")
    return str(base), str(warm)


# -- plancc measure -------------------------------------------------------------------------


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("option", ["--manifest", "--baseline", "--warm", "--slots", "--trace"])
def test_measure_reads_no_fifo_and_no_device(
    option: str, special: str, fifo: Path, tmp_path: Path
) -> None:
    bad = str(fifo) if special == "fifo" else special
    base, warm = _logs(tmp_path)
    args = {"--manifest": str(FLASH), "--baseline": base, "--warm": warm}
    if option in args:
        args[option] = bad
    extra = [] if option in args else [option, bad]
    code, err = _invoke("measure", *(x for kv in args.items() for x in kv), *extra)
    cannot = "cannot read manifest" if option == "--manifest" else "cannot read"
    assert (code, err) == (2, f"plancc: {bad}: {cannot}: not a regular file\n")


def test_a_trace_directory_holding_only_a_fifo_has_no_trace(fifo: Path, tmp_path: Path) -> None:
    code, err = _invoke("measure", "--manifest", str(FLASH), "--trace", str(tmp_path))
    assert (code, err) == (
        2,
        f"plancc: {tmp_path}: no merged_swimlane_*.json under this directory\n",
    )


def test_a_manifest_larger_than_any_is_not_read_past_its_cap(tmp_path: Path) -> None:
    big = tmp_path / "m.json"
    with open(big, "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: nothing on the disk
    base, warm = _logs(tmp_path)
    code, err = _invoke("measure", "--manifest", str(big), "--baseline", base, "--warm", warm)
    assert (code, err) == (2, f"plancc: {big}: cannot read manifest: larger than 16 MiB\n")


def test_a_manifest_copied_away_from_its_module_is_a_clear_error(tmp_path: Path) -> None:
    copy = tmp_path / FLASH.name
    shutil.copy(FLASH, copy)
    base, warm = _logs(tmp_path)
    code, err = _invoke("measure", "--manifest", str(copy), "--baseline", base, "--warm", warm)
    module = tmp_path / "deepseek_v4_flash_warms.py"
    assert (code, err) == (
        2,
        f"plancc: {copy}: cannot read its module {module}: No such file or directory\n",
    )
    shutil.copy(FLASH.with_name(module.name), module)  # and beside its module, it is read
    result = CliRunner().invoke(
        app, ["measure", "--manifest", str(copy), "--baseline", base, "--warm", warm]
    )
    assert result.stdout.startswith("plancc measure: deepseek_v4_flash on a2a3"), result.output


def test_a_log_past_the_cap_or_with_an_endless_line_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, warm = _logs(tmp_path)
    monkeypatch.setattr(files, "MAX_LINE", 1 << 20)
    Path(warm).write_text("[RUN] " + "9" * (1 << 20) + "\n", encoding="utf-8")
    code, err = _invoke("measure", "--manifest", str(FLASH), "--baseline", base, "--warm", warm)
    assert (code, err) == (2, f"plancc: {warm}:1: a line longer than 1 MiB: not a benchmark log\n")
    monkeypatch.setattr(files, "MAX_BYTES", 1 << 20)
    Path(warm).write_text("x\n" * (1 << 19) + "y\n", encoding="utf-8")  # 1 MiB and 2 bytes
    code, err = _invoke("measure", "--manifest", str(FLASH), "--baseline", base, "--warm", warm)
    assert (code, err) == (2, f"plancc: {warm}: cannot read: larger than 1 MiB\n")


# -- plancc extract --config ----------------------------------------------------------------

LAYER = """\
import pypto.language as pl

D = 64


@pl.jit.inline
def layer(x: pl.Tensor[[D, D], pl.BF16], out: pl.Tensor[[D, D], pl.BF16]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        out[:, :] = pl.matmul(x, x)
    return out
"""


@pytest.fixture
def layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "layer.py").write_text(LAYER, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("deep.json", "config 'deep.json' nests too deeply to read"),
        (
            "merged_swimlane_1.json",
            "cannot read config 'merged_swimlane_1.json': not a regular file",
        ),
        ("/dev/zero", "cannot read config '/dev/zero': not a regular file"),
        ("big.json", "cannot read config 'big.json': larger than 4 MiB"),
        ("list.json", "config 'list.json' is not a JSON object"),
    ],
)
def test_extract_reads_its_config_as_validate_reads_a_plans(
    config: str, message: str, layer: Path, fifo: Path
) -> None:
    (layer / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (layer / "big.json").write_text('{"a": "' + "x" * (4 << 20) + '"}', encoding="utf-8")
    (layer / "list.json").write_text("[1]", encoding="utf-8")
    code, err = _invoke("extract", "layer.py:layer", "--config", config)
    assert (code, err) == (2, f"plancc: {message}\n")


def test_extract_reads_a_regular_config(layer: Path) -> None:
    (layer / "config.json").write_text(json.dumps({"hidden": 64, "name": "m"}), encoding="utf-8")
    result = CliRunner().invoke(app, ["extract", "layer.py:layer", "--config", "config.json"])
    assert result.exit_code == 0, result.output
    assert "config: config.json\n" in result.stdout


# -- the reader itself -----------------------------------------------------------------------


def test_a_path_that_is_a_fifo_when_opened_is_refused_without_blocking(fifo: Path) -> None:
    # read_config checks the path first; the reader checks the descriptor it opened, so a
    # path that became a FIFO after that check does not block either.
    for read in (read_config_file, lambda p: read_regular(p, 1 << 20)):
        with pytest.raises(OSError, match="not a regular file"):
            read(fifo)


def test_a_regular_file_is_read_up_to_its_cap_and_not_past_it(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(OSError, match="larger than 99 bytes"), open_regular(path, 99) as f:
        f.read()


# -- plancc report --measure ----------------------------------------------------------------


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_report_reads_no_fifo_and_no_device_as_its_measurement(
    special: str, fifo: Path, tmp_path: Path
) -> None:
    bad = str(fifo) if special == "fifo" else special
    plan = str(ROOT / "plans" / "deepseek_v4_flash.yaml")
    code, err = _invoke("report", plan, "--measure", bad, "-o", str(tmp_path / "r.html"))
    assert (code, err) == (2, f"plancc: {bad}: cannot read: not a regular file\n")
    assert not (tmp_path / "r.html").exists()


# -- the runtime's manifest ------------------------------------------------------------------


def test_the_runtime_reads_no_fifo_as_a_manifest_or_its_module(fifo: Path, tmp_path: Path) -> None:
    from plancc.runtime import MalformedManifestError, ModuleMismatchError, load_manifest

    with pytest.raises(MalformedManifestError, match="cannot read manifest: not a regular file"):
        load_manifest(fifo)
    copy = tmp_path / FLASH.name
    shutil.copy(FLASH, copy)
    os.mkfifo(tmp_path / "deepseek_v4_flash_warms.py")  # where its module should be
    with pytest.raises(ModuleMismatchError, match=r"cannot read its module .*: not a regular file"):
        load_manifest(copy)


# -- plancc suggest --fix -------------------------------------------------------------------


def test_suggest_writes_no_suggestion_through_a_fifo(fifo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        _write(str(fifo), [], None)
    assert str(caught.value) == f"{fifo}: cannot write the suggestion: not a regular file"
