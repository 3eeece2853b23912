"""relstring: the grades of the first N retrieved docs as a string ('-' outside the pool, '.' unjudged)."""
from __future__ import annotations

from ..dependencies import deferred

np = deferred("numpy")


def relstring(v, params) -> list[str]:
    n = int(params[0]) if params else 10
    starts = np.searchsorted(v.q, np.arange(v.Q + 1))
    out = []
    for qi in range(v.Q):
        length = max(0, min(n, int(v.num_ret[qi])))
        chars = ["-"] * length
        for p, r in zip(v.pos[starts[qi]:starts[qi + 1]].tolist(), v.rel[starts[qi]:starts[qi + 1]].tolist()):
            if p < length:
                chars[p] = ">" if r > 9 else (str(r) if r >= 0 else ".")
        out.append("".join(chars))
    return out
