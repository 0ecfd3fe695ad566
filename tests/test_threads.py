"""``n_threads``: every public entry point that uses threads gives the same result for any
number of them (deterministic for any thread count), and refuses a bad count by
name. With two threads or more, ``anonymize`` builds the Mondrian-(ε, δ) cut beside
XColor's run; the published table must not depend on which finished first."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon import InfeasibleError, advise, anonymize, audit, partition
from proxanon._engine import runs
from proxanon._pipeline import classes as classes_module
from proxanon._pipeline import job as steps
from proxanon._work_beside import Beside
from proxanon.datasets import load_adult

#: Minutes of work in all: run by CI (`pytest -m slow`), not by the README's command.
pytestmark = pytest.mark.slow

THREADS = (1, 2, 3)
#: The steps of ``run_specialize`` that split classes (the others absorb rows).
SPLITS = ("split", "split_failing", "cover_failing")


def same_anonymization(a: proxanon.Anonymization, b: proxanon.Anonymization) -> None:
    pd.testing.assert_frame_equal(a.table, b.table)
    np.testing.assert_array_equal(a.groups, b.groups)
    first, second = (_comparable(r.report.to_dict()) for r in (a, b))
    assert first == second


def _comparable(fields: dict) -> dict:
    """The report's fields but its timings, NaN made comparable."""
    fields.pop("seconds")
    return {key: "nan" if isinstance(value, float) and value != value else value
            for key, value in fields.items()}


@pytest.fixture(scope="module")
def adult_taxonomies():
    adult = load_adult()
    quasi = ["age", "sex", "race", "marital-status"]
    return adult.data, dict(quasi_identifiers=quasi,
                            sensitive=["education", "occupation", "workclass"], k=10,
                            hierarchies={c: adult.hierarchies[c] for c in quasi})


@pytest.mark.parametrize("epsilon, delta", [(0.05, 0.8), (0.05, 0.6)])
def test_adult_default_path_same_for_any_thread_count(adult_taxonomies, epsilon, delta):
    """Adult with the ARX taxonomies: at (0.05, 0.8) the repaired Mondrian cut is published,
    at (0.05, 0.6) another candidate; either way every thread count publishes the same."""
    data, common = adult_taxonomies
    results = [anonymize(data, epsilon=epsilon, delta=delta, on_infeasible="best_effort",
                         n_threads=t, **common) for t in THREADS]
    assert set(results[0].report.candidates)  # both candidates were compared
    for other in results[1:]:
        same_anonymization(results[0], other)


def test_specialize_same_for_any_thread_count(adult_taxonomies, monkeypatch):
    """Specialization speculates on classes in parallel and commits them in order
    (cpp/include/proxanon/publish/specialize.hpp): Adult with the ARX taxonomies at (0.1, 0.8), best
    effort, splits hundreds of classes in each of its steps (split, split_failing,
    cover_failing). The published table is the same for 1, 2 and 3 threads, and so is every
    specialization call of the one-thread run made again on 2 and 3 threads."""
    data, common = adult_taxonomies
    calls = []
    specialize = runs.run_specialize

    def recorded(classes, *args, **kwargs):  # type: ignore[no-untyped-def]
        out = specialize(classes, *args, **kwargs)
        calls.append((classes, args, kwargs, out))
        return out

    with monkeypatch.context() as patch:
        for module in (steps, classes_module):
            patch.setattr(module, "run_specialize", recorded)
        first = anonymize(data, epsilon=0.1, delta=0.8, on_infeasible="best_effort",
                          n_threads=1, **common)
    splitting = [c for c in calls if c[2].get("step", "split") in SPLITS]
    assert {c[2].get("step", "split") for c in splitting} == set(SPLITS)
    assert sum(c[3][1] for c in splitting) > 1000
    for classes, args, kwargs, (groups, count) in splitting:
        for threads in (2, 3):
            again, again_count = specialize(classes, *args, **{**kwargs, "threads": threads})
            np.testing.assert_array_equal(again, groups)
            assert again_count == count
    for threads in (2, 3):
        same_anonymization(first, anonymize(data, epsilon=0.1, delta=0.8,
                                            on_infeasible="best_effort", n_threads=threads,
                                            **common))


