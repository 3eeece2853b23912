"""Retrieval-quality gauges and request metrics, for the server's ``/metrics`` and for files.

Gauges are named ``<prefix>_retrieval_recall_at_k{k, test_set, system, component}``,
``<prefix>_retrieval_ndcg_at_k{...}``, ``<prefix>_retrieval_mrr{...}`` (``prefix`` defaults to
``treckit``); other measures become ``<prefix>_retrieval_<name>``.  Outside the server the same gauges
go to a node_exporter textfile (written atomically) or to a Pushgateway.  In the server, label values come
from bounded sets (:class:`LabelBounds`): a request never adds a series.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..console.errors import InputError
from ..dependencies import install_hint
from ..inputs.urls import connection_problem
from ..output.files import atomic_output

DEFAULT_PREFIX = "treckit"
LABELS = ("test_set", "system", "component")
OTHER = "other"               # the label of every value outside a bounded set
_PREFIX = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def check_prefix(prefix: str) -> str:
    if not _PREFIX.fullmatch(prefix):
        raise InputError(f"{prefix!r} is not a valid Prometheus metric prefix",
                         fix="letters, digits, '_' and ':', not starting with a digit (e.g. medicalkg)")
    return prefix


_TREC_TO_GAUGE = (("recall_", "recall_at_"), ("P_", "precision_at_"))
# nDCG's gauges say its gain as the test-set names do: ndcg_at_k is exp gain, ndcg_cut_K linear
_NDCG_TO_GAUGE = ((re.compile(r"nDCG@(\d+)"), "ndcg_cut_"), (re.compile(r"nDCG\(dcg='exp-log2'\)@(\d+)"), "ndcg_at_"))


def gauge_measures(summary: dict, kinds: dict) -> dict[str, float]:
    """An evaluation's summary values under gauge names: trec_eval's ``recall_10`` is ``recall_at_10``,
    ``recip_rank`` ``mrr``, nDCG@10 ``ndcg_cut_10`` (linear gain) and ``nDCG(dcg='exp-log2')@10`` ``ndcg_at_10``
    (exp gain, the test sets' ``ndcg_at_10``); other names keep their letters and digits."""
    out = {}
    for name, value in summary.items():
        if kinds.get(name) not in ("double", "long") or value is None:
            continue
        g = "mrr" if name == "recip_rank" else name
        for trec, gauge in _TREC_TO_GAUGE:
            if name.startswith(trec) and name[len(trec):].isdigit():
                g = gauge + name[len(trec):]
        for pattern, gauge in _NDCG_TO_GAUGE:
            if (m := pattern.fullmatch(name)) is not None:
                g = gauge + m.group(1)
        out[re.sub(r"[^a-z0-9_]+", "_", g.replace("@", "_at_").lower()).strip("_")] = float(value)
    return out


def gauge_name(measure: str) -> tuple[str, str | None]:
    """(gauge suffix, k label) of a test-set measure name: recall_at_10 -> (recall_at_k, "10"); ir_measures'
    nDCG@10 (linear gain) is trec_eval's ndcg_cut_10 -> (ndcg_cut_10, None)."""
    if (m := _NDCG_TO_GAUGE[0][0].fullmatch(measure)) is not None:
        return f"ndcg_cut_{m.group(1)}", None
    kind, _, k = measure.partition("_at_")
    if k:
        return f"{kind}_at_k", k
    return measure, None


@dataclass(frozen=True)
class LabelBounds:
    """What a server's gauges may be labelled with: their systems and test sets (anything else is ``other``) and
    their measures (any other is not exported), so that no request can add a series to ``/metrics``."""

    systems: frozenset[str]
    test_sets: frozenset[str]
    measures: frozenset[str]


class QualityGauges:
    """The retrieval gauges in one prometheus_client registry; with ``bounds``, only bounded label values
    (components are a server's own config's, or ``all``)."""

    def __init__(self, registry, prefix: str = DEFAULT_PREFIX, bounds: LabelBounds | None = None):
        self.registry, self.prefix, self.bounds = registry, check_prefix(prefix), bounds
        self._gauges: dict[str, object] = {}

    def _gauge(self, suffix: str, with_k: bool):
        from prometheus_client import Gauge
        if suffix not in self._gauges:
            labels = (("k",) if with_k else ()) + LABELS
            self._gauges[suffix] = Gauge(f"{self.prefix}_retrieval_{suffix}", f"retrieval quality: {suffix} (treckit)",
                                         labels, registry=self.registry)
        return self._gauges[suffix]

    def set(self, metrics: dict[str, float | None], *, test_set: str, system: str, component: str = "all") -> None:
        b = self.bounds
        if b is not None:
            test_set = test_set if test_set in b.test_sets else OTHER
            system = system if system in b.systems else OTHER
        for measure, value in metrics.items():
            if value is None or (b is not None and measure not in b.measures):
                continue
            suffix, k = gauge_name(measure)
            g = self._gauge(suffix, k is not None)
            labels = dict(test_set=test_set, system=system, component=component)
            if k is not None:
                labels["k"] = k
            g.labels(**labels).set(float(value))


def export(entries: list[tuple[str, str, dict[str, float | None]]], *, test_set: str, prefix: str = DEFAULT_PREFIX,
           textfile=None, pushgateway: str | None = None, job: str = "treckit") -> None:
    """Write the gauges of ``entries`` ((system, component, {measure: value}) each) to a node_exporter
    textfile (atomically) and/or push them to a Pushgateway."""
    try:
        from prometheus_client import CollectorRegistry, generate_latest
    except ImportError:
        raise InputError("exporting metrics needs prometheus-client", fix=install_hint("service")) from None

    registry = CollectorRegistry()
    gauges = QualityGauges(registry, prefix)
    for system, component, metrics in entries:
        gauges.set(metrics, test_set=test_set, system=system, component=component)
    if textfile is not None:
        with atomic_output(textfile, "wb") as fh:
            fh.write(generate_latest(registry))
    if pushgateway:
        from prometheus_client import push_to_gateway

        check_pushgateway(pushgateway)
        address, handler = gateway_and_handler(pushgateway)
        try:
            push_to_gateway(address, job=job, registry=registry, timeout=10, handler=handler)
        except OSError as exc:
            status = getattr(exc, "code", None)              # urllib's HTTPError: the gateway answered
            problem = connection_problem(exc) or (f"it answered HTTP {status}" if isinstance(status, int)
                                                  else type(exc).__name__)
            refused = status in (401, 403)
            raise InputError(f"cannot push to the Pushgateway ({problem})", path=pushgateway,
                             fix="check the user name and password (http://USER:PASSWORD@HOST:PORT)" if refused
                             else "check the URL and that the Pushgateway is running") from None


def gateway_and_handler(url: str):
    """(the Pushgateway's address without credentials, prometheus_client's handler for it): a URL with
    ``user:password@`` is pushed to with HTTP basic auth (prometheus_client would take them for the host name)."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    from prometheus_client.exposition import basic_auth_handler, default_handler
    full = url if "://" in url else f"http://{url}"
    parts = urlsplit(full)
    if "@" not in parts.netloc:
        return url, default_handler
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    username, password = unquote(user), unquote(password)

    def handler(url, method, timeout, headers, data):
        return basic_auth_handler(url, method, timeout, headers, data, username, password)
    return urlunsplit(parts._replace(netloc=host)), handler


def check_pushgateway(url: str) -> None:
    """A Pushgateway address as prometheus_client takes it: ``http(s)://host[:port][/path]``, or ``host[:port]``
    (http is then assumed); checked before any work, so a typo costs no evaluation."""
    from urllib.parse import urlsplit
    full = url if "://" in url else f"http://{url}"
    try:
        parts = urlsplit(full)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:                                       # a port that is no number, a bad IPv6 address
        ok = False
    if not ok or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise InputError(f"--pushgateway {url[:200]!r} is not a Pushgateway address",
                         fix="give http://HOST:PORT (e.g. http://localhost:9091)")


def alert_rules(prefix: str = DEFAULT_PREFIX, threshold: float = 0.75, duration: str = "15m") -> str:
    """The shipped alert rules (``service/alerts.yml``) for another prefix, threshold or duration."""
    import re as _re
    from pathlib import Path
    if not _re.fullmatch(r"[0-9]+(ms|s|m|h|d|w|y)", duration):
        raise InputError(f"{duration!r} is not a Prometheus duration", fix="e.g. 15m, 1h")
    text = (Path(__file__).with_name("alerts.yml")).read_text(encoding="utf-8")
    return (text.replace("treckit_retrieval_recall_at_k", f"{check_prefix(prefix)}_retrieval_recall_at_k")
                .replace("< 0.75", f"< {threshold:g}").replace("for: 15m", f"for: {duration}")
                .replace("(< 0.75 for 15 minutes)", f"(< {threshold:g} for {duration})"))
