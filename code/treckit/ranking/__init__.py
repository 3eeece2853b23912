"""Ranking: trec_eval's order of a run (:mod:`.order`: score descending, then docno descending on the bytes as
written), the conversion of any run to the order it is meant in (:mod:`.convert`), and the ranked-and-judged view
every measure reads (:mod:`.judged`).

The names of the ranking rules a run may be read by are here, where the command line's help can take them
without loading the rules themselves."""

ORDERS = ("auto", "desc", "asc", "given")                        # how a run's scores rank it (convert.convert_run)
TIES = ("keep", "break", "docid-asc")                            # equal scores: trec_eval's order, input order, doc id
DUPLICATES = ("error", "keep-first", "keep-max", "keep-last")    # a doc listed (or judged) twice for a query
# a converted run's note (Run.notes): its order among equal scores is the one the reading asked for (the rank column,
# input order, doc id ascending), not trec_eval's accident of doc ids, so no tie is left to resolve (tie-aware values)
TIES_SETTLED = "ties_settled"