def test_continuous_and_suppression_same_for_any_thread_count():
    """A continuous sensitive column past 8192 distinct values (an implicit structure whose
    degrees split over the threads), with suppression."""
    rng = np.random.default_rng(5)
    n = 12_000
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(0, 40, n),
                          "income": rng.lognormal(10, 1, n)})
    common = dict(quasi_identifiers=["age", "zip"], sensitive="income", k=10, epsilon=0.01,
                  delta=0.6)
    results = [anonymize(frame, n_threads=t, **common) for t in THREADS]
    assert results[0].satisfied
    assert results[0].partition.stats["neighbours"] == "sorted"
    for other in results[1:]:
        same_anonymization(results[0], other)
    suppressed = [anonymize(frame, n_threads=t, on_infeasible="suppress", max_suppression=0.1,
                            **{**common, "delta": 0.75}) for t in (1, 2)]
    same_anonymization(*suppressed)


@pytest.mark.parametrize("beside", [False, True])
def test_infeasible_verdict_same_for_any_thread_count(beside, monkeypatch):
    """The early proof (clique bound, balls over the threads; with two threads or more on a
    large table, on the cut's thread) reads the same."""
    if beside:
        monkeypatch.setattr(importlib.import_module("proxanon._pipeline.threads"),
                            "_PROOF_BESIDE_ROWS", 0)
    frame, args = _infeasible_frame()
    messages = []
    for t in THREADS:
        with pytest.raises(InfeasibleError) as caught:
            anonymize(frame, n_threads=t, **args)
        messages.append(str(caught.value))
    assert "proven before any repair" in messages[0]
    assert messages[1:] == messages[:1] * 2


def _infeasible_frame() -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 10_000),
                          "income": rng.normal(50_000, 100, 10_000)})
    return frame, dict(quasi_identifiers="age", sensitive="income", k=10, epsilon=0.3,
                       delta=0.9)


def test_a_proof_found_beside_stops_xcolors_run(monkeypatch):
    """With two threads the proof of infeasibility is sought on the cut's thread while
    XColor runs on the caller's (on tables over _PROOF_BESIDE_ROWS rows, lowered here): once
    found, XColor's native calls are stopped and the proof is raised, as one thread raises
    it before any run."""
    job = importlib.import_module("proxanon._pipeline.threads")
    steps = importlib.import_module("proxanon._pipeline.job")
    monkeypatch.setattr(job, "_PROOF_BESIDE_ROWS", 0)
    frame, args = _infeasible_frame()
    with pytest.raises(InfeasibleError) as alone:
        anonymize(frame, n_threads=1, **args)
    cut, n = _long_cut()
    outcomes = []

    def endless(*unused, **unused_kw):
        for _ in range(50):  # each call runs for seconds unless stopped
            try:
                cut(n)
            except RuntimeError as exc:
                outcomes.append(str(exc))
                raise
        outcomes.append("not stopped")
        raise AssertionError("XColor's run was not stopped")

    monkeypatch.setattr(steps, "run_session", endless)
    with pytest.raises(InfeasibleError) as beside:
        anonymize(frame, n_threads=2, **args)
    assert len(outcomes) == 1 and "stopped" in outcomes[0]
    assert str(beside.value) == str(alone.value)
    assert "proven before any repair" in str(beside.value)
    assert beside.value.partition is None


def test_an_error_in_the_proof_beside_is_raised_by_the_caller(monkeypatch):
    """An error the proof raises on the cut's thread stops XColor's run and reaches the
    caller, as the same error would with one thread."""
    job = importlib.import_module("proxanon._pipeline.threads")
    steps = importlib.import_module("proxanon._pipeline.job")
    monkeypatch.setattr(job, "_PROOF_BESIDE_ROWS", 0)
    frame, args = _infeasible_frame()

    def broken(*unused, **unused_kw):
        raise ValueError("the proof could not be sought")

    monkeypatch.setattr(steps, "early_proof", broken)
    for t in (1, 2):
        with pytest.raises(ValueError, match="could not be sought"):
            anonymize(frame, n_threads=t, **args)


