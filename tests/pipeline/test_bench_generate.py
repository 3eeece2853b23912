"""bench/generate.py: the large (blocked, interleaved) and many-runs modes are seeded and well formed at tiny
sizes, and the classic mode still writes the bytes the published 7M-line figures were measured on."""
from __future__ import annotations

import hashlib
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from bench import generate as gen

QUERIES, DOCS, BLOCK, SWEEPS = 23, 12, 5, 4   # 5 blocks, the last one short; sweeps of 3 ranks


def _run_rows(path: Path) -> list[list[str]]:
    rows = [line.split(" ") for line in path.read_text("ascii").splitlines()]
    assert all(len(r) == 6 for r in rows)
    return rows


def _qrels_rows(path: Path) -> list[list[str]]:
    rows = [line.split(" ") for line in path.read_text("ascii").splitlines()]
    assert all(len(r) == 4 and r[1] == "0" for r in rows)
    return rows


def _check_rankings(rows: list[list[str]], run_name: str) -> dict[str, list[list[str]]]:
    """Every query 1..QUERIES has DOCS lines, ranks 1..DOCS, scores with two decimals in 0-20 not
    increasing with rank, distinct D<digits> doc ids."""
    by_q = defaultdict(list)
    for r in rows:
        by_q[r[0]].append(r)
    assert sorted(by_q, key=int) == [str(q) for q in range(1, QUERIES + 1)]
    for q, lines in by_q.items():
        lines.sort(key=lambda r: int(r[3]))
        assert [int(r[3]) for r in lines] == list(range(1, DOCS + 1))
        assert all(r[1] == "Q0" and r[5] == run_name for r in lines)
        scores = [r[4] for r in lines]
        assert all(len(s.split(".")[1]) == 2 and 0 <= float(s) <= 20 for s in scores)
        assert [float(s) for s in scores] == sorted((float(s) for s in scores), reverse=True)
        docs = [r[2] for r in lines]
        assert len(set(docs)) == DOCS and all(d[0] == "D" and d[1:].isdigit() for d in docs)
    return by_q


def _check_judgments(rows: list[list[str]]) -> dict[str, dict[str, int]]:
    """Per query 1-4 docs graded 1-3 first, then 0-5 graded 0, no doc twice."""
    by_q: dict[str, dict[str, int]] = defaultdict(dict)
    for q, _, doc, grade in rows:
        assert doc not in by_q[q]
        by_q[q][doc] = int(grade)
    assert sorted(by_q, key=int) == [str(q) for q in range(1, QUERIES + 1)]
    for judged in by_q.values():
        grades = list(judged.values())
        n_rel = sum(g > 0 for g in grades)
        assert 1 <= n_rel <= 4 and all(1 <= g <= 3 for g in grades[:n_rel])
        assert grades[n_rel:] == [0] * (len(grades) - n_rel) and len(grades) - n_rel <= 5
    return by_q


