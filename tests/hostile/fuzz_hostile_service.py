"""The longer randomized pass of the service's hostile clients (`make fuzz-hostile`; the suite's cases are
test_hostile_service.py): seeded attacks on one real `treckit serve` -- slow clients beside normal requests, bodies
held up to the cap, numbers that are no JSON number and repeated keys anywhere in a body, huge and lying bodies,
wrong content types, bursts, tied runs with huge cutoffs, bare test sets, reading options with any value (each
printed fix sent as printed).

What must hold for every case: no answer 5xx but a 503 with Retry-After; a refused body names where it is wrong;
no worker taken while only slow clients are connected; the bytes held never past the cap; the server still answers
after each case, and holds nothing once its clients are gone."""
from __future__ import annotations

import json
import random
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from helpers import patience
from service_server import BASELINE_RUN, Server, SlowClient, metric_samples, sample_test_set

CAP = 400_000
MAX_BODY = 200_000              # Server's max_body_bytes
NOT_FINITE = ("NaN", "Infinity", "-Infinity", "1e999", "-2e308", "1" + "0" * 320 + ".0", "9" * 20 + "e300")
CONTENT_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=z", "",
                 "application/xml", "text/json")
READING_VALUES = {"format": ["trec", "trec3", "tsv", "jsonl", "csv", ""], "order": ["auto", "desc", "asc", "given", "up"],
                  "ties": ["keep", "break", "docid-asc", "random"], "duplicates": ["error", "keep-first", "keep-max",
                                                                                     "keep-last", "keep-all"],
                  "layout": ["auto", "docid-spaces", "extra-columns", "x"], "tsv_third": ["score", "rank", "id"],
                  "skip_malformed": [True, False, "true", 1], "id_base": [0, 1, -5, 2 ** 63, 1.5],
                  "id_field": ["qid", "id", "nope"], "docs_field": ["docs", "ranking"]}
MEMBER = re.compile(r'"([a-z_]+)": ("[^"]*"|true|false|-?[0-9]+)')


class Findings(list):
    def check(self, ok: bool, what: str) -> bool:
        if not ok:
            self.append(what)
        return ok


def fuzz(cases: int, seed: int, out: Path) -> list[str]:
    import httpx
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    found = Findings()
    tmp = Path(tempfile.mkdtemp(prefix="server-", dir=out))
    server = Server(tmp, config=f"evaluation_workers: 2\nmax_waiting_requests: 8\nbody_min_rate_bytes_s: 64\n"
                                f"body_read_timeout_s: {4 * patience(1.0):g}\nmax_buffered_body_bytes: {CAP}\n")
    client = httpx.Client(timeout=patience(120))
    attacks = [slow_clients, held_bodies, not_finite, repeated_key, lying_bodies, content_type, burst, tied_run,
               bare_test_set, reading_options]
    try:
        for case in range(cases):
            attack = attacks[case % len(attacks)] if case < len(attacks) else rng.choice(attacks)
            before = len(found)
            try:
                attack(server, client, rng, found)
            except (httpx.HTTPError, OSError, AssertionError, KeyError, ValueError) as exc:
                found.append(f"{attack.__name__}: {type(exc).__name__}: {str(exc)[:200]}")
            alive = _answers(client, server)
            found.check(alive, f"{attack.__name__}: the server stopped answering")
            if len(found) > before:
                (out / f"case-{seed}-{case}.txt").write_text("\n".join(found[before:]) + "\n")
            if not alive:
                break
        found.check(_settled(server), "bodies still held or arriving after every client left")
        log = server.stderr_path.read_text(errors="replace")
        found.check("Traceback" not in log and "TOP-SECRET" not in log, "the server's log has a traceback or a secret")
    finally:
        client.close()
        server.stop()
    return found


# ------------------------------------------------------------------ what every answer must be
def _answer_ok(r, found: Findings, what: str, allowed: set[int]) -> bool:
    if r.status_code == 503 and r.headers.get("retry-after") != "5":
        return found.check(False, f"{what}: 503 without Retry-After")
    ok = found.check(r.status_code in allowed | {503}, f"{what}: status {r.status_code}: {r.text[:200]}")
    return ok and found.check("Traceback" not in r.text and "TOP-SECRET" not in r.text, f"{what}: leaks: {r.text[:200]}")


