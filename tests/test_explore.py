"""``explore``: the grid of settings, its verdicts checked against ``anonymize`` and the
proofs, the frontier plot, and the ``proxanon explore`` command."""

from __future__ import annotations

import itertools
import math
import re
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import proxanon
from proxanon import InfeasibleError, anonymize, explore, explore_plot
from proxanon.cli import main
from proxanon.frontier import frontier_cells, release_cell
from proxanon.html_report import anonymization_html, lookup, read_numbers
from tests.conftest import load_uci_adult
from tests.test_html_report import _parse

QI = ["age", "sex", "race"]
SENSITIVE = ["education-num", "hours-per-week"]
KS, EPSILONS, DELTAS = [5, 10], [0.02, 0.05, 0.1, 0.3], [0.5, 0.9]
COLUMNS = ["k", "epsilon", "delta", "verdict", "gcp", "largest_class_share", "seconds", "proof"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The module (``proxanon.explore`` is the function, in the package's namespace).
EXPLORE_MODULE = sys.modules["proxanon.explore"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return load_uci_adult().sample(n=2000, random_state=7).reset_index(drop=True)


@pytest.fixture(scope="module")
def grid(table: pd.DataFrame) -> pd.DataFrame:
    return explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=KS, epsilon=EPSILONS,
                   delta=DELTAS)


def _anonymize(table: pd.DataFrame, k: int, epsilon: float, delta: float,
               **options: object) -> proxanon.Anonymization:
    return anonymize(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=k, epsilon=epsilon,
                     delta=delta, **options)


def test_one_row_per_setting_in_the_order_of_the_lists(grid):
    assert list(grid.columns) == COLUMNS
    assert list(zip(grid["k"], grid["epsilon"], grid["delta"], strict=True)) == list(
        itertools.product(KS, EPSILONS, DELTAS))
    assert grid["k"].dtype == "int64"
    assert set(grid["verdict"]) == {"satisfied", "infeasible", "proven infeasible"}
    assert (grid["seconds"] > 0).all()


def test_proven_settings_come_from_the_proofs_and_anonymize_refuses_them(table, grid,
                                                                          monkeypatch):
    proven = grid[grid["verdict"] == "proven infeasible"]
    assert proven["gcp"].isna().all() and proven["largest_class_share"].isna().all()
    assert proven["proof"].str.contains("no partition into groups of at least k rows").all()
    # The proofs alone settle them: anonymize is called for the other settings only.
    calls = []

    def counting(*args: object, **kwargs: object) -> object:
        calls.append((kwargs["k"], kwargs["epsilon"], kwargs["delta"]))
        return anonymize(*args, **kwargs)

    monkeypatch.setattr(EXPLORE_MODULE, "anonymize", counting)
    again = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=KS, epsilon=EPSILONS,
                    delta=DELTAS)
    assert list(again["verdict"]) == list(grid["verdict"])
    unproven = grid[grid["verdict"] != "proven infeasible"]
    assert calls == list(zip(unproven["k"], unproven["epsilon"], unproven["delta"], strict=True))
    # Milliseconds each: far below what anonymize takes to find no table.
    assert proven["seconds"].max() < 0.5
    for k, epsilon, delta in zip(proven["k"], proven["epsilon"], proven["delta"], strict=True):
        with pytest.raises(InfeasibleError):
            _anonymize(table, int(k), epsilon, delta)


def test_other_settings_agree_with_anonymize(table, grid):
    for row in grid[grid["verdict"] != "proven infeasible"].itertuples():
        if row.verdict == "infeasible":
            with pytest.raises(InfeasibleError):
                _anonymize(table, row.k, row.epsilon, row.delta)
            assert math.isnan(row.gcp) and row.proof == ""
            continue
        result = _anonymize(table, row.k, row.epsilon, row.delta)
        assert result.satisfied
        assert row.gcp == pytest.approx(result.report.gcp, rel=1e-12)
        assert row.largest_class_share == pytest.approx(result.report.largest_class_share,
                                                        rel=1e-12)


def test_best_effort_and_suppression_are_passed_on(table):
    grid = dict(k=10, epsilon=[0.02, 0.3], delta=0.9)
    effort = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, **grid,
                     on_infeasible="best_effort")
    assert "rows_suppressed" not in effort.columns
    failed = effort[effort["verdict"] == "infeasible"]
    assert len(failed) == 1 and failed["gcp"].notna().all()
    result = _anonymize(table, 10, 0.02, 0.9, on_infeasible="best_effort")
    assert not result.satisfied and failed["gcp"].iloc[0] == pytest.approx(result.report.gcp)
    suppressed = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, **grid,
                         on_infeasible="suppress", max_suppression=0.2)
    assert list(suppressed.columns) == COLUMNS[:4] + ["rows_suppressed"] + COLUMNS[4:]
    # No proof about the whole table settles what a subset of its rows can do.
    assert "proven infeasible" not in set(suppressed["verdict"])
    first = suppressed.iloc[0]
    result = _anonymize(table, 10, 0.02, 0.9, on_infeasible="suppress", max_suppression=0.2)
    assert first["verdict"] == "satisfied"
    assert first["rows_suppressed"] == len(result.report.suppressed_rows) > 0


