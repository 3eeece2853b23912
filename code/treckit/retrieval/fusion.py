"""Fusion of runs, each method as defined in the literature.

======================  =====================================================================
method                  fused score of doc d for a query (runs r; absent from a run: no term)
======================  =====================================================================
``rrf``                 Σ_r w_r / (k + rank_r(d)), k = 60 by default, ranks from 1 in trec_eval's
                        order (Cormack, Clarke and Büttcher, SIGIR 2009; w_r = 1 unless weighted)
``weighted``            Σ_r w_r · norm_r(d)  (linear combination; default norm minmax)
``combsum``             Σ_r norm_r(d)                         (Fox and Shaw, TREC-2, 1994)
``combmnz``             (number of runs retrieving d) · Σ_r norm_r(d)    (Fox and Shaw, 1994)
``max``                 max_r norm_r(d)  (CombMAX, Fox and Shaw, 1994)
======================  =====================================================================

Normalisations (per run and query): ``minmax`` (s − min) / (max − min), 1 when all scores are equal;
``zscore`` (s − mean) / standard deviation (population), 0 when all are equal; ``sum`` s / Σ s (after
shifting by −min when a score is negative), ``none``.  The methods that add scores refuse an infinite score
(it has no normalised value; RRF, which fuses ranks, takes it), and scores near a double's limit are
normalised without overflow.  The fused run is ranked as trec_eval ranks
it (score descending, then docno descending), so the file it is written to reads back in the same
order; every input run is ranked the same way first.
"""
from __future__ import annotations

from ..dependencies import deferred
from ..console.errors import InputError, shown_number
from ..console.spelling import pass_options
from . import FUSION_METHODS as METHODS, NORMS
from ..engines.memory import evaluate_objects
from ..model import Run
from ..ranking.order import run_ranks as trec_ranks

np = deferred("numpy")

RRF_K = 60
# RRF's largest k: beyond it, 1 / (k + rank) of neighbouring ranks differ by less than a double resolves
# at the depths fused, and every document would tie
RRF_K_MAX = 10 ** 9
DEFAULT_DEPTH = 1000


