"""Writes the bundled samples (run once; the outputs are committed): the QUEST-shaped sample and the
clinical test set. Deterministic: seeded, no network; run with treckit installed (``.venv/bin/python
data/make_sample.py``), since the test set's stored baseline is evaluated by treckit itself.

* ``quest_sample/test.jsonl``: gold file, QUEST fields, no ids; titles with spaces, parentheses,
  non-ASCII and trailing numbers; ``metadata`` null or missing keys.
* ``quest_sample/bm25_predictions.jsonl``: QUEST BM25 style: negated scores (most negative = best),
  0.0 for non-matching docs, no ids, lines shuffled relative to the gold file.
* ``quest_sample/dense_predictions.jsonl``: a second system with ids and positive scores.
* ``test_sets/``: ``clinical_v1.yaml``, 50 queries (20 exact_term, 15 paraphrase, 15 complex_clinical) judged
  0-3 over ``documents.jsonl``, 300 synthetic drug, condition and procedure abstracts and trial records with
  PMC-style ids; a few documents tie in the bag of words (a trial's planned and completed records), so the
  tie rule decides their order. Also the sample system (``system.yaml``), the server config
  (``server.yaml``), the retrieval function of ``make demo`` (``sample_retriever.py``), the bag-of-words
  baseline's run (``baseline_bow.trec``) and its results (``baseline_results.json``, the gate's baseline).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

TITLES = ["American Psycho (film)", "Rio 2", "Oʻahu ʻelepaio", "Manifesto (2015 film)", "Less Than Zero (film)",
          "São Paulo", "Les Misérables (1862 novel)", "Toy Story 3", "Zürich", "Ålesund", "Ice Age 4",
          "Birds of Hawaii", "Kraków (city)", "Mission: Impossible 2", "The Room (2003 film)", "100% Wolf",
          "Café Society (film)", "Nausicaä of the Valley of the Wind (film)", "Saw 3", "Gdańsk"]
QUERIES = ["films set in New York", "birds endemic to Hawaii", "1860s novels", "cities in Europe",
           "animated sequels", "films about obsession", "spy film sequels", "cult films from 2003"]


def main(out: Path = Path(__file__).parent / "quest_sample") -> None:
    rng = random.Random(7)
    out.mkdir(parents=True, exist_ok=True)
    gold, bm25, dense = [], [], []
    for i, q in enumerate(QUERIES):
        rel = rng.sample(TITLES, rng.randint(2, 5))
        meta = None if i % 3 == 0 else {"template": "_", "domain": "films" if i % 2 else "animals",
                                        **({"fluency": [1]} if i % 2 else {})}
        gold.append({"query": q, "docs": rel, "original_query": q, "scores": None, "metadata": meta})
        cand = rel[: rng.randint(1, len(rel))] + rng.sample([t for t in TITLES if t not in rel], 6)
        rng.shuffle(cand)
        matched = len(cand) - 2
        scores = [-round(rng.uniform(2, 15), 3) if j < matched else 0.0 for j in range(len(cand))]
        order = sorted(range(len(cand)), key=lambda j: scores[j])
        bm25.append({"query": q, "docs": [cand[j] for j in order], "scores": [scores[j] for j in order]})
        dcand = rel[:] + rng.sample([t for t in TITLES if t not in rel], 5)
        rng.shuffle(dcand)
        dense.append({"qid": str(i + 1), "docs": dcand, "scores": [round(rng.uniform(0, 1), 4) for _ in dcand]})
    rng.shuffle(bm25)
    for name, rows in (("test.jsonl", gold), ("bm25_predictions.jsonl", bm25), ("dense_predictions.jsonl", dense)):
        with open(out / name, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)


# ---------------------------------------------------------------- the clinical test set over a small corpus
# Each condition: (text name, lay name, [(intervention, what it is)], [outcomes]).
CONDITIONS = {
    "t2d": ("type 2 diabetes", "high blood sugar",
            [("metformin", "a biguanide"), ("empagliflozin", "an SGLT2 inhibitor"),
             ("semaglutide", "a GLP-1 receptor agonist"), ("bariatric surgery", "a weight-loss operation")],
            ["HbA1c reduction", "weight loss", "hypoglycaemia", "cardiovascular events"]),
    "htn": ("hypertension", "high blood pressure",
            [("lisinopril", "an ACE inhibitor"), ("amlodipine", "a calcium channel blocker"),
             ("chlorthalidone", "a thiazide-like diuretic"), ("renal denervation", "a catheter procedure")],
            ["systolic blood pressure", "stroke", "cough", "ankle oedema"]),
    "af": ("atrial fibrillation", "irregular heartbeat",
           [("apixaban", "a direct oral anticoagulant"), ("warfarin", "a vitamin K antagonist"),
            ("rivaroxaban", "a direct oral anticoagulant"), ("catheter ablation", "a catheter procedure")],
           ["stroke", "major bleeding", "recurrence of arrhythmia", "mortality"]),
    "hf": ("heart failure", "weak heart",
           [("sacubitril-valsartan", "an angiotensin receptor-neprilysin inhibitor"),
            ("dapagliflozin", "an SGLT2 inhibitor"), ("spironolactone", "a mineralocorticoid receptor antagonist"),
            ("cardiac resynchronization therapy", "a device therapy")],
           ["hospitalization", "mortality", "hyperkalaemia", "quality of life"]),
    "asthma": ("asthma", "wheezing",
               [("budesonide-formoterol", "an inhaled corticosteroid combination"),
                ("montelukast", "a leukotriene receptor antagonist"), ("omalizumab", "an anti-IgE biologic"),
                ("bronchial thermoplasty", "a bronchoscopic procedure")],
               ["exacerbations", "lung function", "symptom control", "neuropsychiatric events"]),
    "copd": ("chronic obstructive pulmonary disease (COPD)", "smoker's lung",
             [("tiotropium", "a long-acting muscarinic antagonist"), ("roflumilast", "a phosphodiesterase-4 inhibitor"),
              ("pulmonary rehabilitation", "an exercise programme"),
              ("lung volume reduction surgery", "an operation")],
             ["exacerbations", "exercise capacity", "lung function", "mortality"]),
    "mdd": ("major depressive disorder", "depression",
            [("sertraline", "an SSRI"), ("escitalopram", "an SSRI"), ("bupropion", "an atypical antidepressant"),
             ("electroconvulsive therapy", "a brain stimulation treatment")],
            ["remission", "relapse", "sexual dysfunction", "suicidal ideation"]),
    "migraine": ("migraine", "severe headaches",
                 [("sumatriptan", "a triptan"), ("erenumab", "a CGRP monoclonal antibody"),
                  ("topiramate", "an anticonvulsant"), ("greater occipital nerve block", "a nerve block")],
                 ["monthly migraine days", "pain freedom at 2 hours", "medication overuse", "cognitive side effects"]),
    "koa": ("knee osteoarthritis", "worn knee joints",
            [("naproxen", "an NSAID"), ("intra-articular corticosteroid injection", "a joint injection"),
             ("total knee arthroplasty", "a joint replacement operation"), ("physiotherapy", "an exercise therapy")],
            ["pain", "physical function", "gastrointestinal bleeding", "revision surgery"]),
    "cap": ("community-acquired pneumonia", "chest infection",
            [("amoxicillin", "a penicillin antibiotic"), ("azithromycin", "a macrolide antibiotic"),
             ("ceftriaxone", "a cephalosporin antibiotic"), ("corticosteroids", "an adjunctive therapy")],
            ["clinical cure", "mortality", "length of stay", "Clostridioides difficile infection"]),
    "ckd": ("chronic kidney disease", "weak kidneys",
            [("dapagliflozin", "an SGLT2 inhibitor"), ("losartan", "an angiotensin receptor blocker"),
             ("haemodialysis", "a kidney replacement therapy"), ("kidney transplantation", "a transplant operation")],
            ["eGFR decline", "kidney failure", "hyperkalaemia", "mortality"]),
    "ra": ("rheumatoid arthritis", "inflammatory joint disease",
           [("methotrexate", "a conventional DMARD"), ("adalimumab", "a TNF inhibitor"),
            ("tofacitinib", "a JAK inhibitor"), ("total joint replacement", "an operation")],
           ["disease activity", "radiographic progression", "serious infections", "herpes zoster"]),
    "gerd": ("gastroesophageal reflux disease", "heartburn",
             [("omeprazole", "a proton pump inhibitor"), ("famotidine", "an H2 receptor antagonist"),
              ("laparoscopic fundoplication", "an anti-reflux operation"), ("alginate", "a raft-forming agent")],
             ["symptom relief", "oesophagitis healing", "pneumonia", "dysphagia"]),
    "osteo": ("osteoporosis", "brittle bones",
              [("alendronate", "a bisphosphonate"), ("denosumab", "a RANKL antibody"),
               ("teriparatide", "a parathyroid hormone analogue"), ("vertebroplasty", "a spinal procedure")],
              ["hip fracture", "vertebral fracture", "osteonecrosis of the jaw", "bone mineral density"]),
    "cad": ("coronary artery disease", "blocked heart arteries",
            [("atorvastatin", "a statin"), ("clopidogrel", "a P2Y12 inhibitor"),
             ("percutaneous coronary intervention", "a stent procedure"),
             ("coronary artery bypass grafting", "a heart operation")],
            ["myocardial infarction", "mortality", "major bleeding", "muscle symptoms"]),
}
POPULATIONS = ["adults", "older adults", "women", "adults with obesity", "adolescents",
               "adults with chronic kidney disease"]
DESIGNS = ["randomized controlled trial", "cohort study", "meta-analysis", "case-control study"]
# drugs are compared with placebo or another drug of the condition; these with usual or medical care
PROCEDURES = {"bariatric surgery", "renal denervation", "catheter ablation", "cardiac resynchronization therapy",
              "bronchial thermoplasty", "pulmonary rehabilitation", "lung volume reduction surgery",
              "electroconvulsive therapy", "greater occipital nerve block", "intra-articular corticosteroid injection",
              "total knee arthroplasty", "physiotherapy", "corticosteroids", "haemodialysis", "kidney transplantation",
              "total joint replacement", "laparoscopic fundoplication", "vertebroplasty",
              "percutaneous coronary intervention", "coronary artery bypass grafting"}
CORPUS_SIZE = 300
CLINICAL_SEED = 4

# (id, type, text, condition, interventions (any of them), outcome, population, comparator, target docs, twin).
# A query's judgments come from these facets (see _grade); "target docs" are written to match every facet
# asked, and "twin" adds a planned-trial record worded like a completed one (tied in the bag of words).
CLINICAL_QUERIES = [
    ("q01", "exact_term", "metformin type 2 diabetes HbA1c", "t2d", ("metformin",), "HbA1c reduction", None, None, 2, False),
    ("q02", "exact_term", "empagliflozin cardiovascular events", "t2d", ("empagliflozin",), "cardiovascular events",
     None, None, 2, True),
    ("q03", "exact_term", "semaglutide weight loss", "t2d", ("semaglutide",), "weight loss", None, None, 2, False),
    ("q04", "exact_term", "lisinopril cough", "htn", ("lisinopril",), "cough", None, None, 2, False),
    ("q05", "exact_term", "amlodipine ankle oedema", "htn", ("amlodipine",), "ankle oedema", None, None, 1, False),
    ("q06", "exact_term", "apixaban atrial fibrillation stroke", "af", ("apixaban",), "stroke", None, None, 2, True),
    ("q07", "exact_term", "catheter ablation atrial fibrillation recurrence of arrhythmia", "af", ("catheter ablation",),
     "recurrence of arrhythmia", None, None, 2, False),
    ("q08", "exact_term", "sacubitril-valsartan heart failure hospitalization", "hf", ("sacubitril-valsartan",),
     "hospitalization", None, None, 2, False),
    ("q09", "exact_term", "spironolactone hyperkalaemia", "hf", ("spironolactone",), "hyperkalaemia", None, None, 1, False),
    ("q10", "exact_term", "montelukast neuropsychiatric events", "asthma", ("montelukast",), "neuropsychiatric events",
     None, None, 1, False),
    ("q11", "exact_term", "omalizumab asthma exacerbations", "asthma", ("omalizumab",), "exacerbations", None, None, 2, False),
    ("q12", "exact_term", "tiotropium COPD exacerbations", "copd", ("tiotropium",), "exacerbations", None, None, 2, True),
    ("q13", "exact_term", "sertraline sexual dysfunction", "mdd", ("sertraline",), "sexual dysfunction", None, None, 1, False),
    ("q14", "exact_term", "erenumab monthly migraine days", "migraine", ("erenumab",), "monthly migraine days",
     None, None, 2, False),
    ("q15", "exact_term", "total knee arthroplasty revision surgery", "koa", ("total knee arthroplasty",),
     "revision surgery", None, None, 1, False),
    ("q16", "exact_term", "azithromycin community-acquired pneumonia clinical cure", "cap", ("azithromycin",),
     "clinical cure", None, None, 2, False),
    ("q17", "exact_term", "adalimumab rheumatoid arthritis serious infections", "ra", ("adalimumab",),
     "serious infections", None, None, 2, False),
    ("q18", "exact_term", "omeprazole oesophagitis healing", "gerd", ("omeprazole",), "oesophagitis healing",
     None, None, 1, False),
    ("q19", "exact_term", "denosumab vertebral fracture", "osteo", ("denosumab",), "vertebral fracture", None, None, 2, True),
    ("q20", "exact_term", "atorvastatin muscle symptoms", "cad", ("atorvastatin",), "muscle symptoms", None, None, 2, False),
    ("q21", "paraphrase", "medicines that bring down high blood sugar", "t2d", ("metformin", "empagliflozin", "semaglutide"),
     "HbA1c reduction", None, None, 2, False),
    ("q22", "paraphrase", "blood thinners that prevent strokes in people with an irregular heartbeat", "af",
     ("apixaban", "warfarin", "rivaroxaban"), "stroke", None, None, 2, False),
    ("q23", "paraphrase", "water pill that lowers high blood pressure", "htn", ("chlorthalidone",),
     "systolic blood pressure", None, None, 1, False),
    ("q24", "paraphrase", "weight-loss operation for people with high blood sugar", "t2d", ("bariatric surgery",),
     None, None, None, 2, False),
    ("q25", "paraphrase", "inhaler that prevents asthma attacks", "asthma", ("budesonide-formoterol",), "exacerbations",
     None, None, 2, False),
    ("q26", "paraphrase", "exercise classes for smoker's lung", "copd", ("pulmonary rehabilitation",),
     "exercise capacity", None, None, 1, False),
    ("q27", "paraphrase", "antidepressant pills that make depression go away", "mdd",
     ("sertraline", "escitalopram", "bupropion"), "remission", None, None, 2, False),
    ("q28", "paraphrase", "shock treatment for depression", "mdd", ("electroconvulsive therapy",), None, None, None, 1, False),
    ("q29", "paraphrase", "monthly injection to prevent severe headaches", "migraine", ("erenumab",),
     "monthly migraine days", None, None, 1, False),
    ("q30", "paraphrase", "knee replacement for worn knee joints", "koa", ("total knee arthroplasty",), None, None, None,
     2, False),
    ("q31", "paraphrase", "antibiotics that cure a chest infection caught outside hospital", "cap",
     ("amoxicillin", "azithromycin", "ceftriaxone"), "clinical cure", None, None, 2, False),
    ("q32", "paraphrase", "heartburn pills and lung infections", "gerd", ("omeprazole", "famotidine"), "pneumonia",
     None, None, 1, False),
    ("q33", "paraphrase", "drugs that strengthen brittle bones to avoid broken hips", "osteo",
     ("alendronate", "denosumab", "teriparatide"), "hip fracture", None, None, 2, False),
    ("q34", "paraphrase", "stents for blocked heart arteries to prevent heart attacks", "cad",
     ("percutaneous coronary intervention",), "myocardial infarction", None, None, 1, False),
    ("q35", "paraphrase", "cholesterol pills and muscle aches", "cad", ("atorvastatin",), "muscle symptoms", None, None,
     1, False),
    ("q36", "complex_clinical", "older adults with atrial fibrillation: major bleeding on apixaban compared with warfarin",
     "af", ("apixaban",), "major bleeding", "older adults", "warfarin", 1, True),
    ("q37", "complex_clinical", "does dapagliflozin reduce hospitalization for heart failure in older adults", "hf",
     ("dapagliflozin",), "hospitalization", "older adults", None, 1, False),
    ("q38", "complex_clinical", "dapagliflozin and eGFR decline in chronic kidney disease compared with placebo", "ckd",
     ("dapagliflozin",), "eGFR decline", None, "placebo", 1, False),
    ("q39", "complex_clinical", "women with osteoporosis on alendronate: risk of osteonecrosis of the jaw", "osteo",
     ("alendronate",), "osteonecrosis of the jaw", "women", None, 1, False),
    ("q40", "complex_clinical", "semaglutide versus metformin for weight loss in adults with obesity and type 2 diabetes",
     "t2d", ("semaglutide",), "weight loss", "adults with obesity", "metformin", 1, True),
    ("q41", "complex_clinical", "suicidal ideation in adolescents with major depressive disorder treated with escitalopram",
     "mdd", ("escitalopram",), "suicidal ideation", "adolescents", None, 1, False),
    ("q42", "complex_clinical", "herpes zoster with tofacitinib compared with adalimumab in rheumatoid arthritis", "ra",
     ("tofacitinib",), "herpes zoster", None, "adalimumab", 1, False),
    ("q43", "complex_clinical", "adjunctive corticosteroids for community-acquired pneumonia: effect on mortality", "cap",
     ("corticosteroids",), "mortality", None, None, 1, False),
    ("q44", "complex_clinical", "catheter ablation compared with medical therapy: mortality in atrial fibrillation", "af",
     ("catheter ablation",), "mortality", None, "medical therapy", 1, False),
    ("q45", "complex_clinical", "gastrointestinal bleeding with naproxen in older adults with knee osteoarthritis", "koa",
     ("naproxen",), "gastrointestinal bleeding", "older adults", None, 1, False),
    ("q46", "complex_clinical", "long-term omeprazole and pneumonia risk in older adults with reflux", "gerd",
     ("omeprazole",), "pneumonia", "older adults", None, 1, False),
    ("q47", "complex_clinical", "renal denervation for resistant hypertension: change in systolic blood pressure", "htn",
     ("renal denervation",), "systolic blood pressure", None, None, 1, False),
    ("q48", "complex_clinical", "major bleeding with clopidogrel in older adults with coronary artery disease", "cad",
     ("clopidogrel",), "major bleeding", "older adults", None, 1, False),
    ("q49", "complex_clinical", "cognitive side effects of topiramate for migraine prevention in women", "migraine",
     ("topiramate",), "cognitive side effects", "women", None, 1, False),
    ("q50", "complex_clinical", "hyperkalaemia on spironolactone in heart failure with chronic kidney disease", "hf",
     ("spironolactone",), "hyperkalaemia", "adults with chronic kidney disease", None, 1, False),
]
QUERY_TYPE_COUNTS = {"exact_term": 20, "paraphrase": 15, "complex_clinical": 15}


def _comparator(rng: random.Random, cond: str, intervention: str) -> str:
    if intervention in PROCEDURES:
        return rng.choice(["usual care", "medical therapy"])
    others = [i for i, _ in CONDITIONS[cond][2] if i != intervention and i not in PROCEDURES]
    return rng.choice(["placebo", "placebo", *others])


def _document(rng: random.Random, cond: str, intervention: str, outcome: str, population: str, comparator: str,
              status: str | None = None) -> dict:
    """One abstract; with ``status``, a trial-registry record (a trial's completed and planned records differ
    in that one word, so every query scores them alike in the bag of words)."""
    name, lay, interventions, _ = CONDITIONS[cond]
    what = dict(interventions)[intervention]
    n = rng.choice([48, 60, 96, 120, 150, 212, 300, 480, 642, 1024, 1880, 4312])
    who = f"{population} {'and' if ' with ' in population else 'with'} {name}"
    if status is not None:
        title = f"{intervention} versus {comparator} for {name} in {population}: a randomized controlled trial"
        text = (f"Trial record. {n} {who}; arms: {intervention} ({what}) and {comparator}; "
                f"primary outcome: {outcome}. Status: {status}.")
    else:
        design = rng.choice(DESIGNS)
        title = rng.choice([f"{intervention} versus {comparator} for {name} in {population}: a {design}",
                            f"{outcome} after {intervention} in {who}: a {design}",
                            f"Effect of {intervention} on {outcome} in {name}: a {design}"])
        finding = rng.choice([f"the difference favoured {intervention} over {comparator}",
                              f"{intervention} and {comparator} did not differ",
                              f"the difference favoured {comparator} over {intervention}"])
        text = (f"In this {design}, {n} {who} received {intervention} ({what}) or {comparator}. "
                f"The primary outcome was {outcome}. For {outcome}, {finding}.")
        if rng.random() < 0.35:
            text += f" Plain-language summary: {intervention} for people with {lay}."
    return {"title": title[0].upper() + title[1:], "text": text, "cond": cond, "intervention": intervention,
            "outcome": outcome, "population": population, "comparator": comparator, "status": status or "completed"}


def _grade(doc: dict, query: tuple) -> int | None:
    """The judgment of ``doc`` for ``query`` from their facets: 3 when every facet asked matches, 2 the
    condition and intervention and some of the rest, 1 the condition and intervention only (or the condition
    and the outcome); a planned trial (no results yet) two grades lower; 0 another document of the condition
    or of the intervention; None (not judged) the rest."""
    _, _, _, cond, interventions, outcome, population, comparator, _, _ = query
    extras = [(f, v) for f, v in (("outcome", outcome), ("population", population), ("comparator", comparator)) if v]
    if doc["cond"] != cond:
        return 0 if doc["intervention"] in interventions else None
    if doc["intervention"] in interventions:
        matched = sum(doc[f] == v for f, v in extras)
        grade = 3 if matched == len(extras) else 2 if matched else 1
    else:
        grade = 1 if outcome and doc["outcome"] == outcome else 0
    return max(0, grade - 2) if doc["status"] == "planned" else grade


def clinical_corpus() -> list[dict]:
    """The documents: each query's target documents (every facet as asked; for some a planned twin), then
    documents of seeded random facets up to CORPUS_SIZE; PMC-style ids, a planned record's id below its
    completed twin's (it was registered first)."""
    rng = random.Random(CLINICAL_SEED)
    docs: list[dict] = []
    twins: list[tuple[int, int]] = []
    for _, _, _, cond, interventions, outcome, population, comparator, targets, twin in CLINICAL_QUERIES:
        for j in range(targets):
            intervention = interventions[j % len(interventions)]
            facets = (cond, intervention, outcome or rng.choice(CONDITIONS[cond][3]), population or rng.choice(POPULATIONS),
                      comparator or _comparator(rng, cond, intervention))
            if twin and j == 0:
                done = _document(rng, *facets, status="completed")
                planned = dict(done, text=done["text"].replace("Status: completed.", "Status: planned."), status="planned")
                twins.append((len(docs), len(docs) + 1))
                docs += [planned, done]
            else:
                docs.append(_document(rng, *facets))
    conds = sorted(CONDITIONS)
    while len(docs) < CORPUS_SIZE:
        cond = rng.choice(conds)
        intervention = rng.choice(CONDITIONS[cond][2])[0]
        docs.append(_document(rng, cond, intervention, rng.choice(CONDITIONS[cond][3]), rng.choice(POPULATIONS),
                              _comparator(rng, cond, intervention)))
    numbers = sorted(rng.sample(range(2_000_000, 10_000_000), len(docs)))
    slots = list(range(len(docs)))
    rng.shuffle(slots)
    for planned, done in twins:
        if slots[planned] > slots[done]:
            slots[planned], slots[done] = slots[done], slots[planned]
    for doc, slot in zip(docs, slots):
        doc["_id"] = f"PMC{numbers[slot]}"
    return docs


