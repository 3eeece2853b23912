"""Sanity warnings when evaluating: inputs that evaluate without error yet are most
likely not what was meant.  Each warning has a case that raises it and ordinary inputs that must not."""
from __future__ import annotations

import numpy as np
import pytest

from treckit import thresholds
from treckit.engines.memory import EvalOptions, evaluate_requests
from treckit.ranking import judged as ranking
from treckit.ranking.judged import build_view
from treckit.measures.registry import resolve
from treckit.model import Qrels, Run

from helpers import run_cli


def warnings_for(qrels: dict, run: Run | dict, **options) -> list[str]:
    said: list[str] = []
    r = run if isinstance(run, Run) else Run.from_dict(run)
    build_view(Qrels.from_dict(qrels), r, EvalOptions(**options), source="r.run", warn=said.append)
    return said


QRELS = {str(q): {f"d{q}_{i}": i % 3 for i in range(0, 12, 2)} for q in range(1, 6)}
RUN = {str(q): {f"d{q}_{i}": round(10 - i * 0.37, 2) for i in range(15)} for q in range(1, 6)}


def test_ordinary_inputs_raise_no_warning():
    assert warnings_for(QRELS, RUN) == []
    # a run scored with grades (an LLM judge, say): integers, but not the qrels
    graded = {q: {d: float(int(s) % 4) for d, s in docs.items()} for q, docs in RUN.items()}
    assert warnings_for(QRELS, graded) == []
    # a run ranking only judged docs, scored with integers that are not the grades
    judged_only = {q: {d: float(g + 1) for d, g in docs.items()} for q, docs in QRELS.items()}
    assert warnings_for(QRELS, judged_only) == []


def test_run_retrieving_no_judged_doc():
    other_ids = {q: {d.upper(): s for d, s in docs.items()} for q, docs in RUN.items()}
    said = warnings_for(QRELS, other_ids)
    assert len(said) == 1
    assert "retrieves none of the judged documents of the 5 queries" in said[0]
    assert "the run lists 'D1_0', the qrels judge 'd1_0'" in said[0]
    # one judged doc retrieved anywhere is enough to say nothing
    other_ids["3"]["d3_4"] = 0.5
    assert warnings_for(QRELS, other_ids) == []
    # a judgment with a negative grade (pooled, not judged) does not count as judged
    assert len(warnings_for({"1": {"x": -1, "y": 1}}, {"1": {"x": 1.5, "z": 0.5}})) == 1


@pytest.mark.parametrize("in_qrels, in_run", [("{}", "000{}"), ("000{}", "{}"), ("Q{}", "q{}"), ("q0{}", "Q{}"),
                                              ("{}", " {}")])
def test_qid_spellings_that_differ(in_qrels, in_run):
    qrels = {in_qrels.format(q): docs for q, docs in QRELS.items()}
    run = Run.from_dict({in_run.format(q): docs for q, docs in RUN.items()})
    said = warnings_for(qrels, run)
    w = [w for w in said if "spelled differently" in w]
    assert len(w) == 1
    assert "5 run queries match judged queries only when case, spaces and leading zeros are ignored" in w[0]
    assert f"{in_run.format(1)!r} ~ {in_qrels.format(1)!r}" in w[0] and "0 match as written" in w[0]
    assert not [w for w in warnings_for(qrels, {in_qrels.format(q): d for q, d in RUN.items()}) if "spelled" in w]


def test_qid_spelling_not_flagged_when_most_queries_match():
    qrels = dict(QRELS)
    qrels["0006"] = {"d6_0": 1}               # one odd spelling among five exact matches
    run = dict(RUN, **{"6": {"d6_0": 1.0}})
    assert not [w for w in warnings_for(qrels, run) if "spelled differently" in w]
    # and with mostly respelled ones it is
    qrels = {("000" + q if q != "1" else q): docs for q, docs in QRELS.items()}
    assert [w for w in warnings_for(qrels, RUN) if "spelled differently" in w]


def test_qrels_passed_as_the_run():
    """The qrels (or a copy) read as a run: every line a judgment, scored with its grade."""
    as_run = {q: {d: float(g) for d, g in docs.items()} for q, docs in QRELS.items()}
    said = warnings_for(QRELS, as_run)
    assert said == ["r.run: the run looks like a qrels file (every line is one of the judgments, scored with "
                    "its grade): pass the system's run as RUN"]
    # negative grades read as negative scores too
    q = {"1": {"a": 1, "b": -1, "c": 0}}
    assert warnings_for(q, {"1": {"a": 1.0, "b": -1.0, "c": 0.0}})
    assert not warnings_for(q, {"1": {"a": 1.0, "b": 2.0, "c": 0.0}})