def check_rrf_k(k) -> None:
    """RRF's k: a whole number from 0 to :data:`RRF_K_MAX`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= RRF_K_MAX:
        raise InputError(f"RRF's k must be a whole number from 0 to {RRF_K_MAX:,}, got {shown_number(k)[:200]}",
                         fix="the usual value is 60")


def _frame(runs):
    """One DataFrame of every run's rows with its run index and its rank (trec_eval's order)."""
    import pandas as pd

    parts = []
    for i, run in enumerate(runs):
        t = run.table
        df = pd.DataFrame({"qid": t.column("qid").to_pandas(), "docid": t.column("docid").to_pandas(),
                           "score": t.column("score").to_numpy()})
        if df.duplicated(["qid", "docid"]).any():
            q, d = df[df.duplicated(["qid", "docid"])].iloc[0][["qid", "docid"]]
            raise InputError(f"run {i + 1} lists doc {d!r} twice for query {q!r}",
                             fix=pass_options("run", "--duplicates keep-first|keep-max|keep-last"))
        df["rank"] = trec_ranks(run) + 1
        df["run"] = i
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def _normalised(df, norm: str):
    import pandas as pd

    s = df["score"].astype(np.float64)
    if norm == "none":
        return s
    # each run's scores for a query divided by a power of two near their largest magnitude: every normalisation
    # is scale-free, the division is exact, and no sum, difference or square of 1e308-sized scores overflows
    top = s.abs().groupby([df["run"], df["qid"]], sort=False).transform("max").to_numpy()
    scale = np.ldexp(1.0, np.frexp(np.where(top > 0, top, 1.0))[1] - 1)     # at most top: every |s| / scale < 2
    s = pd.Series(s.to_numpy() / scale, index=df.index)
    g = s.groupby([df["run"], df["qid"]], sort=False)
    if norm == "minmax":
        lo, hi = g.transform("min"), g.transform("max")
        span = hi - lo
        return pd.Series(np.where(span > 0, (s - lo) / span.where(span > 0, 1), 1.0), index=df.index)
    if norm == "zscore":
        mu, sd = g.transform("mean"), g.transform(lambda x: x.std(ddof=0))
        return pd.Series(np.where(sd > 0, (s - mu) / sd.where(sd > 0, 1), 0.0), index=df.index)
    shifted = s - np.minimum(g.transform("min"), 0)
    total = shifted.groupby([df["run"], df["qid"]], sort=False).transform("sum")
    return pd.Series(np.where(total > 0, shifted / total.where(total > 0, 1), 0.0), index=df.index)


def fuse(runs, method: str = "rrf", *, k: int = RRF_K, weights=None, norm: str | None = None,
         depth: int = DEFAULT_DEPTH, tag: str | None = None, sources=None):
    """The fused Run (top ``depth`` per query) of ``runs`` (a list of Runs; ``sources`` name them in errors,
    default "run 1", "run 2", ...).  A method that adds scores refuses a run with an infinite score: it has no
    normalised value (RRF, which fuses ranks, takes it)."""
    if method not in METHODS:
        raise InputError(f"unknown fusion method {method!r}", fix=f"use one of {', '.join(METHODS)}")
    if not runs:
        raise InputError("no runs to fuse", fix="give two runs or more")
    norm = _checked_norm(method, norm)
    check_rrf_k(k)
    w = _checked_weights(weights, method, len(runs))
    if method != "rrf":
        check_finite_scores(runs, method, sources or [f"run {i + 1}" for i in range(len(runs))])
    out = _fused_scores(_frame(runs), method, k, w, norm)
    out = _top(out, depth)
    return Run.from_columns(out["qid"].tolist(), out["docid"].tolist(), out["score"].tolist(),
                            out["rank"].tolist(), tag or f"fused-{method}")


def check_finite_scores(runs, method: str, sources) -> None:
    """Every score a finite number: a method that adds (normalised) scores has no value for an infinite one."""
    for run, source in zip(runs, sources):
        score = run.table.column("score").to_numpy()
        bad = np.flatnonzero(~np.isfinite(score))
        if bad.size:
            row = int(bad[0])
            qid, doc = (run.table.column(c)[row].as_py() for c in ("qid", "docid"))
            what = "a NaN score" if np.isnan(score[row]) else "an infinite score"
            raise InputError(f"{source}: query {qid!r} gives doc {doc!r} {what} ({bad.size} score(s) that are not finite "
                             f"numbers in all); {method} fusion adds normalised scores, and {what} has none",
                             fix="fuse ranks instead (--method rrf), or give every document a finite score")


def _checked_norm(method: str, norm: str | None) -> str:
    """The normalisation ``method`` applies: ``norm``, or its default (none for rrf, which fuses ranks;
    minmax for the others)."""
    if method == "rrf" and norm not in (None, "none"):
        raise InputError(f"RRF fuses ranks: the normalisation {norm!r} does not apply to it",
                         fix="leave out the normalisation, or use a score-based method (weighted, combsum, combmnz, max)")
    norm = norm or ("none" if method == "rrf" else "minmax")
    if norm not in NORMS:
        raise InputError(f"unknown normalisation {norm!r}", fix=f"use one of {', '.join(NORMS)}")
    return norm


def _checked_weights(weights, method: str, n_runs: int) -> np.ndarray:
    """One finite weight per run, not all 0 (1 each when none are given), for the methods that weigh."""
    if weights is not None and method not in ("rrf", "weighted"):
        raise InputError(f"weights apply to rrf and weighted fusion, not {method}",
                         fix="leave out the weights, or use the weighted method")
    try:
        w = np.ones(n_runs) if weights is None else np.asarray(weights, np.float64)
    except (TypeError, ValueError, OverflowError):
        w = None
    if w is None or w.shape != (n_runs,) or not np.isfinite(w).all():
        raise InputError(f"{n_runs} runs need {n_runs} finite weights, got {repr(weights)[:200]}",
                         fix="one weight per run, in the order the runs are given")
    if not w.any():
        raise InputError("the weights are all 0, which scores every document 0",
                         fix="give at least one run a weight other than 0")
    return w


def _fused_scores(df, method: str, k: int, w: np.ndarray, norm: str):
    """Each (qid, docid)'s fused score by ``method``, in order of first appearance: columns qid, docid, score."""
    if method == "rrf":
        df["part"] = w[df["run"].to_numpy()] / (k + df["rank"].to_numpy())
    else:
        df["part"] = _normalised(df, norm) * (w[df["run"].to_numpy()] if method == "weighted" else 1.0)
    grouped = df.groupby(["qid", "docid"], sort=False)["part"]
    if method == "max":
        fused = grouped.max()
    else:
        fused = grouped.sum()
        if method == "combmnz":
            fused = fused * grouped.count()
    out = fused.reset_index()
    out.columns = ["qid", "docid", "score"]
    return out