def _answers(client, server: Server) -> bool:
    try:
        return client.get(server.url + "/v1/health", timeout=patience(30)).status_code == 200
    except OSError:
        return False


def _settled(server: Server) -> bool:
    deadline = time.monotonic() + patience(60)
    while time.monotonic() < deadline:
        m = metric_samples(server.url)
        if m[("treckit_request_bodies_arriving", ())] == 0 and m[("treckit_request_body_bytes_held", ())] == 0:
            return True
        time.sleep(0.1)
    return False


def _post(client, server: Server, body, path: str = "/v1/evaluate", **kw):
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(server.url + path, content=content, headers=kw.pop("headers", {"content-type": "application/json"}),
                       **kw)


def _good() -> dict:
    return {"test_set": sample_test_set(), "run": BASELINE_RUN.read_text()}


# ------------------------------------------------------------------ the attacks
def slow_clients(server, client, rng, found):
    """1-8 clients trickling (0-40 bytes a second, any length said): no worker is taken for them, and a normal
    request beside them is answered."""
    _settled(server)
    body = json.dumps(_good()).encode()
    slow = [SlowClient(server.port, body, rate=rng.choice([0, 1, 2, 5, 40]), length=rng.choice([None, len(body) * 2]))
            for _ in range(rng.randint(1, 8))]
    try:
        deadline = time.monotonic() + patience(30)
        while metric_samples(server.url)[("treckit_request_bodies_arriving", ())] < len(slow):
            if time.monotonic() > deadline or any(c.status for c in slow):
                break
            time.sleep(0.05)
        m = metric_samples(server.url)
        found.check(m[("treckit_evaluations_running", ())] == 0, f"slow clients: {m[('treckit_evaluations_running', ())]}"
                    " workers taken while only slow clients were connected")
        r = _post(client, server, body)
        if _answer_ok(r, found, "a request beside slow clients", {200}) and r.status_code == 200:
            found.check(abs(r.json()["metrics"]["recall_at_10"] - 0.7116187746893629) < 1e-12, "wrong numbers")
    finally:
        for c in slow:
            c.stop()
    for c in slow:
        found.check(c.status in (None, 408), f"slow client: status {c.status} {c.answer}")


def held_bodies(server, client, rng, found):
    """Bodies sent part way and held: the bytes held never pass the cap; one that would is a 503 with
    Retry-After."""
    _settled(server)
    clients = []
    try:
        for _ in range(rng.randint(2, 6)):
            size = rng.randint(1_000, MAX_BODY)
            clients.append(SlowClient(server.port, b" " * size, rate=0, burst=rng.randint(0, size - 1),
                                      length=rng.choice([None, -1])))
            time.sleep(0.05)
            held = metric_samples(server.url)[("treckit_request_body_bytes_held", ())]
            found.check(held <= CAP, f"held bodies: {held} bytes held, past the cap {CAP}")
        time.sleep(0.3)
        for c in clients:
            if c.status is not None:
                found.check(c.status in (503, 408) and (c.status != 503 or c.headers.get("retry-after") == "5"),
                            f"held bodies: {c.status} {c.answer}")
    finally:
        for c in clients:
            c.stop()


def _numeric_places(rng) -> tuple[str, str, list]:
    """(path, body text with the placeholder @, the location it must be refused at)."""
    ts = sample_test_set()
    q = rng.randrange(len(ts["queries"]))
    d = rng.randrange(len(ts["queries"][q]["relevant_docs"]))
    kind = rng.choice(["score", "grade", "topK", "threshold", "k"])
    if kind == "score":
        doc = ts["queries"][q]["relevant_docs"][d]["doc_id"]
        return "/v1/evaluate", '{"test_set": %s, "run": {"q01": {"x": 1.5, "%s": @}}}' % (json.dumps(ts), doc), \
            ["body", "run", "q01", doc]
    if kind in ("grade", "topK"):
        marker = "__HERE__"
        if kind == "grade":
            ts["queries"][q]["relevant_docs"][d]["grade"] = marker
        else:
            ts["queries"][q]["topK"] = marker
        loc = ["body", "test_set", "queries", q, *(["relevant_docs", d, "grade"] if kind == "grade" else ["topK"])]
        return ("/v1/rq" if kind == "topK" else "/v1/evaluate",
                json.dumps({"test_set": ts, "run": "q01 Q0 a 1 1 t\n"}).replace(f'"{marker}"', "@"), loc)
    return "/v1/rq", '{"test_set": %s, "run": "q01 Q0 a 1 1 t\\n", "%s": @}' % (json.dumps(ts), kind), ["body", kind]


