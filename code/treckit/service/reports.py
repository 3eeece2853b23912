"""The service's HTML reports: ``POST /v1/evaluate`` answers with a report id, ``GET /v1/report/{id}`` serves that
evaluation's page (:mod:`treckit.report`).

A page is drawn when asked for, from the evaluation's results: with the cache on, from the evaluation's cache entry
(the id is its key, so the page lives as long as the entry); with the cache off (or a result that was not cached),
from the results of the last ``report_pages`` evaluations, kept in memory.  Where a token is set, a browser (which
sends no bearer token) follows a signed link that expires: ``?expires=UNIX_TIME&signature=HMAC``, the HMAC-SHA256
of ``id.expires`` under the token (:func:`signature`); ``curl -H 'Authorization: Bearer ...'`` works too.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import OrderedDict
from urllib.parse import parse_qs

from ..report.html import render
from ..report.results import system_page, testset_page
from ..testsets.cache import ResultCache
from ..testsets.results import RESULTS_SCHEMA

ROUTE = "/v1/report/"
SOURCE = "report_source"       # the worker's answer carries the results to draw under this key (never sent out)


def report_id(results: dict) -> str:
    """The id of a page kept in memory: the SHA-256 of its results (the same evaluation, the same id)."""
    text = json.dumps(results, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def signature(token: str, rid: str, expires: int) -> str:
    return hmac.new(token.encode(), f"{rid}.{expires}".encode(), hashlib.sha256).hexdigest()


def signed_ok(token: str, path: str, query_string: bytes, now: float | None = None) -> bool:
    """Whether a request for ``path`` carries an unexpired link signed under ``token``."""
    if not path.startswith(ROUTE):
        return False
    try:
        query = parse_qs(query_string.decode("latin-1"), max_num_fields=4)
        expires = int(query["expires"][0])
        given = query["signature"][0]
    except (KeyError, ValueError, IndexError):
        return False
    if expires < (time.time() if now is None else now):
        return False
    return hmac.compare_digest(given.encode("latin-1"), signature(token, path[len(ROUTE):], expires).encode())


class ReportPages:
    """Where each report's results are found: the cache, or the last ``kept`` in memory."""

    def __init__(self, kept: int, cache: bool, cache_dir, token: str | None, link_ttl_s: float):
        self.kept, self.cache, self.cache_dir = kept, cache, cache_dir
        self.token, self.link_ttl_s = token, link_ttl_s
        self._memory: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, source: dict) -> str | None:
        """The id of the page of an evaluation's ``source`` ({"key": its cache key or None, "results": {name: results
        dict}}); None when no page can be kept (``report_pages: 0`` and nothing cached)."""
        if self.cache and source.get("key"):
            return source["key"]
        if self.kept <= 0:
            return None
        rid = report_id(source["results"])
        with self._lock:
            self._memory[rid] = source["results"]
            self._memory.move_to_end(rid)
            while len(self._memory) > self.kept:
                self._memory.popitem(last=False)
        return rid

    def link(self, rid: str | None, now: float | None = None) -> str | None:
        if rid is None:
            return None
        if self.token is None:
            return ROUTE + rid
        expires = int((time.time() if now is None else now) + self.link_ttl_s)
        return f"{ROUTE}{rid}?expires={expires}&signature={signature(self.token, rid, expires)}"

    def results(self, rid: str) -> dict | None:
        """{name: results dict} of report ``rid`` (one result, or a system's stages); None: no such report now."""
        with self._lock:
            found = self._memory.get(rid)
        if found is not None:
            return found
        if not self.cache:
            return None
        stored = ResultCache(self.cache_dir).get(rid)
        if isinstance(stored, dict) and stored.get("schema") == RESULTS_SCHEMA:
            return {_label(stored): stored}
        if isinstance(stored, dict) and stored and all(isinstance(v, dict) and v.get("schema") == RESULTS_SCHEMA
                                                       for v in stored.values()):
            return stored
        return None


def _label(result: dict) -> str:
    system = result.get("system") or {}
    return str(system.get("stage") or system.get("name") or "run")


def page(results: dict) -> str:
    """The page of an evaluation's results (no query texts: the service keeps none)."""
    if len(results) == 1:
        name, data = next(iter(results.items()))
        return render(testset_page(data))
    return render(system_page(results))
