"""Readings of model code kept by the stamps of the files they read (plancc.source.cache):
served again while nothing they read changed, read again when anything did, bounded in
number, and stopped at a check's deadline."""

from __future__ import annotations

import os
import shutil
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from plancc import api
from plancc.load.inputs import PlanInput
from plancc.source import cache, limits, modules, reader
from plancc.source.limits import OutOfTime
from plancc.source.modules import SourceError

DATA = Path(__file__).parent / "data" / "source"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every reading actually made (path relative to its root, function)."""
    made: list[tuple[str, str]] = []

    def counted(
        path: str,
        function: str,
        root: str | None = None,
        defines: Any = MappingProxyType({}),
        deadline: Any = None,
    ) -> reader.Reading:
        made.append((os.path.basename(path), function))
        return reader.read_layer(path, function, root, defines, deadline)

    monkeypatch.setattr(cache, "read_layer", counted)
    return made


@pytest.fixture
def attn(tmp_path: Path) -> Path:
    """The tiny attention layer (five modules), with a plan of it."""
    work = tmp_path / "attn"
    shutil.copytree(DATA / "attn", work)
    return work


def _read(work: Path) -> reader.Reading:
    return cache.read(str(work / "layer.py"), "attention", str(work))


def _touch(path: Path) -> None:
    """The file's mtime a second later, its size the same: a change only the mtime tells."""
    later = path.stat().st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))


def test_a_reading_is_kept_while_nothing_it_read_changed(
    attn: Path, reads: list[tuple[str, str]]
) -> None:
    first = _read(attn)
    assert _read(attn) is first
    assert reads == [("layer.py", "attention")]


@pytest.mark.parametrize("module", ["layer.py", "proj.py", "config.py"])
def test_a_change_to_any_module_it_read_reads_it_again(
    attn: Path, reads: list[tuple[str, str]], module: str
) -> None:
    """The layer's own file, or a module it imports (its helpers' kernels, its constants)."""
    first = _read(attn)
    _touch(attn / module)
    assert _read(attn) is not first
    assert len(reads) == 2


def test_a_module_created_beside_the_ones_read_reads_it_again(
    attn: Path, reads: list[tuple[str, str]]
) -> None:
    """An import that found nothing may find the new file: its directory's stamp changed."""
    _read(attn)
    time.sleep(0.01)  # past the directory's mtime tick
    (attn / "later.py").write_text("X = 1\n", encoding="utf-8")
    _read(attn)
    assert len(reads) == 2


def _same_size_edit(config: Path) -> None:
    """``hidden_size=256`` -> ``=512`` (the size the same), the mtime put back as it was:
    what `touch -d`, `cp -p` or a tool that keeps timestamps leaves."""
    before = config.stat()
    config.write_text(config.read_text("utf-8").replace("=256,", "=512,"), "utf-8")
    assert config.stat().st_size == before.st_size
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))


def _hidden(reading: reader.Reading) -> int | None:
    return reading.params["x"].values[1]


def test_an_edit_that_keeps_size_and_mtime_is_read_again(attn: Path) -> None:
    """Just written, the file's stamp is not settled: its bytes are compared."""
    assert _hidden(_read(attn)) == 256
    _same_size_edit(attn / "config.py")
    assert _hidden(_read(attn)) == 512


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stamp settled at once: the stamp alone tells, as for a file not edited in
    the last seconds. (The sleeps put the change past a tick of the file system's clock.)"""
    monkeypatch.setattr(modules, "RACY_NS", -(10**12))


@pytest.mark.usefixtures("settled")
def test_a_settled_stamp_tells_an_edit_that_keeps_size_and_mtime_by_its_ctime(
    attn: Path,
) -> None:
    assert _hidden(_read(attn)) == 256
    time.sleep(0.05)
    _same_size_edit(attn / "config.py")
    assert _hidden(_read(attn)) == 512


@pytest.mark.usefixtures("settled")
def test_a_copy_keeping_timestamps_is_read_again(attn: Path) -> None:
    """`cp -p other config.py`: the other file's size and mtime, written into this one."""
    config = attn / "config.py"
    other = attn.parent / "other.py"
    other.write_text(config.read_text("utf-8").replace("=256,", "=512,"), "utf-8")
    os.utime(other, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns))
    assert _hidden(_read(attn)) == 256
    time.sleep(0.05)
    shutil.copy2(other, config)
    assert _hidden(_read(attn)) == 512


@pytest.mark.usefixtures("settled")
def test_an_atomic_rename_keeping_size_and_mtime_is_read_again(attn: Path) -> None:
    """An editor's save: a new file (a new inode) renamed over the old one."""
    config = attn / "config.py"
    new = attn / "config.py.new"
    new.write_text(config.read_text("utf-8").replace("=256,", "=512,"), "utf-8")
    os.utime(new, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns))
    assert _hidden(_read(attn)) == 256
    os.replace(new, config)
    assert _hidden(_read(attn)) == 512


