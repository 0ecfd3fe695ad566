"""``advise``: what the neighbour graph says about (k, ε, δ) before XColor runs.

The bounds and proofs, and what each one proves, are in :mod:`proxanon._engine.proofs`
(docs/design/proofs.md): Θ, the δ for which success is guaranteed or proven, the largest
clique found and, given δ, whether it proves the instance infeasible.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from proxanon import _validate
from proxanon._engine.proofs import Advice, advice
from proxanon.distances import resolve

__all__ = ["Advice", "advise"]


def advise(
    sensitive: ArrayLike,
    *,
    k: int,
    epsilon: float,
    metric: Any = "l1",
    weights: ArrayLike | None = None,
    delta: float | None = None,
    n_threads: int | None = None,
) -> Advice:
    """What the ε-neighbour graph proves about running XColor with (k, ε, δ).

    Parameters are those of :func:`proxanon.partition`; ``delta`` is optional (without it
    there is no verdict, only the bounds). Returns an :class:`Advice` with Θ, the largest δ
    for which success is guaranteed, the largest clique found, and, when ``delta`` is given,
    whether that clique proves the instance infeasible. See the module docstring for what
    is proven and how. ``n_threads``: threads for the row degrees (default every core this
    process may use; the answer is the same for any number).
    """
    sens = _validate.float_matrix(sensitive, "sensitive")
    n, s = sens.shape
    relation = resolve(metric, weights, s, n)
    epsilon = _validate.epsilon(epsilon, graph=relation.kind == "graph")
    k, eps, _ = _validate.privacy(k, epsilon, 0.0 if delta is None else delta, n, measured=True)
    dlt = None if delta is None else _validate.privacy(k, epsilon, delta, n, measured=True)[2]
    threads = _validate.threads(n_threads)
    return advice(sens, relation, k, eps, dlt, threads)
