"""What every subcommand says and returns: exit statuses, the summary's verbosity, and
library messages worded with the command's flags (docs/guide/command-line.md).

A library message names the options it suggests as typed pieces (:mod:`proxanon._messages`);
:func:`flag_words` and :func:`command_words` render them as flags and subcommands, so a
message is never edited as text. ``-`` stands for standard input or output
(:data:`STDIO`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from proxanon._messages import NO_VALUE, Call, Param

#: Exit statuses of the ``proxanon`` command.
EXIT_OK = 0              # done; the table satisfies the principle


EXIT_INFEASIBLE = 1      # anonymize: no satisfying table was found, nothing written;


                         # advise: it is proven that no table satisfies
EXIT_USAGE = 2           # bad options or input: one line on standard error


EXIT_NOT_SATISFIED = 3   # a table that does not satisfy it (--best-effort output, or audited)


EXIT_STOPPED = 4         # anonymize: stopped at --max-seconds without a table, nothing written


EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT): nothing written


#: The column ``anonymize`` adds to the published table.
GROUP_COLUMN = "group"


#: The name that stands for standard input (as an input) or standard output (as an output).
STDIO = "-"


#: Options whose value names an output file: with ``-`` as any of them, the summary goes to
#: standard error, so that standard output holds only what was written there.
OUTPUT_OPTIONS = ("output", "report", "html", "constraints", "plot", "save_job")


#: How much a subcommand says (``-q``, default, ``-v``).
QUIET, NORMAL, VERBOSE = -1, 0, 1


#: The flag of each library parameter a message may name (:func:`flag_words`).
FLAGS: dict[str, str] = {
    "k": "--k", "epsilon": "--epsilon", "delta": "--delta", "metric": "--metric",
    "weights": "--weights", "sensitive": "--sensitive", "quasi_identifiers": "--qi",
    "hierarchies": "--hierarchy", "max_suppression": "--suppress", "moves": "--moves",
    "segment_size": "--segment-size", "poi_fraction": "--poi-fraction",
    "iterations": "--iterations", "seed": "--seed",
}


#: Flags that stand for one setting of a library parameter.
SETTINGS: dict[tuple[str, str], str] = {
    ("on_infeasible", "best_effort"): "--best-effort",
    ("on_infeasible", "suppress"): "--suppress FRACTION",
}


class UsageError(Exception):
    """Bad input found by the command line itself; printed without a traceback."""


@dataclass(frozen=True)
class Outcome:
    """What a subcommand did: its exit status and the lines it prints on standard output
    (standard error when standard output holds the table; none with -q).

    The status is settled before anything is printed, so a reader that leaves early
    (``proxanon audit t.csv | head -1``) cannot turn a verdict into a success."""

    status: int
    lines: tuple[str, ...]
    #: More lines, printed with -v only.
    details: tuple[str, ...] = ()


def flag_words(param: Param) -> str:
    """How the command line names a library parameter a message names (:mod:`proxanon._messages`):
    its flag, with the value where the message means one (``--best-effort``, ``--k 1``); a
    parameter without a flag keeps its Python words."""
    value = param.value
    if isinstance(value, str) and (param.name, value) in SETTINGS:
        return SETTINGS[param.name, value]
    flag = FLAGS.get(param.name)
    if flag is None:
        return param.python()
    if value is NO_VALUE:
        return flag
    return f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"


def command_words(call: Call) -> str:
    """How the command line names a function a message points to: its subcommand."""
    return f"proxanon {call.name}"


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """``-q``/``-v``, which :mod:`proxanon.cli._main` gives every subcommand."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=QUIET,
                       default=NORMAL, help="print errors only (no summary, no progress)")
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const",
                       const=VERBOSE, help="print more detail, and the libraries' warnings")


def verbosity(args: argparse.Namespace) -> int:
    return int(getattr(args, "verbosity", NORMAL))


def show_progress(args: argparse.Namespace) -> bool:
    """Whether a long run shows its progress on standard error: a bar on a terminal, unless
    ``-q``; elsewhere (a pipe, a log file) a line every 2 s with ``-v``."""
    return ((sys.stderr.isatty() and verbosity(args) > QUIET)
            or verbosity(args) >= VERBOSE)


def writes_stdout(args: argparse.Namespace) -> bool:
    """Whether an output option (:data:`OUTPUT_OPTIONS`) is ``-``."""
    return any(getattr(args, option, None) == STDIO for option in OUTPUT_OPTIONS)
