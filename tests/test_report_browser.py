"""The reports in a real browser: headless Chromium over the DevTools protocol
(tests/chromium.py says why), at 1280 px.

Two sets of pages. The shipped ones (the Flash and Pro plans, Flash with its
measurement, the broken fixture) must load without a console message, show every
label whole, not be blank, and print. Those and the pages that stress the layout
(long names alike but for their middle, a 2,000-stage layer kind, the Flash plan
with its stages in list order, a small graph with stages beside each other) must
lay every label out where no other label is: each text's box, as the browser laid
it out (turned labels too), and each badge are measured and compared pairwise
(issue 24).

Skipped, saying why, only where no Chromium exists; `.ci/run` installs it.
"""

from __future__ import annotations

import base64
import io
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import WIDTH, Browser, find
from PIL import Image, ImageStat
from test_report_html import CSP, stress_result

from plancc.api import PlanResult
from plancc.api import diagnose_plan as _diagnose
from plancc.load.inputs import PlanInput
from plancc.report_html import render
from plancc.report_html.facts import facts
from plancc.report_html.layout import EM
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


def show(browser: Browser, page: Path, html: str) -> None:
    page.write_text(html, "utf-8")
    browser.events.clear()  # Page.loadEventFired of the page before is not this one's
    browser.open(page)


@pytest.fixture(scope="module", params=PAGES, ids=["flash", "pro", "flash-measured", "broken"])
def opened(
    request: pytest.FixtureRequest, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Browser, str]:
    label, measured = request.param
    result = read(str(ROOT / measured)) if measured else None
    page = tmp_path_factory.mktemp("report") / "page.html"
    show(browser, page, render(diagnose_plan(ROOT / label, label), result))
    return browser, label


def test_no_console_errors(opened: tuple[Browser, str]) -> None:
    """Nor a Content-Security-Policy violation: the page needs nothing its policy forbids."""
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


# -- no two labels collide -----------------------------------------------------------------

# Each text of a figure, each badge's box and each backing under a text, as the four
# corners of the box the browser laid it out in (page px): getBBox() in the element's
# own units, through its transform to the screen (a turned label is a turned box).
# A badge's text and box, and a backing and the text on it, are one group: those may
# overlap. A text drawn over a warm's bar gives the box of the shape drawn just before
# it: its backing, which must hold the whole text (an underscore hangs below the
# baseline: `wo_a` read `wo a`).
BOXES = """
(() => {
  const at = (x, y) => [x + window.scrollX, y + window.scrollY];
  const corners = (el) => {
    const b = el.getBBox(), m = el.getScreenCTM();
    const x1 = b.x + b.width, y1 = b.y + b.height;
    return [[b.x, b.y], [x1, b.y], [x1, y1], [b.x, y1]]
      .map(([x, y]) => at(m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f));
  };
  const out = [];
  document.querySelectorAll('svg.fig').forEach((svg, figure) => {
    const r = svg.getBoundingClientRect();
    const frame = [...at(r.left, r.top), ...at(r.right, r.bottom)];
    const badges = Array.from(svg.querySelectorAll('a.badge'));
    const bars = Array.from(svg.querySelectorAll('g.lane rect.bar')).map(corners);
    svg.querySelectorAll('text, a.badge rect, rect.backing').forEach((el, i) => {
      const box = corners(el);
      const badge = el.closest('a.badge');
      const before = el.previousElementSibling;
      let group = null;
      if (badge) group = 'badge ' + badges.indexOf(badge);
      else if (el.matches('rect.backing')) group = 'backing ' + i;
      else if (before && before.matches('rect.backing')) group = 'backing ' + (i - 1);
      const overBar = el.tagName === 'text' && bars.some(b =>
        box[0][0] < b[1][0] && b[0][0] < box[1][0] && box[0][1] < b[2][1] && b[0][1] < box[2][1]);
      out.push({
        figure, frame, box, group, tag: el.tagName, text: el.textContent,
        under: overBar && before && before.tagName === 'rect' ? corners(before) : null,
        overBar,
        chars: [...el.textContent].length,
        size: parseFloat(getComputedStyle(el).fontSize),
        family: getComputedStyle(el).fontFamily,
        length: el.tagName === 'text' ? el.getComputedTextLength() : 0,
      });
    });
  });
  return out;
})()
"""
TOUCH = 0.5  # px two boxes may share: what anti-aliasing blurs anyway


