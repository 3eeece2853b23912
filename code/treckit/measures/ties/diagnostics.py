"""Where a run's ties come from (``treckit eval --tie-aware report``, ``treckit detect --ties``): how many lines tie,
how many decimal places and significant digits the scores carry, whether they are float32 values."""
from __future__ import annotations

from dataclasses import dataclass

from ...dependencies import deferred
from .layout import tie_groups

np = deferred("numpy")


@dataclass(frozen=True)
class TieSources:
    """What a run's scores say about its ties."""

    lines: int
    tied_lines: int              # lines whose score equals another line's of the same query
    groups: int                  # tie groups (two lines or more)
    queries_with_ties: int
    decimals: int | None         # most decimal places any score needs (None: more than MAX_DECIMALS)
    digits: int                  # most significant digits any score needs (at most 17)
    float32: bool                # every score is a float32 value, or the shortest decimal of one
    verdict: str                 # "rounded", "float32", "full precision" or "no ties"

    def describe(self) -> str:
        if not self.tied_lines:
            return "no ties: every score is unique within its query"
        share = f"{self.tied_lines} of {self.lines} lines ({100.0 * self.tied_lines / max(self.lines, 1):.1f}%) " \
                f"tie in {self.groups} group{'s' if self.groups != 1 else ''} over {self.queries_with_ties} " \
                f"quer{'ies' if self.queries_with_ties != 1 else 'y'}"
        if self.verdict == "rounded":
            places = "decimal place" if self.decimals == 1 else "decimal places"
            why = f"the scores carry at most {self.decimals} {places}: rounding is the likely cause"
        elif self.verdict == "float32":
            why = (f"the scores carry at most {self.digits} significant digits and are all float32 values: "
                   "single precision is the likely cause")
        else:
            why = f"the scores carry up to {self.digits} significant digits: the scores themselves are equal"
        return f"{share}; {why}"


MAX_DECIMALS = 17
ROUNDED_MAX_DECIMALS = 6         # a run whose scores need at most this many decimals reads as rounded ...
FLOAT32_MIN_DIGITS = 7           # ... unless they are float32 values that need this many significant digits or more
                                 # (a coarse rounding needs fewer; float32's shortest decimals need 7 to 9)


def tie_sources(query: np.ndarray, scores: np.ndarray) -> TieSources:
    """Where a run's ties come from: counts of tied lines (``query``: a code per line), the decimal places and
    significant digits the scores need (the shortest decimals that read back as the same doubles), and
    whether every score is float32 (exactly, or as float32's shortest decimal)."""
    query = np.asarray(query)
    scores = np.asarray(scores, np.float64)
    n = scores.size
    start, size = tie_groups(query, scores, np.arange(n)) if n else (np.zeros(0, np.int64),) * 2
    tied = size > 1
    groups = np.unique(np.stack([query[tied], start[tied]], axis=1), axis=0).shape[0] if tied.any() else 0
    qties = np.unique(query[tied]).size
    values = np.unique(scores[np.isfinite(scores)])
    decimals = _decimals(values)
    digits = _significant(values)
    f32 = bool(values.size) and bool(np.all(_float32_like(values)))
    return TieSources(lines=n, tied_lines=int(tied.sum()), groups=int(groups), queries_with_ties=int(qties),
                      decimals=decimals, digits=digits, float32=f32,
                      verdict=_verdict(bool(tied.any()), f32, digits, decimals))


def _verdict(tied: bool, f32: bool, digits: int, decimals: int | None) -> str:
    if not tied:
        return "no ties"
    if f32 and digits >= FLOAT32_MIN_DIGITS:
        return "float32"
    if decimals is not None and decimals <= ROUNDED_MAX_DECIMALS:
        return "rounded"
    return "full precision"


def combine_sources(parts: list[TieSources]) -> TieSources:
    """The :class:`TieSources` of a run read in parts of whole queries, from each part's."""
    if not parts:
        return tie_sources(np.zeros(0, np.int64), np.zeros(0))
    decimals = None if any(p.decimals is None for p in parts) else max(p.decimals for p in parts)
    digits = max(p.digits for p in parts)
    f32 = all(p.float32 or not p.lines for p in parts) and any(p.lines for p in parts)
    tied = sum(p.tied_lines for p in parts)
    return TieSources(lines=sum(p.lines for p in parts), tied_lines=tied, groups=sum(p.groups for p in parts),
                      queries_with_ties=sum(p.queries_with_ties for p in parts), decimals=decimals, digits=digits,
                      float32=f32, verdict=_verdict(tied > 0, f32, digits, decimals))


def _decimals(values: np.ndarray) -> int | None:
    """Most decimal places any of ``values`` needs: d with round(x * 10^d) / 10^d == x (exact for the
    double nearest a decimal of d places, as 10^d and the integer are exact)."""
    left = values[np.abs(values) < 2.0 ** 52]          # doubles beyond are integers: no decimals
    most = 0
    for d in range(MAX_DECIMALS + 1):
        if not left.size:
            return most
        scale = 10.0 ** d
        with np.errstate(over="ignore", invalid="ignore"):
            ok = np.abs(left * scale) < 2.0 ** 53
            ok &= np.round(left * scale) / scale == left
        if ok.any():
            most = d
        left = left[~ok]
    return most if not left.size else None


def _round_sig(values: np.ndarray, p: int) -> np.ndarray:
    """The double nearest each value rounded to ``p`` significant digits."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.floor(np.log10(np.abs(values)))
        shift = (p - 1 - e)
        out = np.empty_like(values)
        pos = shift >= 0
        sc = 10.0 ** np.clip(shift, 0, 308)
        out[pos] = np.round(values[pos] * sc[pos]) / sc[pos]
        sc2 = 10.0 ** np.clip(-shift, 0, 308)
        out[~pos] = np.round(values[~pos] / sc2[~pos]) * sc2[~pos]
    return np.where(values == 0, 0.0, out)


def _significant(values: np.ndarray) -> int:
    """Most significant digits any of ``values`` needs (17 always suffice for a double)."""
    left = values[values != 0]
    need = 1 if values.size else 0
    for p in range(1, 17):
        if not left.size:
            return need
        ok = _round_sig(left, p) == left
        if ok.any():
            need = p
        left = left[~ok]
    return need if not left.size else 17


def _float32_like(values: np.ndarray) -> np.ndarray:
    """Whether each value is a float32 (exactly), or the double of float32's shortest decimal (a float32
    score written with as few digits as read it back: 9 significant digits at most)."""
    with np.errstate(over="ignore"):
        f = values.astype(np.float32)
    exact = f.astype(np.float64) == values
    out = exact.copy()
    left = np.flatnonzero(~exact & np.isfinite(f))
    for p in range(1, 10):
        if not left.size:
            break
        r = _round_sig(values[left], p)
        with np.errstate(over="ignore"):
            same = r.astype(np.float32) == f[left]           # the shortest p whose decimal reads back as the float32
        hit = left[same]
        out[hit] = r[same] == values[hit]
        left = left[~same]
    return out
