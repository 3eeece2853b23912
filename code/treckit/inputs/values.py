"""Numbers given in Python (a dict run's scores, a DataFrame's grades, a retrieval function's answer), read one
way everywhere: real numbers within a double's range, grades whole, scores not NaN; never a silent 0."""
from __future__ import annotations

import math

from ..dependencies import deferred
from ..console.errors import InputError, shown, shown_number

np = deferred("numpy")


def number(v, what: str, role: str) -> float:
    """A number given in Python (not a bool, not text) as a double; what it is for names it in the error."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        said = shown(v) if isinstance(v, str) else repr(v) if v is None or isinstance(v, (bool, np.bool_)) \
            else f"of type {type(v).__name__}"          # a list or dict may be megabytes
        raise InputError(f"{role}: {what} {said} is not a number", fix=f"give every {what} as a number")
    try:
        return float(v)
    except OverflowError:                  # an integer past a double's range (its digits are not printed: thousands)
        raise InputError(f"{role}: a {what} that is {shown_number(v)} is too large for a double",
                         fix=f"give every {what} as a number within ±1.8e308") from None


def grades(values: list, role: str) -> list[int]:
    out = []
    for v in values:
        f = number(v, "grade", role)
        if not (math.isfinite(f) and f.is_integer()):
            raise InputError(f"{role}: grade {v!r} is not an integer", fix="relevance grades are integers (0, 1, 2 ...)")
        out.append(int(f))
    return out


def scores(values: list) -> list[float]:
    return [score_value(v) for v in values]


def score_value(v, role: str = "run") -> float:
    """A score given in memory (a dict run, a retrieval function's answer), read one way everywhere: a real
    number (not a bool, not text) within a double's range, not NaN."""
    f = number(v, "score", role)
    if math.isnan(f):
        raise InputError(f"{role}: a score is NaN", fix="give every document a real number; drop or rescore NaN rows")
    return f
