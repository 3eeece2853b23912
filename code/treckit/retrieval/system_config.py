"""The whole system config checked up front, before anything is read, built or called: every key known
and used, every value of its type and range.  An error names the key's path (``components.bm25.k1``),
what is wrong and the fix; the values of the config are its own (no file content is quoted).

Readings that are rules rather than checks:

* ``rrf_k`` is a whole number from 0 to :data:`RRF_K_MAX` (``treckit fuse --k`` takes the same);
* ``weights`` name every component once, finite numbers, not all 0 (all 0 would score every document
  0), and apply to ``rrf`` and ``weighted`` only; ``norm`` applies to the score-based methods, not ``rrf``;
* ``rerank.depth`` (default 100) is a whole number >= 1;
* a component may not be named ``fusion`` or end in ``+rerank``: those are the names of the later stages;
* ``perf`` and ``t2`` (mappings) are the settings of seed 000's trace gate, read by ``rq_eval.py --emit-traces``;
  running the system ignores them.
"""
from __future__ import annotations

from typing import Any

from ..console.errors import InputError, finite_number, shown, shown_number
from ..inputs.formats import RUN_FORMATS
from ..inputs.urls import is_url
from .bm25 import STOPWORDS, VARIANTS, known_stemmer
from .fusion import METHODS, NORMS, RRF_K_MAX

COMPONENT_KINDS = ("method", "run", "callable", "dense")
FUSION_KEYS = ("fusion_method", "rrf_k", "weights", "norm")
# the settings the seeds' runtime reads beside a system: rq_eval.py --emit-traces opens a config's trace gate with
# perf.enabled, perf.metrics.report_memory and t2.quality.shadow or .enabled (seed 000); running a system ignores them
RUNTIME_KEYS = ("perf", "t2")
TOP_KEYS = (*FUSION_KEYS, "components", "corpus", "rerank", "name", *RUNTIME_KEYS)
METHOD_KEYS = {"bm25": ("method", "corpus", "index", "k1", "b", "variant", "stopwords", "stemmer"),
               "bow": ("method", "corpus")}
KIND_KEYS = {"run": ("run", "format"), "callable": ("callable", "batch"), "dense": ("dense",)}
DENSE_KEYS = ("embeddings", "ids", "query_embeddings", "query_ids", "query_encoder", "similarity")
SIMILARITIES = ("cosine", "dot")
RERANK_KEYS = ("callable", "depth")
DEFAULT_RERANK_DEPTH = 100
README = "see docs/retrieval.md: systems as configs"


def check_system_config(config: Any, where: str | None = None) -> None:
    """Exit 2 (InputError) at the first thing wrong in ``config`` (``where``: the config file's name)."""
    Checker(where).config(config)


