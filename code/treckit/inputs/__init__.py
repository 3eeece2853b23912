"""Every way an input comes in, each handled in one place: where its bytes come from (:mod:`.sources`: paths, ``-``,
``.gz``; :mod:`.urls`: http(s), s3 and other fsspec URLs; :mod:`.irds`: ``irds:<dataset>``), how much is read whole
(:mod:`.limits`), the file formats (:mod:`.formats`), the bounded YAML/JSON documents (:mod:`.bounded`), the
reading configuration of a run (:mod:`.options`) and the reading itself (:mod:`.reading`), and Python objects
(:mod:`.objects`: dicts, DataFrames, PyTerrier, ir_measures, ranx; :mod:`.values`: their numbers).

Nothing of treckit is imported here: the command line takes its choices from :mod:`.options`, and tells an
``irds:`` id from a path with :func:`is_irds`, without loading a reader."""
from __future__ import annotations

import os

IRDS_PREFIX = "irds:"


def is_irds(source) -> bool:
    """Whether ``source`` names an ir_datasets dataset (``irds:<dataset-id>``) rather than a file."""
    return isinstance(source, (str, os.PathLike)) and str(source).startswith(IRDS_PREFIX)
