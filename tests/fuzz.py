"""The fuzz target: any bytes as a plan get a report, never a traceback, the same from
the C parser's path of the loader as from the pure parser's, in bounded time.

Inputs are drawn two ways, seeded from tests/cases/ and plans/: byte mutations of
a seed (deletions, insertions of YAML punctuation and odd characters, spliced
slices, flipped bytes), and structure-aware plans (plan-shaped mappings with
names, numbers, lists and nesting of every kind, written in block or flow
style). Each fix a finding carries is made on the input too (by the one interpreter
of a fix): it is refused, or the text it makes loads. tests/test_fuzz.py runs it
briefly in CI; ``make fuzz`` runs it for FUZZ_SECONDS (``python -m tests.fuzz
--seconds N``) and prints its figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SEEDS = [
    p.read_bytes()
    for p in sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
    + sorted((ROOT / "plans").glob("*.yaml"))
]
PIECES = [
    *(b"[", b"]", b"{", b"}", b": ", b":", b"- ", b",", b"? ", b"\n", b"  ", b"\t", b"\r", b"\r\n"),
    *(b"&a ", b"*a", b"&b [*b]", b"<<: ", b"!!int ", b"!x ", b"! ", b"'", b'"', b"#", b"|", b">"),
    *(
        b"---\n",
        b"...\n",
        b"%YAML 1.1\n",
        b"%YAML 2.0\n",
        b"%X\n",
        b"\\",
        b"}:",
        b"]:",
        b"~",
        b"0x1F",
        b"1e3",
        b".inf",
    ),
    *(b"-1", b"null", b"True", b"9" * 30, b"\x07", b"\xff", b"\xc2\x85", b"\xe2\x80\xa8"),
    *(b"\xef\xbb\xbf", b"[" * 200, b"- " * 100, b"@", b"`", b"%"),
]
KEYS = ["plancc", "model", "platform", "dims", "tensors", "layers", "forward", "config"]
KEYS += ["stages", "warms", "name", "after", "tensors", "reads", "task", "shape", "dtype"]
KEYS += ["flat", "allow", "reason", "budget", "l2_fraction", "lint", "ignore", "group", "sdma"]
KEYS += ["streams", "duration_us", "name_hint", "kinds", "layers", "repeat", "from_config"]
KEYS += ["collective"]
WORDS = ["a2a3", "a5", "bf16", "int8", "fp32", "D", "D * 2", "q_proj", "w", "s0", "PC104", "mte"]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.integers(0, 4))
        if op == 4:
            del data[at:]  # cut short, as a buffer is while typing: often no final line break
        elif op == 0:
            del data[at : at + draw(st.integers(1, 16))]
        elif op == 1:
            data[at:at] = draw(st.sampled_from(PIECES))
        elif op == 2:
            start = draw(st.integers(0, len(data)))
            data[at:at] = data[start : start + draw(st.integers(1, 300))]
        elif data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
    return bytes(data)


_scalars = st.one_of(
    st.sampled_from(WORDS),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), inner, max_size=5),
    ),
    max_leaves=40,
)


def _block(value: Any, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(value, dict) and value:
        return "".join(
            f"{pad}{json.dumps(k)}:\n{_block(v, indent + 2)}"
            if isinstance(v, dict | list) and v
            else f"{pad}{json.dumps(k)}: {_flow(v)}\n"
            for k, v in value.items()
        )
    if isinstance(value, list) and value:
        return "".join(f"{pad}-\n{_block(v, indent + 2)}" for v in value)
    return f"{pad}{_flow(value)}\n"


def _flow(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    if isinstance(value, float) and abs(value) == float("inf"):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str) and value in WORDS:
        return value
    return json.dumps(value)


@st.composite
def structured(draw: st.DrawFn) -> bytes:
    plan: dict[str, Any] = {"plancc": 1, "model": "m", "platform": "a2a3"}
    plan.update(draw(st.dictionaries(st.sampled_from(KEYS), _values, max_size=6)))
    text = _block(plan) if draw(st.booleans()) else _flow(plan) + "\n"
    return text.encode("utf-8", "surrogatepass")


plans = st.one_of(mutated(), structured())


class Figures:
    """What a fuzz run saw."""

    inputs = 0
    slowest = 0.0
    slowest_input = b""
    slow_inputs = 0  # over HANG seconds: reported as hangs
    HANG = 10.0


def check(raw: bytes, tmp: Path) -> None:
    """One input through the loader (both parsers' paths) and the whole front end."""
    from plancc import api, load
    from plancc.diagnostics import Diagnostic
    from plancc.edits.interpret import FixError, apply_fixes
    from plancc.load.inputs import PlanInput

    start = time.perf_counter()
    fast, pure = load.load("p.yaml", raw), load.load("p.yaml", raw, pure=True)
    assert _seen(fast) == _seen(pure), raw
    path = tmp / "p.yaml"
    path.write_bytes(raw)
    result = api.diagnose_plan(PlanInput("p.yaml", path), raw)
    for d in result.diagnostics:
        assert min(d.line, d.col) >= 1, d
        assert d.code.startswith("PC"), d
        if d.fix is not None and result.doc is not None:  # made, or refused: never a traceback
            with contextlib.suppress(FixError):
                assert not isinstance(
                    load.load("p.yaml", apply_fixes(result.doc, [d.fix])), Diagnostic
                )
    seconds = time.perf_counter() - start
    Figures.inputs += 1
    if seconds > Figures.slowest:
        Figures.slowest, Figures.slowest_input = seconds, raw
    Figures.slow_inputs += seconds > Figures.HANG


def _seen(result: Any) -> Any:
    from plancc.load import Document

    if isinstance(result, Document):  # a Diagnostic has `data` too (a finding's facts)
        return repr(result.data), dict(result.values), dict(result.keys), dict(result.ends)
    return result


def run(examples: int, round_seed: int | None = None) -> None:
    """``examples`` inputs; the same ones each time unless ``round_seed`` picks others."""
    tmp = Path(tempfile.mkdtemp(prefix="plancc-fuzz-"))

    def target(raw: bytes) -> None:
        check(raw, tmp)

    test = given(plans)(target)
    if round_seed is not None:
        test = seed(round_seed)(test)
    settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=round_seed is None,
        suppress_health_check=list(HealthCheck),
    )(test)()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--first-round", type=int, default=0, help="seed of the first round: another run's inputs"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    rounds = args.first_round
    failures = 0  # a round ends at its first failing input (shrunk); the run goes on
    while time.perf_counter() - start < args.seconds:
        try:
            run(200, round_seed=rounds)
        except Exception as exc:  # a traceback or a disagreement: printed, counted
            failures += 1
            print("".join(traceback.format_exception_only(exc)), file=sys.stderr)
        rounds += 1
        print(f"{Figures.inputs} inputs, slowest {Figures.slowest:.2f} s", file=sys.stderr)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    slowest = Path(tempfile.gettempdir()) / "plancc-fuzz-slowest.yaml"
    slowest.write_bytes(Figures.slowest_input)
    print(
        f"fuzz: {Figures.inputs} inputs in {time.perf_counter() - start:.0f} s, "
        f"{failures} failing (tracebacks or disagreements), "
        f"{Figures.slow_inputs} hangs (over {Figures.HANG:.0f} s), slowest input "
        f"{Figures.slowest:.2f} s ({slowest}), peak memory {rss:.0f} MiB"
    )
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
