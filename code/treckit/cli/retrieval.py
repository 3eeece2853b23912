"""``treckit retrieve`` and ``treckit fuse``: baseline runs over a corpus, and fusion of runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..console.errors import InputError
from ..console.messages import say
from ..console.progress import Steps
from ..inputs.held import shared
from ..inputs.reading import read_qrels, read_run
from ..inputs.sources import display_name
from ..measures.registry import resolve
from ..output.files import atomic_output
from ..output.files import outputs
from ..output.trec import write_trec_run
from ..report.html import render as render_page, require_plotly
from ..report.results import system_page
from ..retrieval.bm25 import BM25Params
from ..retrieval.corpus import read_corpus
from ..retrieval.fusion import check_finite_scores, check_rrf_k, fuse, parse_weights, tune as tune_fusion
from ..retrieval.ranking import run_of, through_ties, trec_ranked
from ..retrieval.system import load_system, method_search
from ..testsets import load_test_set
from ..testsets.load import test_set_from_judgments
from ..testsets.systems import evaluate_system, stage_table
from ..testsets.measures import canonical_name
from ..testsets.topics import read_queries, read_query_types
from .common import FusionMethod, Method, Norm, refuse_overwriting, with_debug_option, with_memory_limit
from .completion import measure_names


def retrieve_cmd(corpus: str = typer.Option(..., "--corpus", help="corpus JSONL (_id/id/docid/title + text)"),
                 queries: str = typer.Option(..., "--queries", help="queries: TSV, JSONL (BEIR, QUEST) or a YAML test set"),
                 method: Method = typer.Option(Method.bm25, "--method", help="bm25 or bow (bag-of-words cosine)"),
                 k: int = typer.Option(100, "-k", "--k", min=1, help="docs per query"),
                 output: str = typer.Option(..., "--output", "-o", help="TREC run to write ('-' = stdout)"),
                 index: Optional[Path] = typer.Option(None, "--index", help="BM25 index directory: saved, then reused"),
                 k1: float = typer.Option(0.9, "--k1", help="BM25 k1 (a finite number >= 0)"),
                 b: float = typer.Option(0.4, "--b", help="BM25 b (from 0 to 1)"),
                 variant: str = typer.Option("lucene", "--variant", help="lucene | robertson | atire | bm25l | bm25+"),
                 stopwords: str = typer.Option("en", "--stopwords", help="en | none"),
                 stemmer: str = typer.Option("english", "--stemmer", help="a Snowball language, or none"),
                 run_name: Optional[str] = typer.Option(None, "--run-name", help="run tag (default: the method)")) -> None:
    """Retrieve with a baseline over a corpus and write a TREC run (trec_eval-safe ids)."""
    refuse_overwriting([corpus, queries], [output])
    # the parameters are checked before anything is read
    params = BM25Params(k1, b, variant, stopwords, stemmer) if method is Method.bm25 else None
    texts = read_queries(queries)
    with Steps([f"reading {corpus}", "indexing" if method is Method.bm25 else "building vectors",
                f"retrieving {len(texts)} queries", f"writing {output}"]) as steps:
        docs = read_corpus(corpus)
        steps.next()
        search = method_search(method.value, docs, params, index, progress=sys.stderr.isatty())
        steps.next()
        # the run holds the method's scores, the top k by trec_eval's rule: what a system's component ranks
        rankings = trec_ranked(dict(zip(texts, through_ties(search, list(texts.values()), k))), k)
        steps.next()
        write_trec_run(run_of(rankings, run_name or method.value), output)
        steps.next()


def fuse_cmd(runs: List[str] = typer.Argument(..., help="runs to fuse (any run format)"),
             method: FusionMethod = typer.Option(FusionMethod.rrf, "--method"),
             k: int = typer.Option(60, "--k", min=0, help="RRF's k"),
             weights: Optional[str] = typer.Option(None, "--weights", help="0.3,0.4,0.3 or name=0.3,... (names: run tags)"),
             norm: Optional[Norm] = typer.Option(None, "--norm", help="score normalisation (default: minmax; rrf: none)"),
             depth: int = typer.Option(1000, "--depth", min=1, help="docs kept per query"),
             output: str = typer.Option(..., "--output", "-o", help="fused TREC run ('-' = stdout)"),
             run_name: Optional[str] = typer.Option(None, "--run-name"),
             tune: Optional[str] = typer.Option(None, "--tune", help="training qrels: grid-search RRF k or the weights"),
             measure: str = typer.Option("ndcg_cut.10", "--measure", help="what --tune maximises")) -> None:
    """Fuse runs: RRF, weighted, CombSUM, CombMNZ or CombMAX, with trec_eval's tie order."""
    refuse_overwriting([*runs, tune], [output])
    check_rrf_k(k)                     # the options checked before any run is read
    parse_weights(weights, None)
    if tune:
        resolve([measure])
    with shared(len(runs)):                    # every run is held at once: each gets its share of the budget
        rs = [read_run(p, warn=say, order_option=False) for p in runs]       # fuse takes no reading options
    names = [r.tag for r in rs]
    if method is not FusionMethod.rrf:
        check_finite_scores(rs, method.value, [display_name(p) for p in runs])
    w = parse_weights(weights, names)
    kk = k
    if tune:
        report = tune_fusion(rs, read_qrels(tune), method.value, measure=measure, norm=norm.value if norm else None)
        print(json.dumps({k_: v for k_, v in report.items() if k_ != "tried"}, indent=2), file=sys.stderr)
        if method is FusionMethod.rrf:
            kk = report["best"]["k"]
        else:
            w = report["best"]["weights"]
    fused = fuse(rs, method.value, k=kk, weights=w, norm=norm.value if norm else None, depth=depth, tag=run_name)
    write_trec_run(fused, output)


