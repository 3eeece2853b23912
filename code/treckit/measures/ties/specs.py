"""Which tie-aware values each measure has, and how they are computed (``SPECS``), and the one way to them
(:func:`tie_values`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...dependencies import deferred
from ...console.errors import InputError
from . import expected as ex
from .extremes import any_order, gain_first, nonrelevant_first, ordered_view, pooled_first, relevant_first, unjudged_first
from .iprec import ex_11pt, ex_iprec
from .lattice import gain_G, infap
from .layout import TiedRanking

np = deferred("numpy")

MODES = ("expected", "best", "worst")


class NotTieAware(InputError):
    """A measure (or a mode of it) that tie-aware evaluation does not cover, with the ones it does."""

    def __init__(self, measure: str, mode: str, why: str) -> None:
        self.measure, self.mode = measure, mode
        names = " ".join(covered(mode))
        super().__init__(f"{measure} has no tie-aware {mode} value: {why}",
                         fix=f"tie-aware {mode} values cover: {names}")


@dataclass(frozen=True)
class TieSpec:
    expected: Callable | None          # (layout, params, **options) -> (V, columns)
    order: Callable | None = None      # best = this order, worst = its mirror: (layout, params, options) -> (keys, outside key)
    extreme: Callable | None = None    # (layout, params, mode) -> (V, columns) when no single order serves
    no_expected: str = ""              # why there is no expected value


_ORDER_OF = {"num_q": any_order, "num_ret": any_order, "num_rel": any_order, "unj": unjudged_first,
             "Judged": pooled_first, "num_nonrel_judged_ret": nonrelevant_first}
_GEOMETRIC = "the expectation of a geometric mean needs each query's whole distribution of {} (best and worst are given)"
SPECS: dict[str, TieSpec] = {n: TieSpec(f, _ORDER_OF.get(n, relevant_first)) for n, f in ex.COUNT_MEASURES.items()}
SPECS.update({
    "map": TieSpec(ex.ex_map, relevant_first),
    "map_cut": TieSpec(ex.ex_map_cut, relevant_first),
    "gm_map": TieSpec(None, relevant_first, no_expected=_GEOMETRIC.format("AP")),
    "recip_rank": TieSpec(ex.ex_recip_rank, relevant_first),
    "bpref": TieSpec(ex.ex_bpref, relevant_first),
    "gm_bpref": TieSpec(None, relevant_first, no_expected=_GEOMETRIC.format("bpref")),
    "binG": TieSpec(ex.ex_binG, relevant_first),
    "iprec_at_recall": TieSpec(ex_iprec, relevant_first),
    "11pt_avg": TieSpec(ex_11pt, relevant_first),
    "ndcg": TieSpec(ex.ex_ndcg, gain_first("ndcg")),
    "ndcg_cut": TieSpec(ex.ex_ndcg_cut, gain_first("ndcg_cut")),
    "ndcg_rel": TieSpec(ex.ex_ndcg_rel, gain_first("ndcg_rel")),
    "Rndcg": TieSpec(ex.ex_Rndcg, gain_first("Rndcg")),
    "rbp": TieSpec(ex.ex_rbp, gain_first("rbp")),
    "rbp_resid": TieSpec(ex.ex_rbp_resid, unjudged_first),
    "infAP": TieSpec(lambda lay, p, **o: infap(lay, "expected"), extreme=lambda lay, p, mode, **o: infap(lay, mode)),
    "G": TieSpec(lambda lay, p, **o: gain_G(lay, p, "expected"), extreme=lambda lay, p, mode, **o: gain_G(lay, p, mode)),
})
REFUSED = {
    "relstring": "it is a string of grades, not a number",
    "runid": "it is the run's name, not a measure",
}


def covered(mode: str = "expected") -> list[str]:
    """The trec_eval names of the measures with tie-aware ``mode`` values."""
    return [n for n, s in SPECS.items() if mode != "expected" or s.expected is not None]


def tie_values(tied: TiedRanking, name: str, params: tuple = (), mode: str = "expected", *,
               kernel: Callable | None = None, **options) -> np.ndarray:
    """(Q, columns) tie-aware values of the measure ``name`` (its trec_eval family name, as the registry
    declares it, with the kernel parameters and options the registry resolves) in ``mode``: ``expected``,
    ``best`` or ``worst``.  ``kernel`` is the measure's engine kernel (``Request.measure.kernel``), which
    best and worst run on the extreme orders.  Values of -c's placeholder queries are the kernel's on the
    placeholder; the engine's resets (``num_ret`` to 0 and the like) are the caller's, as for plain values."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    spec = SPECS.get(name)
    if spec is None:
        raise NotTieAware(name, mode, REFUSED.get(name, "it is not among the measures computed over tie orders"))
    lay = tied.layout()
    if mode == "expected":
        if spec.expected is None:
            raise NotTieAware(name, mode, spec.no_expected)
        try:
            values = spec.expected(lay, params, **options)
        except ex.NoExpectation as why:
            raise NotTieAware(name, mode, str(why)) from None
        return lay.fold(np.asarray(values, np.float64).reshape(lay.V, -1), mode)
    if spec.extreme is not None:
        return lay.fold(np.asarray(spec.extreme(lay, params, mode, **options), np.float64).reshape(lay.V, -1), mode)
    if kernel is None:
        raise TypeError(f"{name}: best and worst values need the measure's kernel (kernel=)")
    keys, outside = spec.order(lay, params, options)
    sign = 1.0 if mode == "best" else -1.0
    first = np.asarray(kernel(ordered_view(lay, sign * keys, sign * outside), params, **options), np.float64)
    first = first.reshape(lay.V, -1)
    if name == "utility":
        # a negative weight on relevant retrieved docs turns the order around: both orders, the better one
        other = np.asarray(kernel(ordered_view(lay, -sign * keys, -sign * outside), params, **options), np.float64)
        first = (np.fmax if mode == "best" else np.fmin)(first, other.reshape(lay.V, -1))
    return lay.fold(first, mode)