def test_mondrian_table_beside_ends_once_the_caller_has():
    """The cut's thread generalizes Mondrian's table while XColor runs; once the caller has
    ended (an error, Ctrl-C, XColor's table published) it stops between columns instead of
    holding the caller's stop for the whole table."""
    import threading
    from types import SimpleNamespace

    module = importlib.import_module("proxanon._pipeline.mondrian")
    data = pd.DataFrame({"age": [30, 31, 40], "zip": [1, 2, 3], "income": [1.0, 2.0, 3.0]})
    columns = [SimpleNamespace(name="age"), SimpleNamespace(name="zip")]
    labels = [np.array(["[30-31]", "40"], dtype=object), np.array(["[1-2]", "3"], dtype=object)]
    cut = SimpleNamespace(summary=SimpleNamespace(labels=labels),
                          groups=np.array([0, 0, 1], dtype=np.int64))
    unwanted = threading.Event()
    table, _ = module._mondrian_table(data, columns, cut, unwanted)
    assert table["age"].tolist() == ["[30-31]", "[30-31]", "40"]
    assert table["income"].tolist() == [1.0, 2.0, 3.0]
    assert data["age"].tolist() == [30, 31, 40]  # the input is not modified
    unwanted.set()
    with pytest.raises(module._Unwanted):
        module._mondrian_table(data, columns, cut, unwanted)


def test_partition_audit_advise_same_for_any_thread_count():
    rng = np.random.default_rng(2)
    values = rng.random((9000, 2))
    parts = [partition(values, k=8, epsilon=0.02, delta=0.7, n_threads=t) for t in THREADS]
    for other in parts[1:]:
        np.testing.assert_array_equal(parts[0].groups, other.groups)
    reports = [audit(values, parts[0].groups, k=8, epsilon=0.05, delta=0.7, n_threads=t)
               for t in THREADS]
    for other in reports[1:]:
        np.testing.assert_array_equal(reports[0].neighbour_counts, other.neighbour_counts)
        assert reports[0].summary() == other.summary()
    advice = [advise(values, k=8, epsilon=0.05, delta=0.9, n_threads=t) for t in THREADS]
    assert advice[1:] == advice[:1] * 2


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(10, 60),
       delta=st.sampled_from([0.3, 0.6, 0.8]))
def test_small_tables_same_for_one_and_two_threads(seed, n, delta):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(20, 60, n),
                          "income": rng.integers(0, 6, n) * 1000.0})
    common = dict(quasi_identifiers=["sex", "age"], sensitive="income", k=3, epsilon=0.2,
                  delta=delta, on_infeasible="best_effort")
    same_anonymization(anonymize(frame, n_threads=1, **common),
                       anonymize(frame, n_threads=2, **common))


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                        (True, TypeError), ("2", TypeError)])
def test_bad_thread_counts_are_refused_by_name(bad, error):
    frame = pd.DataFrame({"age": [1, 2, 3, 4], "income": [1.0, 2.0, 3.0, 4.0]})
    calls = [
        lambda: anonymize(frame, quasi_identifiers="age", sensitive="income", k=2,
                          epsilon=0.1, delta=0.5, n_threads=bad),
        lambda: partition(frame[["income"]].to_numpy(), k=2, epsilon=0.1, delta=0.5,
                          n_threads=bad),
        lambda: audit(frame[["income"]].to_numpy(), [0, 0, 1, 1], k=2, epsilon=0.1,
                      delta=0.5, n_threads=bad),
        lambda: advise(frame[["income"]].to_numpy(), k=2, epsilon=0.1, n_threads=bad),
    ]
    for call in calls:
        with pytest.raises(error, match="n_threads"):
            call()


def test_work_beside_returns_its_value_and_raises_its_error():
    assert Beside(sum, [1, 2, 3]).result() == 6

    def fails() -> None:
        raise InfeasibleError("from the other thread")

    with pytest.raises(InfeasibleError, match="from the other thread"):
        Beside(fails).result()


def _long_cut() -> tuple[Callable[[int], dict], int]:
    """Mondrian's cut of the first rows of a 3M-row table (seconds for all of them), and n."""
    from proxanon import _core

    rng = np.random.default_rng(0)
    n = 3_000_000
    sensitive = rng.integers(0, 50, (n, 2)) / 50.0
    quasi = rng.random((n, 3))

    def cut(rows: int) -> dict:
        relation = _core.Relation(sensitive[:rows], _core.Metric.l1, [0.5, 0.5], 0.05)
        return _core.mondrian(relation, 10, 0.8, 0, quasi[:rows], [])
    return cut, n


def test_stopping_work_beside_ends_its_native_call():
    """A native call that runs for seconds (Mondrian's cut of 3M rows) is stopped before it
    ends: its result is the 'stopped' error, not its groups. A watched request that was
    never set changes nothing."""
    cut, n = _long_cut()
    work = Beside(cut, n)
    time.sleep(0.5)
    work.stop()
    with pytest.raises(RuntimeError, match="stopped"):
        work.result()
    small = Beside(cut, 1000).result()
    np.testing.assert_array_equal(small["groups"], cut(1000)["groups"])


