"""The longer pass of hostile secrets (``make fuzz-hostile``; the suite's cases: test_hostile_secrets.py).

Each case is one of:
- text holding URLs with seeded credentials (``user:password@``, a bare ``user@``, a signature parameter), quoted as
  messages quote them, through the one function every message uses: no password survives, the host does;
- a ``--pushgateway`` URL with credentials on ``eval``, ``gate`` or ``testset eval``, to a real little server that
  refuses them, a closed port or no address at all;
- a URL input with credentials (a run or qrels read through fsspec) that is found, missing, malformed or refused;
- a run file of the service's ``data_dir`` with the secret in a seeded field of a seeded line, broken or not, asked
  for by ``/v1/evaluate`` or ``/v1/rq`` (through the worker's evaluator);
- the process's environment (``/proc/self/environ``, through a symlink or another spelling) named as an input of a
  seeded command, in a process of its own holding the secret;
- a config (a system's, ``compare --config``'s, the server's) naming a URL with credentials where it names a file.

A finding is the secret anywhere in stdout, stderr, an answer or a file written, a traceback or "internal error",
or an exit code other than 0 or 2."""
from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from cli_runner import run_cli
from fuzz_hostile_user_code import each_case, kept
from helpers import ROOT, patience

SAMPLE = ROOT / "data" / "test_sets" / "clinical_v1.yaml"
RESULTS = ROOT / "data" / "test_sets" / "baseline_results.json"
BOW_RUN = ROOT / "data" / "test_sets" / "baseline_bow.trec"
QRELS, RUN = ROOT / "data" / "ties" / "qrels.test", ROOT / "data" / "ties" / "rounded.run"
SECRET_ENV = "TRECKIT_TEST_SECRET"


def _secret(rng: random.Random) -> str:
    """A password of letters, digits and the characters a URL must percent-encode; at least 12 plain ones, so
    that finding it is never chance."""
    core = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12))
    odd = "".join(rng.choice(" @:/?#%&=+$!*'();,") for _ in range(rng.randint(0, 3)))
    return "S" + core + odd


# ------------------------------------------------------------------ the one function, on text
def _text_case(rng: random.Random, secret: str) -> list[str]:
    from treckit.console.errors import without_credentials
    plain = secret[:13]                                              # the part no encoding changes
    host = rng.choice(["127.0.0.1:9091", "gateway.example:443", "[::1]:8080", "h"])
    scheme = rng.choice(["http", "https", "s3", "gs", "tcp", "hf", "az", "abfs"])
    userinfo = rng.choice([f"ci:{plain}", plain, f"u:{plain}@x", f"u:{plain}:x"]) if rng.random() < 0.8 else None
    query = rng.choice(["", f"?X-Amz-Signature={plain}", f"?a=1&sig={plain}", f"?token={plain}&b=2",
                        f"?X-Amz-Credential={plain}%2F2024"])
    url = f"{scheme}://{userinfo + '@' if userinfo else ''}{host}/path/run.trec{query}"
    if not userinfo and not query:
        return []
    text = rng.choice(["{u}", "'{u}'", '"{u}"', "cannot read {u}: no such file", "({u})", "{u}, and {u}",
                       "treckit: error: {u}:3: rank 'x' is not an integer"]).format(u=url)
    if rng.random() < 0.3:                                           # as a library quotes an address
        text = f"Cannot connect to host ci:{plain}@{host} ssl:default"
    shown = without_credentials(text)
    found = []
    if plain in shown:
        found.append(f"without_credentials({text!r}) = {shown!r}")
    if host.split(":")[0].strip("[]") not in shown:
        found.append(f"without_credentials({text!r}) lost the host: {shown!r}")
    return found


# ------------------------------------------------------------------ commands given URLs
class _Servers:
    """One little server for the whole pass (tests/hostile/test_hostile_secrets.py's), serving the files with the
    right password and refusing any other."""

    def __init__(self, password: str) -> None:
        from test_hostile_secrets import LittleServer
        self.password = password
        self.server = LittleServer("ci", password, {"/run.trec": BOW_RUN.read_bytes(), "/q.qrels": QRELS.read_bytes(),
                                                    "/ties.run": RUN.read_bytes(), "/bad.trec": b"q1 Q0 d1 x 1 r\n"})

    def url(self, userinfo: str, path: str) -> str:
        return self.server.url(userinfo, path)

    def close(self) -> None:
        self.server.close()


