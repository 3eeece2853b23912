"""``treckit testset ...``, ``treckit rq``, ``treckit gate``, ``treckit cache`` and ``treckit qrels-verify``:
test sets, the acceptance metric, the regression gate, the evaluation cache, qrels verification."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..console.errors import InputError, listing, without_credentials
from ..console.messages import say
from ..engines.budget import DEFAULT_MEMORY, MemoryLimit
from ..ids import tsv_field_problem
from ..engines.choice import choose
from ..engines.dask import check_shared_paths
from ..inputs.bounded import load_yaml_mapping, read_json
from ..inputs.reading import judgment_line_finder, read_qrels, read_run
from ..inputs.sources import display_name
from ..measures.definitions import RANKINGS
from ..output.files import atomic_output, outputs
from ..output.trec import write_trec_qrels
from ..qrels import QrelsVerificationError, verify_qrels_topics
from ..report.html import render as render_page, require_plotly
from ..report.results import gate_page, testset_page
from ..retrieval.callables import load_callable
from ..retrieval.corpus import read_corpus
from ..service.metrics import check_prefix, check_pushgateway, export
from ..stages import write_json
from ..testsets import load_test_set, resolve_test_set
from ..testsets.cache import ResultCache
from ..testsets.gate import gate, parse_drop
from ..testsets.lifecycle import agreement, check_label_grades, diff, judged_once, refresh, split
from ..testsets.load import test_set_from_judgments
from ..testsets.measures import canonical_name
from ..testsets.report import holdout_gap, results_markdown, results_table
from ..testsets.rq import BOW_RANKING, RUN_RANKING, baseline_run, check_k, check_threshold, rq
from ..testsets.runner import evaluate, evaluate_run
from ..testsets.schema import json_schema
from ..testsets.topics import read_queries, read_query_records, read_query_types, read_topic_ids
from .common import Gain, Weighting, number_in, refuse_overwriting, with_debug_option, with_memory_limit
from .completion import measure_names

testset_app = typer.Typer(no_args_is_help=True, add_completion=False,
                          help="YAML test sets: validate, export, import, evaluate, split, diff, kappa, refresh.")
cache_app = typer.Typer(no_args_is_help=True, add_completion=False, help="The cache of evaluations.")


def _say(msg: str) -> None:
    print(without_credentials(f"treckit: {msg}"), file=sys.stderr)


def _write_text(path, text: str) -> None:
    with atomic_output(path) as fh:
        fh.write(text)


# ------------------------------------------------------------------ testset
@testset_app.command("validate")
def validate_cmd(test_set: str = typer.Argument(..., help="a test-set YAML file, or a name in $TRECKIT_TEST_SETS")) -> None:
    """Check a test set against the schema; every problem is listed with its line."""
    ts = load_test_set(test_set)
    counts = ts.counts_by_type()
    print(f"{ts.name} {ts.version}: {len(ts.queries)} queries, "
          f"{ts.num_judgments} judgments; valid")
    for t, n in counts.items():
        print(f"  {t:<24} {n}")


@testset_app.command("schema")
def schema_cmd() -> None:
    """Print the test-set JSON Schema."""
    print(json.dumps(json_schema(), indent=2))


@testset_app.command("workflow")
def workflow_cmd() -> None:
    """Print an example GitHub Actions workflow: evaluate a pull request against main, gate, comment."""
    print((Path(__file__).resolve().parents[1] / "testsets" / "github_workflow.yml").read_text(encoding="utf-8"), end="")


@testset_app.command("export")
def export_cmd(test_set: str = typer.Argument(..., help="test-set YAML (path or name)"),
               qrels: Path = typer.Option(..., "--qrels", "-o", help="TREC qrels to write"),
               queries: Optional[Path] = typer.Option(None, "--queries", help="queries TSV to write (qid<TAB>text)"),
               types: Optional[Path] = typer.Option(None, "--types", help="query types TSV to write (qid<TAB>type)")) -> None:
    """Write a test set's judgments as TREC qrels (and its queries and types as TSV)."""
    refuse_overwriting([test_set], [qrels, queries, types])
    ts = load_test_set(test_set)
    for q in ts.queries if queries else ():         # ids and types are held to the readers' rules by validation
        if tsv_field_problem(q.query_text):
            raise InputError(f"query {q.query_id!r}: its text {tsv_field_problem(q.query_text)}",
                             fix="remove it from the query text, or leave out --queries")
    with outputs(qrels, queries, types):                 # every file or none
        write_trec_qrels(ts.to_qrels(), qrels)
        if queries:
            _write_text(queries, "".join(f"{q.query_id}\t{q.query_text}\n" for q in ts.queries))
        if types:
            _write_text(types, "".join(f"{q.query_id}\t{q.query_type}\n" for q in ts.queries))
    _say(f"wrote {len(ts.queries)} queries of {ts.name} {ts.version}")


