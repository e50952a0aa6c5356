"""Reading model code: a CSA layer spanning ten modules, cold and with its modules cached.

With a pypto-lib checkout beside this repository (or PLANCC_PYPTO_LIB), the
DeepSeek V4 Flash CSA layer itself (decode_csa.py and the nine modules it
reads); otherwise a generated layer of the same shape: ten modules, each with a
helper of five kernels. "cold" parses every module; "cached" reads again with
the parsed modules kept (the language server's case: a file is parsed again
only when its mtime or size changed); "check" is the whole `validate` of the
shipped Flash plan against it. Then the bounds' scaling (docs/sources.md,
"Bounds"): 2**10 and 2**14 kernels of one name_hint from a helper tree, and
`extract` of 512 and 4,096 kernels in a row, each as time per kernel at the
larger size over the smaller: about 1 is linear (they were quadratic and cubic).
Each figure is the CPU time of the fastest of five runs (of one, for the
scaling). Nothing here asserts a time.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from plancc.source import modules
from plancc.source.reader import Reader, read_layer
from plancc.source.resolver import Resolver

ROOT = Path(__file__).resolve().parent.parent
LIB = Path(os.environ.get("PLANCC_PYPTO_LIB", ROOT.parent / "pypto-lib"))
CSA = "models/deepseek_v4_flash_mtp/decode_csa.py"


def generated(where: Path) -> tuple[Path, str]:
    """Ten modules: a layer calling nine helpers, five kernels each."""
    imports = "".join(f"from helper{i} import helper{i}\n" for i in range(9))
    calls = "".join(f"    helper{i}(x, w{i}, y)\n" for i in range(9))
    params = "".join(f"    w{i}: pl.Tensor[[D, D], pl.BF16],\n" for i in range(9))
    (where / "layer.py").write_text(
        f"import pypto.language as pl\n{imports}\nD = 512\nT = 8\n\n@pl.jit.inline\n"
        f"def layer(\n    x: pl.Tensor[[T, D], pl.BF16],\n{params}"
        "    y: pl.Tensor[[T, D], pl.BF16],\n):\n" + calls
    )
    for i in range(9):
        kernels = "".join(
            f'    with pl.spmd(4, name_hint="k{i}_{j}") as t{j}:\n'
            f"        y[0:1, :] = pl.matmul(x, w[:, 0:64], out_dtype=pl.BF16)\n"
            for j in range(5)
        )
        (where / f"helper{i}.py").write_text(
            "import pypto.language as pl\n\nD = 512\n\n@pl.jit.inline\n"
            f"def helper{i}(x: pl.Tensor[[8, D], pl.BF16], w: pl.Tensor[[D, D], pl.BF16], "
            f"y: pl.Tensor[[8, D], pl.BF16]):\n{kernels}    return t4\n"
        )
    return where / "layer.py", "layer"


KERNEL = '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="{}"):\n        a[0:1] = 1\n'
HEAD = "import pypto.language as pl\n\n"
LAYER = "@pl.jit.inline\ndef f(a: pl.Tensor[[4], pl.FP32]):\n"


def tree(where: Path, depth: int) -> Path:
    """2**depth kernels of one name_hint: each helper calls the one below twice."""
    helpers = "@pl.jit.inline\ndef h0(a):\n" + KERNEL.format("k")
    for i in range(1, depth + 1):
        helpers += f"@pl.jit.inline\ndef h{i}(a):\n    h{i - 1}(a)\n    h{i - 1}(a)\n"
    path = where / f"tree{depth}.py"
    path.write_text(HEAD + helpers + LAYER + f"    h{depth}(a)\n")
    return path


def row(where: Path, count: int) -> Path:
    path = where / f"row{count}.py"
    path.write_text(HEAD + LAYER + "".join(KERNEL.format(f"k{i}") for i in range(count)))
    return path


def scaling(where: Path) -> None:
    from plancc.source.extract import extract

    small, large = (best(lambda d=d: read_layer(str(tree(where, d)), "f"), 1) for d in (10, 14))
    ratio = (large / 2**14) / (small / 2**10)
    print(f"source: one name_hint, 2**14 kernels {large:.2f} s: {ratio:.2f}x per kernel of 2**10")
    small, large = (best(lambda n=n: extract([f"{row(where, n)}:f"]), 1) for n in (512, 4096))
    ratio = (large / 4096) / (small / 512)
    print(f"source: extract, 4,096 kernels in a row {large:.2f} s: {ratio:.2f}x per kernel of 512")


def best(fn: Callable[[], object], runs: int = 5, cold: bool = False) -> float:
    times = []
    for _ in range(runs):
        if cold:
            modules.clear_cache()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if (LIB / CSA).is_file():
            path, function, what = LIB / CSA, "attention_csa", f"Flash CSA layer ({LIB})"
        else:
            path, function = generated(Path(tmp))
            what = "generated ten-module layer (no pypto-lib checkout)"
        resolver = Resolver()
        reading = Reader(resolver).read(str(path), function)
        files = len(resolver.modules)
        cold = best(lambda: read_layer(str(path), function), cold=True)
        cached = best(lambda: read_layer(str(path), function))
        print(f"source: {what}: {len(reading.kernels)} kernels from {files} modules")
        print(f"source: read cold {cold * 1000:.0f} ms, cached {cached * 1000:.0f} ms")
        if (LIB / CSA).is_file():
            from plancc import api

            plan = str(ROOT / "plans" / "deepseek_v4_flash.yaml")
            from plancc.source import cache

            def validate(fresh: bool) -> None:
                if fresh:  # the readings made again (the modules stay parsed)
                    cache.clear()
                api.validate_paths([plan], source_root=str(LIB))

            check = best(lambda: validate(True))
            kept = best(lambda: validate(False))  # as a second `validate` in one process
            print(
                f"source: validate of the Flash plan with its three sources {check * 1000:.0f} ms,"
                f" its readings kept {kept * 1000:.0f} ms"
            )
        scaling(Path(tmp))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