def test_stop_requests_nest():
    """Within work beside (which watches its own request), a request watched for one call
    stops that call only; once its block ends, it stops nothing. A thread cannot watch one
    request twice."""
    from proxanon import _core

    cut, n = _long_cut()
    inner = _core.StopRequest()

    def nested(rows: int) -> tuple[str, dict]:
        with inner:
            try:
                cut(n)
                stopped = "not stopped"
            except RuntimeError as exc:
                stopped = str(exc)
        return stopped, cut(rows)

    work = Beside(nested, 1000)
    time.sleep(0.5)
    inner.set()
    stopped, small = work.result()
    assert "stopped" in stopped
    np.testing.assert_array_equal(small["groups"], cut(1000)["groups"])
    with inner, pytest.raises(RuntimeError, match="already watches"):
        inner.__enter__()


def test_plain_session_beside_changes_no_table(adult_taxonomies, monkeypatch):
    """Where Mondrian's groups fail widely, the plain partition's session runs beside the
    QI-aware path before the cut is finished (Adult at epsilon 0.1: both paths fail, the
    plain one is published); where the QI-aware path then succeeds, that session is stopped.
    Either way every thread count publishes the same table."""
    job = importlib.import_module("proxanon._pipeline.threads")
    steps = importlib.import_module("proxanon._pipeline.job")
    data, common = adult_taxonomies
    hard = [anonymize(data, epsilon=0.1, delta=0.8, on_infeasible="best_effort",
                      n_threads=t, **common) for t in THREADS]
    assert not hard[0].satisfied
    assert "the plain partition's groups" in str(hard[0].report)
    for other in hard[1:]:
        same_anonymization(hard[0], other)
    expected = anonymize(data, epsilon=0.05, delta=0.8, n_threads=1, **common)
    monkeypatch.setattr(job, "_HARD_SHARE", 0.0)  # start the plain session, then stop it
    sessions = steps.run_session
    plain_sessions = []

    def counted(*args, **kwargs):
        if not kwargs["qi_aware"]:
            plain_sessions.append(kwargs["start"])
        return sessions(*args, **kwargs)

    monkeypatch.setattr(steps, "run_session", counted)
    stopped = anonymize(data, epsilon=0.05, delta=0.8, n_threads=2, **common)
    assert plain_sessions == [None]  # started beside, not needed
    assert stopped.satisfied
    same_anonymization(expected, stopped)


def test_plain_session_beside_with_suppression(adult_taxonomies, monkeypatch):
    """With suppression too, where Mondrian's groups fail widely the plain partition's session
    runs on the thread beside once the cut is finished. Adult at epsilon 0.1 with at most 30%
    left out: at delta 0.8 both paths leave out too many rows, and one thread and two give
    the same verdict, the plain session computed once, beside on two; at delta 0.7 the
    QI-aware path succeeds, and the table is the one thread's."""
    module = importlib.import_module("proxanon._pipeline.job")
    data, common = adult_taxonomies
    sessions = module.run_session
    plain_on_caller: list[bool] = []
    # On two threads the caller's own session waits until the plain one has started beside
    # (at most a minute): the order then depends on no thread's speed.
    started_beside = threading.Event()
    wait_for_beside = [False]

    def recorded(*args, **kwargs):
        on_caller = threading.current_thread() is threading.main_thread()
        if not kwargs["qi_aware"]:
            plain_on_caller.append(on_caller)
            if not on_caller:
                started_beside.set()
        elif on_caller and wait_for_beside[0]:
            started_beside.wait(timeout=60)
        return sessions(*args, **kwargs)

    monkeypatch.setattr(module, "run_session", recorded)
    suppress = dict(on_infeasible="suppress", max_suppression=0.3, epsilon=0.1, **common)
    verdicts = []
    for threads in (1, 2):
        plain_on_caller.clear()
        wait_for_beside[0] = threads == 2
        with pytest.raises(InfeasibleError, match="more than max_suppression=0.3") as info:
            anonymize(data, delta=0.8, n_threads=threads, **suppress)
        verdicts.append(str(info.value))
        assert plain_on_caller == [threads == 1]
    assert verdicts[0] == verdicts[1]
    wait_for_beside[0] = False
    satisfied = [anonymize(data, delta=0.7, n_threads=threads, **suppress) for threads in (1, 2)]
    assert satisfied[0].satisfied and satisfied[0].report.suppressed_rows
    same_anonymization(satisfied[0], satisfied[1])