@testset_app.command("import")
@with_memory_limit
def import_cmd(qrels: str = typer.Option(..., "--qrels", help="qrels (grades 0-3)"),
               queries: str = typer.Option(..., "--queries", help="queries TSV or JSONL"),
               types: Optional[str] = typer.Option(None, "--types", help="qid<TAB>type TSV (default type: unspecified)"),
               name: str = typer.Option(..., "--name", help="test-set name"),
               version: str = typer.Option("1", "--version", help="test-set version"),
               output: Path = typer.Option(..., "--output", "-o", help="test-set YAML to write")) -> None:
    """Build a test set from qrels and queries (and query types); it is validated before it is written."""
    refuse_overwriting([qrels, queries, types], [output])
    ts = test_set_from_judgments(read_qrels(qrels).to_dict(), read_queries(queries),
                                 read_query_types(types) if types else None, name=name, version=version)
    _write_text(output, ts.to_yaml())
    _say(f"wrote {output}: {len(ts.queries)} queries")


def _html_page(html: Path | None, data: dict | None = None, ts=None, no_query_text: bool = False) -> str | None:
    """The HTML report of ``data`` when ``html`` names one (without ``data``: only whether it can be drawn)."""
    if html is None:
        return None
    require_plotly()
    if data is None:
        return None
    return render_page(testset_page(data, texts=None if no_query_text else ts.query_texts()), not no_query_text)


def _check_options(measures, gain: str, metrics_prefix: str, pushgateway: str | None) -> None:
    """The measure names and the gauges' options, checked before any file is read (a typo costs no evaluation)."""
    for m in measures or ():
        canonical_name(m, gain)
    check_prefix(metrics_prefix)
    if pushgateway:
        check_pushgateway(pushgateway)


def _load_system_config(path: str) -> dict:
    """A system description (YAML or JSON mapping) that identifies a retrieval function for the cache."""
    return load_yaml_mapping(path, what="system config", example="{fusion_method: rrf, rrf_k: 60}")


