"""The old A/B evaluation command, kept working over `treckit compare`.

    python code/evaluation/rq_eval.py --queries Q.tsv --truth qrels.tsv --configA A.yaml --configB B.yaml \\
        --k 10 --out out.json --csv out.csv [--corpus corpus.jsonl] [--emit-traces] [--latency-out latency.json]

queries: ``qid<TAB>text``; truth: ``qid<TAB>doc_id<TAB>rel`` (no headers). The measures are this tool's own:
``recall`` (recall@k), ``mrr`` (reciprocal rank within the top k) and ``ndcg`` (nDCG@k with gain 2^rel - 1),
with tied scores broken by doc id ascending, as the tool defined them.  The queries file is the query set:
each query counts in the macro means, one without truth (no rel > 0) scoring 0 on every measure; truth for
queries not in it is left out (said on stderr).  A config that retrieves nothing (an empty run, or a
system finding no document) scores 0.0, not an error.

A config names a run (``run: path``) or describes a retrieval system (``components``, as ``treckit compare
--config`` takes it), run on the queries.  The outputs hold no wall-clock time: the same inputs give the same
bytes.  A system's latency (p50, p95, mean, spread, and B - A as the mean and the median of the per-query
differences) goes to ``--latency-out`` when given, and nowhere else.

The A/B decision is seed 004's: the paired t-test on ``ndcg`` (nDCG@k, gain 2^rel - 1), significant when its raw
p < 0.05; the p adjusted by Holm over the three measures is printed beside it (``ab_test`` in the JSON: measure,
test, mean_difference, statistic, p_value, p_adjusted, significant); the t-test of every measure decides the same
way (``tests``).

Its JSON keeps the two-system shape its users' tooling reads: ``schema_version`` 1 (an integer),
``systems.{A,B}.{config_path, config_digest,
metrics.macro.{recall,mrr,ndcg}}``, ``delta.macro.{recall,mrr,ndcg}`` (B - A), per-query rows
``{"qid", "A": {recall, mrr, ndcg, hits}, "B": {...}, "delta": {recall, mrr, ndcg}}``; the CSV header is
``qid,system,recall,mrr,ndcg,hits``.

--emit-traces: for each config whose gate holds -- ``perf.enabled`` and ``perf.metrics.report_memory`` and
(``t2.quality.shadow`` or ``t2.quality.enabled``), each the YAML boolean true, in a run config or a system
config alike -- a JSONL file beside --out
(``<out stem>.traces.A.jsonl``) with one line per query: the top k doc ids in ranking order and their scores
as given, recall, mrr, ndcg and hits.  The JSON's ``traces`` says for A and B whether a trace was written,
where, and why (or why not).  Configs are only read, never written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from treckit.stages import MemoryLimit, add_memory_limit_argument, positive_int, run_script

SYSTEMS = ("A", "B")
SCHEMA_VERSION = 1
GATE = "perf.enabled && perf.metrics.report_memory && (t2.quality.shadow || t2.quality.enabled)"


def _setting(settings: dict, dotted: str):
    node = settings
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return "missing"
        node = node[key]
    return node


def trace_gate(settings: dict) -> tuple[bool, str]:
    """Whether a config asks for traces (its gate holds) and the reason, naming the settings."""
    def state(key: str) -> str:
        v = _setting(settings, key)
        return "missing" if v == "missing" else ("true" if v is True else f"{v!r}, not true")
    for key in ("perf.enabled", "perf.metrics.report_memory"):
        if _setting(settings, key) is not True:
            return False, f"gate closed: {key} is {state(key)} (gate: {GATE})"
    quality = [k for k in ("t2.quality.shadow", "t2.quality.enabled") if _setting(settings, k) is True]
    if not quality:
        return False, (f"gate closed: neither t2.quality.shadow ({state('t2.quality.shadow')}) nor "
                       f"t2.quality.enabled ({state('t2.quality.enabled')}) is true (gate: {GATE})")
    return True, f"gate holds: perf.enabled, perf.metrics.report_memory and {quality[0]} are true"


def top_k(run, k: int) -> dict[str, tuple[list[str], list[float]]]:
    """Each query's top k doc ids and their scores as given, ranked by score descending, ties by doc id
    ascending (the tool's order)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = run.table
    codes = pc.dictionary_encode(t.column("qid")).combine_chunks()
    order = pc.sort_indices(pa.table({"c": codes.indices, "s": t.column("score"), "d": t.column("docid")}),
                            sort_keys=[("c", "ascending"), ("s", "descending"), ("d", "ascending")]).to_numpy()
    c = codes.indices.to_numpy()[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    pos = np.arange(c.size) - np.repeat(starts, np.diff(np.r_[starts, c.size]))
    keep = order[pos < k]
    out: dict[str, tuple[list[str], list[float]]] = {}
    for q, d, s in zip(*(t.column(n).take(keep).to_pylist() for n in ("qid", "docid", "score"))):
        ids, scores = out.setdefault(q, ([], []))
        ids.append(d)
        scores.append(s)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--configA", required=True)
    ap.add_argument("--configB", required=True)
    ap.add_argument("--k", type=positive_int, default=10)
    ap.add_argument("--out", "-o", required=True)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--emit-traces", action="store_true",
                    help=f"per-query traces beside --out for each config whose gate holds ({GATE})")
    add_memory_limit_argument(ap)
    ap.add_argument("--latency-out", default=None, metavar="FILE",
                    help="JSON file for the latency of configs that describe systems (kept out of --out, which "
                         "holds no wall-clock time)")
    a = ap.parse_args(argv)
    from treckit.compare import report
    from treckit.compare.compare import CompareOptions
    from treckit.compare.config import load_config
    from treckit.ranking.convert import convert_run
    from treckit.output.files import atomic_output, outputs, refuse_overwriting_inputs
    from treckit.stages import compare_stage
    from treckit.console.messages import say

    k = a.k
    out = Path(a.out)

    def body():
        with MemoryLimit.option(a.memory_limit).governing(own_process=True):
            compared()

    def compared():
        inputs = [a.truth, a.configA, a.configB, a.corpus, a.queries]
        refuse_overwriting_inputs(inputs, [out, a.csv, a.latency_out, out.with_name(f"{out.stem}.traces.A.jsonl"),
                                           out.with_name(f"{out.stem}.traces.B.jsonl")])
        gates = {}
        for name, cfg in zip(SYSTEMS, (a.configA, a.configB)):
            if a.emit_traces:
                gates[name] = trace_gate(load_config(cfg).settings)
            else:
                gates[name] = (False, "--emit-traces was not given")
        ranked: dict[str, dict] = {}
        turn = iter(SYSTEMS)

        def docid_ascending(run):
            name = next(turn)
            if gates[name][0]:
                ranked[name] = top_k(run, k)          # the scores as given, before ties are rewritten
            if run.table.num_rows == 0:               # retrieved nothing: nothing to order, every query scores 0
                return run
            return convert_run(run, order="desc", ties="docid-asc")[0]

        comp = compare_stage(a.truth, [], [f"R@{k}", f"RR@{k}", f"nDCG(dcg='exp-log2')@{k}"], names=list(SYSTEMS),
                             configs=[a.configA, a.configB], options=CompareOptions(k=k, correction="none"),
                             corpus=a.corpus,
                             queries=a.queries, prepare=docid_ascending, digests=True, queries_are_the_set=True,
                             empty_run_retrieves_nothing=True, ranking="lex-id", order_option=False)   # no --order here
        comp.rename({f"R@{k}": "recall", f"RR@{k}": "mrr", f"nDCG(dcg='exp-log2')@{k}": "ndcg"})
        comp.ab_measure = "ndcg"                      # seed 004's A/B: the paired t-test on nDCG@k decides
        latency = _latency(comp)                      # wall-clock: its own file, never the outputs below
        record = report.to_record(comp)
        record["schema_version"] = SCHEMA_VERSION     # this tool's own, not compare's
        # the two-system shape: B - A, flat
        record["delta"] = {key: value["B"] for key, value in record["delta"].items()}
        ab = record["ab_test"]
        record["ab_test"] = {key: value for key, value in ab.items() if key != "systems"} | ab["systems"]["B"]
        for row in record["per_query"]:
            row["delta"] = row["delta"]["B"]
        files = []
        traces = {}
        for name in SYSTEMS:
            holds, reason = gates[name]
            path = out.with_name(f"{out.stem}.traces.{name}.jsonl") if holds else None
            traces[name] = {"requested": a.emit_traces, "written": holds, "path": str(path) if path else None,
                            "reason": reason}
            if holds:
                files.append((path, _trace_lines(comp, name, ranked[name])))
        per_query = record.pop("per_query")
        record["traces"] = traces
        record["per_query"] = per_query
        files.insert(0, (out, report.record_text(record)))
        if a.csv:
            files.insert(1, (a.csv, report.csv_text(comp)))
        if a.latency_out:
            files.append((a.latency_out, report.record_text(latency)))
        with outputs(*(p for p, _ in files), inputs=inputs):     # all written, or none
            for path, text in files:                  # everything rendered before the first write
                with atomic_output(path) as fh:
                    fh.write(text)
        sys.stdout.write(report.table(comp))
        say("wrote " + ", ".join(str(p) for p, _ in files))
    return run_script(__file__, body)


def _latency(comp) -> dict:
    """The systems' latency (configs that describe systems; None for a run), taken off the comparison so that no
    other output holds it: each system's summary, and B - A as the mean and the median of the per-query
    differences (ms)."""
    from treckit.compare.report import latency_deltas, latency_median_deltas

    deltas, medians = latency_deltas(comp), latency_median_deltas(comp)
    out = {"schema_version": SCHEMA_VERSION, "unit": "ms",
           "systems": {s.name: s.latency_ms for s in comp.systems},
           "delta": {"mean": deltas.get("B"), "median": medians.get("B")}}
    for s in comp.systems:
        s.latency_ms = s.latency_per_query = None
    return out


def _trace_lines(comp, name: str, ranked: dict) -> str:
    import json
    lines = []
    for i, q in enumerate(comp.qids):
        ids, scores = ranked.get(q, ([], []))
        row = {"qid": q, "system": name, "ranked_ids": ids, "scores": scores,
               **{m: float(comp.values[name][i, j]) for j, m in enumerate(comp.measures)}, "hits": comp.hits[name][i]}
        lines.append(json.dumps(row, ensure_ascii=False, allow_nan=False))
    return "\n".join(lines) + ("\n" if lines else "")


if __name__ == "__main__":
    from treckit.console.process import exit_now
    exit_now(main())
