"""``proxanon substitute``: publishes numeric columns as substituted values that keep their
localities; every other column is written as it was read."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

from proxanon.cli._options import add_format_option, names, separator
from proxanon.cli._reading import read_input, read_line
from proxanon.cli._status import EXIT_OK, Outcome, UsageError
from proxanon.cli._writing import distinct_outputs, output_path, write_bytes
from proxanon.tableio import check_writable, write_table


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("substitute", help="publish numeric columns as substituted "
                                                    "values that keep their localities")
    parser.add_argument("input", help="CSV file with a header row, or a .parquet file; - "
                                      "reads standard input")
    parser.add_argument("--columns", required=True, help="numeric columns, comma-separated")
    parser.add_argument("-o", "--output", required=True,
                        help="where to write the table (.parquet: Parquet, else CSV); - writes "
                             "standard output (in the input's format)")
    parser.add_argument("--constraints", help="also write the kept constraints to this CSV file")
    parser.add_argument("--segment-size", type=int, default=100, help="rows per segment (100)")
    parser.add_argument("--poi-fraction", type=float, default=0.1,
                        help="fraction of the localities kept, in (0, 1] (0.1)")
    parser.add_argument("--iterations", type=int, default=4000, help="random-walk steps (4000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    add_format_option(parser)
    parser.add_argument("--sep", type=separator,
                        help="CSV separator (default: sniffed from the header)")
    parser.add_argument("--encoding", default="utf-8",
                        help="text encoding of the CSV input and output (default utf-8)")
    parser.add_argument("--force", action="store_true", help="overwrite the output files")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> Outcome:
    from proxanon.substitute import checked_settings, substitute

    checked_settings(args.segment_size, args.poi_fraction, args.iterations, args.seed)
    target = output_path(args.output, [args.input], args.force)
    extra = (None if args.constraints is None
             else output_path(args.constraints, [args.input, args.output], args.force))
    distinct_outputs([("-o", target), ("--constraints", extra)])
    source = read_input(args.input, args)
    check_writable(source, target)
    columns = names(args.columns, "--columns")
    absent = [c for c in columns if c not in source.names]
    if absent:
        raise UsageError(f"--columns: column(s) {absent} not in {args.input}; its "
                                f"columns are {source.names}")
    numbers = pd.DataFrame(index=pd.RangeIndex(source.n_rows))
    for column in columns:
        cells = source.column(column)
        parsed = pd.to_numeric(cells, errors="coerce")
        bad = parsed.isna().to_numpy()
        if bad.any():
            row = int(bad.argmax())
            raise UsageError(f"column {column!r} is not numeric: {cells.iloc[row]!r} on "
                                    f"{source.position(row)}; substitute numeric columns only")
        numbers[column] = parsed.astype("float64")
    result = substitute(numbers, columns, segment_size=args.segment_size,
                        poi_fraction=args.poi_fraction, iterations=args.iterations,
                        seed=args.seed)
    constraints = None if extra is None else result.constraints.to_csv(index=False).encode()
    write_table(source, target, np.arange(source.n_rows, dtype=np.int64),
                replace={c: [repr(float(v)) for v in result.table[c]] for c in columns},
                append={})
    if extra is not None and constraints is not None:
        write_bytes(extra, constraints)
    return Outcome(EXIT_OK, (f"{result!r} in {result.seconds:.2f} s",
                                           f"wrote {source.n_rows:,} rows to {target}"),
                          details=(read_line(source, args.input),))