@testset_app.command("eval")
@with_debug_option
@with_memory_limit
def testset_eval_cmd(test_set: str = typer.Argument(..., help="test-set YAML (path or name)"),
                     run: Optional[str] = typer.Option(None, "--run", help="the run to evaluate (any run format)"),
                     function: Optional[str] = typer.Option(None, "--function",
                                                            help="a retrieval function instead of a run: module:function or file.py:function"),
                     batch: bool = typer.Option(False, "--batch", help="the function takes the list of all query texts"),
                     workers: int = typer.Option(1, "--workers", min=1, help="threads calling a per-query function"),
                     config: Optional[str] = typer.Option(None, "--config",
                                                          help="YAML/JSON describing the system: makes the result cacheable"),
                     no_cache: bool = typer.Option(False, "--no-cache", help="neither read nor write the cache"),
                     k: Optional[int] = typer.Option(None, "--k", min=1, help="docs kept per query (function; default 100)"),
                     measure: Optional[List[str]] = typer.Option(None, "--measure", "-m", autocompletion=measure_names,
                                                                 help="recall@10, ndcg_at_10 (exp gain), nDCG@10 (linear), mrr, ... "
                                                                      "(default: recall_at_5,10,20, ndcg_at_10, mrr)"),
                     gain: Gain = typer.Option(Gain.exp, "--gain", help="nDCG gain: exp (2^grade - 1) or linear (trec_eval)"),
                     holdout: Optional[float] = typer.Option(None, "--holdout", parser=number_in(0.01, 0.99), metavar="NUMBER",
                                                             help="also report a train/holdout split and their gap"),
                     seed: int = typer.Option(0, "--seed", help="seed of the --holdout split"),
                     out: Optional[Path] = typer.Option(None, "--out", "-o", help="results JSON (the input of `treckit gate`)"),
                     markdown: Optional[Path] = typer.Option(None, "--markdown", help="Markdown report"),
                     html: Optional[Path] = typer.Option(None, "--html", help="self-contained HTML report (needs "
                                                         "treckit's report extra)"),
                     no_query_text: bool = typer.Option(False, "--no-query-text",
                                                        help="leave the queries' texts out of the HTML report"),
                     prometheus_textfile: Optional[Path] = typer.Option(None, "--prometheus-textfile",
                                                                        help="write the quality gauges for node_exporter's textfile collector"),
                     pushgateway: Optional[str] = typer.Option(None, "--pushgateway", help="push the gauges to this Pushgateway URL"),
                     metrics_prefix: str = typer.Option("treckit", "--metrics-prefix", help="gauge name prefix"),
                     system_name: Optional[str] = typer.Option(None, "--system-name", help="the system label of the gauges"),
                     engine: str = typer.Option("local", "--engine", metavar="local|dask",
                                                help="dask: the run read and measured on a Dask cluster (needs "
                                                     "treckit's dask extra)"),
                     scheduler: Optional[str] = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                                             help="--engine dask: the scheduler; default: a local cluster"),
                     memory_limit: MemoryLimit = DEFAULT_MEMORY) -> None:
    """Evaluate a run, or a retrieval function, on a test set: mean, median and std per measure, per query
    type, and latency (function)."""
    refuse_overwriting([test_set, run, config], [out, markdown, prometheus_textfile, html])
    _html_page(html)                                     # the report extra, before any work
    _check_options(measure, gain.value, metrics_prefix, pushgateway)
    if choose(engine, scheduler).name != "local":         # checked before any file is read
        check_shared_paths([run], scheduler)
    ts = load_test_set(test_set)
    if (run is None) == (function is None):
        raise InputError("give either --run RUN or --function module:function", fix="pick one")
    if engine != "local" and run is None:
        raise InputError("--engine dask evaluates a run (--run); a retrieval function runs here", fix="leave out --engine dask")
    if run is not None:
        res = evaluate_run(run, ts, measure, gain=gain.value, engine=engine, scheduler=scheduler, warn=say,
                           memory_limit=memory_limit)
        if res.missing_queries:
            _say(f"the run has no line for {len(res.missing_queries)} of the {len(ts.queries)} queries (each scores 0): "
                 f"{listing(res.missing_queries)}")
    else:
        system = _load_system_config(config) if config else None
        res = evaluate(load_callable(function), ts, system, k, measure, gain=gain.value, batch=batch, workers=workers,
                       cache=not no_cache, warn=say, config_dir=Path(config).parent if config else None)
        if res.cached:
            _say("answered from the cache (same config, test set and measures); --no-cache to recompute")
    data = res.to_dict()
    if holdout is not None:
        data["split"] = holdout_gap(res, ts, holdout, seed)
    print(results_table(data), end="")
    report = results_markdown(data) if markdown else None           # everything rendered before the first write
    page = _html_page(html, data, ts, no_query_text)
    with outputs(out, markdown, prometheus_textfile, html):          # every output or none
        if out:
            write_json(data, out)
        if markdown:
            _write_text(markdown, report)
        if html:
            _write_text(html, page)
        if prometheus_textfile or pushgateway:      # pushed last: a file that cannot be written stops the push
            export([(system_name or run or function, "all", res.metrics)], test_set=ts.name, prefix=metrics_prefix,
                   textfile=prometheus_textfile, pushgateway=pushgateway)