def _top(df, depth: int):
    """Each query's rows in trec_eval's order with their ranks, cut at ``depth``."""
    run = Run.from_columns(df["qid"].tolist(), df["docid"].tolist(), df["score"].tolist())
    df = df.assign(rank=trec_ranks(run) + 1)
    first = {q: i for i, q in enumerate(dict.fromkeys(df["qid"]))}     # queries in order of first appearance
    df = df.assign(_q=df["qid"].map(first)).sort_values(["_q", "rank"], kind="stable")
    return df[df["rank"] <= depth].drop(columns="_q").reset_index(drop=True)


def parse_weights(text: str | None, names: list[str] | None) -> list[float] | None:
    """``0.3,0.4,0.3`` (in run order) or ``bm25=0.3,splade=0.4,dense=0.3`` (by run name); with ``names`` None,
    only the numbers are checked (before the runs, which give the names, are read)."""
    if not text:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if all("=" in p for p in parts):
            named = {p.split("=", 1)[0].strip(): float(p.split("=", 1)[1]) for p in parts}
            if names is None:
                return None
            unknown = set(named) - set(names)
            if unknown or len(named) != len(names):
                raise InputError(f"--weights names {sorted(named)} but the runs are {names}",
                                 fix="name every run once: " + ",".join(f"{n}=W" for n in names))
            return [named[n] for n in names]
        return [float(p) for p in parts]
    except ValueError:
        raise InputError(f"--weights {text!r} is not a list of numbers",
                         fix=f"one number per run, in order, e.g. --weights {','.join('1' for _ in names or parts)}") from None


def tune(runs, qrels, method: str, *, measure: str = "ndcg_cut.10", norm: str | None = None,
         grid_step: float = 0.1, rrf_ks=(1, 5, 10, 20, 40, 60, 80, 100)) -> dict:
    """Grid search on training qrels: RRF's k, or the weights of ``weighted`` (a simplex grid with
    ``grid_step``).  Returns the best setting, its score and every setting tried (ties: the first)."""
    def score(fused) -> float:
        result = evaluate_objects(qrels, fused, [measure], complete=True)
        first = next(c for c in result.columns if result.kinds[c] in ("double", "long"))
        return float(result.summary.get(first))

    tried = []
    if method == "rrf":
        for kk in rrf_ks:
            tried.append({"k": kk, measure: score(fuse(runs, "rrf", k=kk))})
    elif method == "weighted":
        steps = int(round(1 / grid_step))
        for combo in _simplex(len(runs), steps):
            wts = [c / steps for c in combo]
            tried.append({"weights": wts, measure: score(fuse(runs, "weighted", weights=wts, norm=norm))})
    else:
        raise InputError(f"--tune applies to rrf and weighted, not {method}", fix="use --method rrf or weighted")
    best = max(tried, key=lambda t: t[measure])            # max keeps the first of equal scores
    return {"method": method, "measure": measure, "best": best, "tried": tried}


def _simplex(n: int, steps: int):
    """Every n-tuple of non-negative integers summing to ``steps``, in lexicographic order."""
    if n == 1:
        yield (steps,)
        return
    for first in range(steps, -1, -1):
        for rest in _simplex(n - 1, steps - first):
            yield (first,) + rest