@pytest.mark.usefixtures("settled")
def test_a_settled_unchanged_module_is_not_read_again(
    attn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stamp is enough: a keystroke in the editor reads no model code's bytes."""
    first = _read(attn)
    read: list[str] = []
    monkeypatch.setattr(modules, "source_bytes", lambda path: read.append(path) or b"")
    assert _read(attn) is first
    assert read == []


def test_an_unsettled_module_is_compared_until_it_settles(
    attn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read within RACY_NS of its ctime, a stamp is checked by its bytes; once a look comes
    later than that and finds the same bytes, the stamp alone is trusted."""
    first = _read(attn)
    assert _read(attn) is first  # the bytes compared: the same
    monkeypatch.setattr(modules, "RACY_NS", -(10**12))  # as if the seconds had passed
    assert _read(attn) is first  # compared once more, now settled
    read: list[str] = []
    monkeypatch.setattr(modules, "source_bytes", lambda path: read.append(path) or b"")
    assert _read(attn) is first
    assert read == []


def test_an_unreadable_source_is_never_kept(attn: Path, reads: list[tuple[str, str]]) -> None:
    """A missing file costs no reading: asked again, it is looked for again."""
    for _ in range(2):
        with pytest.raises(SourceError, match="no function 'nothing'"):
            cache.read(str(attn / "layer.py"), "nothing", str(attn))
    assert len(reads) == 2


def test_the_cache_is_bounded(
    attn: Path, reads: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Least recently used out: with room for two, a third reading drops the oldest."""
    monkeypatch.setattr(cache, "CAPACITY", 2)
    roots = [attn.parent / f"attn{i}" for i in range(3)]
    for root in roots:
        shutil.copytree(attn, root)
    _read(roots[0])
    _read(roots[1])
    _read(roots[0])  # used last: kept
    _read(roots[2])  # drops roots[1]
    _read(roots[0])
    _read(roots[1])
    assert reads == [("layer.py", "attention")] * 4


def test_a_comment_edit_in_the_plan_reads_no_model_code(
    reads: list[tuple[str, str]],
) -> None:
    """The plan is checked again (its diagnostics are those of the edited text), the
    model code it names is not read again."""
    plan = DATA / "warmcall" / "extract.yaml"
    text = plan.read_text(encoding="utf-8")
    results = [
        api.diagnose_plan(PlanInput(str(plan), plan), f"{text}# edit {n}\n".encode())
        for n in range(3)
    ]
    assert reads == [("layer.py", "mlp")]
    assert len({tuple(r.diagnostics) for r in results}) == 1


# -- the deadline of a check ---------------------------------------------------------------


def costly_layer(where: Path) -> Path:
    """The `warmcall` layer calling a tree of inline helpers 24 deep, each calling the next
    twice: 2^24 expansions, within every bound of the reader but its budget of work,
    which ends the reading after seconds (7 s of CPU on the development machine). A plan
    of it is returned."""
    shutil.copytree(DATA / "warmcall", where)
    layer = where / "layer.py"
    tree = "".join(
        f"\n\n@pl.jit.inline\ndef h{i}(t):\n    h{i + 1}(t)\n    h{i + 1}(t)\n" for i in range(24)
    )
    tree += "\n\n@pl.jit.inline\ndef h24(t):\n    u = t\n"
    text = layer.read_text(encoding="utf-8")
    text = text.replace("\n\n@pl.jit.inline\ndef mlp(", f"{tree}\n\n@pl.jit.inline\ndef mlp(")
    text = text.replace("dtype=pl.BF16)\n", "dtype=pl.BF16)\n    h0(x)\n", 1)
    layer.write_text(text, encoding="utf-8")
    return where / "extract.yaml"


def test_a_reading_past_its_deadline_is_stopped(tmp_path: Path) -> None:
    plan = costly_layer(tmp_path / "costly")
    start = time.monotonic()
    with cache.deadline(0.3), pytest.raises(OutOfTime):
        cache.read(str(plan.parent / "layer.py"), "mlp", str(plan.parent))
    assert time.monotonic() - start < 30  # a guard against a hang, never a measurement


def test_the_reader_stops_itself_at_a_step_of_its_work(tmp_path: Path) -> None:
    """The deadline is the reader's own: its budget looks at the clock as it spends, and
    the stop is raised there, in the reading's thread, by the reading (nothing is raised
    into a thread from outside)."""
    plan = costly_layer(tmp_path / "costly")
    layer, root = str(plan.parent / "layer.py"), str(plan.parent)
    with pytest.raises(OutOfTime) as stop:
        reader.read_layer(layer, "mlp", root, deadline=(time.monotonic() + 0.05, 0.05))
    last = traceback.extract_tb(stop.value.__traceback__)[-1]
    assert (Path(last.filename).name, last.name) == ("limits.py", "_past")
    assert str(stop.value) == "not read within 0.05 s, the editor's bound for a check"


def test_the_budget_looks_at_the_clock_only_under_a_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [0.0]
    looks: list[float] = []

    def clock() -> float:
        looks.append(now[0])
        return now[0]

    monkeypatch.setattr(limits, "time", SimpleNamespace(monotonic=clock))
    free = limits.Budget()
    for _ in range(10 * limits.LOOK_EVERY):
        free.spend()
    assert looks == []  # `validate` pays nothing for the editor's bound
    bound = limits.Budget(deadline=(5.0, 5.0))
    for _ in range(10 * limits.LOOK_EVERY + 1):
        bound.spend()
    assert len(looks) == 10  # one look per LOOK_EVERY steps
    now[0] = 5.0
    with pytest.raises(OutOfTime):
        bound.spend(limits.LOOK_EVERY)  # at most LOOK_EVERY steps past the deadline
    with pytest.raises(limits.OutOfWork):  # the end of the work comes first, as without one
        limits.Budget(limit=10, deadline=(5.0, 5.0)).spend(11)


def test_a_stopped_reading_is_never_kept_as_a_whole_one(
    tmp_path: Path, reads: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is kept of a reading stopped at its deadline is the stop, without the reader's
    frames; a check without a deadline reads the layer again, to its end."""
    monkeypatch.setattr(limits, "MAX_WORK", 20_000)  # the whole reading within a second or so
    plan = costly_layer(tmp_path / "costly")
    layer, root = str(plan.parent / "layer.py"), str(plan.parent)
    with cache.deadline(0.05), pytest.raises(OutOfTime):
        cache.read(layer, "mlp", root)
    (kept,) = [found for _, found, _ in cache._kept.values()]
    assert isinstance(kept, OutOfTime)
    assert kept.__traceback__ is None
    whole = cache.read(layer, "mlp", root)
    assert reads == [("layer.py", "mlp")] * 2
    assert [(u.what, u.effect) for u in whole.unresolved] == [
        ("mlp() needs more than 20,000 steps of work", "the rest of it is not read")
    ]
    assert getattr(modules._journal, "paths", None) is None  # the stop closed its journal


def test_a_check_past_its_deadline_publishes_what_it_has(tmp_path: Path) -> None:
    """The plan's own findings, and a PC208 notice at the `source` the reading stopped on;
    the stop is kept like a reading: the next check does not wait for it again."""
    from plancc.lsp.adapter import check_text

    plan = costly_layer(tmp_path / "costly")
    text = plan.read_text(encoding="utf-8")
    found = []
    for _ in range(2):
        result = check_text(plan, text, {}, seconds=0.3)
        found.append([(d.code, d.line, d.col, d.message) for d in result.diagnostics])
    stop = (
        "PC208",
        21,
        13,
        "source of layer kind 'mlp' not checked: not read within 0.3 s, the editor's bound "
        "for a check",
    )
    assert stop in found[0]
    assert found[1] == found[0]
    assert [d[0] for d in found[0]] == ["PC208", "PC107"]


def test_a_stop_is_kept_for_a_while_and_only_under_a_deadline(
    tmp_path: Path, reads: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop a busy moment caused is tried again later, and never given to a check
    without a deadline (`validate` in the same process reads the whole layer)."""
    plan = costly_layer(tmp_path / "costly")
    layer, root = str(plan.parent / "layer.py"), str(plan.parent)

    def stopped() -> bool:
        try:
            with cache.deadline(0.2):
                cache.read(layer, "mlp", root)
        except OutOfTime:
            return True
        return False

    assert stopped()
    assert stopped()
    assert len(reads) == 1  # kept
    monkeypatch.setattr(cache, "STOP_KEPT", 0.0)
    assert stopped()
    assert len(reads) == 2  # tried again
    monkeypatch.setattr(reader, "read_layer", lambda *args: "read whole")
    assert cache.read(layer, "mlp", root) == "read whole"  # type: ignore[comparison-overlap]


def test_a_deadline_never_stops_a_reading_that_ended(
    attn: Path, reads: list[tuple[str, str]]
) -> None:
    """A reading done well within its bound, then a long wait past it on the same thread:
    nothing is raised later (the alarm is withdrawn when the reading ends). The bound is
    generous (the reading takes milliseconds) so that a loaded machine cannot trip it."""
    with cache.deadline(1.0):
        _read(attn)
    time.sleep(1.2)
    assert reads == [("layer.py", "attention")]
