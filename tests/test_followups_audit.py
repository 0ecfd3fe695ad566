"""Follow-ups to issues 9 and 16 in the audit: one ordering of the worst groups."""

from __future__ import annotations

import re

import numpy as np
import pytest

from proxanon import audit


def report():
    rng = np.random.default_rng(3)
    sens = rng.integers(0, 4, 60) / 3
    groups = rng.permutation(np.arange(60) % 12) * 7  # ids need not be contiguous
    return audit(sens, groups, k=3, epsilon=0.1, delta=0.5)


def test_worst_groups_are_the_riskiest_ids_ties_by_id():
    checked = report()
    risk = dict(zip(checked.group_ids.tolist(), checked.group_risk.tolist(), strict=True))
    expected = sorted(risk, key=lambda g: (-risk[g], g))
    assert checked.worst_groups(len(risk)).tolist() == expected
    assert checked.worst_groups(4).tolist() == expected[:4]
    assert checked.worst_groups(0).size == 0


def test_the_report_lists_its_worst_groups_in_that_order():
    checked = report()
    listed = [int(g) for g in re.findall(r"^    group (\d+):", str(checked), re.MULTILINE)]
    assert listed == checked.worst_groups().tolist() and len(listed) == 5


def test_worst_groups_count_is_checked():
    with pytest.raises(ValueError, match="count must be >= 0"):
        report().worst_groups(-1)
