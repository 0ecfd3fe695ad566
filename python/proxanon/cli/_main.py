"""The ``proxanon`` command: the parser, and how each kind of failure becomes an exit status
and one line on standard error (by the error's type, never by its text).

What every subcommand gets here: ``-q``/``-v``; a usage error as one line and a pointer to
``--help``; its privacy parameters checked before any input is read; library messages in
its flags; library warnings shown only with ``-v``; the summary on standard error when
standard output holds the table (``-o -``). A bare ``proxanon`` prints the help on standard
error and exits 2, as any usage error does.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import NoReturn

from proxanon import __version__, _startup
from proxanon._errors import InfeasibleError, LeadingZerosError, TimeLimitError
from proxanon._messages import worded
from proxanon.cli import (
    advise,
    anonymize,
    audit,
    demo,
    explore,
    hierarchy,
    report,
    run,
    substitute,
)
from proxanon.cli._options import check_parameters
from proxanon.cli._status import (
    EXIT_INFEASIBLE,
    EXIT_INTERRUPTED,
    EXIT_NOT_SATISFIED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    QUIET,
    VERBOSE,
    Outcome,
    UsageError,
    add_verbosity_options,
    command_words,
    flag_words,
    verbosity,
    writes_stdout,
)
from proxanon.tableio import TableEncodingError

EPILOG = (f"exit status: {EXIT_OK} satisfied; {EXIT_INFEASIBLE} infeasible (nothing written; "
          f"advise: proven that no table satisfies); "
          f"{EXIT_USAGE} bad options or input; {EXIT_NOT_SATISFIED} a table that does not "
          f"satisfy the principle (--best-effort output, or an audit that finds violations); "
          f"{EXIT_STOPPED} stopped at --max-seconds (nothing written); "
          f"{EXIT_INTERRUPTED} interrupted (nothing written)")


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line and a pointer to ``--help`` (subcommands'
    parsers are of this class too: argparse makes them of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        line = " ".join(f"{message}; see '{self.prog} --help'".split())
        print(f"{self.prog}: error: {line}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="proxanon", epilog=EPILOG,
        description="Anonymize tables against proximity breaches ((epsilon, delta)^k-"
                    "dissimilarity, XColor).")
    top.add_argument("--version", action="version", version=f"proxanon {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for command in (anonymize, advise, audit, report, demo, substitute, explore, hierarchy,
                    run):
        command.add_parser(commands)
    # Options every subcommand takes, whoever wrote it.
    for sub in {id(p): p for p in commands.choices.values()}.values():
        add_verbosity_options(sub)
    return top


def _subcommand(top: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of subcommand ``name``."""
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return top


def infeasible_message(exc: InfeasibleError, args: argparse.Namespace) -> str:
    """The library's finding in the command line's words, from the error's partition."""
    from proxanon._results.partition import Partition

    part = exc.partition
    if not isinstance(part, Partition):
        return worded(exc, flag_words, command_words)
    hint = "" if args.command == "anonymize" else " to proxanon anonymize"
    if getattr(args, "suppress", None) is not None:
        n = int(part.groups.size)
        left_out = n - int((part.groups >= 0).sum())
        return (f"leaving out at most {args.suppress:g} of the rows (--suppress) does not "
                f"satisfy every group: the last repair left out {left_out:,} of {n:,} row(s) "
                "and violations remain; allow more with a larger --suppress FRACTION, or try "
                "a smaller --epsilon or --delta")
    s = part.stats
    holds = "holds" if s["bound_holds"] else "fails"
    return (f"{s['remaining_violations']:,} row(s) in {len(s['violating_groups']):,} of "
            f"{s['m']:,} group(s) keep more than t(G) neighbours within epsilon "
            f"(k={s['k']}, epsilon={s['epsilon']}, delta={s['delta']}, metric {s['metric']}); "
            f"the most epsilon-neighbours of a row is {s['max_degree']:,} (the paper's "
            f"inequality (4) bound {s['bound']:,.1f} {holds}). Try a smaller --epsilon or "
            f"--delta, pass --best-effort{hint} to write the table with the violations "
            "flagged, or "
            f"--suppress FRACTION{hint} to leave violating rows out.")


