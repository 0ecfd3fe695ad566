"""The text of an infeasible verdict (``InfeasibleError``): what failed, the proof when
there is one, what epsilon allows in each column's own units, and the classes that merging
formed."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from proxanon._engine.infeasibility import infeasibility_proof
from proxanon._engine.verdicts import infeasible_message
from proxanon._messages import Param, Text, text
from proxanon._pipeline.candidates import _Published
from proxanon._pipeline.inputs import _Inputs
from proxanon.distances import Relation, box_radius
from proxanon.generalize import format_number

#: Merged classes an infeasibility message names.
_CLASSES_SHOWN = 5


def infeasible_text(inputs: _Inputs, result: _Published,
                    scales: Mapping[str, tuple[float, float]]) -> Text:
    """Why no table could be published: a one-line summary, the proof when there is one (in
    the table's own values), the classes that merging formed, then the engine's numbers.
    ``scales``: as :func:`epsilon_in_units` takes them (its taxonomies: the columns
    ``inputs.given`` has a hierarchy for)."""
    sens_cols, relation, k, eps, dlt = (inputs.sens_cols, inputs.relation, inputs.k, inputs.eps,
                                        inputs.dlt)
    check = result.check
    lines = [
        f"no table satisfying (epsilon={eps:g}, delta={dlt:g})^k-dissimilarity with k={k} "
        f"was found: {len(check.violating_rows):,} row(s) violate in "
        f"{len(check.violating_groups):,} of {check.n_groups:,} published class(es)"
        + (f" and {check.small_groups.size:,} class(es) have fewer than k rows"
           if check.small_groups.size else "")
        + (" (the plain partition's groups, tried when the QI-aware ones failed)"
           if result.plain else "") + "."
    ]
    published = inputs.data.iloc[result.released]
    proof = _proof(published, sens_cols, inputs.sens[result.released], relation, k, eps, dlt,
                   inputs.threads)
    if proof:
        lines.append(f"Proof: {proof}.")
    units = epsilon_in_units(published, sens_cols, relation, eps, scales, inputs.given)
    if units:
        lines.append(units)
    merged = _merged_classes_text(published, result)
    if merged:
        lines.append(merged)
        # Anatomy publishes each group beside its id, exact QIs: no group is merged.
        return text("\n".join(lines), " An anatomy release (", Param("publish", "anatomy"),
                    ") publishes the QIs exactly beside a group id, so it merges no groups "
                    "and may be satisfied here.", "\nEngine: ",
                    infeasible_message(result.part.stats))
    return text("\n".join(lines), "\nEngine: ", infeasible_message(result.part.stats))


def _proof(published: pd.DataFrame, sens_cols: list[str], sens: NDArray[np.float64],
           relation: Relation, k: int, eps: float, dlt: float, threads: int) -> str | None:
    """The clique argument of :func:`proxanon.advise` for the engine's n // k groups, its
    rows described by their values."""
    if relation.kind != "builtin" or not relation.is_metric:
        return None  # the clique proof needs the triangle inequality of a known metric
    try:
        return infeasibility_proof(sens, relation, k, eps, dlt, any_partition=False,
                                   describe=rows_by_value(published, sens_cols),
                                   threads=threads)
    except ValueError:  # e.g. an epsilon/2 graph too dense to build: no proof to offer
        return None


def rows_by_value(published: pd.DataFrame, sens_cols: list[str],
                   ) -> Callable[[NDArray[np.int64]], str]:
    """Names a proof's rows (of ``published``: a clique, or the one row of the degree bound)
    by the range of each sensitive column over them, in the column's own units."""
    def describe(rows: NDArray[np.int64]) -> str:
        chosen = published.iloc[rows]
        values = " and ".join(f"{c} {_value_range(chosen[c])}" for c in sens_cols)
        return f"the row{'s' if len(rows) > 1 else ''} with {values}"
    return describe


def epsilon_in_units(published: pd.DataFrame, sens_cols: list[str], relation: Relation,
                     eps: float, scales: Mapping[str, tuple[float, float]],
                     taxonomies: Collection[str]) -> str | None:
    """What epsilon allows in each sensitive column alone, in the column's own units (the
    engine compares columns scaled to [0, 1]), as a sentence: see :func:`epsilon_parts`."""
    parts = epsilon_parts(published, sens_cols, relation, eps, scales, taxonomies)
    if not parts:
        return None
    return (f"Units: rows are neighbours when their {relation.label} distance over the columns "
            f"scaled to [0, 1] is at most epsilon = {eps:g}, i.e. a difference of at most "
            + ", or ".join(parts) + " with the other columns equal.")


def epsilon_parts(published: pd.DataFrame, sens_cols: list[str], relation: Relation,
                  eps: float, scales: Mapping[str, tuple[float, float]],
                  taxonomies: Collection[str]) -> list[str]:
    """The largest difference in each sensitive column alone (the others equal) at which
    rows are still neighbours, in the column's units ("12.5 in income", "2 categories apart
    in edu"): ``scales`` holds the (min, max) each numeric column was scaled by
    (:func:`proxanon.tables.numeric_scales`), dates and durations span their own time range,
    and the ``taxonomies`` columns (compared by tree distance) have no units, nor has a
    relation other than a weighted built-in one."""
    if relation.kind != "builtin" or relation.weights is None or relation.name not in (
            "l1", "l2", "linf", "min_component"):
        return []
    parts = []
    for column, weight in zip(sens_cols, relation.weights, strict=True):
        if weight <= 0 or column in taxonomies:
            continue
        scaled = box_radius(relation.name, float(weight), eps)
        values = published[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            steps = len(values.dtype.categories) - 1
            apart = np.floor(scaled * steps + 1e-9)
            parts.append(f"{format_number(apart)} {'category' if apart == 1 else 'categories'} "
                         f"apart in {column}")
        elif column in scales:
            lo, hi = scales[column]
            parts.append(f"{format_number(float(f'{scaled * (hi - lo):.6g}'))} in {column}")
        elif len(values) and (pd.api.types.is_datetime64_any_dtype(values.dtype)
                              or pd.api.types.is_timedelta64_dtype(values.dtype)):
            span = pd.Timedelta(values.max() - values.min())
            parts.append(f"{pd.Timedelta(seconds=round(scaled * span.total_seconds()))} "
                         f"in {column}")
    return parts


def _value_range(values: pd.Series) -> str:
    """The values of a column among some rows, in the column's own terms."""
    if isinstance(values.dtype, pd.CategoricalDtype) and values.dtype.ordered:
        present = values.cat.codes.to_numpy()
        lo, hi = values.dtype.categories[present.min()], values.dtype.categories[present.max()]
        return f"{lo!s}" if lo == hi else f"{lo!s} to {hi!s}"
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
            values.dtype):
        lo, hi = float(values.min()), float(values.max())
        return format_number(lo) if lo == hi else f"{format_number(lo)} to {format_number(hi)}"
    distinct = [str(v) for v in pd.unique(values.astype(object).to_numpy())]
    shown = ", ".join(distinct[:3]) + (f" and {len(distinct) - 3} more" if len(distinct) > 3
                                       else "")
    return distinct[0] if len(distinct) == 1 else f"in {{{shown}}}"


def _merged_classes_text(published: pd.DataFrame, result: _Published) -> str | None:
    """The failing classes that merging formed; forced ones (rows with identical QIs, which
    publish one tuple however they are grouped) first."""
    check = result.check
    failing = np.union1d(check.violating_groups, check.small_groups)
    failing = failing[result.merged[failing] > 1]
    if failing.size == 0:
        return None
    summary = result.summary
    forced: NDArray[np.bool_] = ~(summary.ncp[failing] != 0).any(axis=1)
    order = np.lexsort((failing, -summary.sizes[failing], ~forced))[:_CLASSES_SHOWN]
    names = [c.name for c in result.columns]
    described = []
    for i in order:
        c = int(failing[i])
        values = ", ".join(f"{name}={labels[c]}"
                           for name, labels in zip(names, summary.labels, strict=True))
        described.append(
            f"({values}): {int(summary.sizes[c]):,} rows"
            + (", forced: their quasi-identifiers are identical, so they publish one tuple "
               "however they are grouped" if forced[i] else ""))
    codes = pd.DataFrame({c.name: c.codes for c in result.columns})
    combinations = int(codes.drop_duplicates().shape[0])
    return (
        f"The quasi-identifiers take {combinations:,} distinct combinations over "
        f"{len(published):,} rows. "
        f"Groups that publish the same quasi-identifier values are one class to an attacker; "
        f"{failing.size:,} failing class(es) were formed that way ({int(forced.sum()):,} "
        f"forced), e.g. " + "; ".join(described) + ". Forced classes are published apart "
        "only if those rows' quasi-identifiers tell them apart (more detail, or another QI)."
    )
