"""Arrow at less cost: compute functions called by name, and columns that share one buffer."""
from __future__ import annotations

from ..dependencies import deferred
from .. import thresholds

np = deferred("numpy")
pa = deferred("pyarrow")


def call(name: str, *args, options=None):
    """``pyarrow.compute.<name>(*args)``, through the function registry (``pyarrow.compute.call_function``)."""
    import pyarrow.compute as pc

    return pc.call_function(name, list(args), options)


def take(values, indices):
    """``values.take(indices)`` (indices a numpy array or an Arrow array)."""
    if isinstance(indices, np.ndarray):
        indices = pa.array(indices, pa.int64())
    return call("take", values, indices)


def as_string(column):
    """A qid/docid/tag column as plain strings (readers may hand them over dictionary-encoded)."""
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def repeated_column(n: int, value, type_: pa.DataType | None = None) -> pa.ChunkedArray:
    """A column of ``n`` copies of ``value`` (None: nulls) whose chunks share one buffer: a run
    tag, or a reader's column nobody will read, costs next to no memory however long the run.
    ``type_``: the column's type (default: string)."""
    type_ = pa.string() if type_ is None else type_
    block = min(n, thresholds.CONSTANT_COLUMN_BLOCK_ROWS)

    def piece(k: int) -> pa.Array:
        return pa.nulls(k, type_) if value is None else pa.repeat(pa.scalar(value, type_), k)

    full = piece(block) if block else None
    return pa.chunked_array([full] * (n // block if block else 0) + [piece(n % block if block else 0)], type_)
