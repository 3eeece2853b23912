"""Tie-aware values of trec_eval's measures: the expected value over random orders of tied documents, and
the best and the worst value over all such orders.

trec_eval orders documents with equal scores by doc id (descending), so a run's numbers depend on how its
documents are named.  Here the documents inside each group of equal scores of a query (a *tie group*) are
ordered uniformly at random, each group independently, and every measure gets

* its **expected** value, computed exactly (closed forms or exact sums over the tie groups, never by
  sampling; McSherry & Najork, "Computing Information Retrieval Performance Measures Efficiently in the
  Presence of Tied Scores", ECIR 2008, give P@k, recall@k, AP, DCG/nDCG and RR);
* its **best** and **worst** value: the highest and the lowest over all orders, per measure and per query
  (each may come from a different order).

trec_eval's conventions hold throughout: ``-M`` cuts the ranking after ordering, so the cut may fall
inside a tie group (which of its documents are retrieved is then random, and counts such as
``num_rel_ret`` have fractional expectations); ``-J`` then drops the documents that are not judged (with a
cut inside a group, how many judged documents are retrieved is itself random); ``-l`` sets what counts as
relevant; ``-c``'s placeholder for a query missing from the run is one document outside the pool;
``-N`` enters ``utility``.  A query without ties gets its plain trec_eval value in every mode.

Measures covered (trec_eval's names; every parameter form the engine accepts):

===================================================  =====================================================
expected, best and worst                             how the expectation is computed
===================================================  =====================================================
num_q num_ret num_rel num_rel_ret                    the count's distribution where a cut falls inside a
num_nonrel_judged_ret P recall relative_P success    tie group (hypergeometric): exact for any function of
Rprec Rprec_mult set_P set_recall set_relative_P     a count
set_map set_F utility unj Judged
map map_cut                                          McSherry & Najork's closed form (harmonic sums)
recip_rank (also RR@k)                               distribution of the first relevant doc's rank
ndcg ndcg_cut (linear, exponential, custom gains)    linear in each doc's position: mean discount over
rbp rbp_resid Rndcg                                  its group's positions
bpref binG                                           the rank among the docs that count against it is
                                                     uniform (hypergeometric where a cut falls inside)
ndcg_rel                                             conditionally linear given a doc's position
iprec_at_recall 11pt_avg                             distribution of a maximum of independent groups
infAP G                                              exact sums over the group's composition lattice
===================================================  =====================================================

Best and worst only (``gm_map``, ``gm_bpref``): a geometric mean's expectation needs each query's whole
distribution of AP, so only the extremes (monotone in AP and bpref) are given.  Not covered: ``relstring``
(a string, not a number) and the preference measures (``prefs_*``, ``-R prefs``/``qrels_jg``, their own
engine).  Asking for one of them raises :class:`NotTieAware`, which lists the covered ones.

Best and worst: for most measures one order within each group is optimal for every query (relevant docs
first, or gains descending: a rearrangement argument, or pointwise dominance of each term) and its mirror
is the worst; that order is built and the engine's own kernel computes the value on it, so an extreme is
the value trec_eval gives some order.  Where the optimal order depends on the data (``infAP``, ``G``), a
dynamic programme over each group's composition lattice finds it.  Under ``-J`` with a cut inside a group,
the extremes are taken over every possible number of judged docs retrieved.  The test suite checks every
mode of every covered measure against the enumeration of all orders (tests/measures/test_ties.py).

Interface (pure functions over arrays; no engine, registry or reading here), one module per concern:

* :mod:`.layout` -- :class:`TiedRanking`, a run's judged retrieved docs with their tie groups (first rank and
  size), per query, the rest of what the ranked-and-judged view holds (grades per query, ``-M``, ``-J``, ``-l``,
  missing queries); :func:`tied_ranking` builds it from qrels and a run, :func:`tie_groups` from arrays; and
  the groups as retrieved after ``-M`` and ``-J`` (:class:`Layout`).
* :mod:`.expected` -- the closed forms and exact sums of expected values; :mod:`.iprec` the expected
  interpolated precision; :mod:`.lattice` infAP and G (expected, best and worst) over composition lattices.
* :mod:`.extremes` -- best and worst values as the engine's kernel gives them on an optimal order.
* :mod:`.specs` -- ``SPECS``, what each measure has and how, and :func:`tie_values`: (Q, columns) values of one
  measure in one mode, taking the measure's trec_eval name, kernel parameters and options as the registry
  resolves them, and (for best and worst) the measure's engine kernel.
* :mod:`.diagnostics` -- :func:`tie_sources`, where ties come from: how many digits the scores carry, whether
  they look rounded or float32.
"""
from __future__ import annotations

from .diagnostics import MAX_DECIMALS, TieSources, combine_sources, tie_sources  # noqa: F401
from .layout import Layout, TiedRanking, TieGroupTooLarge, tie_groups, tied_ranking  # noqa: F401
from .specs import MODES, REFUSED, SPECS, NotTieAware, TieSpec, covered, tie_values  # noqa: F401
