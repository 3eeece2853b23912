"""Writes the offline QUEST-shaped sample used by `make quest` (run once; the outputs are committed).

* ``quest_corpus/documents.jsonl``: 320 short documents titled like Wikipedia pages (films, birds,
  novels), QUEST's corpus shape: ``{"title", "text"}``, the title being the id.
* ``quest_corpus/test.jsonl``: 40 queries in QUEST's gold shape (``query``, ``docs``, ``original_query``,
  ``scores: null``, ``metadata.template``), written with json.dumps defaults as QUEST's are; the gold
  docs are those whose attributes satisfy the query, its template one of QUEST's (``_``,
  ``_ that are also _``, ``_ that are not _``, ``_ or _``).
* ``quest_corpus/system.yaml``: a hybrid system over the corpus (BM25 + bag-of-words, RRF).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ["Silent", "Crimson", "Last", "Hidden", "Broken", "Golden", "Lost", "Northern", "Paper", "Iron", "Glass",
         "Midnight", "Winter", "Summer", "Hollow", "Wild", "Quiet", "Burning", "Distant", "Secret"]
NOUNS = ["River", "Garden", "Harbor", "Letter", "Mountain", "Empire", "Shadow", "Bridge", "Orchard", "Voyage",
         "Lantern", "Island", "Crown", "Tide", "Forest", "Promise"]
GENRES = ["drama", "comedy", "horror", "science fiction", "war"]
COUNTRIES = ["American", "French", "Japanese", "Italian"]
DECADES = [1950, 1970, 1990, 2010]
REGIONS = ["Hawaii", "New Zealand", "Madagascar", "Borneo"]
BIRD_KINDS = ["honeyeater", "kingfisher", "flycatcher", "parrot"]
NOVEL_COUNTRIES = ["English", "Russian", "German"]


def _docs(rng: random.Random) -> list[dict]:
    docs, seen = [], set()
    for i in range(200):
        g, c, d = rng.choice(GENRES), rng.choice(COUNTRIES), rng.choice(DECADES) + rng.randrange(10)
        name = f"The {rng.choice(WORDS)} {rng.choice(NOUNS)}"
        t = f"{name} ({d} film)" if name in seen else name
        seen.add(t)
        docs.append({"title": t, "text": f"{t.split(' (')[0]} is a {d} {c} {g} film. It was released in {d} "
                     f"and directed by a {c.lower()} filmmaker.", "attrs": {"kind": "film", "genre": g, "country": c,
                                                                            "decade": d // 10 * 10}})
    for i in range(60):
        r, k = rng.choice(REGIONS), rng.choice(BIRD_KINDS)
        t = f"{rng.choice(WORDS)} {k} ({r})" if i % 2 else f"{rng.choice(WORDS)}-{rng.choice(NOUNS).lower()} {k}"
        if t in seen:
            t = f"{t} {i}"
        seen.add(t)
        docs.append({"title": t, "text": f"The {t.split(' (')[0].lower()} is a species of {k} endemic to {r}. "
                     f"It lives in the forests of {r}.", "attrs": {"kind": "bird", "region": r, "bird": k}})
    for i in range(60):
        c, d = rng.choice(NOVEL_COUNTRIES), 1800 + 10 * rng.randrange(12)
        t = f"{rng.choice(WORDS)} {rng.choice(NOUNS)} (novel)"
        if t in seen:
            t = f"{t[:-1]}, {d})"
        seen.add(t)
        docs.append({"title": t, "text": f"{t.split(' (')[0]} is an {d}s {c} novel about a family and its fortunes.",
                     "attrs": {"kind": "novel", "country": c, "decade": d}})
    return docs


def _queries(docs: list[dict], rng: random.Random) -> list[dict]:
    def match(**want):
        return {d["title"] for d in docs if all(d["attrs"].get(k) == v for k, v in want.items())}
    out = []
    for g in GENRES:
        for dec in DECADES:
            out.append((f"{dec}s {g} films", "_", match(kind="film", genre=g, decade=dec)))
    for r in REGIONS:
        out.append((f"birds of {r}", "_", match(kind="bird", region=r)))
        out.append((f"{BIRD_KINDS[0]}s of {r} or {BIRD_KINDS[1]}s of {r}", "_ or _",
                    match(kind="bird", region=r, bird=BIRD_KINDS[0]) | match(kind="bird", region=r, bird=BIRD_KINDS[1])))
    for c in COUNTRIES:
        out.append((f"{c} horror films that are also from the 1970s", "_ that are also _",
                    match(kind="film", country=c, genre="horror", decade=1970)))
        out.append((f"{c} films that are not comedies", "_ that are not _",
                    match(kind="film", country=c) - match(kind="film", genre="comedy")))
    for c in NOVEL_COUNTRIES:
        out.append((f"{c} novels", "_", match(kind="novel", country=c)))
    out = [q for q in out if q[2]]
    rng.shuffle(out)
    return [{"query": q, "docs": sorted(g), "original_query": q, "scores": None,
             "metadata": {"template": t, "domain": "films" if "film" in q else "other"}} for q, t, g in out[:40]]


def main(out: Path = Path(__file__).parent / "quest_corpus") -> None:
    rng = random.Random(11)
    out.mkdir(parents=True, exist_ok=True)
    docs = _docs(rng)
    queries = _queries(docs, rng)
    with open(out / "documents.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"title": d["title"], "text": d["text"]}) + "\n" for d in docs)
    with open(out / "test.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in queries)
    (out / "system.yaml").write_text(
        "# a hybrid system over the sample corpus: `treckit system eval` reports each stage\n"
        "corpus: documents.jsonl\n"
        "components:\n"
        "  bm25: {method: bm25, k1: 0.9, b: 0.4}\n"
        "  bow: {method: bow}\n"
        "fusion_method: rrf\n"
        "rrf_k: 60\n", encoding="utf-8")


if __name__ == "__main__":
    main()
