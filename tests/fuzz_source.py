"""The model-code fuzz target: any layer files a plan names get a bounded answer.

Each input is a small tree of model code under a source root — a layer module, a
module of constants, a module of helpers, a package — beside a module *outside*
the root that no import may reach. Inputs are drawn two ways: generated (constants
over every operator the reader evaluates, chains and towers of them, huge and
nested literals; `@pl.jit.inline` helpers calling one another in trees and
cycles; scopes, loops, branches, barriers, warm scopes; relative imports of
every depth), and mutated (the fixtures of tests/data/source/ with lines
deleted, repeated or cut, and hostile pieces inserted). Every input goes through
``validate`` (a plan naming its layer function) and ``extract``, whose output is
validated in turn. It holds when nothing raises but a clear SourceError, no input
takes longer than HANG seconds, and no module outside the root is read.

tests/test_fuzz_source.py runs it briefly; ``make fuzz FUZZ_TARGET=source`` runs it
for FUZZ_SECONDS (``python -m tests.fuzz_source --seconds N``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "source"
SEEDS = [
    {p.name: p.read_text(encoding="utf-8") for p in sorted(d.glob("*.py"))}
    for d in sorted(FIXTURES.iterdir())
    if (d / "layer.py").is_file()
]
FUNCTIONS = ["attention", "mixed_layer", "mlp", "_mix_layer"]
HINTS = ["k", "k", "k_0", "mm", "mm_spmd", "rope", "prefetch_w", ""]
PIECES = [
    " ** 63",
    " * 2**62",
    "0x" + "f" * 40,
    "(" * 60 + "1" + ")" * 60,
    " + 1" * 300,
    ".b" * 200,
    "from ....outside import SECRET\n",
    "from ..outside import SECRET\n",
    "import outside\n",
    "while True:\n    pass\n",
    "    if N:\n        pass\n" * 3,
    "X = X\n",
    "@pl.jit.inline\ndef loop(a):\n    loop(a)\n",
    "\x00",
    "\t",
    "pl.dynamic('B')",
    "M.hidden_size",
    "deps=[t]",
    'name_hint="k"',
]


class Figures:
    """What a fuzz run saw."""

    inputs = 0
    slowest = 0.0
    slowest_input: dict[str, str] = {}  # noqa: RUF012 (a run's one record)
    HANG = 20.0  # on a loaded 2-core machine; an input takes well under a second alone


# ---------------------------------------------------------------------------
# Generated model code


_ops = st.sampled_from(["+", "-", "*", "//", "%", "**", "/"])


@st.composite
def _expr(draw: st.DrawFn, names: list[str], depth: int = 0) -> str:
    leaf = st.one_of(
        st.integers(-(2**70), 2**70).map(str),
        st.sampled_from(["0", "1", "2", "63", "True", "0.5", "1e308", "'s'", "None"]),
        st.sampled_from(names) if names else st.just("1"),
        st.sampled_from(["M.hidden_size", "M.q_dim", "pl.dynamic('B')", "os.environ"]),
    )
    if depth > 3 or draw(st.integers(0, 2)) == 0:
        return draw(leaf)
    kind = draw(st.integers(0, 4))
    a = draw(_expr(names, depth + 1))
    if kind == 0:
        return f"({a} {draw(_ops)} {draw(_expr(names, depth + 1))})"
    if kind == 1:
        return f"{draw(st.sampled_from(['max', 'min', 'int']))}({a})"
    if kind == 2:
        return f"-{a}"
    if kind == 3:
        return f"({a} {draw(st.sampled_from(['==', '<', '>=']))} {draw(leaf)})"
    return f"({a} and {draw(leaf)})"


@st.composite
def _constants(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Module constants: names and their lines (chains, towers, cycles, wide literals)."""
    shape = draw(st.integers(0, 5))
    n = draw(st.integers(1, 60))
    if shape == 0:  # doubling chain
        lines = ["C0 = 1", *(f"C{i} = C{i - 1} + C{i - 1}" for i in range(1, n))]
    elif shape == 1:  # power tower
        lines = [
            "C0 = 10",
            *(f"C{i} = C{i - 1} ** {draw(st.integers(2, 63))}" for i in range(1, n)),
        ]
    elif shape == 2:  # a cycle
        lines = [f"C0 = C{n - 1} + 1", *(f"C{i} = C{i - 1} + 1" for i in range(1, n))]
    elif shape == 3:  # wide literal
        lines = [f"C0 = 0x{'f' * draw(st.integers(1, 6000))}"]
    elif shape == 4:  # deep expression
        lines = ["C0 = " + " + ".join(["1"] * draw(st.integers(1, 2000)))]
    else:
        lines = []
        for i in range(n):
            lines.append(f"C{i} = {draw(_expr([f'C{j}' for j in range(i)]))}")
    names = [line.split(" = ")[0] for line in lines]
    return names, lines


def _scope(hint: str, body: str, *, tid: str | None = None, deps: str = "", pad: str) -> str:
    tail = f" as {tid}" if tid else ""
    dep = f", deps=[{deps}]" if deps else ""
    return (
        f'{pad}with pl.at(level=pl.Level.CORE_GROUP, name_hint="{hint}"{dep}){tail}:\n'
        f"{pad}    {body}\n"
    )