def test_the_input_is_not_modified(table):
    before = table.copy()
    explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=0.05, delta=0.5)
    pd.testing.assert_frame_equal(table, before)


@pytest.mark.parametrize(("changes", "error", "needle"), [
    ({"epsilon": []}, ValueError, "epsilon: give at least one value"),
    ({"delta": ()}, ValueError, "delta: give at least one value"),
    ({"k": []}, ValueError, "k: give at least one value"),
    ({"epsilon": [0.05, -0.1]}, ValueError, "epsilon must be a finite number >= 0"),
    ({"delta": [0.5, 1.5]}, ValueError, "delta must lie in [0, 1]"),
    ({"epsilon": [0.05, 0.05]}, ValueError, "given more than once"),
    ({"k": [10, 5000]}, ValueError, "larger than the number of rows"),
    ({"epsilon": "0.05"}, TypeError, "epsilon must be a number, got '0.05'"),
    ({"on_infeasible": "ignore"}, ValueError, "on_infeasible"),
    ({"search": 3}, TypeError, "unknown argument(s) ['search']"),
    ({"quasi_identifiers": ["zip"]}, ValueError, "not in the table"),
])
def test_bad_input_is_refused_before_any_run(table, monkeypatch, changes, error, needle):
    monkeypatch.setattr(EXPLORE_MODULE, "anonymize", _never)
    arguments = dict(quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=[0.05],
                     delta=[0.5])
    with pytest.raises(error, match=re.escape(needle)):
        explore(table, **{**arguments, **changes})


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("anonymize ran before the arguments were checked")


def test_the_plot_is_a_png_and_marks_the_release(tmp_path, grid):
    path = tmp_path / "frontier.png"
    figure = explore_plot(grid, path, release=(10, 0.05, 0.5))
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert len(figure.axes) == len(KS)
    # One cell per setting of each k; the release's outlined in black, no other.
    outlined = [p for ax in figure.axes for p in ax.patches if p.get_linewidth() > 1]
    assert len(outlined) == 1 and sum(len(ax.patches) for ax in figure.axes) == len(grid)
    cells = frontier_cells(grid)
    assert release_cell(cells, 10, 0.05, 0.5) == list(
        zip(grid["k"], grid["epsilon"], grid["delta"], strict=True)).index((10, 0.05, 0.5))
    assert release_cell(cells, 10, 0.07, 0.5) is None


def test_the_plot_names_the_extra_without_matplotlib(grid, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"proxanon\[report\]"):
        explore_plot(grid)


def test_the_plot_refuses_what_is_not_a_frontier():
    with pytest.raises(ValueError, match="lacks the column"):
        explore_plot(pd.DataFrame({"k": [1]}))
    with pytest.raises(TypeError, match="proxanon.explore"):
        explore_plot([1, 2])  # type: ignore[arg-type]


def _cli(tmp_path: Path, table: pd.DataFrame, *extra: str) -> int:
    source = tmp_path / "in.csv"
    if not source.exists():
        table.to_csv(source, index=False)
    return main(["explore", str(source), "--qi", ",".join(QI), "--sensitive",
                 ",".join(SENSITIVE), *extra])


def test_the_command_writes_the_csv_and_the_png(tmp_path, table, grid, capsys):
    out, png = tmp_path / "frontier.csv", tmp_path / "frontier.png"
    status = _cli(tmp_path, table, "--k", "5,10", "--epsilon", "0.02,0.05,0.1,0.3",
                  "--delta", "0.5,0.9", "-o", str(out), "--plot", str(png))
    assert status == 0
    written = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(written.columns) == [*COLUMNS, "job"]
    # The CSV file reads back to the frame explore returns (but for the seconds).
    keep = [c for c in COLUMNS if c not in ("seconds", "proof")]
    pd.testing.assert_frame_equal(written[keep], grid[keep])
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    printed = capsys.readouterr().out
    assert "proven infeasible" in printed and f"wrote {len(grid)} settings" in printed


