"""The id-added QUEST JSONL: the ground truth's lines with the ``id`` each was given (when the input had none),
written as QUEST writes them."""
from __future__ import annotations

import json

from ..inputs.formats.jsonl import GroundTruth
from ..inputs.sources import PathLike
from .files import atomic_output


def write_id_added(gt: GroundTruth, path: PathLike) -> None:
    """The input lines with ``"id"`` added first, written as QUEST writes (json.dumps defaults)."""
    with atomic_output(path) as fh:
        for (qid, _), obj in zip(gt.queries, gt.objects):
            fh.write(json.dumps({"id": qid, **obj}) + "\n")
