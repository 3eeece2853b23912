"""`make docs-screenshot`: a picture of an HTML report as a reader first sees it (1280x800, headless Chromium:
Debian's chromium driven by Playwright, every request but the page's own refused).

    python docs/screenshot.py outputs/compare.html docs/report_compare.png
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main(page: str, picture: str) -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        print("docs/screenshot.py: Debian's chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    url = Path(page).resolve().as_uri()
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=chromium, headless=True, args=FLAGS,
                                                       viewport={"width": 1280, "height": 800})
        tab = context.new_page()
        tab.route("**/*", lambda route: route.continue_() if route.request.url == url else route.abort())
        tab.goto(url, wait_until="load")
        tab.wait_for_selector("#fig-query-0[data-drawn] .main-svg")
        tab.screenshot(path=picture)
        context.close()
    print(f"wrote {picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
