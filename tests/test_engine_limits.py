"""The engine at its limits: graphs too dense to build, floating-point extremes, the named
tolerances and caps."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

import proxanon
from proxanon import _core
from proxanon._engine import runs
from proxanon.distances import resolve

METRIC = _core.Metric.__members__  # the native metric of each built-in name


def exact_neighbours(x: float, y: float, metric: str, eps: float) -> bool:
    """The neighbour test of docs/design/privacy-model.md in exact rational arithmetic (one
    component, weight 1)."""
    diff = abs(Fraction(x) - Fraction(y))
    threshold = Fraction(_core.neighbour_threshold(eps))
    if metric == "l2":
        return diff * diff <= threshold * threshold
    return diff <= threshold


EXTREMES = [
    ([1e308, -1e308, 1e308, -1e308], 0.1),
    ([-1.7e308, 1.7e308, 0.0, 1.0, -1.0], 1e300),
    ([0.0, 1e-300, 0.5, 1.0, 3e-300, 2e-9], 1e-300),
    ([0.0, 1e10, 5e9, 1.0, 1e10 + 1e-6], 1e-300),
    ([-1e300, 1e300, 5e299, 0.0], 5e299),
]


@pytest.mark.parametrize("metric", ["l1", "l2", "linf", "min_component"])
@pytest.mark.parametrize(("values", "eps"), EXTREMES)
def test_extreme_values_and_tiny_epsilon_give_the_exact_graph(values, eps, metric):
    # Grid keys overflowed (undefined behaviour) for a range beyond double or a cell width
    # far below it; now the graph is exactly the pairs within the threshold.
    graph = _core.neighbour_graph(np.array(values).reshape(-1, 1), METRIC[metric], [1.0], eps)
    distinct = graph["values"][:, 0]
    for u, x in enumerate(distinct):
        got = graph["targets"][graph["offsets"][u]:graph["offsets"][u + 1]].tolist()
        want = [v for v, y in enumerate(distinct)
                if v != u and exact_neighbours(float(x), float(y), metric, eps)]
        assert got == want, (x, metric)


def test_partition_of_values_at_the_ends_of_double_range_is_satisfied_and_audited():
    values = np.array([1e308, -1e308, 1e308, -1e308, 0.0, 0.0])
    result = proxanon.partition(values, k=2, epsilon=0.1, delta=1.0)
    assert result.satisfied
    for g in np.unique(result.groups):
        members = values[result.groups == g]
        assert len(set(members.tolist())) == len(members)  # delta=1: no two equal values


def test_core_refuses_non_finite_sensitive_values_by_position():
    with pytest.raises(ValueError, match="row 1, component 0 is not finite"):
        _core.neighbour_graph(np.array([[0.0], [np.nan]]), _core.Metric.l1, [1.0], 0.1)


def test_graph_too_dense_is_a_value_error_type_exported_by_the_package():
    assert issubclass(proxanon.GraphTooDenseError, ValueError)
    values = np.linspace(0, 1, 2000)
    with pytest.raises(proxanon.GraphTooDenseError, match="adjacency entries"):
        _core.neighbour_graph(values, _core.Metric.l1, [1.0], 0.5, max_entries=10_000)


#: Appended to a child's code: prints the child's own peak memory in KiB (VmHWM; ru_maxrss
#: would also count the parent's pages from before the exec, Linux keeping the fork's mark).
PEAK_PROBE = textwrap.dedent("""
    import resource
    try:
        with open("/proc/self/status") as status:
            print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")))
    except OSError:
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def test_advise_proves_a_relation_too_dense_for_a_graph_in_little_memory():
    # 100k distinct values at epsilon=0.5 would make a graph of about 7.5e9 entries (refused
    # before); advise holds the relation as sorted values and proves the instance infeasible.
    code = textwrap.dedent("""
        import numpy as np, proxanon
        values = np.random.default_rng(0).random(100_000)
        advice = proxanon.advise(values, k=10, epsilon=0.5, delta=0.5)
        print(advice.provably_infeasible, advice.clique_size, len(advice.clique_rows))
    """) + PEAK_PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    infeasible, clique, rows = out[0].split()
    assert infeasible == "True" and int(clique) == int(rows) > 20_000
    assert int(out[1]) < 600_000, f"peak RSS {out[1]} KiB"


def test_one_cap_and_one_threshold_owned_by_the_core():
    assert runs.MAX_GRAPH_ENTRIES == _core.MAX_GRAPH_ENTRIES
    relation = resolve("l1", None, 1, 1)
    for eps in (0.0, 0.1, 1.0, 7.5):
        assert relation.threshold(eps) == _core.neighbour_threshold(eps)
        assert _core.neighbour_threshold(eps) == eps + _core.NEIGHBOUR_SLACK * max(1.0, eps)
    assert _core.allowed_neighbours(11, 0.8) == 2  # (1 - 0.8) * 10 rounds below 2 without slack
    assert _core.ALLOWANCE_SLACK > 0


def test_a_too_dense_graph_is_refused_before_it_is_allocated():
    # 100k distinct values at epsilon=0.5 make about 7.5e9 adjacency entries (30 GB). The
    # refusal used to come after the graph had grown to the cap (1.6 GB of targets and more
    # in copies); now it comes from counting, with the size in the message. Peak memory of a
    # fresh interpreter stays far below the cap's 1.6 GB. (With on_infeasible="raise" the
    # early verdict would answer first: a row near 0.5 neighbours all but 2 rows.)
    code = textwrap.dedent("""
        import numpy as np, proxanon
        values = np.random.default_rng(0).random(100_000)
        try:
            proxanon.partition(values, k=10, epsilon=0.5, delta=0.5, neighbours="graph",
                               on_infeasible="best_effort")
        except proxanon.GraphTooDenseError as exc:
            print(exc)
    """) + PEAK_PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    message, peak_kib = out[0], int(out[1])
    assert "epsilon=0.5 makes the neighbour graph" in message
    assert "100000 distinct sensitive values" in message
    assert " GB" in message and "adjacency entries" in message
    assert peak_kib < 600_000, f"peak RSS {peak_kib} KiB before the refusal"


@pytest.mark.parametrize(("option", "value", "pattern"), [
    ("search_limit", 2**64, r"search_limit must be at most 2147483647 .*got 18446744073709551616"),
    ("search_limit", 2**31, r"search_limit must be at most"),
    ("epsilon", 10**400, r"epsilon is too large for a float64"),
])
@pytest.mark.parametrize("entry", ["partition", "anonymize"])
def test_out_of_range_options_get_a_parameter_error(entry, option, value, pattern):
    # search_limit=2**64 used to reach the binding and print its raw signature.
    import pandas as pd

    options = {"k": 2, "epsilon": 0.1, "delta": 0.5, option: value}
    with pytest.raises(ValueError, match=pattern):
        if entry == "partition":
            proxanon.partition(np.arange(10) / 10, **options)
        else:
            frame = pd.DataFrame({"q": np.arange(10), "s": np.arange(10) / 10})
            proxanon.anonymize(frame, quasi_identifiers=["q"], sensitive=["s"], **options)