def overlap(a: list[list[float]], b: list[list[float]]) -> float:
    """How far two convex quadrilaterals overlap (separating axes): ≤ 0 when apart."""
    depth = float("inf")
    for quad in (a, b):
        for (x0, y0), (x1, y1) in ((quad[0], quad[1]), (quad[1], quad[2])):
            ax, ay = y0 - y1, x1 - x0
            norm = (ax * ax + ay * ay) ** 0.5
            if norm == 0:
                continue
            pa = [(x * ax + y * ay) / norm for x, y in a]
            pb = [(x * ax + y * ay) / norm for x, y in b]
            depth = min(depth, min(max(pa), max(pb)) - max(min(pa), min(pb)))
    return depth


def collisions(items: list[dict[str, Any]]) -> list[str]:
    """Each pair of labels of one figure that overlap, sweeping along x."""
    for it in items:
        xs = [x for x, _ in it["box"]]
        it["left"], it["right"] = min(xs), max(xs)
    found = []
    active: list[dict[str, Any]] = []
    for a in sorted(items, key=lambda it: it["left"]):
        active = [b for b in active if b["right"] > a["left"]]
        for b in active:
            if a["figure"] != b["figure"] or (a["group"] and a["group"] == b["group"]):
                continue
            depth = overlap(a["box"], b["box"])
            if depth > TOUCH:
                found.append(f"{b['tag']} {b['text']!r} and {a['tag']} {a['text']!r}: {depth:.1f}")
        active.append(a)
    return found


def long_names(_: Path) -> PlanResult:
    label = "tests/data/report/long-names.yaml"
    return diagnose_plan(ROOT / label, label)


def shipped(label: str, measured: str | None = None) -> Callable[[Path], tuple[PlanResult, Any]]:
    return lambda _: (
        diagnose_plan(ROOT / label, label),
        read(str(ROOT / measured)) if measured else None,
    )


LAID_OUT: dict[str, Callable[[Path], tuple[PlanResult, Any]]] = {
    "flash": shipped("plans/deepseek_v4_flash.yaml"),
    "pro": shipped("plans/deepseek_v4_pro.yaml"),
    "flash-measured": shipped(
        "plans/deepseek_v4_flash.yaml", "tests/data/report/measure-flash.json"
    ),
    "broken": shipped("tests/data/report/broken.yaml"),
    "timed": shipped("tests/data/report/timed.yaml", "tests/data/report/measure.json"),
    "long-names": lambda tmp: (long_names(tmp), None),
    "stress": lambda tmp: (stress_result(tmp), None),
    "flash-linear": shipped("tests/data/report/flash-linear.yaml"),
    "graph": shipped("tests/data/report/graph.yaml"),
}


@pytest.fixture(scope="module", params=list(LAID_OUT))
def laid_out(
    request: pytest.FixtureRequest, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[dict[str, Any]], list[str]]:
    """The boxes of a page's labels, and what the browser said loading it."""
    tmp = tmp_path_factory.mktemp("layout")
    result, measured = LAID_OUT[request.param](tmp)
    show(browser, tmp / "page.html", render(result, measured))
    items: list[dict[str, Any]] = browser.evaluate(BOXES)
    assert items
    return items, browser.problems()


@pytest.fixture
def boxes(laid_out: tuple[list[dict[str, Any]], list[str]]) -> list[dict[str, Any]]:
    return laid_out[0]


