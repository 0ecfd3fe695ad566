"""group_runs: the runs of a stable order by label, as np.unique and a stable argsort give."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from proxanon._group_runs import group_runs


@given(st.lists(st.integers(-3, 40), max_size=200))
def test_group_runs_match_unique_and_a_stable_sort(values: list[int]) -> None:
    labels = np.asarray(values, dtype=np.int64)
    order, ids, starts, sizes = group_runs(labels)
    np.testing.assert_array_equal(order, np.argsort(labels, kind="stable"))
    want_ids, want_starts, want_sizes = np.unique(labels[order], return_index=True,
                                                  return_counts=True)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(starts, want_starts)
    np.testing.assert_array_equal(sizes, want_sizes)
    assert ids.dtype == starts.dtype == sizes.dtype == np.int64
