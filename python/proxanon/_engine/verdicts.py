"""The text of the engine's refusals and verdicts: a graph too dense to build, a suppression
that released nothing, a run that left violations, a proof found before any repair."""

from __future__ import annotations

from typing import Any

from proxanon._errors import GraphTooDenseError
from proxanon._messages import Call, Param, Text, text
from proxanon.distances import Relation

#: The options the verdicts suggest (worded by each interface: :mod:`proxanon._messages`).
BEST_EFFORT = Param("on_infeasible", "best_effort")
SUPPRESS = Param("on_infeasible", "suppress")


def proven_before_repair(proof: str, k: int, eps: float, dlt: float,
                         relation: Relation) -> Text:
    """The message of an InfeasibleError raised on ``early_proof``'s proof."""
    return text(f"proven before any repair (k={k}, epsilon={eps}, delta={dlt}, "
                f"metric={relation.label}): {proof}. Try a smaller ", Param("epsilon"), " or ",
                Param("delta"), ", or pass ", BEST_EFFORT, " or ", SUPPRESS,
                " to run the repair anyway.")


def too_dense(epsilon: float, relation: Relation, exc: ValueError) -> ValueError:
    """The refusal of a graph too dense to build, with the epsilon and metric that made it."""
    return GraphTooDenseError(
        f"epsilon={epsilon} makes the neighbour graph over the {relation.label} distances too "
        f"dense: {exc}; use a smaller epsilon")


def nothing_released(n: int, left_out: int, stats: dict[str, Any]) -> str | Text:
    """Why suppression released nothing: proven (small tables) or where the heuristic ended."""
    k = stats["k"]
    settings = (f"k={k}, epsilon={stats['epsilon']}, delta={stats['delta']}, "
                f"metric={stats['metric']}")
    if stats["exact_search"]:
        return (f"no group of {k} or more of the {n} rows satisfies the principle on its own "
                f"({settings}; an exhaustive search over all partitions), so every row would "
                "have to be left out and nothing can be released. Try a smaller epsilon, "
                "delta or k.")
    return text(f"XColor's suppression kept {n - left_out} of {n} row(s), fewer than k={k}, "
                f"so nothing could be released ({settings}; the largest number of epsilon-"
                f"neighbours of a row is {stats['max_degree']}). This is where the heuristic "
                "ended, not a proof: ", Call("advise"), " can prove what no partition "
                "achieves. Try a smaller ", Param("epsilon"), ", ", Param("delta"), " or ",
                Param("k"), ".")


def infeasible_summary(stats: dict[str, Any]) -> str:
    """The one line that opens ``partition``'s InfeasibleError, in anonymize's words."""
    return (f"no partition satisfying (epsilon={stats['epsilon']:g}, delta={stats['delta']:g})"
            f"^k-dissimilarity with k={stats['k']} was found: "
            f"{stats['remaining_violations']:,} row(s) violate in "
            f"{len(stats['violating_groups']):,} of {stats['m']:,} group(s).")


def infeasible_message(stats: dict[str, Any]) -> Text:
    """Explains an unsatisfied run: what is left, the degree bound, and what to change."""
    holds = "holds" if stats["bound_holds"] else "fails"
    proof = (f"An exhaustive search over all partitions of these {stats['n']} rows proves "
             "that none satisfies the principle. " if stats.get("exact_search") else "")
    return text(
        proof,
        f"XColor left {stats['remaining_violations']} violating row(s) in "
        f"{len(stats['violating_groups'])} of {stats['m']} group(s) "
        f"(k={stats['k']}, epsilon={stats['epsilon']}, delta={stats['delta']}, "
        f"metric={stats['metric']}). The largest number of epsilon-neighbours of a row is "
        f"max_degree={stats['max_degree']}; the paper's inequality (4) asks for at most "
        f"n/2*(1-(1-1/k)*delta)={stats['bound']:.1f} and {holds} (", Call("advise"),
        " gives the bound that is proven, and can prove that no partition exists). "
        "Try a smaller ", Param("epsilon"), " or ", Param("delta"), ", or a ", Param("k"),
        " whose groups allow more neighbours per row (t = floor((1-delta)(|G|-1)) relative "
        "to |G|; a larger k gives fewer groups, which can hold fewer near-identical rows). "
        "Or pass ", BEST_EFFORT, " to get this partition with the violations flagged, or ",
        SUPPRESS, " to leave the violating rows out, as many as ", Param("max_suppression"),
        " allows.")
