"""The optional parts (pyproject.toml's extras): the install command a command gives is the extra's own
requirements for this interpreter, and each command that needs a missing one exits 2 with it, before any work.
(tests/pipeline/test_install.py checks the same in a fresh virtualenv that has no extra at all.)"""
from __future__ import annotations

import sys
import tomllib

import pytest

from helpers import ROOT, run_cli
from treckit import dependencies as extras

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"


@pytest.mark.parametrize("extra", ["plots", "service", "dask", "irds", "bench"])
def test_the_install_command_names_the_extras_requirements(extra):
    declared = PYPROJECT["optional-dependencies"][extra]
    assert extras.requirements(extra) == declared, "reinstall treckit (make test does) after editing pyproject.toml"
    quoted = " ".join(f"'{r}'" if any(c in r for c in "<>[]=") else r for r in declared)
    assert extras.install_hint(extra) == f"install treckit's {extra} extra: {sys.executable} -m pip install {quoted}"


def test_without_metadata_the_command_installs_from_the_checkout(monkeypatch):
    """treckit's code run from a checkout never installed: no metadata to read the extra from."""
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "requires", missing)
    assert extras.install_hint("dask") == "install treckit's dask extra: pip install -e '.[dask]' in treckit's checkout"


def test_the_light_install_holds_no_extra():
    """What `make demo` installs: treckit's runtime list names none of the extras' packages."""
    runtime = {r.split(">")[0].split("[")[0].lower() for r in PYPROJECT["dependencies"]}
    for extra in ("plots", "service", "dask", "irds", "bench"):
        names = {r.split(">")[0].split("[")[0].lower() for r in PYPROJECT["optional-dependencies"][extra]}
        assert not names & runtime, extra
    assert {"ir-measures", "pytrec-eval-terrier"} <= runtime          # --cross-check, the pipeline's last step


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def test_a_plot_without_matplotlib_names_the_plots_extra(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # not found, as when it is not installed
    code, out, err = run_cli(["compare", files / "qrels", files / "run", files / "run", "-m", "map",
                              "--out", files / "c.json", "--plot", files / "c.png"], capsys)
    assert code == 2 and out == "" and "a plot needs matplotlib, which is not installed" in err
    assert f"install treckit's plots extra: {sys.executable} -m pip install 'matplotlib>=3.7'" in err
    assert sorted(p.name for p in files.iterdir()) == ["qrels", "run"]          # nothing evaluated, nothing written
    from treckit.compare import report
    from treckit.console.errors import InputError
    with pytest.raises(InputError, match="plots extra"):
        report.plot_bytes(None)


def test_serve_without_the_service_extra_names_it(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    code, out, err = run_cli(["serve", "--port", "8000"], capsys)
    assert code == 2 and out == "" and "the service needs its extra (uvicorn is missing)" in err
    assert f"install treckit's service extra: {sys.executable} -m pip install 'fastapi>=0.110'" in err


def test_metrics_without_prometheus_client_name_the_service_extra(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    from treckit.console.errors import InputError
    from treckit.service.metrics import export
    with pytest.raises(InputError, match="needs prometheus-client") as e:
        export([("bow", "all", {"mrr": 0.5})], test_set="clinical", textfile=files / "metrics.prom")
    assert e.value.fix.startswith(f"install treckit's service extra: {sys.executable} -m pip install")
    assert not (files / "metrics.prom").exists()


def test_a_url_without_fsspec_names_the_dask_extra(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    monkeypatch.setitem(sys.modules, "fsspec.core", None)
    code, out, err = run_cli(["eval", files / "qrels", "s3://bucket/run"], capsys)
    assert code == 2 and out == "" and "reading a URL needs fsspec, which is not installed" in err
    assert "install treckit's dask extra:" in err and "'fsspec>=2024.2'" in err