def clinical_test_set(docs: list[dict]) -> dict:
    """The test set (the YAML test-set schema) judged over ``docs``: per query every judged document, best
    grade first, then by id."""
    counts = {t: sum(q[1] == t for q in CLINICAL_QUERIES) for t in QUERY_TYPE_COUNTS}
    assert counts == QUERY_TYPE_COUNTS, counts
    queries = []
    for q in CLINICAL_QUERIES:
        judged = sorted(((d["_id"], g) for d in docs if (g := _grade(d, q)) is not None), key=lambda x: (-x[1], x[0]))
        assert any(g > 0 for _, g in judged), q[0]
        queries.append({"query_id": q[0], "query_text": q[2], "query_type": q[1],
                        "relevant_docs": [{"doc_id": d, "grade": g} for d, g in judged]})
    return {"name": "clinical", "version": "1",
            "description": "A synthetic clinical-style test set over data/test_sets/documents.jsonl (drug, condition "
                           "and procedure abstracts and trial records; written by data/make_sample.py)",
            "queries": queries}


SAMPLE_RETRIEVER = '''\
"""A retrieval function for the clinical test set (used by `make demo`): the sample system of system.yaml
(BM25 and the bag-of-words baseline over documents.jsonl, fused with RRF), plugged in as any user function would be:

    treckit testset eval data/test_sets/clinical_v1.yaml --function data/test_sets/sample_retriever.py:search

Written by data/make_sample.py.
"""
from pathlib import Path

from treckit.retrieval.system import load_system

_SYSTEM = load_system(Path(__file__).with_name("system.yaml"))


def search(query: str) -> list[tuple[str, float]]:
    return _SYSTEM.run({"query": query}, k=100)[_SYSTEM.final_stage()].rankings["query"]
'''
SYSTEM_YAML = """\
# the sample system: BM25 and bag-of-words over documents.jsonl, fused with RRF (written by data/make_sample.py)
corpus: documents.jsonl
components:
  bm25: {method: bm25, k1: 0.9, b: 0.4}
  bow: {method: bow}
fusion_method: rrf
rrf_k: 60
"""
SERVER_YAML = """\
# `make serve`: the evaluation service on the sample data (paths relative to this file; written by data/make_sample.py)
system: system.yaml            # answers test sets sent without a run
data_dir: .                    # run files a request may name (e.g. baseline_bow.trec)
metrics_prefix: treckit
max_queries: 1000
request_timeout_s: 60          # from a body's arrival: an evaluation taking longer is stopped (504)
body_read_timeout_s: 60        # a body must arrive within this of its headers (408), before it takes a worker
body_min_rate_bytes_s: 1024    # ... and, from 5 s on, at this many bytes a second on average (408); 0: none
max_buffered_body_bytes: 67108864   # request bodies held at once; past it 503 + Retry-After (4 x max_body_bytes)
evaluation_workers: 2          # evaluations at once, each in a process of its own
metrics_systems: [bow]         # the gauges' system labels (the configured system's name is always one); others: other
metrics_test_sets: [clinical]  # the gauges' test_set labels; others: other
"""
BASELINE_DEPTH = 20


