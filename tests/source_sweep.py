"""The promise of `plancc extract` over a whole model repository (docs/sources.md).

Every decorated function of every Python file under ``models/`` (``@pl.jit``, its
variants, ``@pl.program`` classes, wherever they are defined) is extracted as a new
user would, and the skeleton is validated against the code it came from. A function
holds the promise when extract refuses it with one line, or when its skeleton
validates without error and reports no source finding but notices (PC208).

Every shipped plan (``plans/*.yaml``) is validated against the checkout too
(``shipped``): what it finds there is the drift between plan and code, which
``tests/test_source.py`` pins plan by plan.

``tests/test_source.py`` runs both when ``PLANCC_PYPTO_LIB`` names a checkout;
``python -m tests.source_sweep DIR`` prints every failure, its class and the totals,
then each shipped plan's source findings.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from plancc import api
from plancc.diagnostics import Diagnostic
from plancc.source.extract import extract
from plancc.source.modules import SourceError

# The codes whose finding against the skeleton's own source breaks the promise.
BROKEN = {f"PC20{i}" for i in range(8)} | {"PC209"}
PLANS = Path(__file__).resolve().parent.parent / "plans"


@dataclass
class Outcome:
    source: str  # models/x/y.py:function
    status: str  # "ok", "refused", "failing", "crash"
    seconds: float
    findings: list[str] = field(default_factory=list)  # "CODE message" of what failed


def decorated(path: Path) -> list[str]:
    """The names of ``path``'s decorated functions and ``@pl.program`` classes, in order."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        for d in node.decorator_list:
            text = ast.unparse(d.func if isinstance(d, ast.Call) else d)
            if text.startswith("pl.jit") or text == "pl.program":
                out.append(node.name)
                break
    return sorted(set(out), key=out.index)


def sources(repo: Path) -> list[str]:
    """Every decorated function of ``repo/models`` as `PATH:NAME`, PATH relative to repo."""
    found = []
    for path in sorted((repo / "models").rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        found += [f"{rel}:{name}" for name in decorated(path)]
    return found


def check(repo: Path, source: str, work: Path) -> Outcome:
    """Extract ``source`` in ``work`` and validate the skeleton against its code."""
    path, _, function = source.rpartition(":")
    start = time.perf_counter()
    try:
        done = extract([str(repo / path) + ":" + function])
    except SourceError as exc:
        text = str(exc)
        ok = "\n" not in text and bool(text)
        return Outcome(source, "refused" if ok else "failing", time.perf_counter() - start, [text])
    except Exception as exc:
        return Outcome(source, "crash", time.perf_counter() - start, [repr(exc)])
    seconds = time.perf_counter() - start
    plan = work / (function + ".yaml")
    plan.write_text(done.text, encoding="utf-8")
    try:
        report = api.validate_paths([str(plan)])
    except Exception as exc:
        return Outcome(source, "crash", seconds, [repr(exc)])
    bad = [
        f"{d.code} {d.message}"
        for d in report.diagnostics
        if d.severity.value == "error" or d.code in BROKEN
    ]
    return Outcome(source, "failing" if bad else "ok", seconds, bad)


def sweep(repo: Path, only: str = "") -> list[Outcome]:
    out = []
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # extract writes paths relative to the current directory
        try:
            for source in sources(repo):
                if only in source:
                    out.append(check(repo, source, Path(tmp)))
        finally:
            os.chdir(here)
    return out


def shipped(repo: Path) -> dict[str, list[Diagnostic]]:
    """Each shipped plan's findings against ``repo`` as its source root, by file name."""
    out = {}
    for plan in sorted(PLANS.glob("*.yaml")):
        report = api.validate_paths([str(plan)], source_root=str(repo))
        out[plan.name] = report.diagnostics
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a pypto-lib checkout")
    parser.add_argument("--only", default="", help="sources whose PATH:NAME contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="every finding")
    args = parser.parse_args()
    results = sweep(args.repo.resolve(), args.only)
    for r in results:
        if r.status in ("failing", "crash") or (args.verbose and r.status == "refused"):
            print(f"{r.status:8} {r.source} ({r.seconds:.2f} s)")
            for f in r.findings if args.verbose else r.findings[:3]:
                print(f"           {f}")
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "refused", "failing", "crash")}
    slowest = max(results, key=lambda r: r.seconds, default=None)
    print(
        f"{len(results)} functions: {counts['ok']} ok, {counts['refused']} refused, "
        f"{counts['failing']} failing, {counts['crash']} crashed"
        + (f"; slowest extract {slowest.seconds:.2f} s ({slowest.source})" if slowest else "")
    )
    for name, found in shipped(args.repo.resolve()).items():
        codes = ", ".join(sorted(d.code for d in found)) or "nothing"
        print(f"plans/{name}: {codes}")
    return 1 if counts["failing"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
