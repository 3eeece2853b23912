"""Which command is speaking: a message names its fix as the command that prints it can act on it.

Messages are written with the options of ``treckit``'s own commands (``pass --layout docid-spaces``).
The entry points (the CLI, the staged scripts) say which command is running (:func:`running`); each
:class:`Command` knows how it spells an option (the staged scripts write ``--id_base``, ``treckit
qrels`` calls the qrels format ``--format``) and which reading options it applies to which files.
With no command running the caller is the Python API, and options are named as its keywords
(``layout='docid-spaces'``).  :class:`treckit.console.errors.InputError` spells its fix this way, and so do
the warnings said on stderr and :class:`treckit.InputWarning`.

A reading option that the running command does not apply to the file in question is never offered as
if it did: :func:`pass_options` offers a one-off conversion with ``treckit run`` / ``treckit qrels``
instead (or nothing, for files no converter reads).  This module imports nothing of treckit's.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

# The reading options of runs: treckit.inputs.options.FLAGS and --break-ties (tests/cli/test_suggested_fixes.py
# checks that they agree).
RUN_OPTIONS = frozenset({
    "--run-format", "--order", "--ties", "--duplicates", "--gold", "--id-base", "--layout", "--tsv-third",
    "--id-field", "--docs-field", "--scores-field", "--hits-field", "--hit-doc-field", "--hit-score-field",
    "--query-field", "--skip-malformed", "--break-ties"})
# The reading options of judgments (treckit qrels's options that say how its input is read).
QRELS_OPTIONS = frozenset({"--qrels-format", "--layout", "--skip-malformed", "--duplicates", "--id-field",
                           "--id-base"})
# The roles whose files a converter reads with every reading option (treckit run, treckit qrels), for a
# one-off conversion where a command does not apply an option.
CONVERTED = ("run", "qrels")


@dataclass(frozen=True)
class Command:
    """A command as its messages must speak: its name as typed, how it spells the options a message names
    (``renames``: the message's spelling -> its own), which reading options it applies to which kind of file
    (``reads``: ``run``, ``qrels``), and which of the other options that a hint may name it has (``options``)."""

    name: str
    renames: Mapping[str, str] = field(default_factory=dict)
    reads: Mapping[str, frozenset] = field(default_factory=dict)
    options: frozenset = frozenset()
    python: bool = False
    request: bool = False                 # the service: options are a request's JSON members

    def applies(self, role: str, option: str) -> bool:
        """Whether the command reads files of ``role`` with ``option`` (e.g. ``--layout``)."""
        return option in self.reads.get(role, ())

    def offers(self, option: str) -> bool:
        return option in self.options or any(option in opts for opts in self.reads.values())

    def spell(self, text: str) -> str:
        """``text`` with the options it names spelled as this command spells them (text between backquotes,
        which quotes another command, is left as it is)."""
        parts = text.split("`")
        for i in range(0, len(parts), 2):
            parts[i] = _keywords(parts[i], self.request) if self.python or self.request else self._renamed(parts[i])
        return "`".join(parts)

    def _renamed(self, text: str) -> str:
        return _OPTION.sub(lambda m: self.renames.get(m.group(0), m.group(0)), text)


# an option as messages write it: not inside a word, a quoted value, a path or another option
_OPTION = re.compile(r"(?<![\w'\"/=.-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")

# ------------------------------------------------------------------ the Python API's keywords
# options whose keyword is not the option's name with underscores, or that are said as a whole keyword
_PYTHON_NAMES = {"--run-format": "format", "--qrels-format": "format", "--raw-ids": "escape_ids=False",
                 "--break-ties": "ties='break'"}
# options without a value (said as keyword=True)
_SWITCHES = frozenset({"--skip-malformed", "--float32", "--no-cache", "--absolute", "--batch", "--emit-traces",
                       "--no-extras"})
# words that follow an option in a sentence and are not its value
_NOT_VALUES = frozenset({"a", "an", "and", "as", "at", "by", "first", "for", "from", "here", "if", "in", "instead",
                         "is", "it", "no", "not", "of", "on", "once", "only", "or", "so", "the", "them", "then", "to",
                         "when", "which", "with"})
# the same in a service request's JSON members
_REQUEST_NAMES = {"--run-format": '"format"', "--break-ties": '"ties": "break"'}
_OPTION_AND_WORD = re.compile(_OPTION.pattern + r"(?: ([^\s,;()`]+))?")
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(?:\.[a-z]+)?")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _keywords(text: str, request: bool = False) -> str:
    """Options as the Python API's keywords: ``--order desc`` -> ``order='desc'``, ``--gold GOLD`` ->
    ``gold=GOLD``, ``--skip-malformed`` -> ``skip_malformed=True``, ``--duplicates keep-first|keep-max`` ->
    ``duplicates='keep-first' | 'keep-max'``, ``leave out --scheduler`` -> ``leave out scheduler``; ``request``:
    as a service request's JSON members (``"order": "desc"``, ``"skip_malformed": true``, ``"docs_field": "FIELD"``)."""
    assign, true, quoted = (": ", "true", lambda v: f'"{v}"') if request else ("=", "True", repr)

    def keyword(m: re.Match) -> str:
        option, word = m.group(0).split(" ", 1)[0], m.group(1)
        bare = option[2:].replace("-", "_")
        name = _REQUEST_NAMES.get(option, f'"{bare}"') if request else _PYTHON_NAMES.get(option, bare)
        rest = ""
        if word is not None and word.rstrip(".").lower() in _NOT_VALUES | {""}:
            word, rest = None, " " + word
        if assign.strip() in name:
            return name + ("" if word is None else " " + word) + rest
        if option in _SWITCHES:
            return f"{name}{assign}{true}" + ("" if word is None else " " + word) + rest
        if word is None:
            return name + rest
        value, stop = (word[:-1], ".") if word.endswith(".") and not _NUMBER.fullmatch(word) else (word, "")
        if _NUMBER.fullmatch(value) or (_PLACEHOLDER.fullmatch(value) and not request):
            return f"{name}{assign}{value}{stop}"
        return f"{name}{assign}" + " | ".join(quoted(v) for v in value.split("|")) + stop
    return _OPTION_AND_WORD.sub(keyword, text)


# ------------------------------------------------------------------ the commands
def _underscored(*options: str) -> dict[str, str]:
    return {o: "--" + o[2:].replace("-", "_") for o in options}


# treckit.read_run / treckit.evaluate take every run option; treckit.read_qrels these of the qrels
PYTHON = Command("the Python API", reads={"run": RUN_OPTIONS,
                                          "qrels": frozenset({"--qrels-format", "--layout", "--skip-malformed"})},
                 options=frozenset({"--missing"}), python=True)
_EVAL = frozenset({"--missing"})
_QRELS_WITH_RUN = frozenset({"--layout", "--skip-malformed"})
COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("treckit qrels", renames={"--qrels-format": "--format"}, reads={"qrels": QRELS_OPTIONS}),
    Command("treckit run", reads={"run": RUN_OPTIONS}),
    # TREC qrels are read with the run's --layout and --skip-malformed where both are read (cli/evaluate.py)
    Command("treckit eval", reads={"run": RUN_OPTIONS, "qrels": _QRELS_WITH_RUN | {"--qrels-format"}}, options=_EVAL),
    # -R prefs | qrels_prefs | qrels_jg: the runs are read by their format only (engines/prefs.py: Preferences)
    Command("treckit eval -R", reads={"run": frozenset({"--run-format"}), "qrels": frozenset({"--qrels-format"})},
            options=_EVAL),
    Command("treckit compare", reads={"run": RUN_OPTIONS, "qrels": _QRELS_WITH_RUN}),
    # the staged scripts (code/evaluation): their own options with underscores, the reading options both ways
    Command("preprocess_qrels.py", renames={"--qrels-format": "--format",
                                            **_underscored("--id-base", "--raw-ids", "--id-added")},
            reads={"qrels": frozenset({"--qrels-format", "--duplicates", "--id-base", "--layout", "--skip-malformed"})}),
    Command("preprocess_run.py", renames=_underscored("--run-name", "--raw-ids"), reads={"run": RUN_OPTIONS}),
    Command("evaluate.py", reads={"run": RUN_OPTIONS, "qrels": _QRELS_WITH_RUN | {"--qrels-format"}}, options=_EVAL),
    Command("rq_eval.py"),
)}
_GROUPS = ("testset", "system", "cache")

