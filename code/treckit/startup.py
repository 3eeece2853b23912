"""Start-up cost control for treckit's own processes (the CLI and the staged scripts).

pyarrow imports pandas (about half a second) the first time any array is built, only to check
whether the input is a pandas object.  In our own processes nothing handed to pyarrow is a pandas
object, so the check is made to find no pandas; pyarrow's shim still imports pandas for real the
moment something asks for it (``to_pandas``).  Never called on ``import treckit``: a user's process
is left exactly as pyarrow sets it up.
"""
from __future__ import annotations

import sys


class _NoPandas:
    """A meta-path finder that makes ``import pandas`` fail, installed for one check only."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas deferred by treckit")
        return None


def defer_pandas() -> None:
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    sys.meta_path.insert(0, _NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_NoPandas)
