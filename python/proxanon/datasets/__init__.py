"""Bundled data: the Adult census table (UCI, CC BY 4.0; ARX copy with its hierarchies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from proxanon.hierarchy import Hierarchy

#: Education levels from least to most schooling (the order of UCI's education-num).
EDUCATION_ORDER = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
)

ADULT_COLUMNS = (
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "occupation", "salary-class",
)


@dataclass(frozen=True)
class Dataset:
    """A bundled table: ``data`` (a new DataFrame on every load), a :class:`Hierarchy` per
    column that has one, the files they came from, and the attribution (``source``)."""

    data: pd.DataFrame
    hierarchies: dict[str, Hierarchy] = field(repr=False)
    hierarchy_files: dict[str, Path] = field(repr=False)
    source: str = field(repr=False, default="")


def _adult_dir() -> Path:
    return Path(str(resources.files("proxanon.datasets") / "adult"))


def _leaf_order(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [line.split(";", 1)[0] for line in handle.read().splitlines() if line.strip()]


def load_adult() -> Dataset:
    """The Adult census data (30,162 rows, 9 columns) with its ARX hierarchies.

    UCI Adult (Kohavi & Becker, 1996; CC BY 4.0), rows with missing values removed, as
    distributed with ARX; ``source`` has the full attribution.

    ``age`` is an integer column; every other column is a pandas Categorical. ``education``
    is ordered by schooling (:data:`EDUCATION_ORDER`); the other categorical columns are
    ordered as the leaves of their hierarchy file, which keeps sibling categories adjacent
    (so their rank codes can serve as a sensitive scale, as in the paper's experiments).
    """
    folder = _adult_dir()
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    files = {
        column: folder / f"adult_hierarchy_{column}.csv"
        for column in ADULT_COLUMNS
        if (folder / f"adult_hierarchy_{column}.csv").exists()
    }
    for column in ADULT_COLUMNS:
        if column == "age":
            frame[column] = frame[column].astype("int64")
            continue
        order = list(EDUCATION_ORDER) if column == "education" else _leaf_order(files[column])
        frame[column] = pd.Categorical(frame[column], categories=order, ordered=True)
    source = (folder / "SOURCE.md").read_text(encoding="utf-8")
    hierarchies = {column: Hierarchy.from_csv(path, sep=";", column=column)
                   for column, path in files.items()}
    return Dataset(data=frame, hierarchies=hierarchies, hierarchy_files=files, source=source)


__all__ = ["ADULT_COLUMNS", "EDUCATION_ORDER", "Dataset", "load_adult"]
