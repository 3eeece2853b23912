"""Files and processes: outputs never overwrite inputs and keep normal permissions, OS errors name the path
(exit 2), Ctrl-C exits 130 leaving nothing half-written, a closed pipe ends quietly, hostile inputs stay bounded,
options are validated, the CLI explains itself.

One test per failure kind.  Real subprocesses where the behaviour is the process's (signals, pipes,
the staged scripts); the rest in-process.  Tests run as root in CI: permission tests use an immutable
folder (chattr +i: even root may not create files in it) or an injected PermissionError.
"""
from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import typing
from pathlib import Path

import pytest

from helpers import ROOT, default_sigint, run_cli

from treckit import thresholds
import treckit.inputs.bounded as tjson
import treckit.inputs.sources as tio
import treckit.output.files as tout
from treckit.console.errors import InputError, TreckitError

TREC_EVAL_FLAGS = ["-q", "-m", "-c", "-l", "-n", "-D", "-N", "-M", "-J", "-R", "-T", "-Z", "-v", "-h"]   # trec_eval -h
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d4 1\n"
RUN = ("1 Q0 d3 1 3.0 sys\n1 Q0 d9 2 2.0 sys\n1 Q0 d1 3 1.0 sys\n"
       "2 Q0 d4 1 5.0 sys\n2 Q0 d7 2 4.0 sys\n")
# map by hand: q1 relevant d1 (rank 3), d3 (rank 1): (1/1 + 2/3) / 2 = 0.8333; q2: d4 at 1, d1 missing: (1/1) / 2 = 0.5
MAP = (5 / 6 + 0.5) / 2


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "qrels", tmp_path / "run.trec"
    q.write_text(QRELS)
    r.write_text(RUN)
    return q, r


def treckit(*argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "treckit", *map(str, argv)], capture_output=True, text=True, **kw)


def script(name: str, *argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "code" / "evaluation" / name), *map(str, argv)],
                          capture_output=True, text=True, **kw)


def map_of(stdout: str) -> float:
    return float(next(line.split()[2] for line in stdout.splitlines() if line.startswith("map ")))


# ------------------------------------------------------------------ item 6: outputs
def test_run_refuses_to_overwrite_its_input(tmp_path, capsys):
    p = tmp_path / "p.jsonl"
    content = '{"qid": "1", "docs": ["a", "b"], "scores": [2, 1]}\n'
    p.write_text(content)
    code, out, err = run_cli(["run", p, "-o", p], capsys)
    assert code == 2 and "would overwrite an input" in err and str(p) in err
    assert p.read_text() == content


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_an_output_linked_to_an_input_is_refused(files, tmp_path, capsys, link):
    q, r = files
    alias = tmp_path / "alias"
    (os.symlink if link == "symlink" else os.link)(r, alias)
    code, _, err = run_cli(["run", r, "-o", alias], capsys)
    assert code == 2 and f"the same file as the input {r}" in err
    assert r.read_text() == RUN


def test_compare_refuses_out_equal_to_qrels(files, tmp_path, capsys):
    q, r = files
    r2 = tmp_path / "run2.trec"
    r2.write_text(RUN.replace("sys", "other"))
    code, _, err = run_cli(["compare", q, r, r2, "-m", "map", "--out", q], capsys)
    assert code == 2 and "would overwrite an input" in err
    assert q.read_text() == QRELS


def test_evaluate_script_refuses_output_equal_to_run(files):
    q, r = files
    p = script("evaluate.py", "--run", r, "--qrels", q, "--output", r)
    assert p.returncode == 2 and "would overwrite an input" in p.stderr and "Traceback" not in p.stderr
    assert r.read_text() == RUN


