// The hierarchy cut: multidimensional top-down specialization along the QIs' taxonomies,
// then local recoding of each class to the tightest node that covers it
// (docs/design/mondrian.md#the-hierarchy-cut).
// A part is split by the children of its node in one taxonomy column (or at the median
// value of a numeric one): children that pass the checks become parts; the others gather
// in a remainder that keeps the parent node, topped up with rows of the passing children
// closest to it in the other columns where it is short. Of the columns, the split that
// lowers the part's cost most (rows times the sum of their NCPs) is taken; a part no split
// lowers is a class, published at the lowest common ancestor of its values per column.
// Classes that end with one tuple are merged (a union keeps k and every criterion that
// holds of mixtures; otherwise the result says unsatisfied). Without the distance check and
// with a taxonomy on every column, the bottom-up rounds of level_rounds.hpp compete: to the
// end, or up to a round with the rows left cut top-down; the cheapest table is kept.
// With a suppression budget, a failing remainder may be left out instead of topped up or
// joined, where that costs less (a suppressed row costs d, every column at its root); a cut
// that would leave out more than the budget is cut again suppressing only the remainders
// that saved the most per row, and kept only where it costs less than the plain cut.
// Invariant: every part cut off passes the checks; the classes publish distinct tuples.
// Cost: without the distance check (k and counting criteria only) identical rows (same QI
// codes and criterion codes) travel as one weighted unit, so a split costs O(units · (d +
// depth)) and the cut O(units · d · levels) after one O(n d) radix pass; the rounds cut
// the rows left once per round (those cuts look no level ahead); with the distance check
// every row is a unit and the checks are part_check.hpp's. A budget at most triples the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

struct HierarchyCutResult {
    std::vector<std::int32_t> groups;  ///< class of each row, 0 .. classes-1; -1 where suppressed
    std::int64_t cuts = 0;             ///< splits made
    std::int64_t merged = 0;           ///< classes merged into another publishing their tuple
    std::int64_t units = 0;            ///< weighted units the cut ran on (distinct rows)
    std::int64_t suppressed = 0;       ///< rows left out (their group is -1)
    bool satisfied = true;             ///< every class passes every enabled check
    /// When the whole table fails the checks (then it is one class): its violating rows.
    std::vector<std::int32_t> violating_rows;
};

/// The hierarchy cut over the QIs of `qi` under the checks of `params` (k, distinct l,
/// (epsilon, delta)^k when `params.dissimilarity`, criteria). `max_suppressed`: rows that
/// may be left out where that lowers the cost, a suppressed row costing as one published at
/// every column's root (d): a failing remainder is suppressed instead of topped up or
/// joined when that is cheaper. Deterministic: the result depends on the rows' values and
/// order only. Polls `params.interrupt` per part.
HierarchyCutResult hierarchy_cut(const LossModel& qi, const Neighbours& neighbours,
                                 const MondrianParams& params, std::int64_t max_suppressed = 0);

}  // namespace proxanon
