"""anonymize gives up only where partition does too: on random tables
whose QIs collide (many rows share each QI tuple), a setting that partition() satisfies,
plain or QI-aware with every class searched, on the same rows scaled as anonymize scales
them, is satisfied by the anatomy release (groups published apart, beside exact QIs). A
generalized release must merge groups that publish the same QI values: it is satisfied, or
its error says that merged groups formed the failing classes and names the anatomy release.
Every published table is audited again here from the table alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon

QI = ["age", "sex", "zone"]
GROUP = "group"
SENSITIVE = ["pay", "score"]


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int, float, float]:
    n = draw(st.integers(20, 240))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # Few QI values (collisions), sensitive values on a few levels (many ties).
    ages = draw(st.integers(2, 12))
    levels = draw(st.integers(3, 30))
    frame = pd.DataFrame({
        "age": rng.integers(20, 20 + ages, n),
        "sex": rng.choice(["F", "M"], n),
        "zone": rng.integers(0, draw(st.integers(1, 6)), n),
        "pay": rng.integers(0, levels, n) * 100.0,
        "score": rng.integers(0, levels, n).astype(float),
    })
    k = draw(st.integers(2, 8))
    epsilon = draw(st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.2]))
    delta = draw(st.sampled_from([0.3, 0.5, 0.7, 0.85]))
    return frame, k, epsilon, delta


def _partition_satisfied(frame: pd.DataFrame, k: int, epsilon: float, delta: float) -> bool:
    values = proxanon.scale_sensitive(frame, SENSITIVE)
    codes = frame[QI].apply(lambda c: pd.factorize(c, sort=True)[0]).to_numpy(float)
    runs = [dict(), dict(quasi_identifiers=codes, init="qi", search_limit=None)]
    return any(proxanon.partition(values, k=k, epsilon=epsilon, delta=delta,
                                  on_infeasible="best_effort", **run).satisfied
               for run in runs)


@settings(max_examples=60, deadline=None)
@given(case=tables())
def test_anonymize_is_satisfied_wherever_partition_is(case) -> None:
    frame, k, epsilon, delta = case
    if not _partition_satisfied(frame, k, epsilon, delta):
        return
    privacy = dict(quasi_identifiers=QI, sensitive=SENSITIVE, k=k, epsilon=epsilon,
                   delta=delta)
    anatomy = proxanon.anonymize(frame, publish="anatomy", **privacy)
    assert anatomy.satisfied
    assert proxanon.audit(anatomy.table, groups=GROUP, sensitive_table=anatomy.sensitive_table,
                          sensitive=SENSITIVE, k=k, epsilon=epsilon, delta=delta).satisfied
    try:
        result = proxanon.anonymize(frame, **privacy)
    except proxanon.InfeasibleError as exc:
        assert "publish='anatomy'" in str(exc) and "formed that way" in str(exc)
        return
    assert result.satisfied
    assert proxanon.audit(result.table, **privacy).satisfied