@testset_app.command("split")
def split_cmd(test_set: str = typer.Argument(..., help="test-set YAML (path or name)"),
              holdout: float = typer.Option(0.2, "--holdout", parser=number_in(0.01, 0.99), metavar="NUMBER",
                                            help="share of each query type held out"),
              seed: int = typer.Option(0, "--seed"),
              out_dir: Optional[Path] = typer.Option(None, "--out-dir", "-o",
                                                     help="folder for NAME.train.yaml and NAME.holdout.yaml (default: the input's)"),
              train_out: Optional[Path] = typer.Option(None, "--train-out", help="the train part's file (default: in --out-dir)"),
              holdout_out: Optional[Path] = typer.Option(None, "--holdout-out", help="the holdout part's file (default: in --out-dir)")) -> None:
    """Deterministic split stratified by query type, stable under reordering of the file."""
    src = resolve_test_set(test_set)
    stem = src.name.rsplit(".", 1)[0]
    folder = out_dir if out_dir is not None else src.parent
    t_out = train_out or folder / f"{stem}.train.yaml"
    h_out = holdout_out or folder / f"{stem}.holdout.yaml"
    refuse_overwriting([test_set], [t_out, h_out])
    train, hold = split(load_test_set(src), holdout, seed)
    texts = train.to_yaml(), hold.to_yaml()
    with outputs(t_out, h_out):                          # both parts or neither
        _write_text(t_out, texts[0])
        _write_text(h_out, texts[1])
    _say(f"{len(train.queries)} queries to {t_out}, {len(hold.queries)} to {h_out}")


