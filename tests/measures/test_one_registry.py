"""One registry for every measure name: the preference and judgment-group measures are declared with the others
(measures.registry.MEASURES / BY_NAME / NICKNAMES), each with the judgment formats (-R) it applies to, and resolved,
listed and checked there; their evaluation is an engine of the one engine choice.  The names and their order are
trec_eval 10.0's own, as its -q output in its test data prints them."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli
from treckit.console.errors import InputError
from treckit.engines.choice import Local, choose
from treckit.engines.prefs import Preferences
from treckit.measures import prefs, registry
from treckit.measures.registry import BY_NAME, MEASURES, NICKNAMES, resolve

@pytest.fixture(scope="module")
def data(trec_eval_files) -> Path:
    return trec_eval_files


def first_query_names(path: Path) -> list[str]:
    """The measures trec_eval -q prints for the first query of an output, in its order."""
    lines = [ln.split("\t") for ln in path.read_text().splitlines()]
    first = lines[0][1]
    return [name.strip() for name, qid, _ in lines if qid.strip() == first]


@pytest.mark.parametrize("rel_format,nickname,output", [("prefs", "all_prefs", "out.test.prefs"),
                                                        ("qrels_prefs", "all_prefs", "out.test.qrels_prefs"),
                                                        ("qrels_jg", "qrels_jg", "out.test.qrels_jg")])
def test_nicknames_resolve_to_trec_evals_measures_in_its_order(data, rel_format, nickname, output):
    requests = resolve([nickname], rel_format=rel_format)
    columns = [c for r in requests for c in r.columns if r.measure.per_query]
    assert columns == first_query_names(data / output)
    assert [r.measure.name for r in requests][:2] == ["runid", "num_q"]


def test_every_preference_name_is_in_the_one_registry():
    names = [m.name for m in prefs.MEASURES]
    assert len(names) == 17 and all(BY_NAME[n] is m for n, m in zip(names, prefs.MEASURES))
    assert [m.name for m in MEASURES][-17:] == names                    # trec_eval lists them last
    assert {"all_prefs", "prefs", "qrels_jg", "official"} <= set(NICKNAMES)
    for m in prefs.MEASURES:
        for rel_format in m.formats:
            (req,) = resolve([m.name], rel_format=rel_format)
            assert req.measure is m and req.params == m.default
    assert BY_NAME["map_avgjg"].formats == ("qrels_jg",)
    assert BY_NAME["prefs_simp"].formats == ("prefs", "qrels_prefs")
    assert BY_NAME["num_q"].formats == BY_NAME["runid"].formats == ("qrels", "prefs", "qrels_prefs", "qrels_jg")
    assert BY_NAME["map"].formats == ("qrels",)


@pytest.mark.parametrize("args,rel_format,message", [
    (["prefs_simp"], "qrels", "measure 'prefs_simp' needs -R prefs or -R qrels_prefs"),
    (["P_avgjg.5"], "qrels", "measure 'P_avgjg.5' needs -R qrels_jg"),
    (["map", "all_prefs"], "qrels", "measure 'all_prefs' needs -R prefs or -R qrels_prefs"),
    (["map"], "prefs", "-R prefs: measure 'map' needs -R qrels"),
    (["prefs_simp"], "qrels_jg", "-R qrels_jg: measure 'prefs_simp' needs -R prefs or -R qrels_prefs"),
    (["qrels_jg"], "qrels_prefs", "-R qrels_prefs: measure 'qrels_jg' needs -R qrels_jg"),
    (["official"], "prefs", "-R prefs: measure 'official' is unknown"),
])
def test_a_measure_of_other_judgments_is_refused_naming_its_format(args, rel_format, message):
    with pytest.raises(InputError) as e:
        resolve(args, rel_format=rel_format)
    assert e.value.reason == message


def test_first_parameters_win_for_preference_measures():
    (req,) = resolve(["P_avgjg.5,10", "P_avgjg.20"], rel_format="qrels_jg")
    assert req.columns == ("P_avgjg_5", "P_avgjg_10")


def test_suggestions_for_qrels_name_only_measures_of_qrels():
    fix = registry.unknown_measure("map_avgj").fix
    assert "map" in fix and "avgjg" not in fix


def test_measures_lists_every_name(capsys):
    code, out, _ = run_cli(["measures"], capsys)
    first = [ln.split()[0] for ln in out.splitlines() if ln.strip()]
    assert code == 0
    for m in prefs.MEASURES:
        shown = m.name + (f".{','.join(str(x) for x in m.default)}" if m.default else "")
        assert shown in first
        assert f"{m.doc} (-R prefs, qrels_prefs or qrels_jg)" in out
    assert "nicknames: official, all_trec, set; with -R: all_prefs, prefs, qrels_jg" in out


def test_the_engine_choice_gives_the_preference_engine():
    assert choose(rel_format="prefs") == Preferences("prefs")
    assert choose(rel_format="qrels_jg").name == "prefs"
    assert isinstance(choose(), Local)