def not_finite(server, client, rng, found):
    """NaN, ±Infinity or a number past a double anywhere a number goes: 422 naming the place."""
    path, text, loc = _numeric_places(rng)
    literal = rng.choice(NOT_FINITE)
    r = _post(client, server, text.replace("@", literal), path)
    if _answer_ok(r, found, f"{literal} at {loc}", {422}) and r.status_code == 422:
        found.check(r.json()["detail"][0]["loc"] == loc, f"{literal} at {loc}: refused at {r.json()['detail'][0]['loc']}")


def _dumps_repeating(value, target: int, counter: list, rng) -> str:
    """``value`` as JSON, the ``target``-th object (in the order written) saying one of its keys twice."""
    if isinstance(value, dict):
        index = counter[0]
        counter[0] += 1
        items = [(json.dumps(str(k)), _dumps_repeating(v, target, counter, rng)) for k, v in value.items()]
        if index == target and items:
            items.insert(rng.randint(0, len(items)), (rng.choice(items)[0], json.dumps(rng.random())))
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dumps_repeating(v, target, counter, rng) for v in value) + "]"
    return json.dumps(value)


def repeated_key(server, client, rng, found):
    """A key said twice in any object of a valid body (a dict run, a query, a relevant doc, the body): 422."""
    ts = sample_test_set()
    ts["queries"] = ts["queries"][:rng.randint(1, 5)]
    body = {"test_set": ts, "run": {"q01": {"a": 1.0, "b": 0.5}}, "system": "s"}
    objects = 1 + 1 + len(ts["queries"]) + sum(len(q["relevant_docs"]) for q in ts["queries"]) + 2
    target = rng.randrange(objects)
    r = _post(client, server, _dumps_repeating(body, target, [0], rng))
    if _answer_ok(r, found, f"a key repeated in object {target}", {422}) and r.status_code == 422:
        found.check(r.json()["detail"][0]["type"] == "duplicate_key", f"repeated key: {r.text[:200]}")


def lying_bodies(server, client, rng, found):
    """A Content-Length past the limit, a chunked body growing past it, a body shorter than it said: 413 / 408."""
    kind = rng.choice(["said too large", "grown too large", "shorter than said"])
    if kind == "said too large":
        c = SlowClient(server.port, b"", rate=0, length=rng.choice([MAX_BODY + 1, 10 ** 15, 2 ** 64]))
        want = {413}
    elif kind == "grown too large":
        c = SlowClient(server.port, b"{" * (MAX_BODY + rng.randint(1, 50_000)), rate=0, burst=MAX_BODY + 60_000,
                       length=-1)
        want = {413}
    else:
        body = json.dumps(_good()).encode()
        c = SlowClient(server.port, body[:rng.randint(0, len(body) - 1)], rate=0, burst=len(body), length=len(body))
        want = {408}
    status = c.wait(patience(30))
    found.check(status in want, f"{kind}: status {status} {c.answer}")
    c.stop()


def content_type(server, client, rng, found):
    """A good body said to be anything but JSON: 415."""
    ctype = rng.choice(CONTENT_TYPES)
    r = _post(client, server, json.dumps(_good()), headers={"content-type": ctype} if ctype else {})
    _answer_ok(r, found, f"content type {ctype!r}", {415})


def burst(server, client, rng, found):
    """20-100 requests at once, good and bad: answers or 503s."""
    import httpx
    bodies = [_good(), {"test_set": {"name": "x"}}, sample_test_set(), {"test_set": sample_test_set(), "run": 5}]
    n = rng.randint(20, 100)
    with ThreadPoolExecutor(n) as pool:
        answers = list(pool.map(lambda i: httpx.post(server.url + "/v1/evaluate", json=bodies[i % 4],
                                                     timeout=patience(120)), range(n)))
    for i, r in enumerate(answers):
        _answer_ok(r, found, f"burst request {i % 4}", {200} if i % 4 in (0, 2) else {400, 422})


