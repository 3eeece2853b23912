"""The third-party modules treckit imports inside functions rather than at the top of a module, and why.

Only these are loaded late (tests/test_architecture.py checks it): a command's start-up (``treckit --help``,
``treckit eval`` on a small run) must not pay for what it does not use, and an optional extra must not be needed
by code that does not use it.  Everything else is imported at the top of the module that uses it.
"""
from __future__ import annotations

REQUIRED = "required"          # installed with treckit; late only for start-up speed
OPTIONAL = "optional"          # an extra (pip install 'treckit[...]'); late so that treckit works without it

LAZY: dict[str, tuple[str, str]] = {
    # the columnar core: required, but `treckit --help` and the CLI's argument checks run without it
    "numpy": (REQUIRED, "start-up: the CLI's help and argument checks"),
    "pyarrow": (REQUIRED, "start-up: the CLI's help and argument checks"),
    # the command line itself: the library does not load it
    "typer": (REQUIRED, "the command line only"),
    "rich": (REQUIRED, "the command line's tables and progress only"),
    # required, heavy, and used by a few commands only
    "pandas": (REQUIRED, "DataFrames in and out of the Python API, the compare report"),
    "scipy": (REQUIRED, "the paired tests of a comparison"),
    "matplotlib": (REQUIRED, "the plots of a comparison"),
    "yaml": (REQUIRED, "test sets and system configs"),
    "pydantic": (REQUIRED, "the service's request models"),
    "ir_measures": (REQUIRED, "the cross-check, and ir_measures names in the Python API"),
    "pytrec_eval": (REQUIRED, "the cross-check (ir_measures' backend)"),
    "bm25s": (REQUIRED, "the BM25 baseline"),
    "Stemmer": (REQUIRED, "the BM25 baseline's stemming"),
    # optional extras
    "ir_datasets": (OPTIONAL, "irds:<dataset> inputs (treckit[irds])"),
    "distributed": (OPTIONAL, "the Dask engine (treckit[dask])"),
    "fsspec": (OPTIONAL, "s3://, gs:// and other URLs (treckit[dask])"),
    "fastapi": (OPTIONAL, "the HTTP service (treckit[service])"),
    "starlette": (OPTIONAL, "the HTTP service (treckit[service])"),
    "anyio": (OPTIONAL, "the HTTP service (treckit[service])"),
    "uvicorn": (OPTIONAL, "the HTTP service (treckit[service])"),
    "prometheus_client": (OPTIONAL, "the HTTP service's /metrics (treckit[service])"),
}