def _pushgateway_case(rng: random.Random, secret: str, servers: _Servers, folder: Path) -> tuple[list, list]:
    target = rng.choice(["refused", "closed port", "no address", "bare"])
    userinfo = f"ci:{quote(secret, safe='')}"
    url = {"refused": servers.url(userinfo, "/"), "closed port": f"http://{userinfo}@127.0.0.1:1/",
           "no address": f"http://{userinfo}@127.0.0.1:port/", "bare": f"{userinfo}@127.0.0.1:1"}[target]
    command = rng.choice([["eval", "-m", "P.10", QRELS, RUN], ["gate", "--baseline", RESULTS, "--current", RESULTS],
                          ["testset", "eval", SAMPLE, "--run", BOW_RUN, "--out", folder / "res.json"]])
    return [*command, "--pushgateway", url], [2]


def _input_case(rng: random.Random, secret: str, servers: _Servers, folder: Path) -> tuple[list, list]:
    right = f"ci:{quote(servers.password, safe='')}"
    userinfo = rng.choice([right, right, f"ci:{quote(secret, safe='')}", quote(secret, safe="")])
    where = rng.choice(["/run.trec", "/bad.trec", "/missing.trec", "closed"])
    url = (f"http://{userinfo}@127.0.0.1:1/run.trec" if where == "closed" else servers.url(userinfo, where))
    if rng.random() < 0.3:
        url += f"?X-Amz-Signature={quote(secret, safe='')}"
    qrels = servers.url(right, "/q.qrels") if rng.random() < 0.3 else QRELS
    command = rng.choice([["eval", qrels, url], ["run", url, "-o", folder / "copy.trec"], ["detect", url],
                          ["compare", SAMPLE, url, BOW_RUN, "--out", folder / "cmp.json"],
                          ["testset", "eval", SAMPLE, "--run", url, "--out", folder / "res.json"],
                          ["fuse", url, BOW_RUN, "-o", folder / "fused.trec"]])
    return command, [0, 2]


# ------------------------------------------------------------------ configs naming URLs
def _config_case(rng: random.Random, secret: str, folder: Path) -> list[str]:
    """A config (a system's, compare's, the server's) naming a URL with the secret where it names a file: refused
    (a config names local files), the secret in no message and in no name of a file or folder made."""
    url = rng.choice([f"https://ci:{quote(secret, safe='')}@127.0.0.1:1/f", f"s3://AKIA:{quote(secret, safe='')}@b/f",
                      f"https://h/f?X-Amz-Signature={quote(secret, safe='')}"])
    docs = ROOT / "data" / "test_sets" / "documents.jsonl"
    system = ["system", "eval", folder / "c.yaml", "--test-set", SAMPLE, "--no-cache"]
    text, command = rng.choice([
        (f"corpus: '{url}'\ncomponents:\n  bm25: {{method: bm25}}\n", system),
        (f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25, corpus: '{url}'}}\n", system),
        (f"corpus: {docs}\ncomponents:\n  bm25: {{method: bm25, index: '{url}'}}\n", system),
        (f"components:\n  r: {{run: '{url}'}}\n", system),
        (f"run: '{url}'\n", ["compare", QRELS, RUN, "--config", folder / "c.yaml"]),
        (f"{rng.choice(['system', 'data_dir', 'cache_dir'])}: '{url}'\n", ["serve", "--config", folder / "c.yaml"]),
    ])
    (folder / "c.yaml").write_text(text)
    code, out, err = run_cli(command)
    (folder / "c.yaml").unlink()               # the secret's own place: not a file written
    found = _checked(command, code, out, err, secret, folder, [2])
    if any(secret[:13] in str(p) for p in folder.rglob("*")):
        found.append(f"{' '.join(map(str, command))[:300]}: a file or folder named after the URL")
    if found:                                  # the reproducer
        (folder / "c.yaml").write_text(text)
    return found


