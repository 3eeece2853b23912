"""``make fuzz-service``: the evaluation service under schemathesis, from its own OpenAPI schema: requests that
follow the schema and requests that break it, seeded, against a real `treckit serve`; any 5xx answer fails.

    python tests/fuzz_service.py [--cases 1000] [--seed 20]

The cases are shared between the operations that take input (POST /v1/evaluate, POST /v1/rq), half
following the schema and half breaking it; the GET routes are called once each.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def fuzz(url: str, cases: int, seed: int, headers: dict | None = None) -> tuple[dict[int, int], list[tuple]]:
    """({status: requests answered with it}, [(operation, mode, status, the answer's start)] of every 5xx) for
    about ``cases`` requests."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_url(url + "/openapi.json", headers=headers or {})
    operations = [op.ok() for op in schema.get_all_operations()]
    with_input = [op for op in operations if op.method.upper() == "POST"]
    each = max(1, cases // (2 * max(1, len(with_input))))
    statuses: dict[int, int] = {}
    failures = []
    for operation in operations:
        modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if operation in with_input else (GenerationMode.POSITIVE,)
        for mode in modes:
            @seeded(seed)
            @settings(max_examples=each if operation in with_input else 1, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), derandomize=False, print_blob=False)
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case):
                response = case.call(base_url=url, headers=headers or {}, timeout=60)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code >= 500:
                    failures.append((operation.label, mode.value, response.status_code, response.text[:300]))
            check()
    return statuses, failures


def main(argv=None) -> int:
    from service_server import Server
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            t0 = time.monotonic()
            statuses, failures = fuzz(server.url, a.cases, a.seed)
        finally:
            server.stop()
        sent = sum(statuses.values())
        print(f"fuzz-service: {sent} requests (seed {a.seed}) in {time.monotonic() - t0:.0f} s, "
              f"{len(failures)} answered 5xx; by status: {dict(sorted(statuses.items()))}")
        for f in failures[:20]:
            print("  ", *f)
        if sent < a.cases:
            print(f"fuzz-service: only {sent} of the {a.cases} cases asked for were generated", file=sys.stderr)
            return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
