"""The Flash and Pro reports in a real browser: headless Chromium over the DevTools protocol
(tests/chromium.py says why), at 1280 px.

Skipped, saying why, only where no Chromium exists; `.ci/run` installs it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromium import WIDTH, Browser, find
from PIL import Image, ImageStat

from plancc.api import PlanResult
from plancc.api import diagnose_plan as _diagnose
from plancc.inputs import PlanInput
from plancc.report_html import render
from plancc.report_html.facts import facts
from plancc.report_html.measure import read


def diagnose_plan(path: Path, label: str) -> PlanResult:
    """The front end for one plan file, named ``label``."""
    return _diagnose(PlanInput(label, path), path.read_bytes())


ROOT = Path(__file__).resolve().parent.parent
# (plan, `plancc measure` result or None): the Flash plan also with its measurement.
PAGES = [
    ("plans/deepseek_v4_flash.yaml", None),
    ("plans/deepseek_v4_pro.yaml", None),
    ("plans/deepseek_v4_flash.yaml", "tests/data/report/measure-flash.json"),
    ("tests/data/report/broken.yaml", None),  # errors, warnings and their explain texts
]
BINARY = find()

pytestmark = [
    pytest.mark.slow,  # `make test` skips it; .ci/run runs it
    pytest.mark.skipif(
        BINARY is None,
        reason="no Chromium on this machine (apt-get install -y chromium, or set CHROMIUM)",
    ),
]

# Every label of the figures, where layout put it.
LABELS = """
Array.from(document.querySelectorAll('svg.fig text, svg.fig tspan')).map(e => {
  const r = e.getBoundingClientRect();
  return {text: e.textContent, left: r.left, right: r.right, width: r.width, height: r.height};
})
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert BINARY is not None
    with Browser(BINARY) as b:
        yield b


@pytest.fixture(scope="module", params=PAGES, ids=["flash", "pro", "flash-measured", "broken"])
def opened(
    request: pytest.FixtureRequest, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Browser, str]:
    label, measured = request.param
    page = tmp_path_factory.mktemp("report") / "page.html"
    result = read(str(ROOT / measured)) if measured else None
    page.write_text(render(diagnose_plan(ROOT / label, label), result), "utf-8")
    browser.events.clear()
    browser.open(page)
    return browser, label


def test_no_console_errors(opened: tuple[Browser, str]) -> None:
    browser, _ = opened
    assert browser.problems() == []


def test_every_stage_and_warm_label_is_laid_out_inside_1280_px(opened: tuple[Browser, str]) -> None:
    browser, label = opened
    plan = diagnose_plan(ROOT / label, label).plan
    assert plan is not None
    labels = browser.evaluate(LABELS)
    names = [s.name for layer in plan.layers.values() for s in layer.stages]
    names += [w.name for w in plan.warms]
    for name in names:
        shown = [t for t in labels if t["text"] == name]
        assert shown, f"{name} has no label on the page"
        for t in shown:
            assert t["width"] > 0, t
            assert t["height"] > 0, t
            assert t["left"] >= 0, t
            assert t["right"] <= WIDTH, t
    assert all(t["right"] <= WIDTH for t in labels), [t for t in labels if t["right"] > WIDTH]
    assert browser.evaluate("document.documentElement.scrollWidth") <= WIDTH


def test_the_page_is_not_blank(opened: tuple[Browser, str]) -> None:
    browser, _ = opened
    shot = Image.open(io.BytesIO(browser.screenshot())).convert("L")
    assert shot.width == WIDTH
    assert ImageStat.Stat(shot).var[0] > 500  # ink on paper, not one flat colour
    histogram = shot.histogram()
    inked = 1 - sum(histogram[240:]) / (shot.width * shot.height)
    assert 0.03 < inked < 0.6, inked


# Whether each `plancc explain` text is rendered (not while its <details> is closed).
EXPLAINED = "Array.from(document.querySelectorAll('details pre')).map(e => e.checkVisibility())"


def test_the_page_prints_with_every_explanation_open(opened: tuple[Browser, str]) -> None:
    """@media print applies: the explain texts print open; the PDF has pages."""
    browser, label = opened
    listed = len(facts(diagnose_plan(ROOT / label, label)).entries)  # one text per diagnostic
    on_screen = browser.evaluate(EXPLAINED)
    assert len(on_screen) == listed
    assert not any(on_screen)  # on screen: a click away
    browser.call("Emulation.setEmulatedMedia", {"media": "print"}, session=True)
    try:
        shown = browser.evaluate(EXPLAINED)
    finally:
        browser.call("Emulation.setEmulatedMedia", {"media": ""}, session=True)
    assert len(shown) == listed
    assert all(shown)
    pdf = base64.b64decode(
        browser.call("Page.printToPDF", {"preferCSSPageSize": True}, session=True)["data"]
    )
    assert pdf.startswith(b"%PDF")
    assert pdf.count(b"/Type /Page") > 1
