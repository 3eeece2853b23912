"""The longer pass of hostile user code (``make fuzz-hostile``; the suite's cases: test_hostile_user_code.py).

Each case writes a function file whose function (or module, at import) does one seeded hostile thing -- raises any
BaseException (a subclass of the user's, an exception group, one whose ``str()`` raises, a chained one) carrying a
secret of the environment, on the first call or a later one, from a helper module or a generator read late; closes
a standard stream or its descriptor; forks (at most once: a marker file made with O_EXCL); ends the process with
``os._exit`` -- and calls it through one of the ways treckit calls a user's function: ``testset eval --function``
(one thread or several, or as a batch), ``system eval``'s component or reranker, ``compare --config``.  What the
function does to the process runs in a process of its own (under a time limit); what it raises, in this one.

A finding is a case where the exit code is not the one expected (2; the code ``os._exit`` gave), the message does not
name the function and what it did, a traceback or "internal error" is printed, the secret shows in stdout, stderr or
a file written, a results file is written for an evaluation that failed, or a forked process is still running."""
from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from cli_runner import run_cli
from helpers import ROOT, patience

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
BOW_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
SECRET_ENV = "TRECKIT_TEST_SECRET"

PRELUDE = f'''import os
import sys
import threading

SECRET = os.environ["{SECRET_ENV}"]
HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = [0]
LOCK = threading.Lock()


class Custom(BaseException):
    pass


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError(SECRET)


def nth_call():
    with LOCK:
        CALLS[0] += 1
        return CALLS[0]


def fork_once():
    """At most one fork in all, whatever treckit does: only the caller that makes the marker forks."""
    try:
        os.close(os.open(os.path.join(HERE, "forked.marker"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    if os.fork() == 0:
        with open(os.path.join(HERE, "child.pid"), "w") as f:
            f.write(str(os.getpid()))
'''

# what the function raises: (the expression, the words the message says)
RAISES = [
    ("BaseException('secret=' + SECRET)", "raised BaseException"),
    ("SystemExit('secret=' + SECRET)", "called sys.exit(...)"),
    ("SystemExit(3)", "called sys.exit(3)"),
    ("SystemExit()", "called sys.exit(None)"),
    ("GeneratorExit('secret=' + SECRET)", "raised GeneratorExit"),
    ("KeyboardInterrupt('secret=' + SECRET)", "raised KeyboardInterrupt"),
    ("Custom('secret=' + SECRET)", "raised Custom"),
    ("ValueError('secret=' + SECRET)", "raised ValueError"),
    ("StopIteration('secret=' + SECRET)", "raised StopIteration"),
    ("RecursionError('secret=' + SECRET)", "raised RecursionError"),
    ("MemoryError('secret=' + SECRET)", "raised MemoryError"),
    ("Unprintable()", "raised Unprintable"),
    ("BaseExceptionGroup('secret=' + SECRET, [ValueError(SECRET), Custom(SECRET)])", "raised BaseExceptionGroup"),
    ("OSError(13, 'secret=' + SECRET, SECRET)", "raised PermissionError"),
]

# how a raise is reached: the body of the function (``{fail}`` is ``raise <expression>``)
SHAPES = {
    "at once": "    {fail}\n",
    "on a later call": "    if nth_call() >= {n}:\n        {fail}\n    return ['PMC2905704']\n",
    "chained": "    try:\n        int('secret=' + SECRET)\n    except ValueError:\n        {fail}\n",
    "from a helper": "    import helper_{case}\n    helper_{case}.fail()\n",
    "in a generator": "    def gen():\n        yield 'PMC2905704'\n        {fail}\n    return gen()\n",
}

# what the function does to its process: (the body, the words the message says, or None for os._exit)
DOES = {
    "closes sys.stdout": ("    sys.stdout.close()\n    return ['PMC2905704']\n", "closed sys.stdout"),
    "closes sys.stderr": ("    sys.stderr.close()\n    return ['PMC2905704']\n", "closed sys.stderr"),
    "closes descriptor 1": ("    os.close(1)\n    return ['PMC2905704']\n", "closed sys.stdout's descriptor (1)"),
    "closes descriptor 2": ("    os.close(2)\n    return ['PMC2905704']\n", "closed sys.stderr's descriptor (2)"),
    "forks": ("    fork_once()\n    return ['PMC2905704']\n", "forked a process (os.fork)"),
    "ends the process": ("    os._exit({code})\n", None),
}

