"""Messages that name what the user gave (docs/guide/command-line.md#conventions-of-every-
subcommand): the value, the column or the file, never an internal name or a numpy repr."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon import Hierarchy, tableio
from proxanon.cli._options import names
from proxanon.cli._status import UsageError


def test_a_column_name_holding_a_comma_is_written_in_quotes(tmp_path: Path) -> None:
    assert names('age, "zip, code",sex', "--qi") == ["age", "zip, code", "sex"]
    assert names('"say ""hi"""', "--qi") == ['say "hi"']
    with pytest.raises(UsageError, match="double quotes"):
        names('age,"zip', "--qi")
    frame = pd.DataFrame({"zip, code": [f"{i % 7:05d}" for i in range(60)],
                          "age": np.arange(60) % 30, "pay": np.arange(60) * 10.0})
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    done = subprocess.run([sys.executable, "-m", "proxanon", "anonymize", str(source),
                           "--qi", '"zip, code",age', "--sensitive", "pay", "--k", "5",
                           "--delta", "0", "-o", str(tmp_path / "out.csv")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    published = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert published.groupby(["zip, code", "age"]).size().min() >= 5


def test_dates_mixing_whole_days_and_times_of_day() -> None:
    """A whole day among values with a time of day hangs under the next level; only where
    every value is a whole day is level "day" refused."""
    tree = Hierarchy.from_dates(["2020-01-01", "2020-01-02 10:00", "2020-01-02 11:00"],
                                levels=("day", "month"))
    rows = {row[0]: row for row in tree.rows()}
    assert rows["2020-01-01"] == ("2020-01-01", "2020-01", "*")
    assert rows["2020-01-02 10:00"] == ("2020-01-02 10:00", "2020-01-02", "2020-01", "*")
    with pytest.raises(ValueError, match="whole days already"):
        Hierarchy.from_dates(["2020-01-01", "2020-01-02"], levels=("day", "month"))


def test_an_unwritable_folder_is_named_not_the_temporary_file(monkeypatch) -> None:
    def refuse(**_: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    target = Path(tempfile.gettempdir()) / "out.csv"
    with pytest.raises(OSError) as info:
        tableio.atomic_write(target, lambda handle: handle.write(b"x"))
    assert str(target) in str(info.value) and ".part" not in str(info.value)
    assert "Permission denied" in str(info.value)


def test_anatomy_tables_that_differ_name_the_group_plainly() -> None:
    qi = pd.DataFrame({"age": [1, 2, 3, 4], "group": np.array([12, 12, 13, 13])})
    sa = pd.DataFrame({"pay": [1.0, 2.0, 3.0], "group": np.array([12, 13, 13])})
    with pytest.raises(ValueError, match=r"group 12 holds 2 row\(s\)") as info:
        proxanon.audit(qi, "group", quasi_identifiers=["age"], sensitive=["pay"], k=1,
                       epsilon=0.0, delta=0.0, sensitive_table=sa)
    assert "np." not in str(info.value)
