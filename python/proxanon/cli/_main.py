"""The ``proxanon`` command: the parser, and how each kind of failure becomes an exit status
and one line on standard error (by the error's type, never by its text)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from proxanon import __version__
from proxanon._errors import InfeasibleError
from proxanon.cli import anonymize, audit, demo, explore, report, substitute
from proxanon.cli._common import (
    EXIT_INFEASIBLE,
    EXIT_INTERRUPTED,
    EXIT_NOT_SATISFIED,
    EXIT_OK,
    EXIT_USAGE,
    Outcome,
    UsageError,
)
from proxanon.tableio import TableEncodingError

EPILOG = (f"exit status: {EXIT_OK} satisfied; {EXIT_INFEASIBLE} infeasible (nothing written); "
          f"{EXIT_USAGE} bad options or input; {EXIT_NOT_SATISFIED} a table that does not "
          f"satisfy the principle (--best-effort output, or an audit that finds violations); "
          f"{EXIT_INTERRUPTED} interrupted (nothing written)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="proxanon", epilog=EPILOG,
        description="Anonymize tables against proximity breaches ((epsilon, delta)^k-"
                    "dissimilarity, XColor).")
    top.add_argument("--version", action="version", version=f"proxanon {__version__}")
    commands = top.add_subparsers(dest="command", required=True)
    for command in (anonymize, audit, report, demo, substitute, explore):
        command.add_parser(commands)
    return top


def infeasible_message(exc: InfeasibleError, args: argparse.Namespace) -> str:
    """The library's finding in the command line's words, from the error's partition."""
    from proxanon._results.partition import Partition

    part = exc.partition
    if not isinstance(part, Partition):
        return str(exc)
    hint = "" if args.command == "anonymize" else " to proxanon anonymize"
    if getattr(args, "suppress", None) is not None:
        n = int(part.groups.size)
        left_out = n - int((part.groups >= 0).sum())
        return (f"leaving out at most {args.suppress:g} of the rows (--suppress) does not "
                f"satisfy every group: the last repair left out {left_out:,} of {n:,} row(s) "
                "and violations remain; allow more with a larger --suppress FRACTION, or try "
                "a smaller epsilon or delta")
    s = part.stats
    holds = "holds" if s["bound_holds"] else "fails"
    return (f"{s['remaining_violations']:,} row(s) in {len(s['violating_groups']):,} of "
            f"{s['m']:,} group(s) keep more than t(G) neighbours within epsilon "
            f"(k={s['k']}, epsilon={s['epsilon']}, delta={s['delta']}, metric {s['metric']}); "
            f"the most epsilon-neighbours of a row is {s['max_degree']:,} (the paper's "
            f"inequality (4) bound {s['bound']:,.1f} {holds}). Try a smaller epsilon or delta, "
            f"pass --best-effort{hint} to write the table with the violations flagged, or "
            f"--suppress FRACTION{hint} to leave violating rows out.")


def _fail(kind: str, message: object) -> None:
    """One line on standard error (library messages may span lines)."""
    print(f"proxanon: {kind}: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``proxanon`` console script."""
    args = parser().parse_args(argv)
    try:
        outcome: Outcome = args.run(args)
    except KeyboardInterrupt:
        _fail("interrupted", "stopped; no output file was written")
        return EXIT_INTERRUPTED
    except InfeasibleError as exc:
        _fail("infeasible", infeasible_message(exc, args))
        return EXIT_INFEASIBLE
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
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        print("\n".join(outcome.lines), flush=True)
    except OSError as exc:
        # Point stdout at devnull so the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if not isinstance(exc, BrokenPipeError):
            _fail("warning", f"the summary could not be written to standard output ({exc}); "
                             f"the exit status still gives the verdict")
    return outcome.status
