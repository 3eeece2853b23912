"""Writes the bundled QUEST-shaped sample (run once; the outputs are committed).

* ``quest_sample/test.jsonl``: gold file, QUEST fields, no ids; titles with spaces, parentheses,
  non-ASCII and trailing numbers; ``metadata`` null or missing keys.
* ``quest_sample/bm25_predictions.jsonl``: QUEST BM25 style: negated scores (most negative = best),
  0.0 for non-matching docs, no ids, lines shuffled relative to the gold file.
* ``quest_sample/dense_predictions.jsonl``: a second system with ids and positive scores.
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




# ---------------------------------------------------------------- a labelled test set over a small corpus
CORPUS = {
    "American Psycho (film)": "2000 film about an investment banker in New York who is a serial killer; satire of 1980s greed.",
    "Rio 2": "2014 animated sequel in which blue macaws travel from Rio de Janeiro to the Amazon rainforest.",
    "Oʻahu ʻelepaio": "Small flycatcher bird endemic to the island of Oahu in Hawaii; endangered forest bird.",
    "Manifesto (2015 film)": "Art film with Cate Blanchett reciting artists' manifestos in thirteen roles.",
    "Less Than Zero (film)": "1987 film about wealthy young people in Los Angeles and drug addiction, from the novel.",
    "São Paulo": "Largest city in Brazil and South America; financial centre of the country.",
    "Les Misérables (1862 novel)": "Novel by Victor Hugo published in 1862 about the convict Jean Valjean in France.",
    "Toy Story 3": "2010 animated sequel by Pixar in which the toys are donated to a daycare centre.",
    "Zürich": "Largest city in Switzerland, a European centre of banking on Lake Zurich.",
    "Ålesund": "Port town in Norway known for its Art Nouveau architecture; a European fishing town.",
    "Ice Age 4": "2012 animated sequel, Ice Age: Continental Drift, with Manny, Sid and Diego adrift.",
    "Birds of Hawaii": "Overview of the birds of Hawaii, many endemic honeycreepers and forest birds.",
    "Kraków (city)": "Historic city in southern Poland, a European centre of culture on the Vistula.",
    "Mission: Impossible 2": "2000 spy film sequel with Tom Cruise as agent Ethan Hunt chasing a virus.",
    "The Room (2003 film)": "2003 independent drama by Tommy Wiseau, a cult film famous for being bad.",
    "100% Wolf": "2020 animated film about a boy who turns into a poodle instead of a wolf.",
    "Café Society (film)": "2016 film by Woody Allen about a young man in Hollywood and New York in the 1930s.",
    "Nausicaä of the Valley of the Wind (film)": "1984 animated film by Hayao Miyazaki about a princess in a toxic jungle.",
    "Saw 3": "2006 horror sequel in the Saw series about the killer Jigsaw and his traps.",
    "Gdańsk": "Port city on the Baltic coast of Poland, a European shipbuilding centre.",
}
TEST_SET = [  # (id, text, type, {doc: grade})
    ("q1", "animated sequels", "exact_term", {"Toy Story 3": 3, "Ice Age 4": 3, "Rio 2": 3, "100% Wolf": 0}),
    ("q2", "birds endemic to Hawaii", "exact_term", {"Oʻahu ʻelepaio": 3, "Birds of Hawaii": 2}),
    ("q3", "spy film sequels", "exact_term", {"Mission: Impossible 2": 3, "Saw 3": 0}),
    ("q4", "films set in New York", "paraphrase", {"American Psycho (film)": 3, "Café Society (film)": 2,
                                                   "Less Than Zero (film)": 0}),
    ("q5", "European port towns", "paraphrase", {"Ålesund": 3, "Gdańsk": 3, "Zürich": 0}),
    ("q6", "19th-century French literature", "paraphrase", {"Les Misérables (1862 novel)": 3}),
    ("q7", "cult movies that critics call bad", "complex", {"The Room (2003 film)": 3}),
    ("q8", "Polish cities with history", "complex", {"Kraków (city)": 3, "Gdańsk": 2}),
    ("q9", "horror franchise sequels from the 2000s", "complex", {"Saw 3": 3}),
    ("q10", "Miyazaki films about nature", "complex", {"Nausicaä of the Valley of the Wind (film)": 3}),
]


def write_test_set(root: Path = Path(__file__).parent) -> None:
    """``test_sets/sample_v1.yaml`` (the YAML test-set schema) and ``test_sets/documents.jsonl``."""
    import yaml

    out = root / "test_sets"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "documents.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"title": t, "text": x}) + "\n" for t, x in CORPUS.items())
    data = {"name": "sample", "version": "1", "description": "A small labelled test set over data/test_sets/documents.jsonl",
            "queries": [{"query_id": i, "query_text": t, "query_type": k,
                         "relevant_docs": [{"doc_id": d, "grade": g} for d, g in docs.items()]}
                        for i, t, k, docs in TEST_SET]}
    with open(out / "sample_v1.yaml", "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False, allow_unicode=True, width=100)
    # the stored baseline's run: the bag-of-words baseline, top 20 per query, in list order
    from treckit import write_run
    from treckit.retrieval.bow import BowRetriever
    from treckit.retrieval.corpus import read_corpus
    from treckit.testsets.runner import run_from_rankings
    bow = BowRetriever(read_corpus(out / "documents.jsonl"))
    write_run(run_from_rankings({i: bow.retrieve(t, 20) for i, t, _, _ in TEST_SET}, "bow"), out / "baseline_bow.trec")


if __name__ == "__main__":
    main()
    write_test_set()
