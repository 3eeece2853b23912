"""The service's HTML reports: POST /v1/evaluate answers with a report id, GET /v1/report/{id} serves the page; a
signed link that expires where a token is set (or the bearer token, as curl sends it); a page lives as long as its
evaluation's cache entry, or, with the cache off, while it is one of the last report_pages."""
from __future__ import annotations

import html
import re
import time

import pytest

from service_server import BASELINE_RUN, Server, sample_test_set
from treckit.service.reports import signature
from treckit.testsets.cache import ResultCache

httpx = pytest.importorskip("httpx", reason="the service tests need the dev extra (httpx)")
pytest.importorskip("fastapi", reason="the service tests need the service extra")
pytest.importorskip("plotly", reason="the reports need the report extra")

TOKEN = "s3cret-token"


def mean_cell(page: str, measure: str) -> str:
    m = re.search(rf'data-measure="{measure}" data-mean="([0-9.]+)"', page)
    assert m, measure
    return m.group(1)


def weaker(k: int) -> str:
    """The stored baseline run without its first k lines of each query: another system, other numbers."""
    seen: dict[str, int] = {}
    out = []
    for line in BASELINE_RUN.read_text().splitlines():
        q = line.split()[0]
        seen[q] = seen.get(q, 0) + 1
        if seen[q] > k:
            out.append(line + "\n")
    return "".join(out)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("reports"), token=TOKEN)
    yield s
    s.stop()


def test_a_report_by_token_or_by_signed_link_and_as_long_as_its_cache_entry(token_server):
    s = token_server
    answer = s.post({"test_set": sample_test_set(), "run_file": "bow.trec"}).json()
    rid, url = answer["report_id"], answer["report_url"]
    assert re.fullmatch(r"[0-9a-f]{64}", rid)
    expires = int(re.search(r"expires=(\d+)", url).group(1))
    assert url == f"/v1/report/{rid}?expires={expires}&signature={signature(TOKEN, rid, expires)}"
    assert time.time() < expires <= time.time() + 86_400 + 5
    by_token = httpx.get(s.url + f"/v1/report/{rid}", headers=s.headers, timeout=60)      # curl -H 'Authorization: ...'
    assert by_token.status_code == 200 and by_token.headers["content-type"].startswith("text/html")
    page = by_token.text
    for m, value in answer["metrics"].items():
        assert mean_cell(page, m) == f"{value:.4f}"
    assert httpx.get(s.url + url, timeout=60).text == page                                # a browser: no header
    assert httpx.get(s.url + f"/v1/report/{rid}", timeout=60).status_code == 401
    forged = url[:-1] + ("0" if url[-1] != "0" else "1")
    assert httpx.get(s.url + forged, timeout=60).status_code == 401
    past = int(time.time()) - 10
    assert httpx.get(s.url + f"/v1/report/{rid}?expires={past}&signature={signature(TOKEN, rid, past)}",
                     timeout=60).status_code == 401
    other = "0" * 64                                       # a signature is of one id only
    assert httpx.get(s.url + f"/v1/report/{other}?expires={expires}&signature={signature(TOKEN, rid, expires)}",
                     timeout=60).status_code == 401
    ResultCache(s.tmp / "cache").clear()                   # the cache entry goes, and its page with it
    gone = httpx.get(s.url + f"/v1/report/{rid}", headers=s.headers, timeout=60)
    assert gone.status_code == 404 and "evaluate again" in gone.json()["fix"]


def test_the_system_s_report_shows_every_stage(token_server):
    s = token_server
    answer = s.post({"test_set": sample_test_set()}).json()
    page = httpx.get(s.url + answer["report_url"], timeout=60).text
    for stage, summary in answer["components"].items():
        assert f'<td data-system="{stage}" data-measure="ndcg_at_10" data-mean="{summary["metrics"]["ndcg_at_10"]:.4f}"' \
            in page
    assert html.escape("bm25") in page and "baseline" in page


def test_without_the_cache_the_last_report_pages_are_kept(tmp_path):
    s = Server(tmp_path, config="cache: false\nreport_pages: 2\n")
    try:
        ids = [s.post({"test_set": sample_test_set(), "run": weaker(k)}).json()["report_id"] for k in (1, 2, 3)]
        assert len(set(ids)) == 3
        codes = [httpx.get(s.url + f"/v1/report/{rid}", timeout=60).status_code for rid in ids]
        assert codes == [404, 200, 200]
        again = s.post({"test_set": sample_test_set(), "run": weaker(1)}).json()      # the same evaluation: its id
        assert again["report_id"] == ids[0] and again["report_url"] == f"/v1/report/{ids[0]}"
        assert httpx.get(s.url + "/v1/report/not-an-id", timeout=60).status_code == 422
    finally:
        s.stop()
