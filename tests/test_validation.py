"""Bad input gets a clear error naming the parameter and the fix; inputs are never changed."""

from __future__ import annotations

import numpy as np
import pytest

from proxanon import partition

GOOD = np.linspace(0, 1, 40).reshape(20, 2)


def call(**overrides):
    args = {"sensitive": GOOD, "k": 4, "epsilon": 0.1, "delta": 0.5}
    args.update(overrides)
    sensitive = args.pop("sensitive")
    return partition(sensitive, **args)


@pytest.mark.parametrize(
    ("overrides", "error", "pattern"),
    [
        (
            {"sensitive": np.array([[0.1, np.nan]] * 20)},
            ValueError,
            r"sensitive .*non-finite.*row 0, column 1",
        ),
        ({"sensitive": np.array([[0.1, np.inf]] * 20)}, ValueError, r"sensitive .*non-finite"),
        ({"sensitive": np.empty((0, 2))}, ValueError, r"sensitive is empty"),
        ({"sensitive": np.empty((5, 0))}, ValueError, r"sensitive has no columns"),
        ({"sensitive": np.zeros((2, 2, 2))}, ValueError, r"sensitive must have shape"),
        ({"sensitive": [["a", "b"]] * 20}, TypeError, r"sensitive must be a numeric array"),
        ({"sensitive": "abc"}, TypeError, r"sensitive must be a numeric array"),
        ({"sensitive": None}, TypeError, r"sensitive is required"),
        ({"k": 0}, ValueError, r"k must be >= 1"),
        ({"k": 2.5}, TypeError, r"k must be an integer"),
        ({"k": True}, TypeError, r"k must be an integer"),
        ({"k": 21}, ValueError, r"k=21 is larger than the number of rows \(20\)"),
        ({"delta": 1.5}, ValueError, r"delta must lie in \[0, 1\]"),
        ({"delta": -0.1}, ValueError, r"delta must lie in \[0, 1\]"),
        ({"delta": float("nan")}, ValueError, r"delta must lie in \[0, 1\]"),
        ({"delta": "0.5"}, TypeError, r"delta must be a number"),
        ({"epsilon": -0.1}, ValueError, r"epsilon must be a finite number >= 0"),
        ({"epsilon": float("nan")}, ValueError, r"epsilon must be a finite number >= 0"),
        ({"epsilon": float("inf")}, ValueError, r"epsilon must be a finite number >= 0"),
        ({"metric": "cosine"}, ValueError, r"unknown metric 'cosine'; choose one of l1, l2, linf"),
        ({"weights": [1.0]}, ValueError, r"weights has 1 entries but sensitive has 2 column"),
        ({"weights": [1.0, -1.0]}, ValueError, r"weights must be finite and >= 0"),
        ({"weights": [1.0, np.nan]}, ValueError, r"weights must be finite and >= 0"),
        (
            {"quasi_identifiers": np.zeros((19, 2))},
            ValueError,
            r"quasi_identifiers has 19 rows but sensitive has 20",
        ),
        (
            {"quasi_identifiers": np.full((20, 1), np.nan)},
            ValueError,
            r"quasi_identifiers .*non-finite",
        ),
        (
            {"on_infeasible": "ignore"},
            ValueError,
            r"on_infeasible must be one of 'raise', 'best_effort'",
        ),
        ({"search_limit": 0}, ValueError, r"search_limit must be >= 1"),
        ({"trace": "yes"}, TypeError, r"trace must be True or False"),
    ],
)
def test_bad_input_is_refused_clearly(overrides, error, pattern):
    with pytest.raises(error, match=pattern):
        call(**overrides)


def test_too_large_epsilon_for_a_continuous_attribute_is_refused(monkeypatch):
    from proxanon._engine import runs

    monkeypatch.setattr(runs, "MAX_GRAPH_ENTRIES", 10_000)
    values = np.linspace(0, 1, 2000)
    with pytest.raises(ValueError, match="epsilon=0.5 makes the neighbour graph .* too dense"):
        partition(values, k=10, epsilon=0.5, delta=0.5)


def test_metric_names_are_case_insensitive():
    a = call(metric="L2")
    b = call(metric="l2")
    np.testing.assert_array_equal(a.groups, b.groups)


def test_numpy_integer_parameters_are_accepted():
    result = call(k=np.int64(4), delta=np.float32(0.5))
    assert result.stats["k"] == 4


def test_integer_list_and_strided_inputs_are_read_as_their_float_values():
    values = [[i % 5, i % 3] for i in range(20)]
    floats = np.array(values, dtype=float)
    expected = call(sensitive=floats, epsilon=1.0)
    assert expected.stats["initial_violations"] > 0  # the input shapes the result
    strided = np.repeat(floats, 2, axis=1)[:, ::2]
    assert not strided.flags.c_contiguous
    for form in (values, np.array(values, dtype=np.int64), np.asfortranarray(floats), strided):
        np.testing.assert_array_equal(call(sensitive=form, epsilon=1.0).groups, expected.groups)


