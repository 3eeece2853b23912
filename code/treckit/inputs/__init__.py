"""Every way an input comes in, each handled in one place: where its bytes come from (:mod:`.sources`: paths, ``-``,
``.gz``; :mod:`.urls`: http(s), s3 and other fsspec URLs; :mod:`.irds`: ``irds:<dataset>``), how much is read whole
(:mod:`.limits`), the file formats (:mod:`.formats`), the bounded YAML/JSON documents (:mod:`.bounded`), the
reading configuration of a run (:mod:`.options`) and the reading itself (:mod:`.reading`), and Python objects
(:mod:`.objects`: dicts, DataFrames, PyTerrier, ir_measures, ranx; :mod:`.values`: their numbers).

Nothing is imported here: the command line takes its choices from :mod:`.options` without loading a reader."""
