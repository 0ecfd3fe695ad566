"""``proxanon.evaluate.score_table``: any published table measured from its labels
(docs/design/utility.md). On proxanon's tables it equals the report's measures; a label
coarser than its class needs costs what it covers; labels that do not cover their rows are
refused with the column and value named."""

from __future__ import annotations

import numpy as np
import pytest

import proxanon
from proxanon import evaluate
from proxanon.datasets import load_adult

QI = ["age", "sex", "race", "marital-status"]


@pytest.fixture(scope="module")
def adult() -> proxanon.datasets.Dataset:
    return load_adult()


@pytest.mark.parametrize("hierarchies", [True, False])
@pytest.mark.slow
def test_equals_evaluate_on_proxanons_tables(adult, hierarchies: bool) -> None:
    trees = {c: adult.hierarchies[c] for c in QI} if hierarchies else None
    for kwargs in (dict(delta=0), dict(epsilon=0.05, delta=0.8)):
        result = proxanon.anonymize(adult.data, quasi_identifiers=QI, sensitive=["occupation"],
                                    k=10, hierarchies=trees, **kwargs)
        score = evaluate.score_table(adult.data, result.table, quasi_identifiers=QI,
                                     sensitive=["occupation"], hierarchies=trees)
        assert score.gcp == pytest.approx(evaluate.gcp(adult.data, result), rel=1e-12)
        assert score.discernibility == evaluate.discernibility(result)
        assert score.classes == result.report.groups
        cqe = evaluate.count_query_error(adult.data, result, qd=2, s=0.1)
        assert score.count_query.mean_relative_error == pytest.approx(
            cqe.mean_relative_error, rel=1e-12)
        assert np.array_equal(score.count_query.actual, cqe.actual)


def test_a_coarser_label_costs_what_it_covers(adult) -> None:
    """Every age published at its hierarchy's first level above the leaves (a full-domain
    recoding): each row costs that node's leaves over all leaves, whatever its class holds."""
    tree = adult.hierarchies["age"]
    data = adult.data
    table = data.copy()
    table["age"] = [tree.ancestors(str(v))[1] for v in data["age"]]
    score = evaluate.score_table(data, table, quasi_identifiers=["age"], sensitive=["occupation"],
                                 hierarchies={"age": tree}, qd=1)
    index = {label: i for i, label in enumerate(tree.labels)}
    costs = np.array([tree.leaf_counts[index[label]] / tree.n_leaves for label in table["age"]])
    expected = costs.mean()
    assert score.gcp == pytest.approx(expected)
    assert score.classes == table["age"].nunique()
    # Suppressed rows cost 1 each and estimate nothing.
    left_out = np.zeros(len(data), dtype=bool)
    left_out[:100] = True
    partial = evaluate.score_table(data, table, quasi_identifiers=["age"],
                                   sensitive=["occupation"], hierarchies={"age": tree},
                                   suppressed=left_out, qd=1)
    assert partial.suppressed == 100
    assert partial.gcp == pytest.approx((costs[100:].sum() + 100) / len(data))
    assert partial.discernibility == (
        (table["age"][100:].value_counts() ** 2).sum() + 100 * len(data))


def test_numeric_ranges_and_the_root(adult) -> None:
    data = adult.data.iloc[:6].reset_index(drop=True)
    table = data.copy()
    table["age"] = ["[30-40]", "[30-40]", "*", "*", str(data["age"][4]), str(data["age"][5])]
    table.loc[:1, "age"] = f"[{data['age'][:2].min()}-{data['age'][:2].max()}]"
    score = evaluate.score_table(data, table, quasi_identifiers=["age"], sensitive=["occupation"],
                                 n_queries=5, qd=1, s=0.9)
    extent = data["age"].max() - data["age"].min()
    width = data["age"][:2].max() - data["age"][:2].min()
    assert score.gcp == pytest.approx((2 * width / extent + 2) / 6)


def test_labels_that_do_not_cover_their_rows_are_refused(adult) -> None:
    data = adult.data.iloc[:50].reset_index(drop=True)
    trees = {"race": adult.hierarchies["race"]}
    table = data.copy()
    table["race"] = table["race"].astype(object)
    table.loc[0, "race"] = "Martian"
    with pytest.raises(ValueError, match="'Martian'.*'race'"):
        evaluate.score_table(data, table, quasi_identifiers=["race"], sensitive=["occupation"],
                             hierarchies=trees, qd=1)
    table = data.copy()
    table["age"] = table["age"].astype(object)
    table.loc[0, "age"] = "[1-2]"
    with pytest.raises(ValueError, match=r"'\[1-2\]'.*'age'"):
        evaluate.score_table(data, table, quasi_identifiers=["age"], sensitive=["occupation"],
                             qd=1)
    with pytest.raises(ValueError, match="rows"):
        evaluate.score_table(data, table.iloc[:10], quasi_identifiers=["age"],
                             sensitive=["occupation"], qd=1)
