"""treckit's optional parts (pyproject.toml's extras: plots, service, dask, irds) and the one way a command says
how to install one that is missing.

treckit is installed from its checkout (``pip install -e .``, or a wheel built there), not from a package index,
so ``pip install 'treckit[dask]'`` would find nothing.  The command given names the extra's own requirements, as
the installed treckit declares them, for the interpreter that is running: it works however treckit was
installed.
"""
from __future__ import annotations

import re
import shlex
import sys

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
