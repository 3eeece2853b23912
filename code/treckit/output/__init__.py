"""Everything treckit writes: evaluation results (:mod:`.trec_eval`: trec_eval's text, byte-identical; :mod:`.records`:
rich tables, JSON, CSV and JSON lines), TREC and QUEST files (:mod:`.trec`, :mod:`.quest`), and how a file is
written whole or not at all (:mod:`.files`).

Nothing is imported here: the command line takes its choices from this module without loading a writer."""

FORMATS = ("trec_eval", "table", "json", "csv", "jsonl")    # the formats of evaluation results: records.render