system_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Systems described by YAML configs.")


@system_app.command("eval")
@with_debug_option
@with_memory_limit
def system_eval_cmd(config: str = typer.Argument(..., help="system config YAML (components, fusion, rerank)"),
                    test_set: Optional[str] = typer.Option(None, "--test-set", help="test-set YAML (path or name)"),
                    qrels: Optional[str] = typer.Option(None, "--qrels", help="qrels, with --queries, instead of a test set"),
                    queries: Optional[str] = typer.Option(None, "--queries", help="queries TSV/JSONL, with --qrels"),
                    query_types: Optional[str] = typer.Option(None, "--query-types", help="qid<TAB>type TSV, with --qrels"),
                    components: Optional[str] = typer.Option(None, "--components", help="only these components (a,b)"),
                    k: int = typer.Option(100, "-k", "--k", min=1, help="docs per query and stage"),
                    measure: Optional[List[str]] = typer.Option(None, "--measure", "-m", autocompletion=measure_names,
                                                                help="default recall_at_10, ndcg_at_10, mrr"),
                    no_cache: bool = typer.Option(False, "--no-cache"),
                    out: Optional[Path] = typer.Option(None, "--out", "-o", help="JSON: every stage's results"),
                    html: Optional[Path] = typer.Option(None, "--html", help="self-contained HTML report of every "
                                                        "stage, the first the baseline (needs treckit's report extra)"),
                    no_query_text: bool = typer.Option(False, "--no-query-text",
                                                       help="leave the queries' texts out of the HTML report")) -> None:
    """Evaluate every component of a system, its fusion and its rerank stage: quality and latency."""
    refuse_overwriting([config, test_set, qrels, queries, query_types], [out, html])
    if html:
        require_plotly()
    for m in measure or ():                # the measures, then the whole config, checked before anything else is read
        canonical_name(m)
    system = load_system(config)
    ts = _test_set(test_set, qrels, queries, query_types)
    only = [c.strip() for c in components.split(",") if c.strip()] if components else None
    results = evaluate_system(system, ts, k=k, measures=measure, only=only, cache=not no_cache)
    print(stage_table(results), end="")
    stages = {s: r.to_dict() for s, r in results.items()}
    page = render_page(system_page(stages, texts=None if no_query_text else ts.query_texts()),
                       not no_query_text) if html else None
    with outputs(out, html):                     # both or neither
        if out:
            with atomic_output(out) as fh:
                fh.write(json.dumps(stages, indent=2, ensure_ascii=False) + "\n")
        if html:
            with atomic_output(html) as fh:
                fh.write(page)


def _test_set(test_set, qrels, queries, query_types):
    if test_set is not None:
        if qrels or queries:
            raise InputError("give either --test-set or --qrels with --queries", fix="pick one")
        return load_test_set(test_set)
    if not (qrels and queries):
        raise InputError("name the queries and their judgments", fix="--test-set TS.yaml, or --qrels Q --queries Q.tsv")
    return test_set_from_judgments(read_qrels(qrels).to_dict(), read_queries(queries),
                                   read_query_types(query_types) if query_types else None, name=str(qrels))


def register(app) -> None:
    app.add_typer(system_app, name="system")
    app.command("retrieve")(with_memory_limit(retrieve_cmd))
    app.command("fuse")(with_memory_limit(fuse_cmd))
