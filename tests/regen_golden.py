"""Regenerate the golden files under tests/golden: ``make golden``.

Equivalent to ``plancc build plans/*.yaml --out tests/golden``: every shipped plan; and
``plancc build tests/data/forms/*.yaml --out tests/golden/forms``: the fixture of each warm
form (a cross-layer warm, a prefix, a guard), compared by tests/test_forms.py.
Then the measurement example (examples/measure/, written by tests/measure_example.py)
and its reports, tests/data/measure/report.txt and report.md, from the Flash manifest.
And ``plancc report plans/deepseek_v4_flash.yaml -o tests/golden/deepseek_v4_flash_report.html``
(tests/test_report_html.py compares the page).
Run it after an intended change to the plan, the template or the renderer,
then review the diff of tests/golden like any other change. tests/test_build.py
fails while the golden files differ from what a build would write.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
FORMS = sorted((ROOT / "tests" / "data" / "forms").glob("*.yaml"))  # into tests/golden/forms
REPORTED = "plans/deepseek_v4_flash.yaml"  # from the repository root, as the page names it


def main() -> int:
    from plancc.api import build
    from plancc.formats.text import text

    result = build([str(p) for p in PLANS], str(GOLDEN))
    if result.failed:
        sys.stdout.write(text(result.report))
        return 1
    for plan in result.plans:
        for f in plan.files:
            print(f"{f.path.relative_to(ROOT).as_posix()}: {f.status.value}")
    forms = build([str(p) for p in FORMS], str(GOLDEN / "forms"))  # each warm form's fixture
    if forms.failed:
        sys.stdout.write(text(forms.report))
        return 1
    for plan in forms.plans:
        for f in plan.files:
            print(f"{f.path.relative_to(ROOT).as_posix()}: {f.status.value}")
    from plancc.report_html import report as write_report

    os.chdir(ROOT)
    page = write_report(REPORTED, str(GOLDEN / "deepseek_v4_flash_report.html"), None)
    print(f"{page.path.relative_to(ROOT).as_posix()}: {page.status}")
    from tests import regen_fixed

    return regen_fixed.main() or measure_golden()


def measure_golden() -> int:
    import json
    import os

    from plancc.measure.command import Options, measure, render

    sys.path.insert(0, str(ROOT / "tests"))  # as pytest imports the test helpers
    import measure_example as ex

    manifest = "tests/golden/deepseek_v4_flash_warms.manifest.json"
    kinds = json.loads((ROOT / manifest).read_text("utf-8"))["forward"]["kinds"]
    for path in ex.write_example(ex.EXAMPLE, kinds):
        print(f"{path.relative_to(ROOT).as_posix()}: written")
    os.chdir(ROOT)  # the reports name the inputs as the README tour does
    args = ex.example_args(manifest)
    opts = Options(
        manifest=args[2],
        baseline=args[4],
        warm=args[6],
        traces=[args[8]],
        slots=[args[10], args[12]],
        windows=[args[14]],
        standalone=[args[16]],
    )
    result = measure(opts)
    for fmt, suffix in (("text", "txt"), ("markdown", "md")):
        path = GOLDEN.parent / "data" / "measure" / f"report.{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render(result, fmt)
        same = path.exists() and path.read_text("utf-8") == text
        if not same:
            path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(ROOT).as_posix()}: {'unchanged' if same else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
