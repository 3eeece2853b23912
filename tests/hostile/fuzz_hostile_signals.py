"""The longer pass of hostile timing (``make fuzz-hostile``; the suite's cases: test_hostile_signals.py).

Each case starts a command that calls a user's function -- ``testset eval --function`` with 1 to 6 ``--workers`` (or
``--batch``), ``system eval``'s component or reranker, ``compare --config`` -- whose function, on a seeded call,
sleeps, hangs, spins in Python, swallows the KeyboardInterrupt and goes on, or returns on it; it interrupts the
command a seeded while after the function said it was called (once, or twice for a function that swallows the
first), and waits on the process.

A finding is a case where the command does not exit 130 within 2 s of the Ctrl-C that should end it (the bound
stretched only by the machine's load: ``patience``), prints a traceback, writes or leaves an output or a temporary
file, or shows the secret of its environment."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from fuzz_hostile_user_code import each_case, kept, system_argv
from helpers import ROOT, default_sigint, patience

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
SECRET_ENV = "TRECKIT_TEST_SECRET"

PRELUDE = f'''import os
import sys
import threading
import time

SECRET = os.environ["{SECRET_ENV}"]
CALLS = [0]
LOCK = threading.Lock()


def called():
    with LOCK:
        CALLS[0] += 1
        n = CALLS[0]
    if n == {{at}}:
        sys.stderr.write("called\\n")       # one write: threads' lines never interleave
        sys.stderr.flush()
        return True
    return False
'''

# what the function does on its seeded call (``answer``: what it returns; the other calls return at once)
BEHAVIOURS = {
    "sleeps": "        time.sleep(600)\n",
    "hangs": "        threading.Event().wait()\n",
    "spins": "        while True:\n            pass\n",
    "returns on Ctrl-C": "        try:\n            threading.Event().wait()\n        except KeyboardInterrupt:\n"
                         "            return {answer}\n",
    "swallows": "        while True:\n            try:\n                threading.Event().wait()\n"
                "            except BaseException:\n                sys.stderr.write('swallowed\\n')\n"
                "                sys.stderr.flush()\n",
}


def _argv(entry: str, folder: Path, rng: random.Random) -> list:
    spec = f"{folder / 'fns.py'}:f"
    outs = ["--out", folder / "res.json"] + (["--markdown", folder / "res.md"] if entry != "system eval component"
                                             and entry != "system eval reranker" and rng.random() < 0.5 else [])
    if entry == "testset eval":
        return ["testset", "eval", SAMPLE, "--function", spec, "--workers", str(rng.randint(1, 6)), "--no-cache", *outs]
    if entry == "testset eval --batch":
        return ["testset", "eval", SAMPLE, "--function", spec, "--batch", "--no-cache", *outs]
    return system_argv(entry, spec, folder, outs)


def _case(rng: random.Random, folder: Path) -> tuple[list, dict]:
    entry = rng.choice(["testset eval", "testset eval", "testset eval --batch", "system eval component",
                        "system eval reranker", "compare --config"])
    behaviour = rng.choice(list(BEHAVIOURS))
    batch = entry == "testset eval --batch"
    at = 1 if batch else rng.randint(1, 30)
    answer = "[[] for _ in texts]" if batch else "[]"
    arguments = {"testset eval --batch": "texts", "system eval reranker": "text, candidates"}.get(entry, "text")
    body = BEHAVIOURS[behaviour].format(answer=answer)
    (folder / "fns.py").write_text(PRELUDE.format(at=at) + f"\n\ndef f({arguments}):\n    if called():\n{body}"
                                   f"    return {answer if batch else '[]'}\n")
    return _argv(entry, folder, rng), {"entry": entry, "behaviour": behaviour, "at": at}


def _interrupted(argv: list, folder: Path, secret: str, rng: random.Random, expect: dict) -> list[str]:
    env = {**os.environ, SECRET_ENV: secret, "PYTHONPATH": str(ROOT / "code"), "TRECKIT_CACHE_DIR": str(folder / "c")}
    proc = subprocess.Popen([sys.executable, "-m", "treckit", *map(str, argv)], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    found = []
    try:
        line = _line(proc, patience(120))
        if line != "called\n":
            out, err = proc.communicate(timeout=patience(60))
            return [f"the function was never called ({line!r}; exit {proc.returncode}: {err[-300:]!r})"]
        time.sleep(rng.uniform(0, 0.3))
        proc.send_signal(signal.SIGINT)
        if expect["behaviour"] == "swallows" and _swallowed(proc):
            proc.send_signal(signal.SIGINT)              # the function swallowed the first: a second one ends it
        start = time.monotonic()
        try:
            out, err = proc.communicate(timeout=patience(2))
        except subprocess.TimeoutExpired:
            found.append(f"still running {patience(2):.1f} s after Ctrl-C")
            proc.kill()
            out, err = proc.communicate()
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if not found and proc.returncode != 130:
        found.append(f"exit {proc.returncode}, not 130 ({err[-300:]!r})")
    if "Traceback" in out + err or "internal error" in out + err:
        found.append("a traceback or an internal error")
    if secret in out + err:
        found.append("the secret was shown")
    left = sorted(p.name for p in folder.iterdir() if p.name not in ("fns.py", "sys.yaml", "__pycache__", "c"))
    if left:
        found.append(f"written or left behind: {left}")
    expect["seconds"] = round(took, 3)
    return found


def _line(proc: subprocess.Popen, within: float) -> str:
    """The next line of the process's stderr, or '' when it ends first (a watchdog kills it past ``within`` s)."""
    import threading
    timer = threading.Timer(within, proc.kill)
    timer.start()
    try:
        return proc.stderr.readline()
    finally:
        timer.cancel()


def _swallowed(proc: subprocess.Popen) -> bool:
    """Whether the function caught the first Ctrl-C and went on (it says so); one in a worker thread never sees it,
    nor does one the command's own first Ctrl-C already ended."""
    return _line(proc, patience(2)) == "swallowed\n"


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    findings = []
    for i, rng, folder, secret in each_case(cases, seed, out):
        argv, expect = _case(rng, folder)
        found = _interrupted(argv, folder, secret, rng, expect)
        if kept(folder, found, {"argv": argv, "expect": expect}):
            findings.append(f"case {i} ({expect['entry']}, {expect['behaviour']} on call {expect['at']}): "
                            f"{'; '.join(found)}; reproducer in {folder}")
    return findings
