"""``irds:<dataset-id>``: the qrels and queries of an ir_datasets dataset (an optional extra), read in one place."""
from __future__ import annotations

from ..console.errors import InputError
from ..dependencies import install_hint
from ..model import Qrels
from . import IRDS_PREFIX, is_irds  # noqa: F401  (is_irds: the one test, read here by the readers)
from .values import grades


def _irds_dataset(spec: str):
    dataset_id = spec[len(IRDS_PREFIX):]
    if not dataset_id:
        raise InputError(f"{spec!r} names no dataset", fix="write irds:<dataset-id>, e.g. irds:beir/scifact/test")
    try:
        import ir_datasets
    except ImportError:
        raise InputError(f"{spec}: reading ir_datasets needs the ir_datasets package, which is not installed",
                         fix=install_hint("irds")) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r}", path=spec,
                         fix="check the id in ir_datasets' catalogue (e.g. beir/scifact/test)") from None


def irds_qrels(spec: str) -> Qrels:
    """The qrels of ``irds:<dataset-id>``."""
    ds = _irds_dataset(spec)
    if not ds.has_qrels():
        raise InputError("the dataset has no qrels", path=spec, fix="name a dataset with relevance judgments (a test split)")
    try:
        rows = [(r.query_id, r.doc_id, r.relevance, getattr(r, "iteration", "0")) for r in ds.qrels_iter()]
    except (OSError, IOError) as exc:
        raise InputError(f"ir_datasets could not provide the qrels: {exc}", path=spec,
                         fix="check that the dataset's files are available to ir_datasets") from None
    if not rows:
        raise InputError("the dataset's qrels are empty", path=spec, fix="name a dataset with relevance judgments")
    return Qrels.from_columns([r[0] for r in rows], [r[1] for r in rows], grades([r[2] for r in rows], spec),
                              [str(r[3]) for r in rows])


def irds_queries(spec: str) -> list[tuple[str, str]]:
    """(qid, text) of the queries of ``irds:<dataset-id>``."""
    ds = _irds_dataset(spec)
    if not ds.has_queries():
        raise InputError("the dataset has no queries", path=spec, fix="name a dataset with queries")
    try:
        return [(q.query_id, q.default_text()) for q in ds.queries_iter()]
    except (OSError, IOError) as exc:
        raise InputError(f"ir_datasets could not provide the queries: {exc}", path=spec,
                         fix="check that the dataset's files are available to ir_datasets") from None