@pytest.mark.parametrize(("ranges", "error", "pattern"), [
    ({"inc": (0,)}, TypeError, r"sensitive_ranges\['inc'\] must be a \(min, max\) pair"),
    ({"inc": 5}, TypeError, r"sensitive_ranges\['inc'\] must be a \(min, max\) pair"),
    ({"inc": {"lo": 0}}, TypeError, r"sensitive_ranges\['inc'\] must be a \(min, max\) pair"),
    ({"inc": (0, 100, 200)}, TypeError, r"sensitive_ranges\['inc'\] must be a \(min, max\)"),
    ({"inc": ("a", "b")}, TypeError, r"sensitive_ranges\['inc'\] min must be a number"),
    ([(0, 100)], TypeError, r"sensitive_ranges must be a mapping"),
    ({"zzz": (0, 100)}, ValueError, r"names 'zzz', which is not a sensitive column"),
    ({"inc": (0, np.inf)}, ValueError, r"sensitive_ranges\['inc'\] must be finite"),
    ({"inc": (np.nan, 100)}, ValueError, r"sensitive_ranges\['inc'\] must be finite"),
    ({"inc": (100, 0)}, ValueError, r"its min is above its max"),
])
def test_malformed_sensitive_ranges_are_refused_by_parameter_and_column(ranges, error,
                                                                        pattern) -> None:
    import pandas as pd

    from proxanon import anonymize

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 60, 60), "sex": rng.integers(0, 2, 60),
                          "inc": rng.uniform(30, 70, 60)})
    with pytest.raises(error, match=pattern):
        anonymize(frame, quasi_identifiers=["age", "sex"], sensitive=["inc"], k=3,
                  epsilon=0.05, delta=0.5, sensitive_ranges=ranges)
    given = anonymize(frame, quasi_identifiers=["age", "sex"], sensitive=["inc"], k=3,
                      epsilon=0.05, delta=0.5, sensitive_ranges={"inc": np.array([0, 100])})
    assert given.report.n == 60


def test_k_1_with_delta_above_0_is_refused_where_groups_are_formed() -> None:
    """A group of one row has risk 1 (docs/design/privacy-model.md), above 1 - delta: no table of
    one-row groups satisfies, so forming them is refused (and at delta = 0 they are fine)."""
    import pandas as pd

    from proxanon import anonymize

    sens = np.arange(10.0)[:, None]
    frame = pd.DataFrame({"a": range(10), "s": np.arange(10.0)})
    with pytest.raises(ValueError, match=r"k=1 with delta=0.9 > 0.*risk 1.*use k >= 2"):
        partition(sens, k=1, epsilon=0.05, delta=0.9)
    with pytest.raises(ValueError, match=r"k=1 with delta=0.9 > 0.*use k >= 2"):
        anonymize(frame, quasi_identifiers=["a"], sensitive=["s"], k=1, epsilon=0.05,
                  delta=0.9)
    assert partition(sens, k=1, epsilon=0.05, delta=0.0).satisfied
    assert anonymize(frame, quasi_identifiers=["a"], sensitive=["s"], k=1, epsilon=0.05,
                     delta=0.0).satisfied


def test_column_lists_are_named_by_their_own_labels() -> None:
    """Labels keep their type in messages (0, not '0'); repeats of mixed types and a nested
    list are named, not a raw TypeError from sorting or hashing."""
    import pandas as pd

    from proxanon import anonymize

    frame = pd.DataFrame({0: np.arange(20), "x": np.arange(20) % 3,
                          "s": np.arange(20) % 4 * 1.0})
    kw = dict(sensitive=["s"], k=2, epsilon=0.1, delta=0.5)
    with pytest.raises(ValueError, match=r"\['0'\] not in the table; its columns are "
                                         r"\[0, 'x', 's'\]"):
        anonymize(frame, quasi_identifiers=["0"], **kw)
    with pytest.raises(ValueError, match=r"\[0, 'x'\] named more than once"):
        anonymize(frame, quasi_identifiers=[0, 0, "x", "x"], **kw)
    with pytest.raises(TypeError, match=r"\['x'\] is not a column label"):
        anonymize(frame, quasi_identifiers=[["x"]], **kw)


def test_a_bad_value_is_named_by_position_and_by_index_label() -> None:
    """Messages count rows from 0 in the table's order; where the index says otherwise the
    label is named too, so df.loc finds the row."""
    import pandas as pd

    from proxanon import anonymize

    kw = dict(k=2, epsilon=0.1, delta=0.5)
    frame = pd.DataFrame({"age": [30.0, 40.0, np.nan, 50.0], "s": [1.0, 2.0, 3.0, 4.0]},
                         index=[2, 3, 0, 1])
    with pytest.raises(ValueError, match=r"'age' has 1 missing value\(s\), first at row 2 "
                                         r"\(index label 0\)"):
        anonymize(frame, quasi_identifiers=["age"], sensitive=["s"], **kw)
    frame = pd.DataFrame({"age": [30.0, 40.0, 20.0, 50.0], "s": [1.0, 2.0, np.nan, 4.0]},
                         index=list("abcd"))
    with pytest.raises(ValueError, match=r"'s' has a missing or non-finite value at row 2 "
                                         r"\(index label 'c'\)"):
        anonymize(frame, quasi_identifiers=["age"], sensitive=["s"], **kw)
    with pytest.raises(ValueError, match=r"first at row 2;"):  # a default index: the row alone
        anonymize(frame.reset_index(drop=True).assign(age=[30.0, 40.0, np.nan, 50.0]),
                  quasi_identifiers=["age"], sensitive=["s"], **kw)


def test_a_structure_for_built_in_metrics_names_a_taxonomy_column_as_the_reason() -> None:
    import pandas as pd

    from proxanon import Hierarchy, anonymize

    tree = Hierarchy.from_rows([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"],
                                ["b2", "B", "*"]])
    frame = pd.DataFrame({"q": np.arange(40) % 10, "t": ["a1", "a2", "b1", "b2"] * 10})
    with pytest.raises(ValueError, match=r"neighbours='grid' needs a built-in metric; a "
                                         r"sensitive column compared by its taxonomy"):
        anonymize(frame, quasi_identifiers=["q"], sensitive=["t"], k=4, epsilon=0.5,
                  delta=0.5, hierarchies={"t": tree}, neighbours="grid")