def write_test_set(root: Path = Path(__file__).resolve().parent) -> None:
    """``test_sets/``: documents.jsonl, clinical_v1.yaml, the sample system and server configs, the sample
    retriever, the bag-of-words baseline's run (its top BASELINE_DEPTH per query, in its order) and the
    stored baseline results, written by ``treckit testset eval --run ... --out`` itself."""
    import os

    import yaml

    from treckit import write_run
    from treckit.cli.main import main as treckit
    from treckit.output.files import atomic_output
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    from treckit.testsets.runner import run_from_rankings

    out = root / "test_sets"
    out.mkdir(parents=True, exist_ok=True)
    docs = clinical_corpus()
    texts = {"documents.jsonl": "".join(json.dumps({k: d[k] for k in ("_id", "title", "text")}) + "\n" for d in docs),
             "clinical_v1.yaml": yaml.safe_dump(clinical_test_set(docs), sort_keys=False, allow_unicode=True, width=100),
             "sample_retriever.py": SAMPLE_RETRIEVER, "system.yaml": SYSTEM_YAML, "server.yaml": SERVER_YAML}
    for name, text in texts.items():
        with atomic_output(out / name) as fh:
            fh.write(text)
    bow = BowRetriever(read_corpus(out / "documents.jsonl"))
    write_run(run_from_rankings({q[0]: bow.retrieve(q[2], BASELINE_DEPTH) for q in CLINICAL_QUERIES}, "bow"),
              out / "baseline_bow.trec")
    # from the repository's root: the results file records the run's path as given
    here = os.getcwd()
    os.chdir(root.parent)
    try:
        code = treckit(["testset", "eval", "data/test_sets/clinical_v1.yaml", "--run", "data/test_sets/baseline_bow.trec",
                        "--out", "data/test_sets/baseline_results.json"])
    finally:
        os.chdir(here)
    if code:
        raise SystemExit(f"treckit testset eval failed (exit {code})")


if __name__ == "__main__":
    main()
    write_test_set()
