"""treckit's third-party dependencies: the modules it imports inside functions rather than at the top of a module,
and why (:data:`LAZY`); its optional parts (pyproject.toml's extras: plots, report, service, dask, irds) and the one way a
command says how to install one that is missing (:func:`install_hint`).

Only the modules of :data:`LAZY` are loaded late (tests/test_architecture.py checks it): a command's start-up
(``treckit --help``, ``treckit eval`` on a small run) must not pay for what it does not use, and an optional extra
must not be needed by code that does not use it.  Everything else is imported at the top of the module that uses it.

numpy and pyarrow, the columnar core, are used at the top of most of the library's modules, and every command's
module imports the library: a module binds them with :func:`deferred` (``np = deferred("numpy")``) rather than
``import numpy as np``, so that a command's ``--help`` runs neither (:data:`DEFERRED`).  Their code runs on first
use, and from then on the name is the module itself: no indirection in the hot loops.  The stand-ins are
treckit's own, never in ``sys.modules``: a process that imports treckit and numpy gets numpy as numpy sets it up.

treckit is installed from its checkout (``pip install -e .``, or a wheel built there), not from a package index,
so ``pip install 'treckit[dask]'`` would find nothing.  The install command given names the extra's own
requirements, as the installed treckit declares them, for the interpreter that is running: it works however
treckit was installed.
"""
from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import threading
import types

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
    "plotly": (OPTIONAL, "the HTML reports' figures and plotly.js (treckit[report])"),
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


# the modules of LAZY bound at the top of a module with deferred() (their code runs on first use)
DEFERRED = ("numpy", "pyarrow")


class _Deferred(types.ModuleType):
    """A stand-in for a module of :data:`DEFERRED` whose code has not run, treckit's own: never in ``sys.modules``,
    so that a user's ``import numpy`` finds nothing of treckit's.  The first reading of one of its attributes
    imports the module (in one thread; another waits) and rebinds every name of treckit's modules bound to the
    stand-in to the module itself, so that later readings cost what any module's do; a stand-in held elsewhere
    reads through to the module."""

    def __getattribute__(self, attr):
        return getattr(_imported(types.ModuleType.__getattribute__(self, "__name__")), attr)

    def __repr__(self) -> str:
        return f"<treckit's stand-in for {types.ModuleType.__getattribute__(self, '__name__')!r}>"


_STAND_INS: dict[str, _Deferred] = {}     # {name: its stand-in} of the deferred modules
_REBOUND: set[str] = set()                # the deferred modules whose stand-in treckit's modules no longer hold
_IMPORTING = threading.RLock()


def deferred(name: str) -> types.ModuleType:
    """The module ``name`` (one of :data:`DEFERRED`), its code run on first use: a stand-in until then (the same
    in every module that binds it), the module itself once it has run."""
    if name not in DEFERRED:
        raise ValueError(f"{name} is not one of treckit.dependencies.DEFERRED")
    with _IMPORTING:
        if name in _REBOUND or name in sys.modules:
            return sys.modules[name]
        stand_in = _STAND_INS.get(name)
        if stand_in is None:
            if importlib.util.find_spec(name) is None:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            stand_in = _STAND_INS[name] = _Deferred(name)
        return stand_in


def _imported(name: str) -> types.ModuleType:
    """The module ``name``, imported now if it was not, every global of treckit's modules bound to its stand-in
    rebound to it."""
    module = sys.modules.get(name)
    if module is not None and name in _REBOUND:
        return module
    with _IMPORTING:
        module = importlib.import_module(name)
        if name not in _REBOUND:
            stand_in = _STAND_INS.get(name)
            for held in [m for key, m in list(sys.modules.items()) if key == "treckit" or key.startswith("treckit.")]:
                names = getattr(held, "__dict__", {})
                for key, value in list(names.items()):
                    if value is stand_in:
                        names[key] = module
            _REBOUND.add(name)
    return module


def loaded(name: str) -> bool:
    """Whether the code of module ``name`` has run in this process (a deferred module not used yet has not)."""
    return name in sys.modules


# the extra that installs each optional module of LAZY
EXTRA_OF: dict[str, str] = {
    "matplotlib": "plots", "plotly": "report", "ir_datasets": "irds", "distributed": "dask", "fsspec": "dask", "fastapi": "service",
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
