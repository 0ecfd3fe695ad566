"""Anonymize the bundled Adult table with pandas: generalized QIs, report, independent audit."""

import proxanon

adult = proxanon.datasets.load_adult()
result = proxanon.anonymize(
    adult.data,
    quasi_identifiers=["age", "sex", "race", "marital-status"],
    sensitive=["education", "occupation", "workclass"],
    k=10,
    epsilon=0.05,
    delta=0.8,
    hierarchies={c: adult.hierarchies[c] for c in ("sex", "race", "marital-status")},
)
print(result.table[["age", "sex", "race", "marital-status", "education", "group"]].head(4))
print()
print(result.report)

# Anyone can check the published table alone: groups are the rows sharing QI values.
check = proxanon.audit(result.table, quasi_identifiers=["age", "sex", "race", "marital-status"],
                       sensitive=["education", "occupation", "workclass"],
                       k=10, epsilon=0.05, delta=0.8)
print(f"\naudit of the published table: satisfied={check.satisfied}, "
      f"max risk {check.max_risk:.3f}, {check.n_groups} groups")
