"""What every engine answers (:class:`Engine`), and the part the engines that evaluate here share
(:class:`OneAfterAnother`).  :func:`treckit.engines.choice.choose` picks the engine."""
from __future__ import annotations

import contextlib
from typing import ContextManager, Protocol


class Engine(Protocol):
    """What every engine answers."""

    name: str

    def read_judgments(self, path, qrels_format, reading):
        """The judgments at ``path`` as this engine reads them (``qrels_format``: None, detected)."""

    def evaluate(self, qrels, run, requests, options, reading, *, qrels_source=None, warn=None):
        """One run (a path, or a run given in Python) against ``qrels``: its EvalResult."""

    def evaluate_files(self, qrels, paths, requests, options, reading, *, qrels_source=None, warn=None) -> list:
        """Run files against ``qrels``: [(path, run tag, EvalResult)], in the order given."""

    def scorer(self) -> ContextManager:
        """Where ``compare`` scores its systems (None: here, in turn)."""


class OneAfterAnother:
    """An engine that evaluates run files here, one after another, and has compare score its systems in turn."""

    def evaluate_files(self, qrels, paths, requests, options, reading, *, qrels_source=None, warn=None) -> list:
        out = []
        for path in paths:
            res = self.evaluate(qrels, path, requests, options, reading, qrels_source=qrels_source, warn=warn)
            out.append((path, res.runid, res))
        return out

    def scorer(self) -> ContextManager:
        return contextlib.nullcontext()
