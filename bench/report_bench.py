"""The HTML report of a 10,000-query comparison: how long `treckit compare --html` takes, the page's size, and how
long the page takes to open in headless Chromium (Debian's, through Playwright; every request refused).

    .venv/bin/python -m bench.report_bench [--queries 10000] [--repeat 3]

Opening is timed four ways, from the navigation's start: the first paint (the summary shown), the per-query
table filled and usable (page.js's mark), the page's load event (plotly.js read), and the first figure drawn; beside them, the same for a
page holding plotly.js alone (the floor any plotly page pays).  Prints one JSON line per measurement."""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def write_inputs(d: Path, queries: int) -> None:
    """Seeded qrels and two runs of ``queries`` queries x 50 docs, with query types and texts (an id-added JSONL)."""
    rng = random.Random(7)
    qrels, runs, ids = [], {"a": [], "b": []}, []
    for q in range(queries):
        qid = f"q{q:05d}"
        rel = rng.sample(range(200), 4)
        qrels += [f"{qid} 0 d{r} {rng.randint(1, 3)}\n" for r in rel]
        for name, skill in (("a", 0.3), ("b", 0.4)):
            docs = rng.sample(range(200), 50)
            if rng.random() < skill:
                docs[rng.randrange(5)] = rel[0]
            runs[name] += [f"{qid} Q0 d{doc} {i + 1} {50 - i} {name}\n" for i, doc in enumerate(dict.fromkeys(docs))]
        ids.append(json.dumps({"id": qid, "query": f"synthetic query number {q} about topic {q % 97}",
                               "metadata": {"template": rng.choice(["exact_term", "paraphrase", "complex_clinical"])}}))
    (d / "qrels").write_text("".join(qrels))
    for name, lines in runs.items():
        (d / f"{name}.trec").write_text("".join(lines))
    (d / "ids.jsonl").write_text("\n".join(ids) + "\n")


def open_times(page: Path, repeat: int) -> dict:
    from playwright.sync_api import sync_playwright
    url = page.resolve().as_uri()
    found = {"first_paint_s": [], "table_ready_s": [], "load_s": [], "figures_in_view_s": []}
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=shutil.which("chromium"),
                                                       headless=True, args=FLAGS,
                                                       viewport={"width": 1280, "height": 800})
        for _ in range(repeat):
            tab = context.new_page()
            tab.route("**/*", lambda route: route.continue_() if route.request.url == url else route.abort())
            t0 = time.perf_counter()
            tab.goto(url, wait_until="load")
            load = time.perf_counter() - t0
            if tab.locator(".figure").count():
                tab.evaluate("() => document.querySelector('.figure').scrollIntoView({block: 'center'})")
                tab.wait_for_selector(".figure[data-drawn] .main-svg")
            drawn = time.perf_counter() - t0
            paint = tab.evaluate("performance.getEntriesByName('first-paint')[0]?.startTime ?? -1000") / 1000
            ready = tab.evaluate("performance.getEntriesByName('treckit-table-ready')[0]?.startTime ?? -1000") / 1000
            found["first_paint_s"].append(round(paint, 3))
            found["table_ready_s"].append(round(ready, 3))
            found["load_s"].append(round(load, 3))
            found["figures_in_view_s"].append(round(drawn, 3))
            tab.close()
        context.close()
    return {k: min(v) for k, v in found.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    treckit = Path(sys.executable).with_name("treckit")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_inputs(d, a.queries)
        t0 = time.perf_counter()
        subprocess.run([treckit, "compare", d / "qrels", d / "a.trec", d / "b.trec", "-m", "ndcg_cut.10", "-m",
                        "recall.10", "-m", "recip_rank", "-m", "map", "--query-types", d / "ids.jsonl", "--html",
                        d / "page.html"], check=True, capture_output=True)
        took = time.perf_counter() - t0
        from plotly.offline import get_plotlyjs
        (d / "floor.html").write_text(f"<!DOCTYPE html><html><body><p>x</p><script>{get_plotlyjs()}</script></body></html>")
        page = open_times(d / "page.html", a.repeat)
        floor = open_times(d / "floor.html", a.repeat)
        print(json.dumps({"queries": a.queries, "compare_html_s": round(took, 2),
                          "page_bytes": (d / "page.html").stat().st_size, **page,
                          "plotly_js_alone": floor, "load_average_1m": round(os.getloadavg()[0], 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
