"""The sample's HTML reports in a real browser: Debian's Chromium, headless, driven by Playwright (never a browser of
Playwright's own), with every request but the page's own file refused.  On each page: no console error and no
request; the numbers shown equal the results file's to the printed digits; hovering a point of a per-query figure
shows its query id; a click on a column's name sorts the per-query table by it; a 1280x800 screenshot is not blank.

.ci/run installs Debian's chromium when it is missing; where no browser can be had, these tests skip saying so."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from helpers import ROOT
from treckit.testsets import load_test_set

TEST_SET = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra) drives the browser")
    profile = tmp_path_factory.mktemp("chromium-profile")            # a new, empty user data dir
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                       args=FLAGS, viewport={"width": 1280, "height": 800})
        yield context
        context.close()


class Opened:
    """A page opened from disk, with what it logged and asked for."""

    def __init__(self, context, path: Path):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.url = path.as_uri()
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.route("**/*", lambda route: route.continue_() if route.request.url == self.url else route.abort())
        self.page.goto(self.url, wait_until="load")

    def check_quiet(self) -> None:
        assert self.errors == [] and self.requests == [self.url], (self.errors, self.requests)

    def summary(self, system: str, measure: str) -> str:
        return self.page.locator(f'#summary-table td[data-system="{system}"][data-measure="{measure}"] .mean').inner_text()

    def column(self, j: int) -> list[str]:
        return self.page.locator(f"#query-table tbody tr td:nth-child({j + 1})").all_inner_texts()

    def header(self) -> list[str]:
        return self.page.locator("#query-table thead th").all_inner_texts()

    def hover_a_point(self, figure: str) -> tuple[str, str]:
        """Move the mouse onto the middle point of the figure's first line: (the tooltip's text, that point's query
        id as the figure's data hold it)."""
        self.page.evaluate("(id) => document.getElementById(id).scrollIntoView({block: 'center'})", figure)
        self.page.wait_for_selector(f"#{figure}[data-drawn] .main-svg")
        x, y, qid = self.page.evaluate("""(id) => {
            const gd = document.getElementById(id), L = gd._fullLayout, t = gd.data[0], i = t.x.length >> 1;
            const r = gd.getBoundingClientRect();
            return [r.left + L._size.l + L.xaxis.d2p(t.x[i]), r.top + L._size.t + L.yaxis.d2p(t.y[i]), t.customdata[i][0]];
        }""", figure)
        self.page.mouse.move(x, y)
        self.page.wait_for_selector(f"#{figure} .hoverlayer .hovertext")
        return self.page.locator(f"#{figure} .hoverlayer .hovertext text.nums").first.text_content(), qid

    def not_blank(self) -> None:
        from PIL import Image
        shot = Image.open(io.BytesIO(self.page.screenshot())).convert("RGB")
        assert shot.size == (1280, 800)
        colors = shot.getcolors(maxcolors=1 << 20)                 # (count, color) of each color shown
        white = sum(n for n, c in colors if c == (255, 255, 255))
        assert white < 0.95 * 1280 * 800 and len(colors) > 50


def sorted_by_click(opened: Opened, j: int) -> None:
    """A click on column j sorts the shown rows by it, ascending; another click, descending."""
    opened.page.locator(f"#query-table thead th:nth-child({j + 1})").click()
    up = [float(x) for x in opened.column(j)]
    assert up == sorted(up) and len(set(up)) > 1
    opened.page.locator(f"#query-table thead th:nth-child({j + 1})").click()
    down = [float(x) for x in opened.column(j)]
    assert down == sorted(down, reverse=True)


def test_the_compare_page_in_chromium(browser, sample_reports):
    record = json.loads((sample_reports / "compare.json").read_text())
    opened = Opened(browser, sample_reports / "compare.html")
    for s, v in record["systems"].items():
        for m, mean in v["metrics"]["macro"].items():
            assert opened.summary(s, m) == f"{mean:.4f}"
    header = opened.header()
    j = header.index("dense ndcg_cut_10")
    rows = {r["qid"]: r for r in record["per_query"]}
    assert opened.column(j) == [f"{rows[q]['dense']['ndcg_cut_10']:.4f}" for q in opened.column(0)]
    tooltip, qid = opened.hover_a_point("fig-query-0")
    texts = {json.loads(line)["id"]: json.loads(line)["query"]
             for line in (sample_reports / "id.jsonl").read_text().splitlines()}
    assert qid in rows and tooltip.startswith(f"{qid} ") and texts[qid] in tooltip
    sorted_by_click(opened, header.index("\u0394 dense recall_10"))
    opened.not_blank()
    opened.check_quiet()


def test_the_testset_and_gate_pages_in_chromium(browser, sample_reports):
    data = json.loads((sample_reports / "testset.json").read_text())
    opened = Opened(browser, sample_reports / "testset.html")
    for m in data["measures"]:
        assert opened.summary("baseline_bow.trec", m) == f"{data['aggregates'][m]['mean']:.4f}"
    header = opened.header()
    j = header.index("ndcg_at_10")
    rows = {r["qid"]: r for r in data["per_query"]}
    assert opened.column(j) == [f"{rows[q]['ndcg_at_10']:.4f}" for q in opened.column(0)]
    tooltip, qid = opened.hover_a_point("fig-query-3")
    assert tooltip.startswith(f"{qid} {rows[qid]['query_type']}")
    sorted_by_click(opened, j)
    opened.page.locator("#filter").fill("Metformin")
    texts = load_test_set(TEST_SET).query_texts()
    assert sorted(opened.column(0)) == sorted(q for q, t in texts.items() if "metformin" in t.lower()) != []
    opened.not_blank()
    opened.check_quiet()

    gate = Opened(browser, sample_reports / "gate.html")
    tooltip, qid = gate.hover_a_point("fig-query-0")
    assert tooltip.startswith(f"{qid} {rows[qid]['query_type']}")
    assert gate.page.locator("#gate-table").inner_text().count("FAIL") >= 1
    gate.not_blank()
    gate.check_quiet()
