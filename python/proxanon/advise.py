"""``advise``: what the neighbour graph says about (k, ε, δ) before XColor runs.

The bounds and proofs, and what each one proves, are in :mod:`proxanon._engine.proofs`
(docs/design/proofs.md): Θ, the δ for which success is guaranteed or proven, the largest
clique found and, given δ, whether it proves the instance infeasible.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd
from numpy.typing import ArrayLike

from proxanon import _validate
from proxanon._engine.proofs import Advice, advice
from proxanon._pipeline.verdict import rows_by_value
from proxanon.distances import resolve
from proxanon.generalize import load_hierarchies
from proxanon.tables import column_list, encode_sensitive, role_columns

__all__ = ["Advice", "advise"]


def advise(
    data: Any = None,
    *,
    k: int,
    epsilon: float,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    delta: float | None = None,
    n_threads: int | None = None,
    sensitive: Any = None,
    quasi_identifiers: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
    sensitive_ranges: Mapping[str, tuple[float, float]] | None = None,
) -> Advice:
    """What the ε-neighbour graph proves about running XColor with (k, ε, δ).

    Two forms:

    - ``advise(sensitive, k=..., epsilon=...)``: ``sensitive`` a float array ``(n, s)`` or
      ``(n,)`` already on a common scale, as :func:`proxanon.partition` takes it.
    - ``advise(table, sensitive=[...], k=..., epsilon=...)``: ``table`` a pandas DataFrame
      whose ``sensitive`` columns are scaled exactly as :func:`proxanon.anonymize` scales
      them (numeric by min-max or ``sensitive_ranges``, dates over their span, ordered
      categoricals by rank, a column with a taxonomy in ``hierarchies`` by tree distance),
      so the advice is about the table ``anonymize`` would build. ``quasi_identifiers``
      may be given as to ``anonymize`` (checked, not used: the proofs depend on the
      sensitive values only). A DataFrame without ``sensitive`` is refused: its raw values
      (dollars, say) are not what ``anonymize`` compares. The reason of a proof names the
      clique's rows by their values in the columns' own units.

    Other parameters are those of :func:`proxanon.partition`; ``delta`` is optional
    (without it there is no verdict, only the bounds). Returns an :class:`Advice` with Θ,
    the largest δ for which success is proven, the largest clique found, and, when ``delta``
    is given, whether that clique proves the instance infeasible. See the module docstring
    for what is proven and how. ``n_threads``: threads for the row degrees (default every
    core this process may use; the answer is the same for any number). Inputs are never
    modified.
    """
    if isinstance(data, pd.DataFrame):
        return _advise_table(data, sensitive, quasi_identifiers, hierarchies,
                             sensitive_ranges, k=k, epsilon=epsilon, metric=metric,
                             weights=weights, delta=delta, n_threads=n_threads)
    for name, given in (("quasi_identifiers", quasi_identifiers), ("hierarchies", hierarchies),
                        ("sensitive_ranges", sensitive_ranges)):
        if given is not None:
            raise TypeError(f"{name} applies to a table's columns: pass a pandas DataFrame as "
                            "the first argument, with sensitive=[its sensitive columns]")
    if data is None:
        data = sensitive
    elif sensitive is not None:
        raise TypeError("sensitive was given twice: as the first argument and as a keyword "
                        "(with a DataFrame first, sensitive names its columns)")
    sens = _validate.float_matrix(data, "sensitive")
    n, s = sens.shape
    relation = resolve(metric, weights, s, n)
    return _advice(sens, relation, k=k, epsilon=epsilon, delta=delta, n_threads=n_threads)


def _advice(sens: Any, relation: Any, *, k: int, epsilon: float, delta: float | None,
            n_threads: int | None) -> Advice:
    """``advise`` on scaled values and their relation: the parameters checked, then the
    proofs."""
    n = sens.shape[0]
    epsilon = _validate.epsilon(epsilon, graph=relation.kind == "graph")
    k, eps, _ = _validate.privacy(k, epsilon, 0.0 if delta is None else delta, n, measured=True)
    dlt = None if delta is None else _validate.privacy(k, epsilon, delta, n, measured=True)[2]
    threads = _validate.threads(n_threads)
    return advice(sens, relation, k, eps, dlt, threads)


def _advise_table(table: pd.DataFrame, sensitive: Any, quasi_identifiers: Any,
                  hierarchies: Mapping[str, Any] | None,
                  ranges: Mapping[str, tuple[float, float]] | None, **options: Any) -> Advice:
    """The DataFrame form of :func:`advise`: the sensitive columns encoded as ``anonymize``
    encodes them (:func:`proxanon.tables.encode_sensitive`), the reason in their units."""
    _validate.unique_columns(table, "data")
    if len(table) == 0:
        raise ValueError("data is empty: it needs at least one row")
    if sensitive is None:
        raise TypeError(
            "data is a DataFrame: name its sensitive columns with sensitive=[...], and advise "
            "scales them as anonymize does (numeric columns by min-max, dates over their "
            "span, ordered categoricals by rank); passing values already scaled to [0, 1] "
            "works too, e.g. proxanon.scale_sensitive(data, columns)")
    sens_cols = (column_list(table, sensitive, "sensitive") if quasi_identifiers is None
                 else role_columns(table, quasi_identifiers, sensitive)[1])
    given = load_hierarchies(hierarchies, sens_cols, [str(c) for c in table.columns])
    sens, relation = encode_sensitive(table, sens_cols, given, options.pop("metric"),
                                      options.pop("weights"),
                                      _validate.ranges(ranges, sens_cols))
    found = _advice(sens, relation, **options)
    if not found.provably_infeasible:
        return found
    return dataclasses.replace(
        found, reason=found.explain(rows_by_value(table, sens_cols)(found.clique_rows)))

