"""``advise`` on a table: in Python a DataFrame's sensitive columns are scaled as
``anonymize`` scales them (or the DataFrame is refused), and ``proxanon advise`` reads and
scales a table file as ``proxanon anonymize`` does, with exit status 1 exactly when it proves
that no table exists."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon import Hierarchy, InfeasibleError, advise, scale_sensitive
from proxanon.cli import main


def _donors(n: int = 400) -> pd.DataFrame:
    """Donations in dollars: most near $50, four gifts in the millions. Scaled to [0, 1] by
    min-max (as anonymize scales them), the small gifts are all within 0.05 of each other;
    in raw dollars only gifts within 5 cents are."""
    rng = np.random.default_rng(0)
    gifts = np.r_[np.round(rng.normal(50, 1, n - 4), 2), [1e6, 2e6, 3e6, 4e6]]
    return pd.DataFrame({"zip": [f"0{2100 + i % 40}" for i in range(n)],
                         "age": 20 + np.arange(n) % 50, "donation": gifts})


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _same(a: proxanon.Advice, b: proxanon.Advice) -> bool:
    """Equal in every field but the reason's wording (one names rows in dollars)."""
    return (dataclasses.replace(a, reason=None) == dataclasses.replace(b, reason=None)
            and np.array_equal(a.clique_rows, b.clique_rows))


def test_a_dataframe_is_scaled_as_anonymize_scales_it() -> None:
    """Raw dollars would "prove" success; scaled as anonymize scales them, the
    clique of small gifts proves that no table exists, and anonymize indeed finds none."""
    frame = _donors()
    snapshot = frame.copy()
    args = {"k": 10, "epsilon": 0.05, "delta": 0.8}
    raw = advise(frame[["donation"]].to_numpy(), **args)  # the trap: unscaled dollars
    assert not raw.provably_infeasible and raw.max_delta_proven >= 0.8  # "proves" success
    table = advise(frame, sensitive=["donation"], quasi_identifiers=["zip", "age"], **args)
    assert table.infeasible_for_any_partition
    assert _same(table, advise(scale_sensitive(frame, ["donation"]), **args))
    assert table.reason is not None and "donation 46" in table.reason  # in dollars
    with pytest.raises(InfeasibleError):
        proxanon.anonymize(frame, quasi_identifiers=["zip", "age"], sensitive="donation",
                           **args)
    pd.testing.assert_frame_equal(frame, snapshot)


def test_a_dataframe_takes_ranges_dates_and_taxonomies_as_anonymize_does() -> None:
    frame = _donors(120)
    frame["day"] = pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(120) % 30, "D")
    frame["kind"] = ["a", "b", "c"] * 40
    tree = Hierarchy.from_rows([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cc", "*"]])
    args = {"k": 4, "epsilon": 0.1, "delta": 0.5}
    ranged = advise(frame, sensitive="donation", sensitive_ranges={"donation": (0, 8e6)},
                    **args)
    assert _same(ranged, advise(frame["donation"].to_numpy() / 8e6, **args))
    days = advise(frame, sensitive=["day"], **args)
    assert _same(days, advise((np.arange(120) % 30) / 29, **args))
    kinds = advise(frame, sensitive=["kind"], hierarchies={"kind": tree}, k=4, epsilon=0.0,
                   delta=0.5)
    assert kinds.clique_size == 40  # rows of one kind: taxonomy distance 0 at epsilon 0


def test_a_dataframe_without_sensitive_names_is_refused_with_the_fix() -> None:
    frame = _donors(40)
    with pytest.raises(TypeError, match=r"sensitive=\[\.\.\.\].*scales them as anonymize"):
        advise(frame, k=4, epsilon=0.1)
    with pytest.raises(TypeError, match="pass a pandas DataFrame"):
        advise(frame[["donation"]].to_numpy(), k=4, epsilon=0.1, hierarchies={})
    with pytest.raises(ValueError, match="both quasi-identifier and sensitive"):
        advise(frame, sensitive=["age"], quasi_identifiers=["age"], k=4, epsilon=0.1)
    # Arrays work as before, by position or by the keyword.
    values = scale_sensitive(frame, ["donation"])
    assert _same(advise(values, k=4, epsilon=0.1), advise(sensitive=values, k=4, epsilon=0.1))


def test_the_advise_command_proves_what_anonymize_then_finds(tmp_path: Path, capsys) -> None:
    """Exit status 1 with the proof in dollars where anonymize then fails (exit 1), 0 where
    success is proven and anonymize succeeds, 0 without --delta; its numbers are those of
    advise on the DataFrame."""
    frame = _donors()
    source = tmp_path / "donors.csv"
    frame.to_csv(source, index=False)
    cols = ["--qi", "zip,age", "--sensitive", "donation", "--k", "10"]
    status, out, err = _cli(capsys, "advise", str(source), *cols, "--epsilon", "0.05",
                            "--delta", "0.8", "--report", str(tmp_path / "advice.json"))
    assert status == 1, err
    assert "proven that no table satisfies" in out and "donation 46" in out
    expected = advise(frame, sensitive=["donation"], k=10, epsilon=0.05, delta=0.8)
    assert f"max degree Θ = {expected.max_degree:,}" in out
    written = json.loads((tmp_path / "advice.json").read_text(encoding="utf-8"))
    assert written["command"] == "advise" and written["verdict"] in out
    assert written["report"]["clique_rows"] == expected.clique_rows.tolist()
    assert written["report"]["max_delta_proven"] == expected.max_delta_proven
    status, _, _ = _cli(capsys, "anonymize", str(source), "-o", str(tmp_path / "out.csv"),
                        *cols, "--epsilon", "0.05", "--delta", "0.8")
    assert status == 1 and not (tmp_path / "out.csv").exists()

    status, out, err = _cli(capsys, "advise", str(source), *cols, "--epsilon", "0.05")
    assert status == 0 and "no --delta given" in out, err

    spread = pd.DataFrame({"q": np.arange(200) % 7,
                           "income": np.arange(200) * 1000.0 + 20_000})
    spread.to_csv(tmp_path / "spread.csv", index=False)
    small = ["--qi", "q", "--sensitive", "income", "--k", "5", "--epsilon", "0.001",
             "--delta", "0.5"]
    status, out, err = _cli(capsys, "advise", str(tmp_path / "spread.csv"), *small)
    assert status == 0 and "proven that proxanon anonymize succeeds" in out, err
    status, _, err = _cli(capsys, "anonymize", str(tmp_path / "spread.csv"), "-o",
                          str(tmp_path / "spread_out.csv"), *small)
    assert status == 0, err


def test_the_advise_command_refuses_bad_input_with_status_2(tmp_path: Path, capsys) -> None:
    _donors(40).to_csv(tmp_path / "donors.csv", index=False)
    status, _, err = _cli(capsys, "advise", str(tmp_path / "donors.csv"), "--sensitive",
                          "nope", "--k", "4", "--epsilon", "0.1")
    assert status == 2 and "['nope'] not in" in err
    status, _, err = _cli(capsys, "advise", str(tmp_path / "donors.csv"), "--sensitive",
                          "donation", "--k", "4", "--epsilon", "0.1", "--delta", "1.5")
    assert status == 2 and "delta" in err
    with pytest.raises(SystemExit) as stopped:  # argparse: --sensitive is required
        main(["advise", str(tmp_path / "donors.csv"), "--k", "4", "--epsilon", "0.1"])
    assert stopped.value.code == 2
    capsys.readouterr()