def test_large_mode_is_seeded_and_well_formed(tmp_path):
    a = gen.generate_large(tmp_path / "a", QUERIES, DOCS, seed=13, interleave=SWEEPS, block_queries=BLOCK)
    b = gen.generate_large(tmp_path / "b", QUERIES, DOCS, seed=13, interleave=SWEEPS, block_queries=BLOCK)
    c = gen.generate_large(tmp_path / "c", QUERIES, DOCS, seed=14, block_queries=BLOCK)
    assert sorted(a) == ["interleaved", "qrels", "run"] and sorted(c) == ["qrels", "run"]
    for k in a:
        assert a[k].read_bytes() == b[k].read_bytes()
    assert a["run"].read_bytes() != c["run"].read_bytes()
    assert not list((tmp_path / "a").glob("*.part"))

    rows = _run_rows(a["run"])
    # grouped by query in order, best first (the classic mode's layout)
    assert [r[0] for r in rows] == [str(q) for q in range(1, QUERIES + 1) for _ in range(DOCS)]
    assert [int(r[3]) for r in rows] == list(range(1, DOCS + 1)) * QUERIES
    ranked = _check_rankings(rows, "bench")
    for lines in ranked.values():        # a doc's number ends in its column: unique inside the query
        assert [int(r[2][1:]) % DOCS for r in lines] == list(range(DOCS))
    judged = _check_judgments(_qrels_rows(a["qrels"]))
    for q, docs in judged.items():
        retrieved = {r[2] for r in ranked[q]}
        for doc in docs:                  # judged docs are retrieved ones or X<query index>_<position past the run>
            if doc not in retrieved:
                prefix, pos = doc.split("_")
                assert prefix == f"X{int(q) - 1}" and DOCS <= int(pos) < 2 * DOCS
    assert 0 < sum(d.startswith("D") for docs in judged.values() for d in docs) < sum(map(len, judged.values()))

    # interleaved: the very same lines, in SWEEPS sweeps over all queries, sweep j holding ranks 3j+1..3j+3
    inter = a["interleaved"].read_text("ascii").splitlines()
    assert Counter(inter) == Counter(a["run"].read_text("ascii").splitlines())
    per_sweep = QUERIES * DOCS // SWEEPS
    for j in range(SWEEPS):
        sweep = [line.split(" ") for line in inter[j * per_sweep:(j + 1) * per_sweep]]
        assert [r[0] for r in sweep] == [str(q) for q in range(1, QUERIES + 1) for _ in range(DOCS // SWEEPS)]
        assert {int(r[3]) for r in sweep} == set(range(3 * j + 1, 3 * j + 4))


def test_many_mode_is_seeded_and_well_formed(tmp_path):
    a = gen.generate_many(tmp_path / "a", 3, QUERIES, DOCS, seed=13, block_queries=BLOCK)
    b = gen.generate_many(tmp_path / "b", 3, QUERIES, DOCS, seed=13, block_queries=BLOCK)
    assert sorted(a) == ["qrels", "run_000", "run_001", "run_002"]
    assert a["run_002"].name == "run_002.trec"
    for k in a:
        assert a[k].read_bytes() == b[k].read_bytes()
    judged = _check_judgments(_qrels_rows(a["qrels"]))
    assert all(d.startswith("D") for docs in judged.values() for d in docs)
    runs = [_check_rankings(_run_rows(a[f"run_{i:03d}"]), f"r{i:03d}") for i in range(3)]
    assert a["run_000"].read_bytes() != a["run_001"].read_bytes()
    for q in judged:
        # each run retrieves DOCS of one pool of 2 x DOCS ids per query: two runs share some docs, not all
        sets = [{r[2] for r in run[q]} for run in runs]
        pool = set().union(*sets)
        assert DOCS < len(pool) <= 2 * DOCS
        assert len({int(d[1:]) % (2 * DOCS) for d in pool}) == len(pool)     # a pool position is one doc
    hits = [sum(d in {r[2] for r in run[q]} for q, docs in judged.items() for d in docs) for run in runs]
    total = sum(map(len, judged.values()))
    assert all(0 < h < total for h in hits) and len(set(hits)) > 1


def test_trec_eval_reads_both_layouts_alike(tmp_path, trec_eval):
    """trec_eval 10.0 counts what the generator says it wrote, and scores the interleaved copy as the
    grouped run (it sorts every query's lines itself)."""
    p = gen.generate_large(tmp_path, QUERIES, DOCS, seed=5, interleave=SWEEPS, block_queries=BLOCK)
    out = {k: subprocess.run([str(trec_eval), "-q", "-m", "all_trec", str(p["qrels"]), str(p[k])],
                             capture_output=True, check=True).stdout for k in ("run", "interleaved")}
    assert out["run"] == out["interleaved"]
    summary = {line.split()[0]: line.split()[2] for line in out["run"].decode().splitlines()
               if line.split()[1] == "all"}
    qrels = _qrels_rows(p["qrels"])
    assert summary["num_q"] == str(QUERIES) and summary["num_ret"] == str(QUERIES * DOCS)
    assert summary["num_rel"] == str(sum(int(g) > 0 for *_, g in qrels))
    assert summary["num_rel_ret"] == str(sum(int(g) > 0 and d.startswith("D") for _, _, d, g in qrels))


# The classic mode's bytes at a small size, as written by the generator the 7M-line figures in
# bench/README.md were measured with: the new modes must not move them.
CLASSIC_SHA256 = {
    "bench": {"run": "23916fb9e191f69220ee2fb6f308ac3b001d0db75b979dff2e220de3070b1aa4",
              "qrels": "0554c6a4b4cfd0f619f27a67eb343bf05adcd31bc935a9cee759028e98743acd",
              "jsonl": "7e6474f977a0e215fc0f3afa1583629327934fe159ae5ed7e84f1802e209b02f"},
    "short-ids": {"run": "a7df2abfc0738245efbb3cdf17f82f79727842edffb507d76a045c8c190117a2",
                  "qrels": "aac4c8ff5ee03127e0f88324cdc1539e59e45cc8dd017b02c608735412bf1cc2",
                  "jsonl": "02963ebc9e85df11c54319457612285cce767854cc0004910b85d3abe4153443"},
}


@pytest.mark.parametrize("shape", sorted(CLASSIC_SHA256))
def test_classic_mode_unchanged(tmp_path, shape):
    paths = gen.generate(tmp_path, 6, 10, shape=shape)
    assert {k: hashlib.sha256(v.read_bytes()).hexdigest() for k, v in paths.items()} == CLASSIC_SHA256[shape]


def test_the_test_set_bench_writes_what_treckit_writes():
    """bench/testset_bench.py's test set is seeded and written in the style `TestSet.to_yaml` writes (so the
    figures are those of treckit's own files); its run names each query and ranks by score."""
    from bench import testset_bench as tsb
    from treckit.testsets import parse_test_set

    text = "".join(tsb.test_set_yaml(300))
    assert text == "".join(tsb.test_set_yaml(300))
    ts = parse_test_set(text, "bench.yaml")
    assert len(ts.queries) == 300 and ts.to_yaml() == text
    assert sum(q.topK is not None for q in ts.queries) == 30
    run = [line.split() for line in "".join(tsb.run_lines(300, 20)).splitlines()]
    assert {r[0] for r in run} == set(ts.query_ids)
    by_query = defaultdict(list)
    for qid, _, doc, rank, score, _ in run:
        by_query[qid].append((int(rank), float(score), doc))
    assert all([r for r, _, _ in rows] == list(range(1, len(rows) + 1)) and
               [s for _, s, _ in rows] == sorted((s for _, s, _ in rows), reverse=True) for rows in by_query.values())