@st.composite
def _statements(draw: st.DrawFn, helpers: list[str], names: list[str], pad: str) -> str:  # noqa: C901, PLR0912 (one branch per statement form)
    out = []
    for i in range(draw(st.integers(1, 8))):
        kind = draw(st.integers(0, 13))
        hint = draw(st.sampled_from(HINTS))
        if kind <= 2:
            out.append(_scope(hint, "a[0:1] = b[0:1]", tid=f"t{i}", pad=pad))
        elif kind == 3 and helpers:
            out.append(f"{pad}t{i} = {draw(st.sampled_from(helpers))}(a, b)\n")
        elif kind == 4:
            out.append(
                f'{pad}for j in pl.spmd(4, name_hint="{hint}_spmd"):\n{pad}    b[j] = a[j]\n'
            )
        elif kind == 5 and names:
            out.append(f"{pad}if {draw(st.sampled_from(names))}:\n")
            out.append(_scope(hint, "b[0:1] = 1", pad=pad + "    "))
        elif kind == 6:
            out.append(f"{pad}t{i} = pl.system.task_dummy(deps=[t{max(i - 1, 0)}])\n")
        elif kind == 7:
            out.append(
                _scope(
                    "prefetch_w",
                    "pl.prefetch.async_prefetch(b, pl.prefetch.make_context())",
                    deps=f"t{max(i - 1, 0)}",
                    pad=pad,
                )
            )
        elif kind == 8:
            out.append(f"{pad}while a:\n{pad}    pass\n")
        elif kind == 9:
            out.append(f"{pad}prefetch_w_a(a, t{max(i - 1, 0)})\n")
        elif kind == 10:
            out.append(f"{pad}c = pl.reshape(a, [4])\n")
        elif kind == 12:
            out.append(
                f"{pad}arr = pl.array.create(4, pl.TASK_ID)\n{pad}arr[0] = t{max(i - 1, 0)}\n"
            )
        elif kind == 13:
            out.append(_scope(hint, "a[0:1] = 1", tid=f"t{i}", deps="arr", pad=pad))
        else:
            out.append(_scope(hint, "pl.assemble(b, a, [0])", deps=f"t{max(i - 1, 0)}", pad=pad))
    return "".join(out)


@st.composite
def generated(draw: st.DrawFn) -> dict[str, str]:
    names, consts = draw(_constants())
    dots = draw(st.integers(0, 4))
    imported = ", ".join(["M", *names])
    helpers_src = ["import pypto.language as pl", "", f"from consts import {imported}", ""]
    helpers: list[str] = []
    shape = draw(st.integers(0, 2))
    for i in range(draw(st.integers(1, 12))):
        name = f"h{i}"
        if shape == 0 and i:  # a tree: each calls the one before twice
            body = f"    h{i - 1}(a, b)\n    h{i - 1}(a, b)\n"
        elif shape == 1:  # calls anything, itself included
            body = f"    h{draw(st.integers(0, i))}(a, b)\n" + draw(_statements([], names, "    "))
        else:
            body = draw(_statements(helpers, names, "    "))
        helpers_src += ["@pl.jit.inline", f"def {name}(a, b):", body, "    return a", ""]
        helpers.append(name)
    dim = draw(st.sampled_from([*names, "4", "M.hidden_size", "pl.dynamic('B')"])) if names else "4"
    layer = [
        "import os",
        "import pypto.language as pl",
        "",
        f"from {'.' * dots}consts import {imported}",
        f"from {'.' * dots}helpers import {', '.join(helpers)}",
        f"from {'.' * draw(st.integers(0, 4))}outside import SECRET",
        "from m_warms import prefetch_w_a",
        "from pkg.sub import Z",
        "",
        "N = SECRET",
        "",
        "@pl.jit.inline",
        f"def f(a: pl.Tensor[[{dim}, SECRET], pl.FP32], b: pl.Tensor[[Z], pl.BF16], "
        f"{draw(st.sampled_from(['c', 'x' * 101, 'é', 'x_flat', '_p', 'D']))}: "
        "pl.Tensor[[M.q_dim], pl.INT8]):",
        draw(_statements(helpers, [*names, "N"], "    ")),
        "    return a",
        "",
    ]
    consts_src = [
        "class Config:",
        "    def __init__(self, **kw):",
        "        pass",
        "    @property",
        "    def q_dim(self):",
        "        return self.hidden_size * 2",
        "",
        "M = Config(hidden_size=4096)",
        *consts,
    ]
    return {
        "layer.py": "\n".join(layer),
        "consts.py": "\n".join(consts_src) + "\n",
        "helpers.py": "\n".join(helpers_src) + "\n",
        "pkg/__init__.py": "",
        "pkg/sub.py": f"Z = {draw(st.sampled_from(['4', 'C0', '2**64', 'Z']))}\n",
    }


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, str]:
    files = dict(draw(st.sampled_from(SEEDS)))
    name = draw(st.sampled_from(sorted(files)))
    lines = files[name].splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(lines)))
        op = draw(st.integers(0, 3))
        if op == 0 and lines:
            del lines[min(at, len(lines) - 1)]
        elif op == 1 and lines:
            lines[at:at] = lines[max(at - 3, 0) : at] * draw(st.integers(1, 50))
        elif op == 2:
            del lines[at:]
        else:
            piece = draw(st.sampled_from(PIECES))
            if at < len(lines):
                cut = draw(st.integers(0, len(lines[at])))
                lines[at] = lines[at][:cut] + piece + lines[at][cut:]
            else:
                lines.append(piece)
    files[name] = "".join(lines)
    return files


