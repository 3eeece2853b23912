"""treckit's third-party dependencies: the modules it imports inside functions rather than at the top of a module,
and why (:data:`LAZY`); its optional parts (pyproject.toml's extras: plots, service, dask, irds) and the one way a
command says how to install one that is missing (:func:`install_hint`).

Only the modules of :data:`LAZY` are loaded late (tests/test_architecture.py checks it): a command's start-up
(``treckit --help``, ``treckit eval`` on a small run) must not pay for what it does not use, and an optional extra
must not be needed by code that does not use it.  Everything else is imported at the top of the module that uses it.

treckit is installed from its checkout (``pip install -e .``, or a wheel built there), not from a package index,
so ``pip install 'treckit[dask]'`` would find nothing.  The install command given names the extra's own
requirements, as the installed treckit declares them, for the interpreter that is running: it works however
treckit was installed.
"""
from __future__ import annotations

import re
import shlex
import sys

REQUIRED = "required"          # installed with treckit; late only for start-up speed
OPTIONAL = "optional"          # an extra (install_hint names its command); late so that treckit works without it

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
    "matplotlib": (OPTIONAL, "the plots of a comparison (treckit[plots])"),
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


# the extra that installs each optional module of LAZY
EXTRA_OF: dict[str, str] = {
    "matplotlib": "plots", "ir_datasets": "irds", "distributed": "dask", "fsspec": "dask", "fastapi": "service",
    "starlette": "service", "anyio": "service", "uvicorn": "service", "prometheus_client": "service",
}


def missing_extra(exc: ImportError) -> str | None:
    """The extra whose module ``exc`` failed to import (None: not a module of an extra)."""
    name = (getattr(exc, "name", None) or "").partition(".")[0]
    return EXTRA_OF.get(name)


# ---------------------------------------------------------------- installing an extra
DISTRIBUTION = "treckit"
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def requirements(extra: str) -> list[str]:
    """The requirements the installed treckit declares for ``extra`` (empty when treckit's metadata cannot be
    read, as when its code runs from a checkout that was never installed)."""
    from importlib import metadata
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    found = []
    for req in declared:
        spec, _, marker = req.partition(";")
        if any(name == extra for name in _EXTRA_MARKER.findall(marker)):
            found.append(spec.strip())
    return found


def install_command(extra: str) -> str:
    """The command that installs ``extra`` into this interpreter's environment."""
    reqs = requirements(extra)
    if not reqs:
        return f"pip install -e '.[{extra}]' in treckit's checkout"
    return " ".join([shlex.quote(sys.executable), "-m", "pip", "install", *map(shlex.quote, reqs)])


def install_hint(extra: str) -> str:
    """The fix of an error about a missing extra: its name and the one command that installs it."""
    return f"install treckit's {extra} extra: {install_command(extra)}"
