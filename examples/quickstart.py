"""Partition the bundled Adult census data against proximity breaches, then audit it.

Sensitive attribute: (education, occupation, workclass), each scaled to [0, 1] by rank.
Privacy: groups of at least k = 10 rows in which no row has more than 20% of the other rows
within L1 distance 0.05 of it (epsilon = 0.05, delta = 0.8).
"""

import numpy as np

import proxanon
from proxanon.datasets import load_adult
from proxanon.tables import scale_sensitive

adult = load_adult().data
sensitive = scale_sensitive(adult, ["education", "occupation", "workclass"])
quasi_identifiers = np.column_stack(
    [adult["age"].to_numpy(float)]
    + [adult[c].cat.codes.to_numpy(float) for c in ("sex", "race", "marital-status")]
)

result = proxanon.partition(
    sensitive, k=10, epsilon=0.05, delta=0.8, quasi_identifiers=quasi_identifiers
)
print(result)
stats = result.stats
print(
    f"max degree {stats['max_degree']} (inequality (4) bound {stats['bound']:.0f}, "
    f"holds: {stats['bound_holds']}); {stats['initial_violations']} rows violated after "
    f"INITIALIZE, {stats['swaps']} swaps removed them"
)

before = proxanon.audit(sensitive, np.arange(len(adult)) // 10, k=10, epsilon=0.05, delta=0.8)
after = proxanon.audit(sensitive, result.groups, k=10, epsilon=0.05, delta=0.8)
print(f"\nconsecutive rows in groups of 10: vulnerability {before.vulnerability:.1%}, "
      f"max risk {before.max_risk:.2f}")
print(f"\nindependent audit of the XColor partition:\n{after}")
