"""``proxanon anonymize --dask``: a Parquet folder out, checked by the single-machine audit;
bad runs leave nothing behind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("distributed")

import proxanon  # noqa: E402
from proxanon.cli import main  # noqa: E402
from proxanon.cli._status import EXIT_INFEASIBLE, EXIT_OK, EXIT_USAGE  # noqa: E402
from tests.test_dask import QI, SA, census  # noqa: E402

#: Minutes of work in all: run by CI (`pytest -m slow`), not by the README's command.
pytestmark = pytest.mark.slow

PRIVACY = ["--qi", ",".join(QI), "--sensitive", ",".join(SA), "--k", "5", "--epsilon", "0.05",
           "--delta", "0.6"]


def inputs(folder: Path, source: pd.DataFrame) -> str:
    folder.mkdir()
    half = len(source) // 2
    source.iloc[:half].to_parquet(folder / "a.parquet")
    source.iloc[half:].to_parquet(folder / "b.parquet")
    return str(folder / "*.parquet")


def test_local_cluster_writes_a_satisfying_folder(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    source = census(2000, seed=11)
    out = tmp_path / "out"
    assert main(["anonymize", inputs(tmp_path / "big", source), "--dask", "-o", str(out),
                 *PRIVACY]) == EXIT_OK
    published = pd.read_parquet(out)
    assert len(published) == len(source)
    assert proxanon.audit(published, quasi_identifiers=QI, sensitive=SA, k=5, epsilon=0.05,
                          delta=0.6).satisfied
    pd.testing.assert_series_equal(published["note"].loc[source.index].astype(object),
                                   source["note"].astype(object))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert "satisfied" in capsys.readouterr().out
    # An existing folder is kept unless --force.
    assert main(["anonymize", str(tmp_path / "big" / "*.parquet"), "--dask", "-o", str(out),
                 *PRIVACY]) == EXIT_USAGE


def test_unreachable_scheduler_is_a_usage_error(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    status = main(["anonymize", inputs(tmp_path / "big", census(100)), "--dask",
                   "tcp://127.0.0.1:9", "-o", str(out), *PRIVACY])
    assert status == EXIT_USAGE
    assert "127.0.0.1:9" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]


def test_infeasible_writes_nothing(tmp_path: Path) -> None:
    source = census(300, seed=12)
    source[SA] = source[SA].iloc[0].to_numpy()
    source.loc[source.index[0], "edu"] += 1.0
    out = tmp_path / "out"
    status = main(["anonymize", inputs(tmp_path / "big", source), "--dask", "-o", str(out),
                   *PRIVACY])
    assert status == EXIT_INFEASIBLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]


def test_anatomy_release_writes_two_folders(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    source = census(2000, seed=12)
    qi_out, sa_out = tmp_path / "qi", tmp_path / "sa"
    assert main(["anonymize", inputs(tmp_path / "big", source), "--dask", "-o", str(qi_out),
                 "--publish", "anatomy", "--sensitive-output", str(sa_out), *PRIVACY]) == EXIT_OK
    qi_table, sa_table = pd.read_parquet(qi_out), pd.read_parquet(sa_out)
    assert len(qi_table) == len(sa_table) == len(source)
    assert not set(SA) & set(qi_table.columns) and list(sa_table.columns) == ["group", *SA]
    assert qi_table["age"].dtype == source["age"].dtype  # QIs published as read
    assert proxanon.audit(qi_table, sensitive_table=sa_table, sensitive=SA, k=5,
                          epsilon=0.05, delta=0.6).satisfied
    assert "sensitive table" in capsys.readouterr().out
    assert main(["anonymize", str(tmp_path / "big" / "*.parquet"), "--dask", "-o",
                 str(tmp_path / "x"), "--publish", "anatomy", *PRIVACY]) == EXIT_USAGE