def test_the_command_exits_1_when_no_setting_is_satisfied(tmp_path, table, capsys):
    out = tmp_path / "frontier.csv"
    assert _cli(tmp_path, table, "--k", "10", "--epsilon", "0.3", "--delta", "0.5,0.9",
                "-o", str(out)) == 1
    assert set(pd.read_csv(out)["verdict"]) == {"proven infeasible"}
    assert "no setting is satisfied" in capsys.readouterr().out


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--epsilon", "0.05,-1", "--epsilon -1: epsilon must be a finite number >= 0"),
    ("--delta", "0.5,2", "--delta 2: delta must lie in [0, 1]"),
    ("--epsilon", "0.05,x", "--epsilon must be comma-separated numbers"),
    ("--k", "10,a", "--k must be comma-separated whole numbers"),
    ("--k", "0", "--k must be at least 1"),
    ("--max-seconds", "0", "--max-seconds must be a number of seconds > 0"),
])
def test_the_command_refuses_bad_values_before_reading(tmp_path, capsys, option, value, needle):
    grid = {"--k": "10", "--epsilon": "0.05", "--delta": "0.5", option: value}
    status = main(["explore", str(tmp_path / "absent.csv"), "--qi", "age", "--sensitive",
                   "hours-per-week", *itertools.chain(*grid.items()),
                   "-o", str(tmp_path / "f.csv")])
    assert status == 2
    err = capsys.readouterr().err
    assert needle in err and "absent.csv" not in err


def _setting_index(grid: pd.DataFrame, setting: tuple[int, float, float]) -> int:
    return list(zip(grid["k"], grid["epsilon"], grid["delta"], strict=True)).index(setting)


@pytest.mark.slow
def test_the_report_shows_where_the_release_sits(tmp_path, table, grid):
    result = _anonymize(table, 10, 0.05, 0.5)
    page = anonymization_html(result, table, frontier=grid)
    numbers = read_numbers(page)["frontier"]
    assert numbers["release"] == _setting_index(grid, (10, 0.05, 0.5))
    assert [s["verdict"] for s in numbers["settings"]] == list(grid["verdict"])
    assert [s["gcp"] for s in numbers["settings"]] == [
        None if math.isnan(g) else g for g in grid["gcp"]]
    assert page.count('<tr class="release">') == 1
    # Every figure of the section is bound to its entry of the numbers block.
    shown = {tuple(key): value for key, value, _ in _parse(page).figures
             if key[0] == "frontier"}
    assert len(shown) == 7 * len(grid)
    assert all(value == lookup(read_numbers(page), key) for key, value in shown.items())
    assert "Among the settings explored" in page
    # Through the result's writer too; a setting that was not explored is said to be absent.
    other = _anonymize(table, 5, 0.04, 0.5)
    other.to_html(tmp_path / "r.html", frontier=grid)
    absent = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert read_numbers(absent)["frontier"]["release"] is None
    assert "is not among the settings explored" in absent
    assert '<tr class="release">' not in absent
    with pytest.raises(ValueError, match="lacks the column"):
        anonymization_html(result, frontier=grid.drop(columns="verdict"))


def test_the_anonymize_command_marks_the_release_on_its_frontier(tmp_path, table, grid):
    source, csv = tmp_path / "in.csv", tmp_path / "frontier.csv"
    table.to_csv(source, index=False)
    grid.to_csv(csv, index=False)
    common = ["anonymize", str(source), "--qi", ",".join(QI), "--sensitive",
              ",".join(SENSITIVE), "--k", "10", "--epsilon", "0.02", "--delta", "0.5"]
    assert main([*common, "-o", str(tmp_path / "out.csv"), "--html",
                 str(tmp_path / "r.html"), "--frontier", str(csv)]) == 0
    numbers = read_numbers(tmp_path / "r.html")["frontier"]
    assert numbers["release"] == _setting_index(grid, (10, 0.02, 0.5))
    assert len(numbers["settings"]) == len(grid)
    # --frontier goes with --html, and must be a frontier.
    assert main([*common, "-o", str(tmp_path / "o2.csv"), "--frontier", str(csv)]) == 2
    assert main([*common, "-o", str(tmp_path / "o3.csv"), "--html", str(tmp_path / "r3.html"),
                 "--frontier", str(source)]) == 2
    assert not (tmp_path / "o2.csv").exists() and not (tmp_path / "o3.csv").exists()


