"""The memory budget of a command's data (``--memory-limit``), parsed once into one value: a number of bytes, no
limit, or the default (:data:`treckit.thresholds.MEMORY_LIMIT_DEFAULT`, read when the budget is used, so that tests
can lower it); :data:`HELP` is the option's help, the same in every command (docs/engines.md: "Memory budget")."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import thresholds
from ..console.errors import InputError
from ..console.process import allocate_within_budget
from ..inputs.held import holding

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b?)\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_memory_limit(text) -> int | None:
    """``2G``, ``512M``, ``1.5GiB``, ``1000000`` (bytes) -> bytes; ``0`` / ``none`` / ``off`` -> None (in memory).
    Units are binary (K = 1024)."""
    if text is None or isinstance(text, int) and not isinstance(text, bool):
        if text is not None and text < 0:
            raise InputError(f"memory limit {text}: not a size", fix="give a number of bytes >= 0 (0: no limit)")
        return text or None
    s = str(text).strip().lower()
    if s in ("0", "none", "off", "no"):
        return None
    m = _SIZE.fullmatch(s)
    if not m:
        raise InputError(f"--memory-limit {text}: not a size", fix="give a size such as 2G, 512M or 0 (no limit)")
    number = float(m.group(1))
    if not number:
        return None
    return max(1, int(number * _UNITS[m.group(2).lower()]))     # a budget below a byte is a byte, not "no limit"


@dataclass(frozen=True)
class MemoryLimit:
    """How much memory evaluating a run file may take: ``size`` bytes, or no limit (``size`` None: read whole);
    :data:`DEFAULT_MEMORY` is :data:`treckit.thresholds.MEMORY_LIMIT_DEFAULT`, read when the budget is used."""

    size: int | None = None
    default: bool = False

    @property
    def bytes(self) -> int | None:
        return thresholds.MEMORY_LIMIT_DEFAULT if self.default else self.size

    @classmethod
    def parse(cls, value) -> "MemoryLimit":
        """The budget a caller gives: a MemoryLimit as it is; else a size (``"512M"``) or a number of bytes, ``0``,
        ``None`` or ``"none"`` meaning no limit."""
        return value if isinstance(value, MemoryLimit) else cls(parse_memory_limit(value))

    @classmethod
    def option(cls, text: str | None) -> "MemoryLimit":
        """The budget ``--memory-limit`` gives: its size, or the default when the option is not given."""
        return DEFAULT_MEMORY if text is None else cls.parse(text)

    def governing(self, own_process: bool = False):
        """A context in which the inputs are read within this budget (:mod:`treckit.inputs.held`): what a reader
        holds whole, its pieces and the longest line.  The default budget (no ``--memory-limit``) decides only
        what the engine streams; a budget given bounds everything read, and in one of treckit's own processes
        (``own_process``: a command, a staged script) Arrow allocates as the budget needs
        (:func:`~treckit.console.process.allocate_within_budget`)."""
        if own_process and not self.default and self.size is not None:
            allocate_within_budget()
        return holding(None if self.default else self.size)


DEFAULT_MEMORY = MemoryLimit(default=True)

HELP = ("memory budget of the data (e.g. 512M, 2G; 0 or none: no limit; default: 2G, which only decides what is "
        "streamed): a TREC run (plain or .gz) is evaluated block by block as it is read, and what must be held whole "
        "is refused past the budget, naming it (docs/engines.md: Memory budget)")