def tied_run(server, client, rng, found):
    """Every score equal over 1-5,000 docs, relevant docs anywhere, cutoffs up to 2^31 - 1 (or past it: 400): recall
    at the largest cutoff is the share of relevant docs the run lists."""
    n = rng.randint(1, 5000)
    relevant = sorted(rng.sample(range(n + 20), rng.randint(1, min(10, n + 20))))
    ts = {"name": "tied", "version": "1", "queries": [{"query_id": "q", "query_text": "t", "query_type": "t",
                                                          "relevant_docs": [{"doc_id": f"d{i:05d}", "grade": 1}
                                                                            for i in relevant]}]}
    cutoff = rng.choice([2 ** 31 - 1, 10 ** 6, n, 2 ** 31, 2 ** 63])
    run = "".join(f"q Q0 d{i:05d} {i + 1} {rng.choice(['0', '0.0', '-0'])} t\n" for i in range(n))
    r = _post(client, server, {"test_set": ts, "run": run, "measures": [f"recall@{cutoff}", "P@5", "ndcg_at_10"]})
    if _answer_ok(r, found, f"tied run of {n} at @{cutoff}", {200} if cutoff < 2 ** 31 else {400}) \
            and r.status_code == 200:
        listed = sum(i < n for i in relevant) / len(relevant)
        found.check(abs(r.json()["metrics"][f"recall_at_{cutoff}"] - listed) < 1e-12,
                    f"tied run: recall {r.json()['metrics']} where {listed} by hand")


def bare_test_set(server, client, rng, found):
    """The test set itself as the body, whole or broken: 200 from the system, or 422 naming the field where it was
    sent (never under test_set)."""
    ts = sample_test_set()
    ts["queries"] = ts["queries"][:rng.randint(1, 10)]
    broken = rng.choice([None, "name", "version", "queries", "query_text", "grade", "extra"])
    if broken in ("name", "version"):
        ts[broken] = rng.choice([None, 5, ""])
    elif broken == "queries":
        ts["queries"] = rng.choice([[], {}, "q"])
    elif broken == "query_text":
        del ts["queries"][0]["query_text"]
    elif broken == "grade":
        ts["queries"][0]["relevant_docs"][0]["grade"] = rng.choice([4, -1, "3", 1.5, True])
    elif broken == "extra":
        ts["run_file"] = "bow.trec"
    r = _post(client, server, ts)
    if _answer_ok(r, found, f"bare test set ({broken})", {422} if broken else {200}) and r.status_code == 422:
        loc = r.json()["detail"][0]["loc"]
        found.check("test_set" not in loc, f"bare test set ({broken}): refused at {loc}, a place not sent")


def reading_options(server, client, rng, found):
    """Reading options with any value, on run text or a dict run: 200 / 400 / 422; a 400's fix, sent as printed
    (its first choice), is never refused as an unknown member."""
    sent = {k: rng.choice(v) for k, v in rng.sample(sorted(READING_VALUES.items()), rng.randint(1, 4))}
    run = rng.choice([BASELINE_RUN.read_text(), BASELINE_RUN.read_text() + "q01 Q0 x notarank 1 t\n",
                      BASELINE_RUN.read_text() + BASELINE_RUN.read_text().splitlines(keepends=True)[0],
                      {"q01": {"a": 1.0}}])
    body = {"test_set": sample_test_set(), "run": run, **sent}
    r = _post(client, server, body)
    if not _answer_ok(r, found, f"reading options {sent}", {200, 400, 422}) or r.status_code != 400:
        return
    members = {name: json.loads(value) for name, value in MEMBER.findall(r.json().get("fix") or "")}
    if members:
        again = _post(client, server, {**body, **members})
        found.check(not (again.status_code == 422 and "Extra inputs" in again.text),
                    f"the fix {members} of {sent} is refused: {again.text[:200]}")
