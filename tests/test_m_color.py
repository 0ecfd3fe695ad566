"""``proxanon.m_color``: the m-Color constraint checked against exhaustive search."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import proxanon
from proxanon.hierarchy import Hierarchy
from proxanon.m_color import IneligibleError


def set_partitions(n: int) -> Iterator[list[int]]:
    """Every partition of range(n) as a block label per element (restricted growth strings)."""
    labels = [0] * n

    def extend(position: int, blocks: int) -> Iterator[list[int]]:
        if position == n:
            yield list(labels)
            return
        for block in range(blocks + 1):
            labels[position] = block
            yield from extend(position + 1, max(blocks, block + 1))

    if n:
        yield from extend(1, 1)


def satisfies(colours: list[object], groups: list[int], m: int) -> bool:
    """Every group has at least m rows and no colour twice (the m-Color constraint)."""
    members: dict[int, list[object]] = {}
    for colour, group in zip(colours, groups, strict=True):
        members.setdefault(group, []).append(colour)
    return all(len(g) >= m and len(set(g)) == len(g) for g in members.values())


def exhaustively_eligible(colours: list[object], m: int) -> bool:
    return any(satisfies(colours, p, m) for p in set_partitions(len(colours)))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from("abcd"), min_size=1, max_size=7), st.integers(2, 4))
def test_eligibility_and_result_match_exhaustive_search(colours: list[str], m: int) -> None:
    n = len(colours)
    data = pd.DataFrame({"age": np.arange(n) * 3 % 7, "disease": colours})
    if exhaustively_eligible(colours, m):
        result = proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=m)
        assert result.satisfied
        assert satisfies(colours, list(result.groups), m)
    else:
        with pytest.raises(IneligibleError) as info:
            proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=m)
        largest = info.value.largest_m
        assert exhaustively_eligible(colours, largest)
        assert not exhaustively_eligible(colours, largest + 1)


def test_error_names_colour_count_and_largest_m() -> None:
    data = pd.DataFrame({"age": range(10), "disease": ["flu"] * 4 + list("abcdef")})
    with pytest.raises(ValueError, match=r"'flu' covers 4 of 10 rows.*largest m that works is 2"):
        proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=3)


def adult_sample() -> pd.DataFrame:
    adult = proxanon.datasets.load_adult().data
    return adult.sample(600, random_state=1).reset_index(drop=True)


def test_adult_groups_hold_distinct_occupations_and_columns_are_kept() -> None:
    data = adult_sample()
    result = proxanon.m_color(data, quasi_identifiers=["age", "sex"],
                              sensitive="occupation", m=4)
    assert result.satisfied
    assert satisfies(list(data["occupation"]), list(result.groups), 4)
    assert list(result.table.columns) == [*data.columns, "group"]
    assert result.table["occupation"].equals(data["occupation"])
    assert result.report.sensitive == ("occupation",)


def test_colour_classes_from_a_dict_and_a_taxonomy_level() -> None:
    data = pd.DataFrame({"age": range(12),
                         "disease": ["flu", "cold", "gastritis", "ulcer", "asthma", "cancer"] * 2})
    classes = {"flu": "respiratory", "cold": "respiratory", "asthma": "respiratory",
               "gastritis": "stomach", "ulcer": "stomach", "cancer": "other"}
    with pytest.raises(IneligibleError, match="'respiratory' covers 6"):
        proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=3,
                         colours=classes)
    result = proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=2,
                              colours=classes)
    assert satisfies([classes[d] for d in data["disease"]], list(result.groups), 2)
    tree = Hierarchy.from_rows([[d, c, "*"] for d, c in classes.items()])
    by_level = proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=2,
                                colours=1, hierarchies={"disease": tree})
    assert satisfies([classes[d] for d in data["disease"]], list(by_level.groups), 2)
    with pytest.raises(ValueError, match="no class for value"):
        proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=2,
                         colours={"flu": "x"})
    with pytest.raises(ValueError, match="hierarchies must hold"):
        proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=2, colours=1)


def test_m_of_one_is_refused() -> None:
    """m = 1 protects nothing (a group of one row meets it): refused, pointing at
    k-anonymity alone."""
    data = pd.DataFrame({"age": [1, 1, 2], "disease": ["flu", "flu", "cold"]})
    with pytest.raises(ValueError, match="at least 2.*delta=0"):
        proxanon.m_color(data, quasi_identifiers="age", sensitive="disease", m=1)
