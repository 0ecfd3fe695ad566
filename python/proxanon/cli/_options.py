"""The options subcommands share, and their values parsed and checked before any input
is read (docs/guide/command-line.md).

Column lists (``--qi age,"zip, code"``), ``COLUMN=VALUE`` pairs, separators, the privacy
parameters (checked once by :mod:`proxanon._validate`, at this edge) and the criteria
flags, each turned into the library's typed values; a bad value raises
:class:`~proxanon.cli._status.UsageError` naming the option. Cost: O(option text).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from typing import Any

import numpy as np

from proxanon import _validate
from proxanon.cli._status import UsageError
from proxanon.distances import METRIC_NAMES
from proxanon.tableio import (
    FORMATS,
)


def check_parameters(args: argparse.Namespace) -> None:
    """The privacy parameters a subcommand was given (single values of ``--k``,
    ``--epsilon``, ``--delta``, ``--suppress`` and ``--weights``), checked before any input
    is read; a subcommand that only judges groups (``judged=True`` in
    :func:`add_privacy_options`) may ask for k = 1 and any epsilon. Raises
    :class:`~proxanon._errors.ParameterError` (its message worded by :func:`flag_words`)."""
    k, epsilon, delta = (getattr(args, name, None) for name in ("k", "epsilon", "delta"))
    judged = bool(getattr(args, "judged", False))
    if epsilon is None and getattr(args, "epsilon_optional", False):
        if delta != 0:
            raise UsageError("--epsilon is required unless --delta is 0 (k-anonymity and the "
                             "criteria alone), e.g. --epsilon 0.05")
        epsilon = 0.0
    if isinstance(k, int) and isinstance(epsilon, float) and (delta is None
                                                              or isinstance(delta, float)):
        # Without a delta (optional where only bounds are asked for), k and epsilon alone.
        _validate.privacy(k, epsilon, 0.0 if delta is None else delta, k,
                          measured=judged or delta is None)
        sensitive = getattr(args, "sensitive", None)
        if not judged and isinstance(sensitive, str) and isinstance(delta, float):
            columns = len(names(sensitive, "--sensitive"))
            weights = getattr(args, "weights", None)
            check_epsilon(epsilon, delta, getattr(args, "metric", "l1"),
                          None if weights is None else floats(weights, "--weights"), columns)
    suppress = getattr(args, "suppress", None)
    if isinstance(suppress, float):
        _validate.suppression(suppress, "suppress")


def check_epsilon(epsilon: float, delta: float, metric: str, weights: list[float] | None,
                  columns: int) -> None:
    """Refuses an epsilon at which every two rows are neighbours (at least the largest
    distance ``metric`` gives between rows whose ``columns`` sensitive values are scaled to
    [0, 1]) where delta lets no group hold such rows; checks the weights."""
    from proxanon.distances import pairwise, resolve

    relation = resolve(metric, weights, columns, 1)
    largest = float(pairwise(relation, np.zeros((1, columns)), np.ones((1, columns)))[0, 0])
    if epsilon >= largest and _validate.single_row_violates(delta):
        raise UsageError(
            f"--epsilon {epsilon:g} makes every two rows neighbours: the {metric} distance "
            f"between rows is at most {largest:g} (each sensitive column scaled to [0, 1]), "
            f"so no group satisfies --delta {delta:g}; use an --epsilon below {largest:g}")


def kept_as_text(args: argparse.Namespace) -> set[str]:
    """The columns a subcommand keeps as text whatever they hold: those with a
    ``--hierarchy``, and those named in ``--text`` where the subcommand has it; Parquet
    output writes them as text (:func:`proxanon.tableio.write_table`)."""
    text = getattr(args, "text", None)
    named = set(names(text, "--text")) if text else set()
    return named | set(pairs(getattr(args, "hierarchy", None), "--hierarchy"))


def names(text: str, option: str) -> list[str]:
    """A comma-separated list of column names; a name holding a comma is written in double
    quotes, as in a CSV record (``--qi 'age,"zip, code"'``), a quote inside one doubled."""
    try:
        fields = next(csv.reader([text], skipinitialspace=True, strict=True))
    except (csv.Error, StopIteration):
        raise UsageError(f"{option}: {text!r} is not a list of names; write a name holding "
                         'a comma in double quotes, e.g. age,"zip, code"') from None
    found = [part.strip() for part in fields if part.strip()]
    if not found:
        raise UsageError(f"{option} needs at least one column name, e.g. {option} age,sex")
    return found


def floats(text: str, option: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"{option} must be comma-separated numbers, got {text!r}") from None


def pairs(items: Sequence[str] | None, option: str) -> dict[str, str]:
    """Repeated ``COLUMN=VALUE`` options as a dict."""
    found: dict[str, str] = {}
    for item in items or ():
        column, sep, value = item.partition("=")
        if not sep or not column.strip() or not value.strip():
            raise UsageError(f"{option} takes COLUMN=VALUE, got {item!r}")
        found[column.strip()] = value.strip()
    return found


def separator(text: str) -> str:
    """``--sep``: one character; ``\\t`` or ``tab`` for a tab."""
    sep = "\t" if text in ("\\t", "tab") else text
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(f"the separator must be one character, got {text!r}")
    return sep


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """Options of every command that reads a table."""
    add_format_option(parser)
    parser.add_argument("--sep", type=separator,
                        help="CSV separator (default: sniffed from the header); \\t for a tab")
    parser.add_argument("--encoding", default="utf-8",
                        help="text encoding of the CSV input and output (default utf-8)")
    parser.add_argument("--missing", choices=["error", "drop"], default="error",
                        help="an empty cell in a QI or sensitive column, or a missing-value "
                             "mark (NaN, NA, ?) in a column of numbers: error (default, "
                             "names the column and line) or drop (leave the row out)")
    parser.add_argument("--order", action="append", metavar="COL=LOW,...,HIGH",
                        help="order of a text sensitive column (repeatable)")
    parser.add_argument("--hierarchy", action="append", metavar="COL=FILE.csv",
                        help="ARX-format taxonomy of a column (repeatable): a QI column is "
                             "generalized along it, a sensitive one compared by taxonomy "
                             "distance")
    parser.add_argument("--hierarchy-sep", default=";", help="separator of hierarchy files (;)")
    parser.add_argument("--text", metavar="COL,...",
                        help="columns kept as text, as written (e.g. codes such as ZIP "
                             "02134): a QI one is published as its value, its taxonomy node "
                             "or *, never as an interval. A column with a --hierarchy, or "
                             "whose values have leading zeros, is text anyway")
    parser.add_argument("--report", metavar="FILE.json",
                        help="also write every number of the result to this JSON file")


def add_dates_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dates", metavar="COL,...",
                        help="columns of ISO dates (YYYY-MM-DD): QI ones are published as "
                             "date ranges, sensitive ones compared over their time span "
                             "(default: a column whose every value is an ISO date)")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="format of the input: auto (default: Parquet for a .parquet or "
                             ".pq name, and for standard input that starts as Parquet does; "
                             "CSV otherwise), csv or parquet")


def add_privacy_options(parser: argparse.ArgumentParser, *, optional: bool = False,
                        judged: bool = False, epsilon_optional: bool = False) -> None:
    """``--qi``, ``--sensitive``, ``--k``, ``--epsilon``, ``--delta``, ``--metric`` and
    ``--weights``; ``optional``: ``--qi`` and ``--delta`` may be left out (``advise``);
    ``judged``: the subcommand judges given groups or settings (an audit, advise), which
    may be asked about k = 1 and any epsilon (:func:`check_parameters`);
    ``epsilon_optional``: ``--epsilon`` may be left out with ``--delta 0`` (``anonymize``:
    k-anonymity and the criteria alone)."""
    parser.set_defaults(judged=judged, epsilon_optional=epsilon_optional)
    parser.add_argument("--qi", required=not optional,
                        help="quasi-identifier columns, comma-separated"
                             + (" (optional: rows with an empty one are left out as "
                                "anonymize leaves them, with --missing drop)" if optional
                                else ""))
    parser.add_argument("--sensitive", required=True, help="sensitive columns, comma-separated")
    parser.add_argument("--k", required=True, type=int, help="minimum group size")
    parser.add_argument("--epsilon", required=not epsilon_optional, type=float,
                        help="proximity threshold" + (
                            " (may be left out with --delta 0: k-anonymity and the criteria "
                            "alone)" if epsilon_optional else ""))
    parser.add_argument("--delta", required=not optional, type=float,
                        help="a group's risk may be at most 1 - delta"
                             + (" (optional: without it, the bounds only)" if optional
                                else ""))
    add_metric_option(parser, METRIC_HELP)
    parser.add_argument("--weights", help="one weight per sensitive column, comma-separated")


#: What ``--metric`` says in every command that takes it.
METRIC_HELP = ("l1 (default), l2, linf, min_component or variational; or what to protect: "
               "'each' (each sensitive column's value alone: min_component) or 'combination' "
               "(l1). With several sensitive columns, l1, l2 and linf protect their "
               "combination (a column alone may stay close: the summary's 'each column' line "
               "says where); min_component protects each column's value")


def add_metric_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--metric``, its choices those of ``metric=`` (``distances.METRIC_NAMES``)."""
    parser.add_argument("--metric", default="l1", type=str.lower, choices=list(METRIC_NAMES),
                        help=help_text)