# ------------------------------------------------------------------ the service's data_dir
def _data_dir_case(rng: random.Random, secret: str, folder: Path) -> list[str]:
    from service_server import sample_test_set
    from treckit.service.evaluator import Evaluator, ServerSettings
    lines = BOW_RUN.read_text().splitlines()[:rng.randint(1, 200)]
    at = rng.randrange(len(lines))
    fields = lines[at].split()
    how = rng.choice(["field", "field", "extra field", "whole line", "duplicate doc", "jsonl", "nul"])
    if how == "field":
        fields[rng.randrange(len(fields))] = secret
        lines[at] = " ".join(fields)
    elif how == "extra field":
        lines[at] = " ".join(fields + [secret])
    elif how == "whole line":
        lines[at] = secret
    elif how == "duplicate doc":
        lines[at] = " ".join([fields[0], "Q0", secret, "1", "2.0", "r"])
        lines.insert(at + 1, " ".join([fields[0], "Q0", secret, "2", "1.0", "r"]))
    elif how == "nul":
        lines[at] = f"PATH=/bin\0TOKEN={secret}\0"
    name = "run.trec"
    text = "\n".join(lines) + "\n"
    if how == "jsonl":
        name = "run.jsonl"
        record = rng.choice([{"qid": secret, "docs": 5}, {"qid": "q01", "docs": [secret, secret], "scores": [2, 1]},
                             {"qid": "q01", "docs": ["PMC2905704"], "scores": [secret]}, {secret: 1}])
        text = json.dumps(record) + "\n"
    (folder / name).write_text(text)
    evaluator = Evaluator(ServerSettings(data_dir=str(folder), cache=False))
    kind = rng.choice(["evaluate", "rq"])
    status, payload, gauges = evaluator.answer(kind, json.dumps({"test_set": sample_test_set(), "run_file": name})
                                               .encode(), {})
    shown = json.dumps(payload) + json.dumps(gauges)
    found = []
    if secret in shown:
        found.append(f"{kind} of a run_file with the secret in a {how}: {status} {shown[:500]}")
    if status not in (200, 400):
        found.append(f"{kind} of a run_file with the secret in a {how}: status {status}")
    return found


# ------------------------------------------------------------------ the process's environment as an input
def _environ_case(rng: random.Random, secret: str, folder: Path) -> list[str]:
    path = rng.choice(["/proc/self/environ", "/proc/thread-self/environ", "/proc/self/../self/environ",
                       "link", "/proc/self/cwd/../../proc/self/environ"])
    if path == "link":
        (folder / "run.trec").symlink_to("/proc/self/environ")
        path = str(folder / "run.trec")
    command = rng.choice([["eval", QRELS, path], ["eval", path, BOW_RUN], ["run", path, "-o", "out.trec"],
                          ["qrels", path, "-o", "out.qrels"], ["detect", path], ["compare", QRELS, BOW_RUN, path],
                          ["testset", "eval", SAMPLE, "--run", path], ["fuse", path, BOW_RUN, "-o", "f.trec"],
                          ["eval", QRELS, path, "--run-format", rng.choice(["jsonl", "tsv", "trec", "trec3"])],
                          ["testset", "validate", path]])
    env = {**os.environ, SECRET_ENV: secret, "PYTHONPATH": str(ROOT / "code")}
    p = subprocess.run([sys.executable, "-m", "treckit", *map(str, command)], capture_output=True, text=True,
                       cwd=folder, env=env, timeout=patience(120))
    return _checked(command, p.returncode, p.stdout, p.stderr, secret, folder, [2])


def _checked(command: list, code: int, out: str, err: str, secret: str, folder: Path, codes: list,
             also: str = "") -> list[str]:
    written = "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    found = []
    what = " ".join(map(str, command))[:300]
    if code not in codes:
        found.append(f"{what}: exit {code} ({err[-300:]!r})")
    if "Traceback" in out + err or "internal error" in out + err:
        found.append(f"{what}: a traceback or an internal error")
    for plain in (secret[:13], also[:13]):
        if plain and (plain in out or plain in err or plain in written):
            found.append(f"{what}: the secret was shown or written")
    return found


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    servers = _Servers(_secret(random.Random(-seed)))
    findings = []
    try:
        for i, rng, folder, _ in each_case(cases, seed, out):
            secret = _secret(rng)
            kind = rng.choice(["text", "text", "pushgateway", "input", "input", "data_dir", "data_dir", "environ",
                               "config"])
            if kind == "text":
                found = _text_case(rng, secret)
            elif kind == "config":
                found = _config_case(rng, secret, folder)
            elif kind == "data_dir":
                found = _data_dir_case(rng, secret, folder)
            elif kind == "environ":
                found = _environ_case(rng, secret, folder)
            else:
                make = _pushgateway_case if kind == "pushgateway" else _input_case
                command, codes = make(rng, secret, servers, folder)
                code, stdout, stderr = run_cli(command)
                found = _checked(command, code, stdout, stderr, secret, folder, codes, servers.password)
            if kept(folder, found, {"kind": kind}):
                findings.append(f"case {i} ({kind}): {'; '.join(found)}; in {folder}")
    finally:
        servers.close()
    return findings
