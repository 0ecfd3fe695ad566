"""The default ``anonymize`` publishes the Mondrian-(ε, δ) cut without finishing XColor's table
(specialization, absorption, summary) when a lower bound of that table's cost already exceeds
the cut's: the bound must hold for every table those steps can make, and skipping them must
publish the very table the full comparison publishes."""

from __future__ import annotations

import importlib
import threading
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxanon import anonymize, audit
from proxanon._pipeline.candidates import _cost, _cost_floor
from proxanon._pipeline.classes import ClassChecks, _absorb_classes, _specialize_classes
from proxanon._results.measures import summarize_groups
from proxanon.datasets import load_adult
from proxanon.generalize import encode_qi
from proxanon.tables import encode_sensitive

#: The modules of ``anonymize``'s default path: the choice between the tables, and the
#: steps that make and check each of them.
job_module = importlib.import_module("proxanon._pipeline.choose")
steps_module = importlib.import_module("proxanon._pipeline.job")
#: Where ``_cost_floor`` and its sampling bound live.
published_module = importlib.import_module("proxanon._pipeline.candidates")

QI = ["age", "sex", "race"]
SA = ["education", "income"]


def census(n: int, seed: int) -> pd.DataFrame:
    """Census-like rows: few QI combinations, each shared by many rows."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": np.clip(np.rint(rng.normal(40, 12, n)), 17, 90).astype(np.int64),
        "sex": rng.choice(["F", "M"], n),
        "race": rng.choice(["a", "b", "c", "d"], n, p=[0.7, 0.15, 0.1, 0.05]),
        "education": rng.integers(0, 16, n),
        "income": rng.integers(0, 40, n),
    })


COMMON = dict(quasi_identifiers=QI, sensitive=SA, k=10, epsilon=0.05, delta=0.8)


@pytest.mark.parametrize("threads", [1, 2])
def test_cut_published_without_finishing_xcolor_is_the_table_of_the_full_comparison(
        monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    frame = census(4000, seed=3)
    before = frame.copy()
    early = anonymize(frame, n_threads=threads, **COMMON)
    report = early.report
    assert report.method == "mondrian" and set(report.candidates) == {"xcolor (at least)",
                                                                      "mondrian"}
    assert report.candidates["xcolor (at least)"] > report.candidates["mondrian"]
    assert "at least" in str(report) and "XColor" in str(report)  # the bound, in words
    # The same run with the bound disabled finishes XColor's table and compares exact costs.
    monkeypatch.setattr(job_module, "_cost_floor", lambda *args: 0.0)
    full = anonymize(frame, n_threads=threads, **COMMON)
    assert full.report.method == "mondrian" and "xcolor" in full.report.candidates
    assert full.report.candidates["xcolor"] >= report.candidates["xcolor (at least)"]
    assert full.report.candidates["mondrian"] == report.candidates["mondrian"]
    pd.testing.assert_frame_equal(early.table, full.table)
    np.testing.assert_array_equal(early.groups, full.groups)
    assert early.satisfied and report.gcp == full.report.gcp
    pd.testing.assert_frame_equal(frame, before)
    check = audit(early.table, quasi_identifiers=QI, sensitive=SA, k=10, epsilon=0.05,
                  delta=0.8)
    assert check.satisfied and check.n_groups == report.groups


def test_the_choice_is_the_same_on_any_thread_count() -> None:
    frame = census(3000, seed=8)
    one, two = (anonymize(frame, n_threads=threads, **COMMON) for threads in (1, 2))
    assert one.report.candidates == two.report.candidates
    pd.testing.assert_frame_equal(one.table, two.table)


def _table_and_arguments(case: str) -> tuple[pd.DataFrame, dict]:
    """The census table (its cut satisfies and wins), or Adult's first 3,000 rows with the
    ARX hierarchies on its four QIs (its cut fails)."""
    if case == "census":
        return census(4000, seed=3), COMMON
    adult = load_adult()
    qis = ["age", "sex", "race", "marital-status"]
    return adult.data.iloc[:3000].reset_index(drop=True), dict(
        quasi_identifiers=qis, sensitive=["education", "occupation", "workclass"], k=10,
        epsilon=0.05, delta=0.8, hierarchies={c: adult.hierarchies[c] for c in qis})


@pytest.mark.parametrize("case", ["census", "adult"])
@pytest.mark.slow
def test_the_bound_and_audit_taken_while_the_cut_is_built_choose_the_same_table(
        monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """On two threads, where the cut's thread is still at work when XColor's session ends,
    the caller takes the bound and the audit of XColor's classes meanwhile: the same choice
    and table as on one thread, where the cut is built first and XColor's classes are
    audited after it, whether the cut then wins (census) or fails (Adult's rows)."""
    frame, arguments = _table_and_arguments(case)
    first = anonymize(frame, n_threads=1, **arguments)
    build_cut = steps_module._best_cut
    audit_groups = steps_module._audit_groups
    caller_audits: list[int] = []

    def late_cut(*args, **kwargs):
        time.sleep(1.0)  # the session ends long before
        return build_cut(*args, **kwargs)

    def watched_audit(*args):
        if threading.current_thread() is threading.main_thread():
            caller_audits.append(args[-1])
        return audit_groups(*args)

    monkeypatch.setattr(steps_module, "_best_cut", late_cut)
    monkeypatch.setattr(steps_module, "_audit_groups", watched_audit)
    late = anonymize(frame, n_threads=2, **arguments)
    assert caller_audits[0] == 1  # taken early, on the thread the cut's thread leaves
    if case == "census":
        assert caller_audits == [1]  # and not again
        assert late.report.method == "mondrian"
    else:
        assert late.report.method == "xcolor"
        assert not {"mondrian", "hierarchy cut"} & set(late.report.candidates)
    assert late.report.candidates == first.report.candidates
    pd.testing.assert_frame_equal(late.table, first.table)
    np.testing.assert_array_equal(late.groups, first.groups)


@st.composite
def classed_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, np.ndarray, int]:
    """A small census-like table and classes of at least k rows each."""
    n = draw(st.integers(8, 120))
    frame = census(n, seed=draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(1, 4))
    count = draw(st.integers(1, n // k))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    classes = np.r_[np.repeat(np.arange(count), k),
                    rng.integers(0, count, n - count * k)]
    if draw(st.booleans()):  # classes along the QI order gather equal tuples
        order = np.lexsort([frame[c].rank(method="dense").to_numpy() for c in QI])
        classes = np.sort(classes)[np.argsort(order)]
    else:
        rng.shuffle(classes)
    return frame, classes.astype(np.int64), k


@settings(max_examples=60, deadline=None)
@given(case=classed_tables(), sample=st.sampled_from([1, 2, 3, 1 << 14]),
       left_out=st.integers(0, 5), epsilon=st.sampled_from([0.0, 0.1, 0.3]))
def test_the_floor_bounds_every_finished_table(case, sample: int, left_out: int,
                                               epsilon: float) -> None:
    """``_cost_floor`` (over every class, or a sample of them) never exceeds the cost of the
    classes as given, nor of what specialization and absorption make of them."""
    frame, classes, k = case
    n_all = len(frame) + left_out  # rows left out count as fully generalized
    columns = [encode_qi(frame, c, None) for c in QI]
    sens, relation = encode_sensitive(frame, SA, {}, "l1", None)
    original = published_module._FLOOR_CLASSES
    published_module._FLOOR_CLASSES = sample
    try:
        floor = _cost_floor(columns, classes, k, n_all)
    finally:
        published_module._FLOOR_CLASSES = original
    assert floor <= _cost(summarize_groups(columns, classes), n_all) + 1e-12
    checks = ClassChecks.on(sens, relation, k=k, eps=epsilon, dlt=0.5)
    split, summary, _ = _specialize_classes(classes, np.ones(classes.max() + 1, np.int64),
                                            columns, checks)
    absorbed = _absorb_classes(split, columns, checks)
    if absorbed is not None:
        summary = summarize_groups(columns, absorbed)
    assert floor <= _cost(summary, n_all) + 1e-12
    assert floor >= left_out / n_all - 1e-12


def test_a_summary_of_some_rows_costs_them_against_the_whole_columns() -> None:
    frame = pd.DataFrame({"age": [20, 30, 40, 60], "sex": ["F", "M", "F", "M"]})
    columns = [encode_qi(frame, c, None) for c in ("age", "sex")]
    part = summarize_groups(columns, np.array([0, 0]), rows=np.array([1, 2]))
    whole = summarize_groups(columns, np.array([1, 0, 0, 2]))
    np.testing.assert_allclose(part.ncp[0], whole.ncp[0])
    assert part.ncp[0, 0] == pytest.approx(0.25)  # ages 30-40 of a 20-60 range
    with pytest.raises(ValueError, match="2 group ids for 3 rows"):
        summarize_groups(columns, np.array([0, 0]), rows=np.array([0, 1, 2]))
