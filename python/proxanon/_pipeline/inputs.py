"""What ``anonymize``'s pipeline reads, set once after the arguments are checked: the
arguments (:class:`AnonymizeSettings`), then the input table, its columns encoded, and the
parameters (:class:`_Inputs`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._pipeline.criteria import CriteriaJob
from proxanon._progress import ProgressReporter
from proxanon._results.criteria import Criterion
from proxanon.distances import Relation
from proxanon.generalize import QIColumn
from proxanon.hierarchy import Hierarchy


@dataclass(frozen=True, kw_only=True)
class AnonymizeSettings:
    """``anonymize``'s arguments once checked, built once by it: the columns by role, the
    privacy parameters, and how to run."""

    quasi_identifiers: list[str]
    sensitive: list[str]
    k: int
    eps: float                     # 0.0 where not ``checked``
    dlt: float
    checked: bool                  # epsilon and delta were given (the distance check is made)
    ell: int | None                # distinct l-diversity (method="mondrian" only)
    metric: Any
    weights: Any
    hierarchies: Mapping[str, Any] | None
    on_infeasible: str
    limit: int                     # classes examined per violation (search_limit)
    init: str
    moves: str
    budget: float                  # the share of rows that may be left out (max_suppression)
    method: str
    ranges: Mapping[str, tuple[float, float]] | None  # sensitive_ranges, as given
    neighbours: str                # as given (checked against the relation once it is known)
    threads: int
    publish: str = "generalize"    # one of _validate.PUBLISH
    criteria: tuple[Criterion, ...] = ()  # besides (epsilon, delta)^k; ``l`` folded in
    recoding: str = "local"        # "local" or "global" (full-domain)


@dataclass(frozen=True)
class _Inputs:
    """What the job reads, set once by ``anonymize`` after checking its arguments: the input
    table, its columns encoded, and the parameters."""

    data: pd.DataFrame             # the input table, never modified
    sens_cols: list[str]
    given: dict[str, Hierarchy]    # the hierarchies, by column (load_hierarchies)
    metric: Any                    # metric and weights as given: with ``given``, what
    weights: Any                   # encodes the sensitive columns of a subset of the rows
    ranges: dict[str, tuple[float, float]] | None  # sensitive_ranges, as given
    columns: list[QIColumn]        # the QI columns, every row
    sens: NDArray[np.float64]      # the sensitive columns as numbers, every row
    relation: Relation             # what compares rows of ``sens``
    qi: NDArray[np.float64]        # the QI codes, their taxonomies and node keys, every row
    taxonomies: list[tuple[NDArray[np.int32], int] | None]  # (``_published_key_inputs``)
    node_keys: list[NDArray[np.int32] | None]
    k: int
    eps: float
    dlt: float
    on_infeasible: str
    limit: int                     # classes examined per violation (search_limit)
    init: str
    moves: str
    budget: float                  # the share of rows that may be left out (max_suppression)
    neighbours: str                # how the engine holds the relation (_validate.neighbours)
    threads: int
    reporter: ProgressReporter | None  # progress, shown by the caller's thread only
    criteria: CriteriaJob | None = None  # the criteria every published class satisfies

    def released(self, rows: NDArray[np.int64]) -> _Inputs:
        """The same job over the input rows ``rows`` only (those a table releases, the others
        suppressed): the rows' table, columns, sensitive values and criteria, read as
        ``proxanon.audit`` of the published table reads them."""
        data = self.data.iloc[rows]
        return replace(self, data=data, columns=[c.subset(rows) for c in self.columns],
                       sens=self.sens[rows], qi=np.ascontiguousarray(self.qi[rows]),
                       criteria=None if self.criteria is None else self.criteria.subset(data))