def test_qrels_refuses_id_added_equal_to_output(tmp_path, capsys):
    src = tmp_path / "quest.jsonl"
    src.write_text('{"query": "a", "docs": ["x"]}\n')
    out = tmp_path / "q"
    code, _, err = run_cli(["qrels", src, "-o", out, "--id-added", out], capsys)
    assert code == 2 and "two outputs are the same file" in err
    assert not out.exists()


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_new_outputs_follow_the_umask(files, tmp_path, capsys, umask, mode):
    q, r = files
    out = tmp_path / "out.trec"
    old = os.umask(umask)
    try:
        code, _, _ = run_cli(["run", r, "-o", out], capsys)
    finally:
        os.umask(old)
    assert code == 0 and stat.S_IMODE(out.stat().st_mode) == mode


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o664])
def test_an_existing_output_keeps_its_mode(files, tmp_path, capsys, mode):
    q, r = files
    out = tmp_path / "out.trec"
    out.write_text("old\n")
    out.chmod(mode)
    old = os.umask(0o077)
    try:
        code, _, _ = run_cli(["run", r, "-o", out], capsys)
    finally:
        os.umask(old)
    assert code == 0 and stat.S_IMODE(out.stat().st_mode) == mode and out.read_text().startswith("1 Q0 d3")


def test_a_symlinked_output_writes_its_target(files, tmp_path, capsys):
    q, r = files
    target = tmp_path / "real" / "out.trec"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.trec"
    link.symlink_to(target)
    code, _, _ = run_cli(["run", r, "-o", link], capsys)
    assert code == 0 and link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().splitlines()[0] == "1 Q0 d3 1 3 sys"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.trec"]      # no temporary file left