def test_a_setting_past_max_seconds_is_stopped_and_its_work_ends(uci_adult):
    # anonymize takes minutes to find no table here (QI hierarchies, two numeric columns).
    hierarchies = {c: h for c, h in proxanon.datasets.load_adult().hierarchies.items()
                   if c in ("age", "sex", "race", "marital-status")}
    threads = threading.active_count()
    tic = time.perf_counter()
    grid = explore(uci_adult, quasi_identifiers=["age", "sex", "race", "marital-status"],
                   sensitive=["fnlwgt", "hours-per-week"], k=10, epsilon=0.02, delta=[0.8, 1.0],
                   hierarchies=hierarchies, max_seconds=1.0)
    elapsed = time.perf_counter() - tic
    assert list(grid["verdict"]) == ["stopped", "proven infeasible"]
    assert math.isnan(grid["gcp"].iloc[0]) and grid["seconds"].iloc[0] >= 1.0
    # The stop reached the native work: nothing goes on after the call returns.
    assert elapsed < 30 and threading.active_count() == threads
    figure = explore_plot(grid)
    assert "stopped" in [t.get_text() for t in figure.legends[0].get_texts()]


@pytest.mark.parametrize("limit", [0, -1, math.inf, "5"])
def test_max_seconds_must_be_a_positive_number(table, limit):
    with pytest.raises((ValueError, TypeError), match="max_seconds"):
        explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=0.05,
                delta=0.5, max_seconds=limit)


def test_dask_runs_refuse_the_frontier(tmp_path, capsys):
    status = main(["anonymize", str(tmp_path / "in.csv"), "--qi", "age", "--sensitive",
                   "hours-per-week", "--k", "10", "--epsilon", "0.05", "--delta", "0.5",
                   "-o", str(tmp_path / "out"), "--dask", "--frontier", "f.csv"])
    assert status == 2
    assert "--frontier not available with --dask" in capsys.readouterr().err


def test_progress_prints_a_line_per_setting(table, capsys):
    grid = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=[0.02, 0.3],
                   delta=0.5, progress=True)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == len(grid) == 2
    assert lines[1].startswith("proxanon explore: 2/2 k=10 epsilon=0.3 delta=0.5: "
                               f"{grid['verdict'].iloc[1]} (")
    explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=0.02, delta=0.5)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress must be True or False"):
        explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10, epsilon=0.02,
                delta=0.5, progress="yes")


def test_the_command_takes_criteria_and_full_domain_recoding(tmp_path, table, capsys):
    """``explore --l-diversity L --criteria-column C`` and ``--recoding global``: the
    settings run as ``anonymize`` runs them with those options (the verdicts of
    ``explore(criteria=..., recoding=...)``); an l no class can reach makes every setting
    infeasible (exit 1)."""
    out = tmp_path / "frontier.csv"
    grid = ["--k", "5,10", "--epsilon", "0.05,0.3", "--delta", "0.5"]
    status = _cli(tmp_path, table, *grid, "--l-diversity", "3", "--criteria-column",
                  "marital-status", "--recoding", "global", "--suppress", "0.05", "-o",
                  str(out))
    capsys.readouterr()
    written = pd.read_csv(out, keep_default_na=False, na_values=[""])
    expected = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=[5, 10],
                       epsilon=[0.05, 0.3], delta=[0.5],
                       criteria=[proxanon.LDiversity(3, column="marital-status")],
                       recoding="global", on_infeasible="suppress", max_suppression=0.05)
    assert list(written["verdict"]) == list(expected["verdict"])
    assert status == (0 if (expected["verdict"] == "satisfied").any() else 1)
    status = _cli(tmp_path, table, *grid, "--l-diversity", "50", "--criteria-column",
                  "marital-status", "-o", str(out), "--force")
    assert status == 1
    assert set(pd.read_csv(out)["verdict"]) <= {"infeasible", "proven infeasible"}


STEP = 0.02


@pytest.fixture(scope="module")
def search(table: pd.DataFrame) -> proxanon.EpsilonSearch:
    return proxanon.find_epsilon(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                                 delta=[0.5, 0.9], step=STEP, epsilon_max=0.4)


def test_find_gives_an_epsilon_that_holds_and_a_step_above_that_does_not(table, search):
    largest = search.largest
    assert list(largest["delta"]) == [0.5, 0.9]
    for row in largest.itertuples():
        if not math.isnan(row.epsilon):
            held = _anonymize(table, 10, row.epsilon, row.delta)
            assert held.satisfied and held.report.gcp == pytest.approx(row.gcp)
        assert row.next_verdict in ("infeasible", "proven infeasible")
        assert row.next_epsilon == pytest.approx((0 if math.isnan(row.epsilon)
                                                  else row.epsilon) + STEP)
        above = search.settings[(search.settings["epsilon"] == row.next_epsilon)
                                & (search.settings["delta"] == row.delta)]
        assert list(above["verdict"]) == [row.next_verdict]
        if row.next_verdict == "infeasible":
            with pytest.raises(InfeasibleError):
                _anonymize(table, 10, row.next_epsilon, row.delta)
    # Bisection: a few settings per delta, not every step of 20.
    assert (largest["tried"] <= 8).all()
    assert len(search.settings) == int(largest["tried"].sum())


