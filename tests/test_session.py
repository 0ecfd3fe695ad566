"""The native session (docs/design/publishing.md, cpp/src/publish/session.cpp): XColor's run, the
exchange step and the rounds that merge groups publishing one QI tuple and repair the merged
classes, in one native call over structures built once.

Checked against a reference written here in Python, one native engine call per round
(``run_engine``, the exchange step and merging by the published labels): the session must
publish exactly the same classes, rounds and swaps, with and without QI loss, from a given
start, with a cap on the rounds, and when a suppressing run leaves rows out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from proxanon._engine.classes import row_ids, spread_equal_tuples
from proxanon._engine.options import EngineOptions, NativeRun
from proxanon._engine.runs import run_engine, run_session
from proxanon._pipeline.classes import _merge_equal_tuples, _published_key_inputs
from proxanon._results.measures import summarize_groups
from proxanon.distances import Relation, resolve
from proxanon.generalize import QIColumn, encode_qi
from tests.test_specialize import random_taxonomy


def reference(sens: NDArray[np.float64], columns: list[QIColumn], relation: Relation, k: int,
              eps: float, dlt: float, qi_aware: bool, suppress: bool,
              start: NDArray[np.int64] | None, max_rounds: int | None, budget: float
              ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], int, int]:
    """(released rows, class per released row, formed_from, rounds, swaps), one engine run
    per round as anonymize made them before the session."""
    n = sens.shape[0]
    qi, taxonomies, _ = _published_key_inputs(columns)
    sa_ids = row_ids(sens)
    mode = "suppress" if suppress else "best_effort"

    def run(released: NDArray[np.int64], initial: NDArray[np.int64] | None):  # type: ignore[no-untyped-def]
        options = EngineOptions(k=k, delta=dlt, search_limit=0,
                                init="qi" if qi_aware else "degree", init_block=1,
                                moves="auto", suppress=suppress)
        return run_engine(sens[released],
                          NativeRun(options=options, eps=eps, relation=relation),
                          qi=qi[released] if qi_aware else None,
                          qi_taxonomies=taxonomies if qi_aware else None, on_infeasible=mode,
                          initial_groups=initial, max_suppression=1.0)

    released = np.arange(n)
    part = run(released, start)
    swaps, rounds = int(part.stats["swaps"]), 0
    row_from = np.ones(n, dtype=np.int64)
    while True:
        kept = part.groups >= 0
        released, groups, row_from = released[kept], part.groups[kept], row_from[kept]
        subset = [c.subset(released) for c in columns]
        if rounds == 0:
            groups = spread_equal_tuples(groups, subset, sa_ids[released])
        summary = summarize_groups(subset, groups)
        merged = _merge_equal_tuples(summary.labels)
        group_from = np.zeros(summary.sizes.size, dtype=np.int64)
        np.maximum.at(group_from, groups, row_from)
        formed_from = np.bincount(merged, weights=group_from).astype(np.int64)
        row_from = formed_from[merged[groups]]
        over = n - released.size > budget * n
        if formed_from.size == summary.sizes.size or not part.satisfied or over or (
                max_rounds is not None and rounds >= max_rounds):
            break
        rounds += 1
        part = run(released, merged[groups])
        swaps += int(part.stats["swaps"])
    return released, merged[groups], formed_from, rounds, swaps


@st.composite
def cases(draw: st.DrawFn) -> dict:
    """Tables whose groups collide: two taxonomy QIs (or one and a numeric one) with few
    leaves, two sensitive components with repeated values."""
    n = draw(st.integers(40, 260))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = random_taxonomy(rng, "a", int(rng.integers(2, 9)))
    frame = pd.DataFrame({
        "a": rng.choice(a.leaves, n),
        # Non-integer and negative codes too: their labels are read back to tell classes apart.
        "x": rng.integers(0, draw(st.integers(1, 12)), n) * draw(st.sampled_from([1.0, 0.1, -0.7])),
        "s1": rng.integers(0, draw(st.integers(2, 10)), n).astype(float),
        "s2": rng.integers(0, draw(st.integers(1, 5)), n).astype(float),
    })
    return dict(frame=frame, hierarchy=a, k=draw(st.integers(2, 5)),
                eps=draw(st.sampled_from([0.0, 0.1, 0.25])),
                dlt=draw(st.sampled_from([0.3, 0.6, 0.8])),
                qi_aware=draw(st.booleans()), suppress=draw(st.booleans()),
                started=draw(st.booleans()),
                max_rounds=draw(st.sampled_from([None, 0, 1])),
                budget=draw(st.sampled_from([0.0, 0.2, 1.0])))


@settings(max_examples=120, deadline=None)
@given(case=cases())
def test_the_session_publishes_what_one_run_per_round_publishes(case: dict) -> None:
    frame = case["frame"]
    n = len(frame)
    sens = frame[["s1", "s2"]].to_numpy(dtype=float)
    sens = (sens - sens.min(axis=0)) / np.maximum(np.ptp(sens, axis=0), 1.0)
    columns = [encode_qi(frame, "a", case["hierarchy"]), encode_qi(frame, "x", None)]
    relation = resolve("l1", None, 2, n)
    k, eps, dlt = case["k"], case["eps"], case["dlt"]
    start = (np.arange(n) % max(1, n // k)).astype(np.int64) if case["started"] else None
    args = (sens, columns, relation, k, eps, dlt, case["qi_aware"], case["suppress"], start,
            case["max_rounds"], case["budget"])
    try:
        expected = reference(*args)
    except Exception as exc:  # the reference's verdict (e.g. too few rows left)
        with pytest.raises(type(exc)):
            run_native(*args)
        return
    released, classes, formed_from, rounds, swaps = expected
    session = run_native(*args)
    assert np.array_equal(session.released, released)
    assert np.array_equal(session.classes, classes)
    assert np.array_equal(session.formed_from, formed_from)
    assert (session.rounds, session.swaps) == (rounds, swaps)


def run_native(sens, columns, relation, k, eps, dlt, qi_aware, suppress, start,  # type: ignore[no-untyped-def]
               max_rounds, budget):
    qi, taxonomies, keys = _published_key_inputs(columns)
    options = EngineOptions(k=k, delta=dlt, search_limit=0,
                            init="qi" if qi_aware else "degree", init_block=1, moves="auto",
                            suppress=suppress)
    return run_session(sens, NativeRun(options=options, eps=eps, relation=relation), qi,
                       taxonomies, keys, row_ids(sens), qi_aware=qi_aware, start=start,
                       max_rounds=max_rounds, budget=budget)


def test_a_session_is_one_native_call_per_path() -> None:
    """Adult: the default job publishes through the session (its merge rounds happen in
    C++), and its report counts the rounds."""
    import proxanon

    adult = proxanon.datasets.load_adult()
    qis = ["age", "sex", "race", "marital-status"]
    calls: list[int] = []
    import proxanon._core as core

    original = core.session

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core, "session", counted)
        result = proxanon.anonymize(adult.data, quasi_identifiers=qis,
                                    sensitive=["education", "occupation", "workclass"], k=10,
                                    epsilon=0.05, delta=0.8,
                                    hierarchies={c: adult.hierarchies[c] for c in qis},
                                    n_threads=1)
    assert result.satisfied and result.report.merge_rounds >= 1
    # XColor's path and the repair of the Mondrian cut: one session each.
    assert len(calls) == 2