def test_a_device_output_is_written_not_replaced(files, capsys):
    q, r = files
    code, _, _ = run_cli(["run", r, "-o", "/dev/null"], capsys)
    assert code == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_stdin_run_goes_to_stdout(files, tmp_path):
    q, r = files
    p = treckit("run", "-", input=RUN, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.splitlines()[0] == "1 Q0 d3 1 3 sys"
    assert not (tmp_path / "-_trec").exists()


@pytest.mark.parametrize("given, default", [("preds.jsonl", "preds_trec"), ("x.trec.gz", "x_trec"),
                                            ("dir/run", "dir/run_trec"), ("a.b.tsv", "a.b_trec"), ("-", "-")])
def test_default_run_output_names(given, default):
    from treckit.stages import default_run_output
    assert default_run_output(given) == default


# ------------------------------------------------------------------ item 7: OS errors
def test_output_is_a_folder(files, tmp_path, capsys):
    q, r = files
    code, _, err = run_cli(["run", r, "-o", tmp_path], capsys)
    assert code == 2 and f"{tmp_path}: cannot write: is a folder" in err


def test_output_parent_is_a_file(files, tmp_path, capsys):
    q, r = files
    out = r / "sub" / "out.trec"
    code, _, err = run_cli(["run", r, "-o", out], capsys)
    assert code == 2 and str(out) in err and "is a file, not a folder" in err


def test_output_folder_not_writable(files, tmp_path, capsys):
    """As root a chmod'ed folder is still writable: an immutable one (chattr +i) is not, even for root."""
    q, r = files
    locked = tmp_path / "locked"
    locked.mkdir()
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", locked]).returncode:
            pytest.skip("running as root and chattr +i is not available here")
    else:
        locked.chmod(0o555)
    try:
        code, _, err = run_cli(["run", r, "-o", locked / "out.trec"], capsys)
    finally:
        subprocess.run(["chattr", "-i", locked]) if os.geteuid() == 0 else locked.chmod(0o755)
    assert code == 2 and f"{locked / 'out.trec'}: cannot write:" in err
    assert ("permission denied" in err) or ("operation not permitted" in err)
    assert list(locked.iterdir()) == []


def test_input_not_readable(files, monkeypatch, capsys):
    q, r = files

    def denied(path, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    monkeypatch.setattr(tio, "open", denied, raising=False)     # root reads everything: inject the error
    code, _, err = run_cli(["eval", q, r], capsys)
    assert code == 2 and f"{q}: cannot read: permission denied" in err


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root with mount rights)")
    yield mnt
    subprocess.run(["umount", mnt])


def test_disk_full(tmp_path, tiny_tmpfs, capsys):
    """A real full disk (64 KiB tmpfs): exit 2 naming the output, no temporary file left, old file kept."""
    q, r = tmp_path / "qrels", tmp_path / "big.trec"
    q.write_text(QRELS)
    r.write_text("".join(f"1 Q0 doc{i} {i + 1} {100000 - i} sys\n" for i in range(20000)))
    out = tiny_tmpfs / "out.trec"
    out.write_text("old\n")
    code, _, err = run_cli(["run", r, "-o", out], capsys)
    assert code == 2 and f"{out}: cannot write: no space left" in err
    assert out.read_text() == "old\n" and sorted(p.name for p in tiny_tmpfs.iterdir()) == ["out.trec"]


def test_disk_full_injected(files, tmp_path, monkeypatch, capsys):
    """The same on any machine: the rename into place fails with ENOSPC."""
    q, r = files

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(tio.os, "replace", full)
    out = tmp_path / "results.json"
    code, _, err = run_cli(["compare", q, r, r, "-m", "map", "--name", "a", "--name", "b", "--out", out], capsys)
    assert code == 2 and f"{out}: cannot write: no space left on the device" in err
    assert list(tmp_path.glob(".results.json*")) == [] and not out.exists()


def test_read_only_file_system(files, tmp_path, capsys):
    q, r = files
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", mnt], capture_output=True).returncode:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        code, _, err = run_cli(["run", r, "-o", mnt / "out.trec"], capsys)
    finally:
        subprocess.run(["umount", mnt])
    assert code == 2 and f"{mnt / 'out.trec'}: cannot write: read-only file system" in err


@pytest.mark.parametrize("name, args", [
    ("evaluate.py", ["--run", "{r}", "--qrels", "{q}", "--output", "{dir}"]),
    ("preprocess_run.py", ["--input", "{r}", "--run_name", "x", "--output", "{r}/x"]),
    ("preprocess_qrels.py", ["--input", "{tmp}/missing.jsonl", "--output", "{tmp}/q"]),
])
def test_staged_scripts_report_os_errors_without_traceback(files, tmp_path, name, args):
    q, r = files
    (tmp_path / "adir").mkdir()
    argv = [a.format(r=r, q=q, dir=tmp_path / "adir", tmp=tmp_path) for a in args]
    p = script(name, *argv)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "treckit: error:" in p.stderr
    assert str(tmp_path) in p.stderr


# ------------------------------------------------------------------ item 8: Ctrl-C and pipes
def _interrupt_while_reading(argv_with_fifo, tmp_path, program=("-m", "treckit")):
    """Start treckit reading a FIFO; once it has opened it (so Python's handler is installed),
    send SIGINT while it waits for data."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    argv = [str(fifo) if a == "FIFO" else str(a) for a in argv_with_fifo]
    proc = subprocess.Popen([sys.executable, *program, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, preexec_fn=default_sigint)
    while True:                 # a FIFO opens for writing once a reader has it open (ENXIO until then)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            assert exc.errno == errno.ENXIO and proc.poll() is None, proc.communicate()
            threading.Event().wait(0.01)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "w") as writer:
        writer.write("1 Q0 d1 1 1.0 t\n")
        writer.flush()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)      # not a timing test: a hang becomes a failure
    return proc.returncode, out, err


@pytest.mark.parametrize("command", [
    ["run", "FIFO", "-o", "out.trec"],
    ["qrels", "FIFO", "-o", "q", "--format", "trec"],
    ["eval", "{q}", "FIFO"],
    ["compare", "{q}", "{r}", "FIFO", "-m", "map", "--out", "c.json", "--csv", "c.csv"],
])
def test_ctrl_c_exits_130_with_a_message(files, tmp_path, command):
    q, r = files
    argv = [a.format(q=q, r=r) for a in command]
    code, out, err = _interrupt_while_reading(argv, tmp_path)
    assert code == 130 and "treckit: interrupted" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "qrels", "run.trec"]     # nothing written


@pytest.mark.parametrize("name, argv", [
    ("preprocess_run.py", ["--input", "FIFO", "--run_name", "x", "--output", "out.trec"]),
    ("evaluate.py", ["--run", "FIFO", "--qrels", "{q}", "--output", "out.json"]),
])
def test_ctrl_c_on_a_staged_script(files, tmp_path, name, argv):
    q, r = files
    program = [str(ROOT / "code" / "evaluation" / name)]
    code, out, err = _interrupt_while_reading([a.format(q=q) for a in argv], tmp_path, program)
    assert code == 130 and "treckit: interrupted" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "qrels", "run.trec"]


def test_interrupted_compare_writes_no_report(files, tmp_path, monkeypatch, capsys):
    """Ctrl-C between two reports: neither is written, and an older one stays as it was."""
    q, r = files
    from treckit.compare import stage as stages          # compare writes its reports there
    real = stages.atomic_output
    calls = []

    def interrupted(path, mode="w"):            # the JSON is written, then Ctrl-C on the CSV
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, mode)
    monkeypatch.setattr(stages, "atomic_output", interrupted)
    (tmp_path / "c.json").write_text("old\n")
    code, _, err = run_cli(["compare", q, r, r, "-m", "map", "--name", "a", "--name", "b", "--out",
                            tmp_path / "c.json", "--csv", tmp_path / "c.csv"], capsys)
    assert code == 130 and "interrupted" in err
    assert (tmp_path / "c.json").read_text() == "old\n" and not (tmp_path / "c.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "qrels", "run.trec"]


def test_a_failed_rename_rolls_the_group_back(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old a\n")
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("/b"):
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)
    monkeypatch.setattr(tio.os, "replace", replace)
    with pytest.raises(TreckitError, match="cannot write: Input/output error") as e:      # the device's fault: exit 3
        with tout.outputs(a, b):
            with tout.atomic_output(a) as fh:
                fh.write("new a\n")
            with tout.atomic_output(b) as fh:
                fh.write("new b\n")
    assert type(e.value) is TreckitError and e.value.exit_code == 3 and str(e.value).startswith(f"{b}: ")
    monkeypatch.undo()
    assert a.read_text() == "old a\n" and not b.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def _first_line_then_close(argv) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "treckit", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline().decode()
    proc.stdout.close()                         # `| head -1`
    err = proc.stderr.read().decode()
    proc.wait()
    return proc.returncode, first, err


@pytest.fixture
def big_files(tmp_path):
    """Output far beyond a pipe's buffer, so the writer meets the closed pipe."""
    q, r = tmp_path / "qrels", tmp_path / "run.trec"
    q.write_text("".join(f"{i} 0 d{i}_0 1\n" for i in range(400)))
    r.write_text("".join(f"{i} Q0 d{i}_{j} {j + 1} {100 - j} sys\n" for i in range(400) for j in range(100)))
    return q, r


def test_eval_into_head_ends_quietly(big_files):
    q, r = big_files
    code, first, err = _first_line_then_close(["eval", "-q", "-m", "all_trec", q, r])
    assert first.split() == ["num_ret", "0", "100"] and code == 0 and err == ""


def test_run_to_stdout_into_head_ends_quietly(big_files):
    q, r = big_files
    code, first, err = _first_line_then_close(["run", r, "-o", "-"])
    assert first == "0 Q0 d0_0 1 100 sys\n" and code == 0 and err == ""


def test_eval_help_into_head_ends_quietly():
    """The help is drawn by rich, which exits 1 on a closed pipe unless told otherwise."""
    code, first, err = _first_line_then_close(["eval", "--help"])
    assert code == 0 and err == ""


def test_stdout_on_a_full_disk(files):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    q, r = files
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "treckit", "eval", q, r], stdout=full, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and "<stdout>: cannot write: no space left on the device" in p.stderr