class Checker:
    def __init__(self, where: str | None):
        self.where = where

    def fail(self, key: str | None, what: str, fix: str) -> None:
        raise InputError(f"{key}: {what}" if key else what, path=self.where, fix=fix)

    # ------------------------------------------------------------------ values
    def text(self, value: Any, key: str, example: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(key, f"must be non-empty text, found {_kind(value)}", f"e.g. {key.rpartition('.')[2]}: {example}")
        return value

    def local_file(self, value: Any, key: str, example: str) -> str:
        """A file's path: a system reads its files from disk (relative to the config), never from a URL, whose
        credentials a path would then carry into messages and folder names."""
        self.text(value, key, example)
        if is_url(value):
            self.fail(key, "is a URL, and a system config names local files (paths relative to the config)",
                      f"download the file and give its path, e.g. {key.rpartition('.')[2]}: {example}")
        return value

    def number(self, value: Any, key: str, example: str, low: float | None = None, high: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"must be a number, found {_kind(value)}", f"e.g. {key.rpartition('.')[2]}: {example}")
        if not finite_number(value) or (low is not None and value < low) or (high is not None and value > high):
            bounds = (f" from {low:g}" if low is not None else "") + (f" to {high:g}" if high is not None else "")
            self.fail(key, f"must be a finite number{bounds}, found {_number_text(value)}",
                      f"e.g. {key.rpartition('.')[2]}: {example}")
        return float(value)

    def whole(self, value: Any, key: str, example: str, low: int, high: int | None = None) -> int:
        if isinstance(value, float) and value.is_integer():       # 60.0 is 60
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"of {low} or more"
            self.fail(key, f"must be a whole number {bounds}, found {_number_text(value)}",
                      f"e.g. {key.rpartition('.')[2]}: {example}")
        return value

    def choice(self, value: Any, key: str, choices, what: str) -> str:
        if not isinstance(value, str) or value not in choices:
            self.fail(key, f"unknown {what}: {_value(value)}", f"use one of {', '.join(choices)}")
        return value

    def mapping(self, value: Any, key: str, fix: str) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"must be a mapping, found {_kind(value)}", fix)
        return value

    def known(self, value: dict, allowed, key: str | None, what: str) -> None:
        unknown = [str(k) for k in value if k not in allowed]
        if unknown:
            self.fail(key, f"unknown keys: {', '.join(map(repr, sorted(unknown)))} ({what} takes {', '.join(allowed)})",
                      "remove or correct the key; " + README)

    # ------------------------------------------------------------------ the config
    def config(self, config: Any) -> None:
        if not isinstance(config, dict):
            self.fail(None, f"a system config must be a mapping, found {_kind(config)}", README)
        if "depth" in config:
            self.fail("depth", "is not a setting of a system: a stage's depth is the command's -k (--k), a "
                      "reranker's is rerank.depth", "remove depth, or move it under rerank: {callable: ..., depth: N}")
        self.known(config, TOP_KEYS, None, "a system config")
        if config.get("name") is not None and not isinstance(config["name"], (str, int, float)):
            self.fail("name", f"must be text, found {_kind(config['name'])}", "e.g. name: bm25-rrf")
        if config.get("corpus") is not None:
            self.local_file(config["corpus"], "corpus", "documents.jsonl")
        for key in RUNTIME_KEYS:
            if config.get(key) is not None:
                self.mapping(config[key], key, "e.g. perf: {enabled: true, metrics: {report_memory: true}} "
                             "(rq_eval.py's trace gate: docs/compare.md)")
        comps = config.get("components")
        if not comps:
            self.fail("components", "the system config names no components", "add components: {bm25: {method: bm25}}")
        self.mapping(comps, "components", "e.g. components: {bm25: {method: bm25}}")
        for name, spec in comps.items():
            self.component(str(name), spec, config)
        self.fusion(config, [str(n) for n in comps])
        if config.get("rerank") is not None:
            self.rerank(config["rerank"])

    def component(self, name: str, spec: Any, config: dict) -> None:
        key = f"components.{name}"
        if name == "fusion" or name.endswith("+rerank"):
            self.fail(key, f"{name!r} is the name of a later stage of the system, so its results would be mixed up",
                      "give the component another name")
        kinds = [k for k in COMPONENT_KINDS if isinstance(spec, dict) and k in spec]
        if len(kinds) != 1:
            self.fail(key, f"must have exactly one of: {', '.join(COMPONENT_KINDS)}",
                      f"e.g. {name}: {{method: bm25}} or {name}: {{run: runs/{name}.trec}}")
        kind = kinds[0]
        if kind == "method":
            method = self.choice(spec["method"], f"{key}.method", tuple(METHOD_KEYS), "method")
            self.known(spec, METHOD_KEYS[method], key, f"a {method} component")
            if spec.get("corpus") is None and config.get("corpus") is None:
                self.fail(key, "needs a corpus", "add corpus: documents.jsonl (at the top level or in the component)")
            if spec.get("corpus") is not None:
                self.local_file(spec["corpus"], f"{key}.corpus", "documents.jsonl")
            if spec.get("index") is not None:
                self.local_file(spec["index"], f"{key}.index", "indexes/bm25")
            if method == "bm25":
                self.bm25(spec, key)
            return
        self.known(spec, KIND_KEYS[kind], key, f"a {kind} component")
        if kind == "run":
            self.local_file(spec["run"], f"{key}.run", "runs/bm25.trec")
            if spec.get("format") is not None:
                self.choice(spec["format"], f"{key}.format", RUN_FORMATS, "run format")
        elif kind == "callable":
            self.text(spec["callable"], f"{key}.callable", "my_pkg.search:search")
            if "batch" in spec and not isinstance(spec["batch"], bool):
                self.fail(f"{key}.batch", f"must be true or false, found {_kind(spec['batch'])}", "e.g. batch: true")
        else:
            self.dense(spec["dense"], f"{key}.dense")

    def bm25(self, spec: dict, key: str) -> None:
        if "k1" in spec:
            self.number(spec["k1"], f"{key}.k1", "0.9", low=0)
        if "b" in spec:
            self.number(spec["b"], f"{key}.b", "0.4", low=0, high=1)
        if "variant" in spec:
            self.choice(spec["variant"], f"{key}.variant", VARIANTS, "BM25 variant")
        for field, example in (("stopwords", "en"), ("stemmer", "english")):
            v = spec.get(field)
            if isinstance(v, bool):      # YAML reads a bare no/off/false as a boolean
                self.fail(f"{key}.{field}", f"must be text, found {_kind(v)}",
                          f"write {field}: none for none" + (" ('no' in quotes is Norwegian)" if field == "stopwords" else ""))
            if v is not None and not isinstance(v, str):
                self.fail(f"{key}.{field}", f"must be text, found {_kind(v)}", f"e.g. {field}: {example}, or {field}: none")
            if isinstance(v, str) and v not in ("", "none"):
                if field == "stopwords" and v not in STOPWORDS:
                    self.fail(f"{key}.{field}", f"no stop-word list for {_value(v)}", f"use one of {', '.join(STOPWORDS)}, or none")
                if field == "stemmer" and not known_stemmer(v):
                    self.fail(f"{key}.{field}", f"no Snowball stemmer for {_value(v)}", "e.g. stemmer: english, or stemmer: none")

    def dense(self, spec: Any, key: str) -> None:
        self.mapping(spec, key, "e.g. dense: {embeddings: d.npy, ids: d.ids, query_embeddings: q.npy, query_ids: q.ids}")
        self.known(spec, DENSE_KEYS, key, "a dense component")
        for field in ("embeddings", "ids"):
            if field not in spec:
                self.fail(key, f"needs {field}", "e.g. dense: {embeddings: d.npy, ids: d.ids, ...}")
        given = [f for f in DENSE_KEYS if spec.get(f) is not None]
        for field in given:
            if field == "query_encoder":
                self.text(spec[field], f"{key}.{field}", "embed.py:embed")
            elif field != "similarity":
                self.local_file(spec[field], f"{key}.{field}", "d.npy")
        precomputed = "query_embeddings" in given or "query_ids" in given
        if precomputed == ("query_encoder" in given) or (precomputed and not {"query_embeddings", "query_ids"} <= set(given)):
            self.fail(key, "needs query_embeddings with query_ids, or a query_encoder (one of the two)",
                      "precompute query embeddings, or name a function that embeds texts")
        if spec.get("similarity") is not None:
            self.choice(spec["similarity"], f"{key}.similarity", SIMILARITIES, "similarity")

    def fusion(self, config: dict, names: list[str]) -> None:
        given = [k for k in FUSION_KEYS if k in config]
        if given and "fusion_method" not in config:
            self.fail(None, f"fusion settings ({', '.join(given)}) without fusion_method", "add fusion_method: rrf (or weighted, ...)")
        if not given:
            if len(names) > 1:
                self.fail(None, "several components need a fusion_method", "add fusion_method: rrf")
            return
        method = self.choice(config["fusion_method"], "fusion_method", METHODS, "fusion method")
        if "rrf_k" in config:
            self.fusion_rrf_k(config["rrf_k"], method)
        if "norm" in config:
            self.fusion_norm(config["norm"], method)
        if "weights" in config:
            self.fusion_weights(config["weights"], method, names)

    def fusion_rrf_k(self, rrf_k: Any, method: str) -> None:
        if method != "rrf":
            self.fail("rrf_k", f"applies to fusion_method rrf, not {method}", "remove rrf_k, or use fusion_method: rrf")
        self.whole(rrf_k, "rrf_k", "60", 0, RRF_K_MAX)

    def fusion_norm(self, norm: Any, method: str) -> None:
        self.choice(norm, "norm", NORMS, "normalisation")
        if method == "rrf" and norm != "none":
            self.fail("norm", "rrf fuses ranks, so no score normalisation applies to it",
                      "remove norm, or use a score-based fusion_method (weighted, combsum, combmnz, max)")

    def fusion_weights(self, weights: Any, method: str, names: list[str]) -> None:
        """One finite weight per component, not all 0, for the fusion methods that weigh."""
        if method not in ("rrf", "weighted"):
            self.fail("weights", f"apply to fusion_method rrf and weighted, not {method}",
                      "remove weights, or use fusion_method: weighted")
        w = self.mapping(weights, "weights", "one weight per component, e.g. weights: {"
                         + ", ".join(f"{n}: 1" for n in names) + "}")
        missing = [n for n in names if n not in w]
        extra = [str(n) for n in w if n not in names]
        if missing or extra:
            self.fail("weights", f"must name every component once (missing: {', '.join(missing) or 'none'}; "
                      f"not a component: {', '.join(extra) or 'none'})",
                      "give one weight per component: " + ", ".join(f"{n}: W" for n in names))
        values = [self.number(w[n], f"weights.{n}", "0.5") for n in names]
        if not any(values):
            self.fail("weights", "are all 0, which scores every document 0", "give at least one component a weight")

    def rerank(self, spec: Any) -> None:
        if isinstance(spec, str):
            self.text(spec, "rerank", "my_pkg.rerank:rerank")
            return
        self.mapping(spec, "rerank", "e.g. rerank: {callable: my_pkg.rerank:rerank, depth: 100}")
        self.known(spec, RERANK_KEYS, "rerank", "rerank")
        if "callable" not in spec:
            self.fail("rerank", "names no callable", "e.g. rerank: {callable: my_pkg.rerank:rerank, depth: 100}")
        self.text(spec["callable"], "rerank.callable", "my_pkg.rerank:rerank")
        if "depth" in spec:
            self.whole(spec["depth"], "rerank.depth", str(DEFAULT_RERANK_DEPTH), 1)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the text {_value(value)}"
    if isinstance(value, (int, float)):
        return f"the number {_number_text(value)}"
    return {list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


def _value(value: Any) -> str:
    return shown(value) if isinstance(value, str) else _kind(value)


def _number_text(value: Any) -> str:
    return shown_number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _kind(value)