def test_trec_qrels_read_as_a_three_column_run(tmp_path, capsys):
    (tmp_path / "q").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    code, out, err = run_cli(["eval", "-m", "map", "--run-format", "trec3", tmp_path / "q", tmp_path / "q"], capsys)
    assert code == 2 and "4 fields where a 'qid docid score' line has 3" in err     # the reading rules refuse first
    code, out, err = run_cli(["eval", "-m", "map", "--run-format", "trec3", "--layout", "docid-spaces",
                              tmp_path / "q", tmp_path / "q"], capsys)
    assert code == 0
    assert "the run retrieves none of the judged documents" in err and "the run lists '0 d" in err
    assert "the run looks like a qrels file (every line reads as 'qid 0 docid grade', scored with the grade)" in err


def test_swapped_qrels_and_run(tmp_path, capsys):
    """A TSV run with rank-like integer scores is readable as BEIR qrels, and BEIR qrels as a TSV run."""
    run, qrels = tmp_path / "run.tsv", tmp_path / "qrels.tsv"
    run.write_text("".join(f"{q}\td{q}_{i}\t{20 - i}\n" for q in (1, 2) for i in range(15)))
    qrels.write_text("".join(f"{q}\td{q}_{i}\t{i % 3}\n" for q in (1, 2) for i in (0, 3, 7)))
    code, out, err = run_cli(["eval", "-m", "map", run, qrels], capsys)
    assert code == 0 and out == "map                   \tall\t0.2000\n"
    assert "did you swap QRELS and RUN?" in err
    assert "the qrels' grades take 15 values from 6 to 20" in err
    code, out, err = run_cli(["eval", "-m", "map", qrels, run], capsys)
    assert code == 0 and out == "map                   \tall\t0.1250\n" and err == ""


def test_grade_like_scores_are_checked_beyond_the_head(monkeypatch):
    monkeypatch.setattr(thresholds, "GRADE_LIKE_HEAD", 3)
    assert ranking.scores_look_like_grades(np.array([1.0, 0.0, 2.0, 1.0]))
    assert not ranking.scores_look_like_grades(np.array([1.0, 0.0, 2.0, 1.5]))          # the tail decides
    assert not ranking.scores_look_like_grades(np.array([1.0, 0.0, 2.0, 11.0]))
    assert not ranking.scores_look_like_grades(np.array([1.5, 0.0, 2.0, 1.0]))          # the head alone decides


def test_ranking_by_the_rank_column_is_not_taken_for_grades():
    """With rank_by="rank" the key is the negated rank (small integers): no grade warnings from it."""
    as_run = Run.from_columns(["1", "1", "1"], ["a", "b", "c"], [0.5, 0.25, 0.125], [1, 2, 3])
    assert warnings_for({"1": {"a": 1, "b": 0, "c": 2}}, as_run, rank_by="rank") == []


def test_warnings_do_not_change_the_numbers():
    as_run = Run.from_dict({q: {d: float(g) for d, g in docs.items()} for q, docs in QRELS.items()})
    said: list[str] = []
    res = evaluate_requests(Qrels.from_dict(QRELS), as_run, resolve(["map"]), warn=said.append)
    quiet = evaluate_requests(Qrels.from_dict(QRELS), as_run, resolve(["map"]))
    assert said and res.summary["map"] == quiet.summary["map"] == 1.0


def test_a_huge_id_is_quoted_cut_short_in_the_warning():
    """A doc id of a million characters (a hostile or broken file) is quoted in the warning cut to
    errors.SHOWN_CHARS characters, so the message stays a few hundred characters long."""
    from treckit.console.errors import SHOWN_CHARS

    huge = "d" + "x" * 1_000_000
    said = warnings_for({"1": {"a": 1}}, {"1": {huge: 1.0}})
    assert len(said) == 1 and "retrieves none of the judged documents" in said[0]
    assert len(said[0]) < 3 * SHOWN_CHARS + 400 and "'d" + "x" * (SHOWN_CHARS - 1) + "...'" in said[0]