# ------------------------------------------------------------------ item 9: bounded resources
def _config(tmp_path, text: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return p


def _compare_config(tmp_path, files, cfg, capsys):
    q, r = files
    return run_cli(["compare", q, "--config", cfg, r, "-m", "map"], capsys)


def test_config_naming_a_device(files, tmp_path, capsys):
    code, _, err = _compare_config(tmp_path, files, _config(tmp_path, "run: /dev/zero\n"), capsys)
    assert code == 2 and "/dev/zero: is a device or socket, not a file" in err


def test_yaml_alias_bomb(files, tmp_path, capsys):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    cfg = _config(tmp_path, "\n".join(lines) + "\nrun: run.trec\n")
    assert cfg.stat().st_size < 600
    code, _, err = _compare_config(tmp_path, files, cfg, capsys)
    assert code == 2 and "anchors and aliases (&, *) are not allowed in a config" in err


@pytest.mark.parametrize("text, message", [
    ("run: run.trec\nx: !!binary aGVsbG8=\n", "!!binary has no place"),
    ("run: run.trec\nx: !!set {a, b}\n", "!!set has no place"),
    ("run: run.trec\nrun: other.trec\n", "the key 'run' appears twice"),
    ("run: run.trec\nx: " + "[" * 100 + "]" * 100 + "\n", "nested more than 32 levels"),
    ("run: run.trec\non: 1\n", "a key must be text"),
    ("run: run.trec\nx: " + "1" * 5000 + "\n", "c.yaml:2: a number of 5,000 characters"),
    ("run: [a, b]\n", "'run' must be a path"),
    ("run: run.trec\nformat: bogus\n", "unknown run format 'bogus'"),
])
def test_hostile_yaml_configs(files, tmp_path, capsys, text, message):
    code, _, err = _compare_config(tmp_path, files, _config(tmp_path, text), capsys)
    assert code == 2 and message in err and "internal error" not in err


def test_yaml_dates_stay_as_written(tmp_path):
    from treckit.inputs.sources import content_digest
    from treckit.compare.config import load_config
    cfg = load_config(_config(tmp_path, "run: run.trec\ndate: 2024-01-31\n"))
    assert cfg.config_digest == content_digest({"run": "run.trec", "date": "2024-01-31"})


def test_a_config_never_echoes_the_file_it_names(files, tmp_path, capsys):
    secret = tmp_path / "secrets.env"
    secret.write_text("API_KEY=hunter2-very-secret\n")
    code, _, err = _compare_config(tmp_path, files, _config(tmp_path, f"run: {secret}\n"), capsys)
    assert code == 2 and str(secret) in err and "content not shown" in err
    assert "hunter2" not in err and "API_KEY" not in err
    # the same file given as an input on the command line is shown (it is the user's own input)
    code, _, err = run_cli(["eval", files[0], secret], capsys)
    assert code == 2 and "hunter2" in err


def test_corpus_digest_is_streamed(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.jsonl"
    data = b"".join(b'{"_id": "d%d", "text": "some words"}\n' % i for i in range(20000))
    corpus.write_bytes(data)
    monkeypatch.setattr(thresholds, "WHOLE_READ_LIMIT", 1 << 12)      # reading it whole is refused ...
    with pytest.raises(InputError, match="more than 4,096 bytes"):
        tio.read_bytes(corpus)
    assert tio.file_digest(corpus) == hashlib.sha256(data).hexdigest()      # ... hashing streams it
    gz = tmp_path / "corpus.jsonl.gz"
    gz.write_bytes(gzip.compress(data))
    assert tio.file_digest(gz) == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("what", ["folder", "device"])
def test_non_regular_inputs_are_refused(files, tmp_path, capsys, what):
    q, _ = files
    path = tmp_path if what == "folder" else "/dev/zero"
    code, _, err = run_cli(["eval", q, path], capsys)
    assert code == 2 and (f"{path}: is a folder" in err if what == "folder" else "is a device" in err)


def test_a_fifo_input_is_read_once_and_gives_the_file_numbers(files, tmp_path, capsys):
    """Process substitution (`<(zcat run.gz)`) is a pipe: detected and read from the same bytes."""
    q, r = files
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(RUN), daemon=True)
    writer.start()
    try:
        code, out, err = run_cli(["eval", "-m", "map", q, fifo], capsys)
    finally:
        if writer.is_alive():        # treckit never opened the FIFO: release the writer's open
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join()
        tio.forget_streams()
    assert code == 0 and map_of(out) == pytest.approx(MAP, abs=5e-5)


def test_a_gz_run_past_the_whole_read_limit_is_inflated_as_it_is_read(files, tmp_path, monkeypatch, capsys):
    """A .gz run is never read whole: one whose content passes the whole-read limit (13 times over) is evaluated as
    it is inflated, printing the plain file's bytes (gzip bombs: tests/hostile/test_hostile_budgets_and_compression.py)."""
    q, r = files
    monkeypatch.setattr(thresholds, "WHOLE_READ_LIMIT", 1000)
    text = "".join(f"1 Q0 d{i} {i} {1000 - i} r\n" for i in range(1, 700))
    plain, packed = tmp_path / "run", tmp_path / "run.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    assert len(text) > 13 * 1000
    code, out, err = run_cli(["eval", "-m", "P.10", "-m", "num_ret", q, packed], capsys)
    assert code == 0, err
    assert out == run_cli(["eval", "-m", "P.10", "-m", "num_ret", q, plain], capsys)[1]
    assert "num_ret               \tall\t699\n" in out
    tio.forget_streams()


@pytest.mark.parametrize("line, message", [
    ('{"qid": "1", "docs": ["a"], "scores": [%s]}' % ("1" * 5000), "a number of 5000 characters"),
    ('{"qid": "1", "docs": ["a"], "scores": [1], "x": %s}' % ("[" * 50000 + "]" * 50000), "nested too deeply"),
    ('{"qid": "1", "docs": ["a\\ud800"], "scores": [1]}', "lone surrogate"),
])
def test_hostile_json_lines(tmp_path, capsys, line, message):
    p = tmp_path / "p.jsonl"
    p.write_text(line + "\n")
    code, _, err = run_cli(["run", p, "-o", "-"], capsys)
    assert code == 2 and message in err and "internal error" not in err


def test_loads_json_keeps_valid_pairs_and_big_floats():
    assert tjson.loads_json('{"a": "\\ud83d\\ude00", "b": 1e308}') == {"a": "\U0001F600", "b": 1e308}
    with pytest.raises(json.JSONDecodeError, match="appears twice"):
        tjson.loads_json('{"a": 1, "a": 2}')


def test_query_types_file_with_bad_json(files, tmp_path, capsys):
    q, r = files
    types = tmp_path / "types.jsonl"
    types.write_text('{"id": "1", "metadata": {"template": "' + "\\udc00" + '"}}\n')
    code, _, err = run_cli(["compare", q, r, r, "--name", "a", "--name", "b", "-m", "map",
                            "--query-types", types, "--markdown", tmp_path / "c.md"], capsys)
    assert code == 2 and f"{types}:1: not valid JSON" in err


# ------------------------------------------------------------------ item 10: options
@pytest.mark.parametrize("argv", [
    ["run", "{r}", "-o", "-", "--order", "bogus"],
    ["run", "{r}", "-o", "-", "--layout", "bogus"],
    ["run", "{r}", "-o", "-", "--tsv-third", "bogus"],
    ["run", "{r}", "-o", "-", "--duplicates", "bogus"],
    ["run", "{r}", "-o", "-", "--format", "bogus"],
    ["run", "{r}", "-o", "-", "--depth", "0"],
    ["qrels", "{q}", "-o", "-", "--duplicates", "bogus"],
    ["qrels", "{q}", "-o", "-", "--format", "bogus"],
    ["detect", "{r}", "--role", "bogus"],
    ["compare", "{q}", "{r}", "{r}", "--k", "0"],
    ["eval", "--missing", "bogus", "{q}", "{r}"],
    ["eval", "--order", "bogus", "{q}", "{r}"],
    ["eval", "--format", "bogus", "{q}", "{r}"],
])
def test_bad_option_values_are_refused(files, capsys, argv):
    q, r = files
    code, out, err = run_cli([a.format(q=q, r=r) for a in argv], capsys)
    assert code == 2 and out == "" and "internal error" not in err
    assert "bogus" in err or "greater than or equal to 1" in err


def test_option_choices_match_the_library():
    from treckit.ranking import convert
    from treckit.cli import common as options          # the choices the commands offer
    from treckit.inputs.formats import detect, trec
    assert options.ORDERS == convert.ORDERS and options.DUPLICATES == convert.DUPLICATES
    assert options.QRELS_FORMATS == detect.QRELS_FORMATS and options.RUN_FORMATS == detect.RUN_FORMATS
    assert options.LAYOUTS == typing.get_args(trec.RunLayout)


# ------------------------------------------------------------------ item 13: the command line
def test_version(capsys):
    import treckit
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and out.startswith(f"treckit {treckit.__version__}")
    code, out, err = run_cli(["eval", "-v"], capsys)          # trec_eval -v: the version on stderr, exit 0
    assert code == 0 and out == "" and "trec_eval version 10.0" in err


@pytest.mark.parametrize("command", ["", "run", "qrels", "compare", "eval", "measures", "detect"])
def test_h_on_every_command_without_python_type_names(command, capsys):
    code, out, _ = run_cli([*command.split(), "-h"], capsys)
    assert code == 0 and "Usage" in out
    for python_name in ("<bool>", "<str>", "<int>", "<float>", "<path>", "list[", "<list", "INTEGER", "BOOLEAN"):
        assert python_name not in out


def test_eval_help_explains_every_trec_eval_flag(capsys):
    from treckit.cli.evaluate import EVAL_HELP_SECTIONS
    shown = {short for _, rows in EVAL_HELP_SECTIONS for short, _, _, _ in rows}
    assert set(TREC_EVAL_FLAGS) <= shown
    code, out, _ = run_cli(["eval", "--help"], capsys)
    assert code == 0 and all(f" {flag} " in out for flag in TREC_EVAL_FLAGS) and "--missing" in out


def _named_treckit_commands(text: str) -> list[list[str]]:
    """The words after `treckit` in a shipped file: quoted in its comments (`treckit alert-rules`) and run by
    its commands (a line that starts with treckit, or `run: treckit ...`)."""
    import re
    named = []
    for line in text.splitlines():
        code, _, comment = ("", "", line) if line.lstrip().startswith("#") else line.partition(" #")
        named += [m.split() for m in re.findall(r"`treckit ([^`]*)`", comment)]
        command = re.match(r"\s*(?:-\s*)?(?:run:\s*)?treckit (.*)", code)
        if command:
            named.append(command.group(1).split())
    return named


def test_every_treckit_command_a_shipped_file_names_exists(capsys):
    """A comment or a command in the files treckit ships (alert rules, the CI workflow) names commands that
    exist: each word path resolves in the command tree, and `treckit <path> --help` answers."""
    import tomllib

    import typer.main

    from treckit.cli.main import get_app
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["treckit"]
    shipped = [ROOT / "code" / "treckit" / f for f in package_data if f.endswith((".yml", ".yaml"))]
    assert {p.name for p in shipped} >= {"alerts.yml", "github_workflow.yml"}
    root = typer.main.get_command(get_app())
    found = set()
    for path in shipped:
        for words in _named_treckit_commands(path.read_text()):
            node, resolved = root, []
            for word in words:
                sub = getattr(node, "commands", {}).get(word)
                if sub is None:
                    break
                node, resolved = sub, resolved + [word]
            assert resolved, f"{path.name} names `treckit {' '.join(words)}`, which is not a treckit command"
            assert not hasattr(node, "commands"), f"{path.name}: `treckit {' '.join(resolved)}` is a group, not a command"
            code, out, _ = run_cli([*resolved, "--help"], capsys)
            assert code == 0 and "Usage" in out, resolved
            found.add(" ".join(resolved))
    assert found >= {"alert-rules", "testset workflow", "testset eval", "gate"}


def test_measures_plain_when_piped_and_a_table_on_a_terminal(capsys, monkeypatch):
    code, out, _ = run_cli(["measures"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:2] == ["trec_eval", "name"] and lines[1].split()[0] == "runid" and "┃" not in out
    # the columns line up on every row, the longest names included: each column starts where its header does,
    # two spaces after the widest cell of the column before
    rows = lines[:lines.index("")]
    second, third = rows[0].index("ir_measures names"), rows[0].index("meaning")
    assert max(len(r[:second].rstrip()) for r in rows) == second - 2
    assert max(len(r[second:third].rstrip()) for r in rows) == third - second - 2
    for row in rows:
        assert row[second - 2:second] == "  " and row[second] != " ", row
        assert row[third - 2:third] == "  " and row[third] != " ", row
    assert any(len(r.split()[0]) > 40 for r in rows[1:])            # the long names are among them
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run_cli(["measures"], capsys)
    assert code == 0 and "┃" in out and "nDCG(dcg='exp-log2')" in out


# ------------------------------------------------------------------ item 15: make demo, LICENSE
def test_make_demo_with_another_quest_file(tmp_path):
    """`make demo QUEST=... RUN=...` with a QUEST file that has its own ids (so no id-added copy)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    quest = tmp_path / "quest.jsonl"
    lines = (ROOT / "data" / "quest_sample" / "test.jsonl").read_text().splitlines()
    quest.write_text("".join(json.dumps({"id": str(i), **json.loads(ln)}) + "\n" for i, ln in enumerate(lines, 1)))
    venv = tmp_path / "venv"                          # this interpreter stands in for the demo's venv
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "treckit").write_text(f'#!/bin/sh\nexec {sys.executable} -m treckit "$@"\n')
    (venv / "bin" / "treckit").chmod(0o755)
    (venv / ".installed").touch()
    (venv / ".installed-plots").touch()               # PLOT=1 installs the plots extra: this interpreter has it
    out = tmp_path / "out"
    p = subprocess.run(["make", "-C", ROOT, "demo", f"VENV={venv}", f"PY={sys.executable}", f"OUT={out}",
                        f"QUEST={quest}", "RUN=data/quest_sample/bm25_predictions.jsonl",
                        "RUN2=data/quest_sample/dense_predictions.jsonl", "PLOT=1"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    data = json.loads((out / "compare.json").read_text())
    assert list(data["systems"]) == ["bm25", "dense"]
    assert all((out / f"compare.{ext}").exists() for ext in ("csv", "md", "tex", "png"))


def test_make_demo_draws_no_plot_unless_asked(tmp_path):
    """The light install has no matplotlib: the demo's compare step leaves the plot out and says how to get it;
    with PLOT=1 it installs the plots extra first."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    plain = subprocess.run(["make", "-C", ROOT, "-n", "compare", f"VENV={tmp_path}", f"OUT={tmp_path}"],
                           capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    assert "--plot" not in plain.stdout and "make demo PLOT=1 installs matplotlib" in plain.stdout
    assert "-e '.[plots]'" not in plain.stdout and "-e .\n" in plain.stdout           # the light install only
    plot = subprocess.run(["make", "-C", ROOT, "-n", "compare", f"VENV={tmp_path}", f"OUT={tmp_path}", "PLOT=1"],
                          capture_output=True, text=True)
    assert plot.returncode == 0, plot.stderr
    assert f"--plot {tmp_path}/compare.png" in plot.stdout and "-m pip install -q --no-compile -e '.[plots]'" in plot.stdout


def test_license_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
