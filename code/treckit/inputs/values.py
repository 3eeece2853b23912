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
    if _plain_ints(values):                 # the usual dict or frame of Python ints: nothing to convert
        return values
    out = []
    for v in values:
        f = number(v, "grade", role)
        if not (math.isfinite(f) and f.is_integer()):
            raise InputError(f"{role}: grade {v!r} is not an integer", fix="relevance grades are integers (0, 1, 2 ...)")
        out.append(int(f))
    return out


def scores(values) -> list[float] | np.ndarray:
    """Every value as :func:`score_value` reads it: a list or a numeric array of doubles, checked at once when
    every value is a plain ``float`` or ``int`` (or the array's dtype is one: no bools, no text), else one by one
    (whose errors name the value)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind in "fiu":
            checked = values.astype(np.float64)
            if not np.isnan(checked).any():
                return checked
        values = values.tolist()
    if set(map(type, values)) <= _PLAIN_NUMBERS:
        try:
            checked = np.array(values, np.float64)
        except OverflowError:               # an int past a double's range: the one-by-one reading names it
            checked = None
        if checked is not None and not np.isnan(checked).any():
            return checked
    return [score_value(v) for v in values]


_PLAIN_NUMBERS = {float, int}


def _plain_ints(values) -> bool:
    """Python ints a double holds exactly (a grade is read through a double: larger ones would round)."""
    return (isinstance(values, list) and set(map(type, values)) <= {int}
            and (not values or -_EXACT <= min(values) and max(values) <= _EXACT))


_EXACT = 2 ** 53


def score_value(v, role: str = "run") -> float:
    """A score given in memory (a dict run, a retrieval function's answer), read one way everywhere: a real
    number (not a bool, not text) within a double's range, not NaN."""
    f = number(v, "score", role)
    if math.isnan(f):
        raise InputError(f"{role}: a score is NaN", fix="give every document a real number; drop or rescore NaN rows")
    return f