model_code = st.one_of(generated(), mutated())


# ---------------------------------------------------------------------------
# One input


PLAN = """\
plancc: 1
model: m
platform: a2a3
source_root: "."
tensors:
  a: {{shape: [4, 4], dtype: fp32}}
  b: {{shape: [4], dtype: bf16}}
layers:
  l:
    source: {source}
    stages:
      - {{name: s0, kernel: k, task: t0}}
      - {{name: s1, kernel: k_0, deps: [s0]}}
    warms:
      - {{name: prefetch_w_a, after: s0, tensors: [b]}}
"""


def check(files: dict[str, str], work: Path) -> None:
    """One tree of model code through validate and extract, within the bounds."""
    from plancc.source import modules

    shutil.rmtree(work, ignore_errors=True)
    root = work / "root"
    (root / "pkg").mkdir(parents=True)
    (work / "outside.py").write_text("SECRET = 7\n", encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    function = _function(files)
    modules.clear_cache()
    start = time.perf_counter()
    signal.signal(signal.SIGALRM, _hang)
    signal.setitimer(signal.ITIMER_REAL, Figures.HANG)  # a hang ends the input, not the run
    try:
        _validate_and_extract(root, function)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    seconds = time.perf_counter() - start
    real_root = os.path.realpath(root)
    outside = [p for p in modules._CACHE if not os.path.realpath(p).startswith(real_root + os.sep)]
    assert not outside, f"read outside the source root: {outside}"
    assert seconds < Figures.HANG, f"{seconds:.1f} s"
    Figures.inputs += 1
    if seconds > Figures.slowest:
        Figures.slowest, Figures.slowest_input = seconds, files


class Hang(Exception):
    pass


def _hang(signum: int, frame: object) -> None:
    raise Hang(f"an input took more than {Figures.HANG:.0f} s")


def _validate_and_extract(root: Path, function: str) -> None:
    from plancc import api
    from plancc.source.extract import extract
    from plancc.source.modules import SourceError

    plan = root / "plan.yaml"
    plan.write_text(PLAN.format(source=f"layer.py:{function}"), encoding="utf-8")
    for d in api.validate_paths([str(plan)]).diagnostics:
        assert min(d.line, d.col) >= 1, d
    cwd = os.getcwd()
    os.chdir(root)  # extract's source_root is relative to the directory it runs in
    try:
        out = extract([f"layer.py:{function}"])
        plan.write_text(out.text, encoding="utf-8")
        api.validate_paths([str(plan)])
    except SourceError:
        pass
    finally:
        os.chdir(cwd)


def _function(files: dict[str, str]) -> str:
    """The layer function of a mutated fixture (the first whose `def` survived), else f."""
    layer = files.get("layer.py", "")
    return next((f for f in FUNCTIONS if f"def {f}(" in layer), "f")


def run(examples: int, round_seed: int | None = None) -> None:
    """``examples`` inputs; the same ones each time unless ``round_seed`` picks others."""
    work = Path(tempfile.mkdtemp(prefix="plancc-fuzz-source-"))

    def target(files: dict[str, str]) -> None:
        check(files, work / "input")

    test = given(model_code)(target)
    if round_seed is not None:
        test = seed(round_seed)(test)
    try:
        settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=round_seed is None,
            suppress_health_check=list(HealthCheck),
        )(test)()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    start = time.perf_counter()
    rounds = 0
    failures = 0  # a round ends at its first failing input (shrunk); the run goes on
    while time.perf_counter() - start < args.seconds:
        try:
            run(50, round_seed=rounds)
        except Exception as exc:  # a traceback, a hang or a read outside the root: counted
            failures += 1
            print("".join(traceback.format_exception(exc)[-6:]), file=sys.stderr)
        rounds += 1
        print(f"{Figures.inputs} inputs, slowest {Figures.slowest:.2f} s", file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    slowest = Path(tempfile.gettempdir()) / "plancc-fuzz-source-slowest"
    shutil.rmtree(slowest, ignore_errors=True)
    for name, text in Figures.slowest_input.items():
        (slowest / name).parent.mkdir(parents=True, exist_ok=True)
        (slowest / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    print(
        f"fuzz source: {Figures.inputs} inputs in {time.perf_counter() - start:.0f} s, "
        f"{failures} failing (tracebacks, hangs over {Figures.HANG:.0f} s, reads outside "
        f"the root), slowest input {Figures.slowest:.2f} s ({slowest}), peak memory "
        f"{rss:.0f} MiB"
    )
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