def test_the_browser_accepts_every_shape(laid_out: tuple[list[dict[str, Any]], list[str]]) -> None:
    """A 2,000-stage layer drew boxes of negative width, each an error in the console."""
    assert laid_out[1] == []


def test_no_two_labels_collide(boxes: list[dict[str, Any]]) -> None:
    """The Pro plan's peak label lay on its budget label; long names' badges on the lane's
    title; a 2,000-stage layer's turned labels on each other (a black smear)."""
    assert collisions(boxes) == []


def test_every_label_stays_inside_its_figure(boxes: list[dict[str, Any]]) -> None:
    """Inside the figure, not only the window: a PC107 sentence naming long stages ran past
    the figure's right edge, where the SVG cuts it."""
    outside = []
    for it in boxes:
        left, top, right, bottom = it["frame"]
        xs, ys = [x for x, _ in it["box"]], [y for _, y in it["box"]]
        across = min(xs) < left - TOUCH or max(xs) > right + TOUCH
        if across or min(ys) < top - TOUCH or max(ys) > bottom + TOUCH:
            outside.append(it["text"])
    assert outside == []


def test_a_text_over_a_warms_bar_lies_whole_on_its_backing(boxes: list[dict[str, Any]]) -> None:
    for it in (it for it in boxes if it["overBar"]):
        assert it["under"] is not None, it["text"]
        (left, top), _, (right, bottom), _ = it["under"]
        (x0, y0), _, (x1, y1), _ = it["box"]
        assert left <= x0, it["text"]
        assert x1 <= right, it["text"]
        assert top <= y0, it["text"]
        assert y1 <= bottom, it["text"]


def test_the_layout_never_underestimates_a_texts_width(boxes: list[dict[str, Any]]) -> None:
    """Layout places text by its estimated width (plancc.report_html.layout.EM per px of
    size, the figure font's advance): the browser's must not be wider."""
    texts = [it for it in boxes if it["tag"] == "text"]
    assert all("DejaVu Sans Mono" in it["family"] for it in texts)
    wider = [it["text"] for it in texts if it["length"] > it["chars"] * it["size"] * EM + 0.01]
    assert wider == []


def test_turned_stage_labels_are_distinct(boxes: list[dict[str, Any]]) -> None:
    """Long names that share a start read the same prefix when cut at their end."""
    for _, figure in itertools.groupby(boxes, key=lambda it: it["figure"]):
        turned = [
            it["text"]
            for it in figure
            if it["tag"] == "text" and it["box"][0][1] != it["box"][1][1]
        ]
        assert len(turned) == len(set(turned))


# -- the Content-Security-Policy holds -----------------------------------------------------

# What a slip in escaping could let into the page: each would mark the document if it ran.
INJECTED = (
    "<script>document.documentElement.dataset.ran = 'script'</script>"
    "<img src=x onerror=\"document.documentElement.dataset.ran = 'handler'\">"
    "<svg onload=\"document.documentElement.dataset.ran = 'svg'\"></svg>"
)


def test_a_slip_in_escaping_runs_nothing(browser: Browser, tmp_path: Path) -> None:
    """The policy is the page's own: injected script, handlers and loads are refused."""
    label = "plans/deepseek_v4_flash.yaml"
    html = render(diagnose_plan(ROOT / label, label))
    assert CSP in html
    show(browser, tmp_path / "page.html", html.replace("<main>", "<main>" + INJECTED, 1))
    assert browser.evaluate("document.documentElement.dataset.ran") is None
    refused = [p for p in browser.problems() if "Content Security Policy" in p]
    assert refused, browser.problems()
    # Without the policy, the same page runs them: the test can tell.
    show(
        browser,
        tmp_path / "open.html",
        html.replace(CSP, "").replace("<main>", "<main>" + INJECTED, 1),
    )
    assert browser.evaluate("document.documentElement.dataset.ran") is not None