_current: Command | None = None        # the command running in this process (None: the Python API)


def current() -> Command:
    """The command that is speaking: the one running, else the Python API."""
    return _current or PYTHON


def command_running() -> bool:
    """Whether one of treckit's commands is running (else the caller is the Python API)."""
    return _current is not None and not (_current.python or _current.request)


def spell(text: str) -> str:
    return current().spell(text)


def command_named(name: str) -> Command:
    """The command called ``name`` (``treckit eval``, ``evaluate.py``); one not listed applies no reading
    option and renames none."""
    return COMMANDS.get(name) or Command(name)


def cli_command(argv: list[str]) -> Command:
    """The ``treckit`` command that ``argv`` (the arguments after ``treckit``) runs."""
    words = [a for a in argv[:2] if not a.startswith("-")]
    if words[:2] == ["qrels", "verify"]:
        words = ["qrels-verify"]
    name = " ".join(words[:2] if words[:1] and words[0] in _GROUPS else words[:1])
    return command_named(f"treckit {name}".strip())


@contextlib.contextmanager
def running(command: Command) -> Iterator[None]:
    """The block is ``command`` speaking (a command may become another variant inside: :func:`now`)."""
    global _current
    before = _current
    _current = command
    try:
        yield
    finally:
        _current = before


def now(name: str) -> None:
    """Inside :func:`running`: the command turned out to be the variant ``name`` (``treckit eval -R``)."""
    global _current
    if _current is not None:
        _current = command_named(name)


