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


if __name__ == "__main__":
    main()