ENTRIES = ["testset eval", "testset eval --workers", "testset eval --batch", "system eval component",
           "system eval reranker", "compare --config", "at import"]


def _argv(entry: str, folder: Path, rng: random.Random) -> list:
    spec = f"{folder / 'fns.py'}:f"
    if entry.startswith("testset eval"):
        extra = {"testset eval --workers": ["--workers", str(rng.randint(2, 6))],
                 "testset eval --batch": ["--batch"]}.get(entry, [])
        return ["testset", "eval", SAMPLE, "--function", spec, *extra, "--no-cache", "--out", folder / "res.json"]
    if entry == "at import":
        return ["testset", "eval", SAMPLE, "--function", f"{folder / 'at_import.py'}:f", "--no-cache",
                "--out", folder / "res.json"]
    return system_argv(entry, spec, folder, ["--out", folder / "res.json"])


def system_argv(entry: str, spec: str, folder: Path, outs: list) -> list:
    """The command of ``entry`` (``system eval component``, ``system eval reranker``, ``compare --config``) calling
    the function ``spec``, its system config written into ``folder``."""
    cfg = folder / "sys.yaml"
    if entry == "system eval reranker":
        cfg.write_text(f"components:\n  bow: {{run: {BOW_RUN}}}\nrerank: {{callable: '{spec}', depth: 5}}\n")
    else:
        cfg.write_text(f"components:\n  mine: {{callable: '{spec}'}}\n")
    if entry == "compare --config":
        return ["compare", "--test-set", SAMPLE, "--config", cfg, "--config", cfg, *outs]
    return ["system", "eval", cfg, "--test-set", SAMPLE, "--no-cache", *outs]


def _signature(entry: str) -> str:
    return {"testset eval --batch": "texts", "system eval reranker": "text, candidates"}.get(entry, "text")


def _case(rng: random.Random, i: int, folder: Path) -> tuple[list, dict]:
    """Write case ``i``'s files into ``folder``: (its argv, what is expected)."""
    entry = rng.choice(ENTRIES)
    in_process = rng.random() < 0.7
    if in_process:
        expression, says = rng.choice(RAISES)
        shapes = ["at once"] if entry == "at import" else [
            s for s in SHAPES if entry != "testset eval --batch" or s not in ("on a later call", "in a generator")]
        shape = rng.choice(shapes)                # a batch function is called once, and answers lists
        raising = f"raise {expression}"
        if shape == "from a helper":
            (folder / f"helper_{i}.py").write_text(PRELUDE + f"\n\ndef fail():\n    {raising}\n")
        if shape == "in a generator" and expression.startswith("StopIteration"):
            says = "raised RuntimeError"          # PEP 479: a generator's StopIteration is a RuntimeError
        body = SHAPES[shape].format(fail=raising, n=rng.randint(1, 40), case=i)
        expect = {"code": 2, "says": [says], "where": "err", "process": False, "does": f"{shape}: {expression}"}
    else:
        what = rng.choice(list(DOES))
        body, says = DOES[what]
        exit_code = rng.choice([0, 1, 2, 3, 7]) if what == "ends the process" else 2
        body = body.format(code=exit_code)
        expect = {"code": exit_code, "says": [says] if says else [], "process": True, "does": what,
                  "where": "out" if what == "closes descriptor 2" else "err"}
    if entry == "at import":                      # the same, done by the module's own code as it is imported
        module_code = "".join(line[4:] + "\n" for line in body.splitlines() if not line.strip().startswith("return"))
        (folder / "at_import.py").write_text(PRELUDE + "\n" + module_code + "\n\ndef f(text):\n    return []\n")
        expect["says"] = [s + " while it was imported" for s in expect["says"]]
    else:
        (folder / "fns.py").write_text(PRELUDE + f"\n\ndef f({_signature(entry)}):\n{body}")
        if expect["says"]:                       # not os._exit: an error, naming the function
            expect["says"].append("f()")
    expect["entry"] = entry
    return _argv(entry, folder, rng), expect