def test_find_reuses_known_settings_and_runs_nothing_again(table, search, monkeypatch):
    calls = []
    real = EXPLORE_MODULE.anonymize
    monkeypatch.setattr(EXPLORE_MODULE, "anonymize",
                        lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    again = proxanon.find_epsilon(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                                  delta=[0.5, 0.9], step=STEP, epsilon_max=0.4,
                                  known=search.settings)
    assert calls == []
    pd.testing.assert_frame_equal(again.largest, search.largest)
    first = search.settings.iloc[1]  # a setting anonymize settled (the first is a proof)
    grid = explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                   epsilon=first["epsilon"], delta=first["delta"], known=search.settings)
    assert calls == []
    assert grid.iloc[0]["verdict"] == first["verdict"]
    assert grid.iloc[0]["seconds"] == first["seconds"]


@pytest.mark.parametrize(("changes", "needle"), [
    ({"step": 0}, "step must be a finite number > 0"),
    ({"step": 0.5, "epsilon_max": 0.1}, "step (0.5) is larger than epsilon_max"),
    ({"known": "frontier.csv"}, "known must be a DataFrame"),
])
def test_find_refuses_bad_values(table, changes, needle):
    arguments = {"quasi_identifiers": QI, "sensitive": SENSITIVE, "k": 10, "delta": 0.5,
                 "step": 0.05, **changes}
    with pytest.raises((ValueError, TypeError), match=re.escape(needle)):
        proxanon.find_epsilon(table, **arguments)


def test_the_command_finds_appends_and_refuses_another_job(tmp_path, table, search, capsys):
    out = tmp_path / "frontier.csv"
    assert _cli(tmp_path, table, "--k", "10", "--delta", "0.5", "--epsilon", "0.4", "--find",
                str(STEP), "-o", str(out)) == 0
    printed = capsys.readouterr().out
    first = pd.read_csv(out)
    row = search.largest.iloc[0]
    assert "next_verdict" in printed and f"{row.epsilon:.4g}" in printed
    assert set(first["delta"]) == {0.5} and first["job"].nunique() == 1
    # Appending the other delta keeps the first run's settings and adds the new ones once.
    assert _cli(tmp_path, table, "--k", "10", "--delta", "0.5,0.9", "--epsilon", "0.4",
                "--find", str(STEP), "-o", str(out), "--append") == 0
    both = pd.read_csv(out)
    assert not both.duplicated(["k", "epsilon", "delta"]).any()
    pd.testing.assert_frame_equal(both.iloc[:len(first)], first)
    assert set(both["delta"]) == {0.5, 0.9}
    assert f"{len(first)} of them there before" in capsys.readouterr().out
    # Another metric is another job: refused, the file kept.
    status = _cli(tmp_path, table, "--k", "10", "--delta", "0.5", "--epsilon", "0.4",
                  "--find", str(STEP), "-o", str(out), "--append", "--metric", "l2")
    assert status == 2 and "another input file or other options" in capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_csv(out), both)
    assert _cli(tmp_path, table, "--k", "10", "--delta", "0.5", "--epsilon", "0.4",
                "--find", "0.5", "-o", str(tmp_path / "x.csv")) == 2
    assert "--find STEP takes one --epsilon" in capsys.readouterr().err


def test_ctrl_c_keeps_the_settings_finished(tmp_path, table, monkeypatch, capsys):
    real = EXPLORE_MODULE._anonymized
    runs = []

    def interrupted(*args, **kwargs):
        runs.append(1)
        if len(runs) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(EXPLORE_MODULE, "_anonymized", interrupted)
    with pytest.raises(proxanon.ExploreInterrupted) as stop:
        explore(table, quasi_identifiers=QI, sensitive=SENSITIVE, k=5, epsilon=[0.02, 0.05],
                delta=[0.5, 0.9])
    assert len(stop.value.frontier) == 2
    runs.clear()
    out = tmp_path / "frontier.csv"
    status = _cli(tmp_path, table, "--k", "5", "--epsilon", "0.02,0.05", "--delta", "0.5,0.9",
                  "-o", str(out))
    assert status == 130
    assert len(pd.read_csv(out)) == 2
    assert "wrote 2 settings (those finished)" in capsys.readouterr().err
