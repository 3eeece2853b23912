"""Installing from the checkout as a user would: `python -m build` makes the sdist and, from it, the wheel; the
wheel goes into a fresh virtualenv (its dependencies from the package index) and `treckit eval` there prints
trec_eval's bytes.  Without any extra, each command that needs one exits 2 naming it, with the pip command.

Needs the package index: skipped, with the reason in the summary, when it cannot be reached (or deselect it with
`-m "not network"`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT

pytestmark = [pytest.mark.network, pytest.mark.xdist_group("install")]   # one worker builds the wheel once

PACKAGE_DATA = ["treckit/compare/schema.json", "treckit/testsets/testset.schema.json",
                "treckit/testsets/github_workflow.yml", "treckit/service/alerts.yml"]


def package_index() -> str:
    """The index pip would use here: PIP_INDEX_URL, pip's configuration, else PyPI."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
        found = re.search(r"^[\w:]*\.index-url='([^'\s]+)", listed, re.M)
        url = found.group(1) if found else "https://pypi.org/simple"
    return url.rstrip("/") + "/"


@pytest.fixture(scope="module")
def index() -> str:
    url = package_index()
    try:
        with urllib.request.urlopen(url + "pip/", timeout=15):
            pass
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"the package index {url} cannot be reached ({exc}): installing the wheel needs it for "
                    "treckit's dependencies")
    return url


def clean_env(**extra: str) -> dict:
    """This process's environment without what would point a fresh virtualenv at the checkout or at coverage."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("COVERAGE_")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def built(index, tmp_path_factory) -> dict:
    """The sdist and the wheel, built from a copy of the checkout's packaged files (the build writes its own
    files beside the sources)."""
    pytest.importorskip("build", reason="`build` is not installed (the dev extra has it: make test installs it)")
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "code" / "treckit", src / "code" / "treckit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    p = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)], capture_output=True, text=True,
                       env=clean_env(), timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (sdist,), (wheel,) = dist.glob("treckit-*.tar.gz"), dist.glob("treckit-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Path:
    """A fresh virtualenv holding the wheel and its runtime dependencies, no extra: its bin/ folder."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env(), timeout=300)
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", str(built["wheel"])],
                       capture_output=True, text=True, env=clean_env(), timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return venv / "bin"


def test_the_sdist_and_the_wheel_hold_the_package_and_its_data(built):
    with tarfile.open(built["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "code/treckit/__init__.py"} <= names
    assert all(f"code/{f}" in names for f in PACKAGE_DATA)
    with zipfile.ZipFile(built["wheel"]) as whl:
        names = set(whl.namelist())
        meta = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
        entry = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert all(f in names for f in PACKAGE_DATA) and "treckit/cli/main.py" in names
    assert not any("__pycache__" in n or n.startswith(("tests/", "code/")) for n in names)
    assert "treckit = treckit.cli.main:run" in entry
    assert "Provides-Extra: dask" in meta and "Provides-Extra: plots" in meta
    assert re.search(r"^Requires-Dist: matplotlib>=3.7; extra == \"plots\"$", meta, re.M)        # not a runtime need


@pytest.mark.parametrize("expected, args", [
    ("out.test", ["qrels.test", "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"]),
])
def test_the_installed_wheel_evaluates_like_trec_eval(installed, shared, tmp_path, expected, args):
    where = subprocess.run([str(installed / "python"), "-c", "import treckit; print(treckit.__file__)"],
                           capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=120)
    assert where.stdout.startswith(str(installed.parent)), where      # the wheel's copy, not the checkout's
    p = subprocess.run([str(installed / "treckit"), "eval", "--format", "trec_eval", *args], capture_output=True,
                       text=True, env=clean_env(), cwd=shared / "trec_eval", timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (shared / "trec_eval" / expected).read_text()


@pytest.mark.parametrize("extra, argv, requirement", [
    ("plots", ["compare", "qrels.test", "results.test", "results.test", "-m", "map", "--plot", "{tmp}/d.png"],
     "'matplotlib>=3.7'"),
    ("dask", ["eval", "--engine", "dask", "qrels.test", "results.test"], "'dask[distributed]>=2024.1'"),
    ("dask", ["eval", "qrels.test", "s3://bucket/results.test"], "'fsspec>=2024.2' 's3fs>=2024.2'"),
    ("irds", ["eval", "irds:beir/scifact/test", "results.test"], "'ir_datasets>=0.5'"),
    ("service", ["serve", "--port", "8000"], "'fastapi>=0.110' 'uvicorn>=0.29' 'prometheus-client>=0.20'"),
])
def test_a_command_needing_a_missing_extra_names_it(installed, shared, tmp_path, extra, argv, requirement):
    argv = [a.format(tmp=tmp_path) for a in argv]
    p = subprocess.run([str(installed / "treckit"), *argv], capture_output=True, text=True, env=clean_env(),
                       cwd=shared / "trec_eval", timeout=120)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
    assert f"install treckit's {extra} extra: {installed / 'python'} -m pip install " in p.stderr
    assert requirement in p.stderr
    assert list(tmp_path.iterdir()) == []
