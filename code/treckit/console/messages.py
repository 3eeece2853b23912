"""Saying things: a note or warning of one of treckit's commands on stderr (:func:`say`), and the library's
warnings (:func:`warn_python`), both naming options as the speaker spells them (:mod:`.spelling`)."""
from __future__ import annotations

import os
import sys
import warnings

from . import spelling
from .errors import without_credentials

# the folder of the treckit package: frames of code inside it are treckit's, not the caller's
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def say(msg: str) -> None:
    """A warning or a note on stderr, naming options as the command that is running spells them."""
    print(f"treckit: {without_credentials(spelling.spell(msg))}", file=sys.stderr)


class InputWarning(UserWarning):
    """A reading that is allowed but may not be what was meant (filter it with :mod:`warnings`)."""


def warn_python(message: str, category: type[Warning] = InputWarning) -> None:
    """The library's way to warn: a catchable ``category`` (:class:`InputWarning` unless another is
    given), attributed to the caller's code (the first frame outside treckit), naming options as the
    Python API's keywords.  Inside one of treckit's commands (a command reading a run through the
    API's defaults), said on stderr as the command's other warnings are, with its options
    (:mod:`treckit.console.spelling`)."""
    if spelling.command_running():
        print(f"treckit: {without_credentials(spelling.spell(message))}", file=sys.stderr)
        return
    import inspect

    level, frame = 2, inspect.currentframe().f_back     # stacklevel 2 is the frame that called warn_python
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(without_credentials(spelling.spell(message)), category, stacklevel=level)