@testset_app.command("diff")
def diff_cmd(old: str = typer.Argument(..., help="older test set"), new: str = typer.Argument(..., help="newer test set"),
             as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Queries added, removed, relabelled and edited between two versions."""
    d = diff(load_test_set(old), load_test_set(new))
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
        return
    print(f"{d['from']['name']} {d['from']['version']} -> {d['to']['name']} {d['to']['version']}")
    print(f"added ({len(d['added'])}): {', '.join(d['added'])}")
    print(f"removed ({len(d['removed'])}): {', '.join(d['removed'])}")
    print(f"relabelled ({len(d['relabelled'])}):")
    for r in d["relabelled"]:
        print(f"  {r['query_id']}: +{r['added']} -{r['removed']} regraded {r['regraded']}")
    print(f"edited ({len(d['edited'])}): " + ", ".join(f"{e['query_id']} ({'/'.join(e['fields'])})" for e in d["edited"]))


def _labels(path: str, grades: bool = False):
    """An annotator's labels (qrels), each (query, doc) judged once (and, with ``grades``, every grade a test
    set's), refused naming the file and the lines."""
    labels = read_qrels(path)
    lines = judgment_line_finder(path)
    judged_once(labels, display_name(path), lines)
    if grades:
        check_label_grades(labels, display_name(path), lines)
    return labels


@testset_app.command("kappa")
@with_memory_limit
def kappa_cmd(a: str = typer.Argument(..., help="annotator A's labels (qrels)"),
              b: str = typer.Argument(..., help="annotator B's labels (qrels)"),
              weighted: Weighting = typer.Option(Weighting.none, "--weighted", help="none, linear or quadratic"),
              threshold: float = typer.Option(0.6, "--threshold", parser=number_in(-1.0, 1.0), metavar="NUMBER",
                                             help="pass when kappa > threshold")) -> None:
    """Cohen's kappa between two annotators on the pairs both judged; exit 1 when at or below the threshold."""
    ag = agreement(_labels(a), _labels(b), None if weighted is Weighting.none else weighted.value, threshold)
    print(json.dumps(ag.to_dict(), indent=2))
    if ag.kappa is None:
        _say(f"{ag.describe()}; no pass without a kappa")
    if not ag.passed:
        raise typer.Exit(1)


@testset_app.command("refresh")
@with_memory_limit
def refresh_cmd(current: str = typer.Argument(..., help="the current test set"),
                candidates: str = typer.Option(..., "--candidates", help="JSONL of new queries (query_id, query_text[, query_type])"),
                replace: int = typer.Option(20, "--replace", min=1, help="queries to replace"),
                labels_a: str = typer.Option(..., "--labels-a", help="annotator A's labels of the candidates (qrels)"),
                labels_b: str = typer.Option(..., "--labels-b", help="annotator B's labels (qrels)"),
                threshold: float = typer.Option(0.6, "--threshold", parser=number_in(-1.0, 1.0), metavar="NUMBER",
                                               help="minimum kappa (exclusive)"),
                seed: int = typer.Option(0, "--seed"),
                out: Path = typer.Option(..., "--out", "-o", help="the next version's YAML")) -> None:
    """Replace N queries with labelled production queries; refuses when the annotators disagree."""
    refuse_overwriting([current, candidates, labels_a, labels_b], [out])
    cands = read_query_records(candidates)
    nxt, report = refresh(load_test_set(current), cands, replace, _labels(labels_a, grades=True),
                          _labels(labels_b, grades=True), seed=seed, threshold=threshold, source=display_name(candidates))
    _write_text(out, nxt.to_yaml())
    print(json.dumps(report, indent=2))


# ------------------------------------------------------------------ rq, gate, cache, qrels verify
def rq_cmd(test_set: str = typer.Option(..., "--test-set", help="query set: test-set YAML (path or name); "
                                                                    "unlabelled queries are skipped"),
           run: Optional[str] = typer.Option(None, "--run", help="the run to score"),
           corpus: Optional[str] = typer.Option(None, "--corpus", help="corpus JSONL, for --baseline"),
           baseline: Optional[str] = typer.Option(None, "--baseline",
                                                  help="bow: the bag-of-words cosine baseline (ties in corpus order)"),
           k: int = typer.Option(5, "--k", min=1, help="cutoff (a query's topK overrides it)"),
           threshold: float = typer.Option(0.6, "--threshold", help="pass when MRR > threshold"),
           report_only: bool = typer.Option(False, "--report-only", help="exit 0 on FAIL too (default: FAIL exits 1)"),
           out: Optional[Path] = typer.Option(None, "--out", "-o", help="JSON report")) -> None:
    """The RQ acceptance metric: MRR@k over labelled queries, pass when above the threshold; exit 1 on
    FAIL (0 on PASS, and when no query is labelled: RQ is then null)."""
    refuse_overwriting([test_set, run, corpus], [out])
    check_threshold(threshold)
    check_k(k)
    ts = load_test_set(test_set, allow_unlabeled=True)
    if (run is None) == (baseline is None):
        raise InputError("give either --run RUN or --corpus DOCS.jsonl --baseline bow", fix="pick one")
    if baseline is not None:
        if baseline != "bow" or corpus is None:
            raise InputError(f"--baseline {baseline!r} needs --corpus and must be bow", fix="--corpus DOCS.jsonl --baseline bow")
        r, ranking = baseline_run(ts, read_corpus(corpus), k), BOW_RANKING
    else:
        r, ranking = read_run(run, warn=say, order_option=False), RUN_RANKING      # rq takes no reading options
    report = rq(ts, r, k=k, threshold=threshold, ranking=ranking, warn=say)
    verdict = {True: "PASS", False: "FAIL", None: "skipped (no labelled queries)"}[report["pass"]]
    value = "null" if report["value"] is None else f"{report['value']:.4f}"
    print(f"RQ (MRR@{k}) = {value} over {report['num_labeled']} labelled queries; threshold {threshold}: {verdict}")
    if report["recall_at_k"] is not None:
        print(f"Recall@{k} = {report['recall_at_k']:.4f}")
    print(f"ranking: {RANKINGS[ranking]}")
    if report["unlabeled"]:
        n = report["num_unlabeled"]
        print(f"skipped {n} unlabelled quer{'y' if n == 1 else 'ies'} (no doc with grade > 0): "
              f"{listing(report['unlabeled'])}")
    if out:
        write_json(report, out)
    if report["pass"] is False and not report_only:
        raise typer.Exit(1)


def gate_cmd(baseline: str = typer.Option(..., "--baseline", help="baseline results JSON (testset eval --out)"),
             current: str = typer.Option(..., "--current", help="current results JSON"),
             metric: Optional[List[str]] = typer.Option(None, "--metric", help="metrics to gate (default recall_at_10, ndcg_at_10)"),
             max_drop: str = typer.Option("5%", "--max-drop", help="allowed drop: relative (5%) or, with --absolute, points"),
             absolute: bool = typer.Option(False, "--absolute", help="the drop is in points, not relative"),
             markdown: Optional[Path] = typer.Option(None, "--markdown", "-o", help="Markdown report (e.g. for a PR comment)"),
             html: Optional[Path] = typer.Option(None, "--html", help="self-contained HTML report: both results, the "
                                                 "limits drawn, the queries that dropped (needs treckit's report extra)"),
             prometheus_textfile: Optional[Path] = typer.Option(None, "--prometheus-textfile",
                                                                help="write the current gauges for node_exporter's textfile collector"),
             pushgateway: Optional[str] = typer.Option(None, "--pushgateway", help="push the current gauges to this URL"),
             metrics_prefix: str = typer.Option("treckit", "--metrics-prefix", help="gauge name prefix")) -> None:
    """Fail (exit 1) when a metric dropped more than allowed against the baseline."""
    refuse_overwriting([baseline, current], [markdown, prometheus_textfile, html])
    if html:
        require_plotly()
    drop = parse_drop(max_drop)
    _check_options(metric, "exp", metrics_prefix, pushgateway)

    def load(p):
        return read_json(p, fix="pass the --out file of `treckit testset eval`")
    res = gate(load(baseline), load(current), metric, drop, absolute, sources=(display_name(baseline), display_name(current)))
    page = render_page(gate_page(res, (display_name(baseline), display_name(current)))) if html else None
    with outputs(markdown, prometheus_textfile, html):        # every output or none; pushed last
        if markdown:
            _write_text(markdown, res.markdown())
        if html:
            _write_text(html, page)
        if prometheus_textfile or pushgateway:
            cur = res.current
            export([(str(cur.get("system", {}).get("run") or "current"), "all",
                     {m: a["mean"] for m, a in cur["aggregates"].items()})], test_set=cur["test_set"]["name"],
                   prefix=metrics_prefix, textfile=prometheus_textfile, pushgateway=pushgateway)
    for c in res.checks:
        print(f"{c.metric:<16} baseline {c.baseline:.4f}  current {c.current:.4f}  limit {c.limit:.4f}  "
              f"{'pass' if c.passed else 'FAIL'}")
    if not res.passed:
        for f in res.failures():
            _say(f"gate failed: {f}")
        raise typer.Exit(1)
    _say("gate passed")


@cache_app.command("clear")
def cache_clear_cmd(cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="default: $TRECKIT_CACHE_DIR or ~/.cache/treckit")) -> None:
    """Remove every cached evaluation."""
    c = ResultCache(cache_dir)
    print(f"removed {c.clear()} cached evaluations from {c.path}")


def qrels_verify_cmd(qrels: str = typer.Argument(..., help="qrels to check"),
                     topics: str = typer.Option(..., "--topics", help="expected topics: queries TSV/JSONL, test set or qrels"),
                     no_extras: bool = typer.Option(False, "--no-extras", help="also fail on judged topics not expected")) -> None:
    """Check that every expected topic is judged (and, with --no-extras, no other); exit 1 with the list."""
    expected = read_topic_ids(topics)
    try:
        verify_qrels_topics(expected_topic_ids=expected, qrels=read_qrels(qrels), require_no_extras=no_extras)
    except QrelsVerificationError as exc:
        print(f"treckit: verification failed: {exc}", file=sys.stderr)
        raise typer.Exit(1)
    print(f"{qrels}: all {len(expected)} expected topics judged" + ("; no other topics" if no_extras else ""))


def register(app) -> None:
    app.add_typer(testset_app, name="testset")
    app.add_typer(cache_app, name="cache")
    app.command("rq")(with_memory_limit(rq_cmd))
    app.command("gate")(gate_cmd)
    app.command("qrels-verify")(with_memory_limit(qrels_verify_cmd))