def add_criteria_options(parser: argparse.ArgumentParser) -> None:
    """The privacy criteria besides (epsilon, delta)^k (docs/guide/criteria.md)."""
    group = parser.add_argument_group(
        "privacy criteria", "every published class must also satisfy these, on the column "
        "--criteria-column names (default: each sensitive column)")
    group.add_argument("--l-diversity", type=int, metavar="L",
                       help="l-diversity: L well-represented values per class")
    group.add_argument("--l-kind", default="distinct", choices=["distinct", "entropy",
                                                                "recursive"],
                       help="the l-diversity: distinct (default), entropy or recursive")
    group.add_argument("--l-c", type=float, metavar="C",
                       help="c of recursive (c, l)-diversity (with --l-kind recursive)")
    group.add_argument("--t-closeness", type=float, metavar="T",
                       help="t-closeness: each class within earth mover's distance T of the "
                            "table")
    group.add_argument("--beta-likeness", type=float, metavar="B",
                       help="basic beta-likeness: (q - p) / p <= B for every value")
    group.add_argument("--delta-disclosure", type=float, metavar="D",
                       help="delta-disclosure privacy: |ln(q / p)| <= D for every value held")
    group.add_argument("--criteria-column", metavar="COL",
                       help="the column the criteria protect: any column that is not a QI "
                            "(default: each sensitive column)")


def criteria_from(args: argparse.Namespace) -> list[Any]:
    """The criteria the options of :func:`add_criteria_options` ask for."""
    from proxanon._results.criteria import (
        BetaLikeness,
        DeltaDisclosure,
        LDiversity,
        TCloseness,
    )

    column = args.criteria_column
    if args.l_diversity is None and (args.l_kind != "distinct" or args.l_c is not None):
        raise UsageError("--l-kind and --l-c describe --l-diversity L: give it too")
    found: list[Any] = []
    try:
        if args.l_diversity is not None:
            found.append(LDiversity(args.l_diversity, kind=args.l_kind, c=args.l_c,
                                    column=column))
        if args.t_closeness is not None:
            found.append(TCloseness(args.t_closeness, column=column))
        if args.beta_likeness is not None:
            found.append(BetaLikeness(args.beta_likeness, column=column))
        if args.delta_disclosure is not None:
            found.append(DeltaDisclosure(args.delta_disclosure, column=column))
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if column is not None and not found:
        raise UsageError("--criteria-column names the column of a criterion: give one "
                         "(--l-diversity, --t-closeness, --beta-likeness, --delta-disclosure)")
    return found
