"""The engine on real data: the Adult census table bundled with the package."""

from __future__ import annotations

import gzip
import hashlib
import re

import numpy as np

from proxanon import audit, partition
from proxanon.datasets import EDUCATION_ORDER, load_adult
from tests.conftest import UCI_ADULT, load_uci_adult


def test_bundled_adult_matches_the_arx_copy(adult_frame):
    assert adult_frame.shape == (30162, 9)
    assert list(adult_frame["education"].cat.categories) == list(EDUCATION_ORDER)
    assert adult_frame["age"].between(17, 90).all()
    for column in adult_frame.columns:
        if column != "age":
            assert not adult_frame[column].isna().any(), column


def test_shipped_uci_copy_is_the_recorded_file_and_agrees_with_the_bundled_copy(adult_frame):
    """The tests' UCI copy decompresses to the file SOURCE.md names (by SHA-256), and with
    its '?' rows dropped it is the bundled ARX copy, row for row."""
    raw = gzip.decompress((UCI_ADULT / "adult.data.gz").read_bytes())
    recorded = re.search(r"SHA-256\s+`([0-9a-f]{64})`",
                         (UCI_ADULT / "SOURCE.md").read_text(encoding="utf-8"))
    assert recorded is not None, "SOURCE.md must record the SHA-256 of adult.data"
    assert hashlib.sha256(raw).hexdigest() == recorded.group(1)
    lines = raw.decode("ascii").splitlines()
    assert len(lines) == 32561 + 1 and lines[-1] == ""  # one blank line at the end
    assert sum("?" in line for line in lines) == 2399
    uci = load_uci_adult()
    arx = adult_frame.rename(columns={"salary-class": "income"})
    assert len(uci) == len(arx) == 30162
    for column in arx.columns:
        np.testing.assert_array_equal(uci[column].astype(str).to_numpy(),
                                      arx[column].astype(str).to_numpy(), err_msg=column)


def test_load_adult_returns_a_fresh_frame():
    first = load_adult().data
    first.loc[0, "age"] = -1
    assert load_adult().data.loc[0, "age"] != -1


def test_adult_partition_is_satisfied_and_passes_audit(adult_sensitive, adult_qi):
    # The real-data case: SA = education by rank, occupation and workclass codes,
    # each on [0, 1]; L1; epsilon = 0.05, delta = 0.8, k = 10.
    for qi in (None, adult_qi):
        result = partition(adult_sensitive, k=10, epsilon=0.05, delta=0.8,
                           quasi_identifiers=qi)
        assert result.satisfied
        report = audit(adult_sensitive, result.groups, k=10, epsilon=0.05, delta=0.8)
        assert report.satisfied
        assert report.max_risk <= 1 - 0.8 + 1e-9
        assert report.n_groups == 30162 // 10
        assert result.stats["initial_violations"] > 0  # the repair loop had work to do
        assert result.stats["swaps"] > 0


def test_adult_search_limit_trades_loss_not_privacy(adult_sensitive, adult_qi):
    full = partition(adult_sensitive, k=10, epsilon=0.05, delta=0.8,
                     quasi_identifiers=adult_qi, search_limit=None)
    assert audit(adult_sensitive, full.groups, k=10, epsilon=0.05, delta=0.8).satisfied
    assert full.stats["classes_examined"] >= full.stats["swaps"]


def test_adult_hard_instance_reports_honestly(adult_sensitive):
    # epsilon = 0.1 leaves violations that swaps alone cannot remove (why the stronger repair
    # exists): whatever is left must be exactly what the audit finds.
    result = partition(adult_sensitive, k=10, epsilon=0.1, delta=0.8,
                       on_infeasible="best_effort")
    report = audit(adult_sensitive, result.groups, k=10, epsilon=0.1, delta=0.8)
    assert result.satisfied == report.satisfied
    np.testing.assert_array_equal(result.violating_rows, report.violating_rows)