# ------------------------------------------------------------------ reading options, where they apply
def pass_options(role: str, *options: str, convert: bool = True) -> str | None:
    """How to read a ``role`` file (``run``, ``qrels``) with one of ``options`` (``"--layout docid-spaces"``,
    alternatives) in the command that is speaking: ``pass --layout docid-spaces`` where it applies that
    option to such files; else a one-off conversion with ``treckit run`` / ``treckit qrels`` (which apply
    every reading option), whose output the command then reads; None where no converter reads the file,
    or where the converted file would not help (``convert=False``)."""
    cmd = current()
    if all(cmd.applies(role, name) for o in options for name in _OPTION.findall(o)):
        to = " to treckit.read_qrels" if cmd.python and role == "qrels" else ""
        return "pass " + " or ".join(options) + to
    if role not in CONVERTED or not convert:
        return None
    converter = command_named(f"treckit {role}")
    shown = " or ".join(f"`treckit {role} FILE {converter.spell(o)} -o FIXED`" for o in options)
    return f"convert the file once with {shown} and give FIXED here"


def offered(option: str) -> bool:
    """Whether the command that is speaking has ``option`` (for hints that only some commands can take)."""
    return current().offers(option)


_FLAG = re.compile(r"--([a-z][a-z0-9-]*)(?: ([a-z0-9][\w.|-]*|[A-Z]+)\b)?")


def respelled(message: str, spell: Callable[[str, str | None], str | None]) -> str:
    """``message`` with each command-line option (``--name [value]``) written ``spell(name, value)`` (None: as
    it is); a command quoted in backticks (`` `treckit run RUN --order asc` ``) is left as the shell command it is."""
    def one(m: re.Match) -> str:
        got = spell(m.group(1), m.group(2))
        return m.group(0) if got is None else got
    spans = message.split("`")
    return "`".join(span if i % 2 else _FLAG.sub(one, span) for i, span in enumerate(spans))