def _in_process(argv: list, secret: str, folder: Path) -> tuple[int, str, str]:
    before = dict(os.environ)
    os.environ.update({SECRET_ENV: secret, "TRECKIT_CACHE_DIR": str(folder / "cache")})
    sys.path.insert(0, str(folder))                               # helper modules beside the function
    try:
        return run_cli(argv)
    except BaseException as exc:             # noqa: BLE001 -- what escaped the command is the finding
        return -1, "", f"escaped the command: {type(exc).__name__}"
    finally:
        sys.path.remove(str(folder))
        os.environ.clear()
        os.environ.update(before)


def _own_process(argv: list, secret: str, folder: Path) -> tuple[int, str, str]:
    env = {**os.environ, SECRET_ENV: secret, "PYTHONPATH": str(ROOT / "code"),
           "TRECKIT_CACHE_DIR": str(folder / "cache")}
    p = subprocess.run([sys.executable, "-m", "treckit", *map(str, argv)], capture_output=True, text=True,
                       cwd=folder, env=env, timeout=patience(120))
    return p.returncode, p.stdout, p.stderr


def _fork_ended(folder: Path) -> str | None:
    """Why the forked process (if one was made) is a finding, else None."""
    if not (folder / "forked.marker").exists():
        return None
    deadline = time.monotonic() + patience(30)
    pid_file = folder / "child.pid"
    while not (pid_file.exists() and pid_file.read_text()):
        if time.monotonic() > deadline:
            return "the forked process never wrote its pid"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    while _alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
            return f"the forked process {pid} was still running"
        time.sleep(0.05)
    return None


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _problems(expect: dict, code: int, out: str, err: str, secret: str, folder: Path) -> list[str]:
    found = []
    written = "".join(p.read_text(errors="replace") for p in folder.rglob("*")
                      if p.is_file() and p.suffix not in (".py", ".yaml", ".pid", ".marker") and "cache" not in p.parts)
    if code != expect["code"]:
        found.append(f"exit {code}, expected {expect['code']}")
    if secret in out or secret in err or secret in written:
        found.append("the secret was shown or written")
    if "Traceback" in out + err or "internal error" in out + err:
        found.append("a traceback or an internal error")
    said = out if expect["where"] == "out" else err
    for s in expect["says"]:
        if s not in said:
            found.append(f"std{expect['where']} does not say {s!r}")
    if expect["says"] and not said.startswith("treckit: error: "):
        found.append(f"no treckit error on std{expect['where']}")
    if (folder / "res.json").exists() or list(folder.glob("*.tmp")):
        found.append("a results file was written for an evaluation that did not complete")
    if expect["where"] == "err" and out.strip():
        found.append("results printed for an evaluation that did not complete")
    why = _fork_ended(folder)
    if why:
        found.append(why)
    return found


def each_case(cases: int, seed: int, out: Path) -> Iterator[tuple[int, random.Random, Path, str]]:
    """(its number, the pass's seeded generator, a fresh folder, a seeded secret) for each case of a pass."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(cases):
        folder = out / f"case-{seed}-{i}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        yield i, rng, folder, f"s3cr3t-{rng.getrandbits(48):012x}"


def kept(folder: Path, found: list[str], record: dict) -> bool:
    """Whether the case found something: its folder is then kept as the reproducer, with ``record`` and the
    findings in finding.json; else it is removed."""
    if found:
        (folder / "finding.json").write_text(json.dumps({**record, "found": found}, indent=1, default=str))
    else:
        shutil.rmtree(folder)
    return bool(found)


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    findings = []
    for i, rng, folder, secret in each_case(cases, seed, out):
        argv, expect = _case(rng, i, folder)
        run = _own_process if expect["process"] else _in_process
        try:
            code, stdout, stderr = run(argv, secret, folder)
        except subprocess.TimeoutExpired:
            findings.append(f"case {i} ({expect['entry']}): still running after the time limit; files in {folder}")
            continue
        found = _problems(expect, code, stdout, stderr, secret, folder)
        if kept(folder, found, {"argv": argv, "expect": expect, "code": code, "stdout": stdout[-2000:],
                                "stderr": stderr[-2000:]}):
            findings.append(f"case {i} ({expect['entry']}, {expect.get('does', 'raises')}): {'; '.join(found)}; "
                            f"reproducer in {folder}")
    return findings
