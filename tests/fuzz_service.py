"""``make fuzz-service``: the evaluation service under schemathesis, from its own OpenAPI schema: requests that
follow the schema and requests that break it, seeded, against a real `treckit serve`; any 5xx answer fails.

    python tests/fuzz_service.py [--cases 1000] [--seed 20]

Three quarters of the cases are schemathesis', shared between the operations that take input (POST
/v1/evaluate, POST /v1/rq), half following the schema and half breaking it (the GET routes are called once
each); most of those stop at validation, so the last quarter sends the sample test set, which is valid, with a
generated run (TREC text or a dict: any text, ids, NaN, infinities, booleans, lone surrogates), order, other
reading options (ties, duplicates, skip_malformed, layout) and measures, to reach the reading and the evaluation.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def runs():
    """Requests of a valid test set (the sample's) and a generated run, order and measures."""
    from hypothesis import strategies as st

    from service_server import sample_test_set
    ts = sample_test_set()
    qids = [q["query_id"] for q in ts["queries"]]
    docs = sorted({d["doc_id"] for q in ts["queries"] for d in q["relevant_docs"]})
    any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)

    def mostly(valid, odd):                  # valid 3 times in 4: the evaluation is reached, and the checks
        return st.integers(0, 3).flatmap(lambda i: odd if i == 0 else valid)
    number = st.one_of(st.floats(-1e6, 1e6), st.integers(-1000, 1000))
    odd_number = st.one_of(st.sampled_from([float("nan"), float("inf"), float("-inf"), 10**400, -0.0, 5e-324]),
                           st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**400, 10**400))
    odd_score = st.one_of(odd_number, st.booleans(), st.none(), any_text, st.lists(number, max_size=2))
    qid, doc = st.sampled_from(qids), st.sampled_from(docs)

    def lines(q, d, rank, score, tag):
        return st.tuples(q, st.just("Q0"), d, rank, score, tag).map(lambda f: " ".join(map(str, f)))
    valid_line = lines(qid, doc, st.integers(1, 2000), number, st.just("t"))
    odd_line = st.one_of(lines(any_text, doc, st.integers(1, 9), number, st.just("t")),
                         lines(qid, any_text, st.integers(1, 9), number, st.just("t")),
                         lines(qid, doc, st.one_of(st.integers(-5, 0), any_text), number, st.just("t")),
                         lines(qid, doc, st.integers(1, 9), st.one_of(odd_number, st.sampled_from(
                             ["nan", "inf", "1e400", "0x10", "", "1,5"]), any_text), st.just("t")),
                         lines(qid, doc, st.integers(1, 9), number, any_text), any_text)

    def text_run(odd: bool):
        body = st.lists(valid_line, min_size=1, max_size=40)
        if odd:                              # one hostile line among valid ones, anywhere, or another line ending
            body = st.tuples(body, odd_line, st.integers(0, 40)).map(lambda t: t[0][:t[2]] + [t[1]] + t[0][t[2]:])
        end = st.sampled_from(["\r\n", "\t", " \n", "\n\n", ""]) if odd else st.just("\n")
        return st.tuples(body, end).map(lambda t: t[1].join(t[0]) + t[1])
    valid_dict = st.dictionaries(qid, st.dictionaries(doc, number, min_size=1, max_size=20), min_size=1, max_size=20)
    odd_entry = st.one_of(st.tuples(qid, doc, odd_score), st.tuples(any_text, doc, number), st.tuples(qid, any_text, number))

    def with_entry(run, entry):
        q, d, v = entry
        return {**run, q: {**run.get(q, {}), d: v}}
    odd_dict = st.one_of(st.tuples(valid_dict, odd_entry).map(lambda t: with_entry(*t)),
                         st.sampled_from([{}, {"q01": {}}]))
    run = st.one_of(text_run(False), valid_dict, text_run(True), odd_dict)      # one run in two has one hostile part
    measure = mostly(st.sampled_from(["recall@10", "ndcg_at_10", "nDCG@10", "mrr", "map", "P@5", "ndcg_cut_3", "mrr@1",
                                      "recall@2147483647"]),
                     st.sampled_from(["ndcg@0", "ndcg@99999999999999999999", "recall@1" + "0" * 5000, "bogus", "",
                                      "P@-1", "ndcg@1.5", "\ud800", "ndcg@10", "NDCG@10"]))
    run_file = st.sampled_from(["bow.trec", "negated.trec", "loop.trec", "escape.trec", "../secret.txt", "/etc/passwd",
                                "bow.trec\x00", "x" * 5000, "runs/../bow.trec", ".", ""])
    given = st.one_of(run.map(lambda r: {"run": r}), run.map(lambda r: {"run": r}), run_file.map(lambda f: {"run_file": f}),
                      st.tuples(run, run_file).map(lambda t: {"run": t[0], "run_file": t[1]}))
    return st.tuples(given, st.fixed_dictionaries({"test_set": st.just(ts)}, optional={
        "order": mostly(st.sampled_from(["auto", "desc", "asc", "given"]), st.just("upwards")),
        "ties": mostly(st.sampled_from(["keep", "break", "docid-asc"]), st.just("random")),
        "duplicates": mostly(st.sampled_from(["error", "keep-first", "keep-max", "keep-last"]), st.just("keep-all")),
        "skip_malformed": mostly(st.booleans(), st.sampled_from(["true", 1, None])),
        "layout": mostly(st.sampled_from(["auto", "docid-spaces", "extra-columns"]), st.just("tabs")),
        "measures": st.lists(measure, min_size=1, max_size=4), "system": any_text})).map(lambda t: {**t[1], **t[0]})