def leading_zeros_message(exc: LeadingZerosError) -> str:
    """A hierarchy's leaves and a column's values that differ by leading zeros, in the
    command line's words: the command reads a column with a hierarchy as text, as written,
    so one of the two files lost the zeros before proxanon read it."""
    column = "the column" if exc.column is None else f"column {exc.column!r}"
    pairs = ", ".join(f"{value!r} for the leaf {leaf!r}" for value, leaf in exc.examples)
    if exc.data_lost_zeros:
        return (f"{column} matches its hierarchy only once leading zeros are added "
                f"({pairs}): the input lost them before proxanon read it (a spreadsheet, or a "
                "Parquet column of numbers, drops them; proxanon reads a column with a "
                "--hierarchy, or one named in --text, as text, as written): write the column "
                "as text with its zeros")
    return (f"{column} matches its hierarchy only once leading zeros are removed ({pairs}): "
            "the hierarchy file lost them; write its leaves with the zeros the data has")


def _fail(kind: str, message: object) -> None:
    """One line on standard error (library messages may span lines), an error's message in
    the command's flags."""
    if isinstance(message, BaseException):
        message = worded(message, flag_words, command_words)
    print(f"proxanon: {kind}: {' '.join(str(message).split())}", file=sys.stderr)


def _warning_line(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: object = None, line: str | None = None) -> None:
    """A library warning (shown with -v only) as one line on standard error."""
    _fail("warning", f"{message} ({category.__name__}, {os.path.basename(filename)}:{lineno})")


#: Loggers of libraries that log on their own (Dask's scheduler and workers).
_LIBRARY_LOGGERS = ("distributed", "dask")


@contextlib.contextmanager
def _library_noise(level: int) -> Iterator[None]:
    """Library warnings and log messages: shown (warnings one line each) with -v, else
    silenced, also in worker processes started meanwhile (through their environment)."""
    environment = {"PYTHONWARNINGS": "ignore", "DASK_LOGGING__DISTRIBUTED": "critical"}
    saved_env = {name: os.environ.get(name) for name in environment}
    loggers = [logging.getLogger(name) for name in _LIBRARY_LOGGERS]
    saved_levels = [logger.level for logger in loggers]
    with warnings.catch_warnings():
        if level >= VERBOSE:
            warnings.simplefilter("always")
            warnings.showwarning = _warning_line
        else:
            warnings.simplefilter("ignore")
            os.environ.update(environment)
            for logger in loggers:
                logger.setLevel(logging.CRITICAL)
        try:
            yield
        finally:
            for logger, saved in zip(loggers, saved_levels, strict=True):
                logger.setLevel(saved)
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``proxanon`` console script."""
    _startup.release()  # KeyboardInterrupt from here on, handled below
    given = sys.argv[1:] if argv is None else list(argv)
    if not given:
        parser().print_help(sys.stderr)
        return EXIT_USAGE
    top = parser()
    args, extra = top.parse_known_args(given)
    if extra:  # named by the subcommand's parser, so that the pointer is to its --help
        _subcommand(top, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        check_parameters(args)
        with _library_noise(verbosity(args)):
            outcome: Outcome = args.run(args)
    except KeyboardInterrupt:
        _fail("interrupted", "stopped; no output file was written")
        return EXIT_INTERRUPTED
    except InfeasibleError as exc:
        _fail("infeasible", infeasible_message(exc, args))
        return EXIT_INFEASIBLE
    except TimeLimitError as exc:
        _fail("stopped", f"no table after {exc.seconds:g} s (--max-seconds); no output file "
                         "was written. Allow more time, or try a larger --epsilon or a smaller "
                         "--delta, which run faster")
        return EXIT_STOPPED
    except LeadingZerosError as exc:
        _fail("error", leading_zeros_message(exc))
        return EXIT_USAGE
    except TableEncodingError as exc:
        _fail("error", f"{exc}; pass --encoding, e.g. --encoding latin-1")
        return EXIT_USAGE
    except (UsageError, ImportError, ValueError, TypeError, OSError) as exc:
        # ImportError: an optional extra is missing (parquet, report); the message names it.
        _fail("error", exc)
        return EXIT_USAGE
    # The verdict stands whatever becomes of the summary: a character the terminal's encoding
    # lacks (epsilon on a cp1252 console) is escaped; a reader that went away (`| head`) or a
    # full disk leaves one line on standard error.
    if verbosity(args) <= QUIET:
        return outcome.status
    lines = [*outcome.lines, *(outcome.details if verbosity(args) >= VERBOSE else ())]
    # With the table on standard output (-o -), the summary goes to standard error.
    stream = sys.stderr if writes_stdout(args) else sys.stdout
    if hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")
    try:
        print("\n".join(lines), file=stream, flush=True)
    except OSError as exc:
        # Point the stream at devnull so the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        if not isinstance(exc, BrokenPipeError):
            _fail("warning", f"the summary could not be written ({exc}); the exit status "
                             "still gives the verdict")
    return outcome.status