def fuzz(url: str, cases: int, seed: int, headers: dict | None = None) -> tuple[dict[int, int], list[tuple]]:
    """({status: requests answered with it}, [(operation, mode, status, the answer's start)] of every 5xx) for
    about ``cases`` requests."""
    import json

    import httpx
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_url(url + "/openapi.json", headers=headers or {})
    operations = [op.ok() for op in schema.get_all_operations()]
    with_input = [op for op in operations if op.method.upper() == "POST"]
    each = max(1, (cases - cases // 4) // (2 * max(1, len(with_input))))
    statuses: dict[int, int] = {}
    failures = []

    @seeded(seed)
    @settings(max_examples=max(1, cases // 4), deadline=None, database=None, suppress_health_check=list(HealthCheck),
              print_blob=False)
    @given(body=runs(), path=st.sampled_from(["/v1/evaluate", "/v1/rq"]))
    def with_a_run(body, path):
        if path == "/v1/rq":
            body = {k: v for k, v in body.items() if k != "measures"}
        response = httpx.post(url + path, content=json.dumps(body).encode(), timeout=60,
                              headers={"content-type": "application/json", **(headers or {})})
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        if response.status_code >= 500:
            failures.append((f"POST {path}", "a generated run", response.status_code, response.text[:300]))
    with_a_run()
    for operation in operations:
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if operation in with_input else (GenerationMode.POSITIVE,)
        for mode in modes:
            @seeded(seed)
            @settings(max_examples=each if operation in with_input else 1, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), derandomize=False, print_blob=False)
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case):
                response = case.call(base_url=url, headers=headers or {}, timeout=60)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code >= 500:
                    failures.append((operation.label, mode.value, response.status_code, response.text[:300]))
            check()
    return statuses, failures


def main(argv=None) -> int:
    from service_server import Server
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            t0 = time.monotonic()
            statuses, failures = fuzz(server.url, a.cases, a.seed)
        finally:
            server.stop()
        sent = sum(statuses.values())
        print(f"fuzz-service: {sent} requests (seed {a.seed}) in {time.monotonic() - t0:.0f} s, "
              f"{len(failures)} answered 5xx; by status: {dict(sorted(statuses.items()))}")
        for f in failures[:20]:
            print("  ", *f)
        if sent < a.cases:
            print(f"fuzz-service: only {sent} of the {a.cases} cases asked for were generated", file=sys.stderr)
            return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
