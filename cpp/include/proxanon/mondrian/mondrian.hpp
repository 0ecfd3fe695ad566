// Strict multidimensional Mondrian (LeFevre, DeWitt and Ramakrishnan, Mondrian
// Multidimensional K-Anonymity, ICDE 2006), the baseline of Wang and Liu's XColor paper
// (docs/design/mondrian.md).
// A part is cut at the median of its widest column (by loss) whose halves both pass the
// checks (part_check.hpp), depth first; a part no column cuts is a group.
// Invariant: every part cut off passes; the groups depend only on the parts as sets.
// Cost: where the checks only count rows (k, the criteria), rows with identical codes are
// one weighted unit (units.hpp, O(n d) once) and a part of u units costs O(u d) for its
// extremes and O(u log u) per column tried; otherwise per part of m rows, O(m d) and O(m)
// per column tried (a selection and a three-way partition); plus the checks of the halves.
// The codes travel with the units (memory O(units d)), so every read is sequential.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

struct MondrianParams {
    std::size_t k = 1;           ///< every group keeps at least k rows
    std::size_t l = 0;           ///< distinct sensitive values per group (0: no check)
    bool dissimilarity = false;  ///< also require (epsilon, delta)^k-dissimilarity
    double delta = 0.0;
    /// Privacy criteria every part must also satisfy (criteria_check.hpp; nullptr: none).
    const CriteriaData* criteria = nullptr;
    Interrupt* interrupt = nullptr;  ///< optional stop request, polled between units of work
};

struct MondrianResult {
    std::vector<std::int32_t> groups;  ///< group of each row, 0 .. groups-1, left to right
    std::int64_t cuts = 0;
    bool satisfied = true;             ///< every group passes every enabled check
    /// When not satisfied (then the one group is the whole table): its rows that violate,
    /// ascending; all rows when it lacks l distinct values, else those with more than t(G)
    /// epsilon-neighbours.
    std::vector<std::int32_t> violating_rows;
};

/// Recursively cuts a part at the median of the QI column with the widest spread (priced by
/// the loss model, so taxonomy columns count their LCA's share of leaves); a cut is allowed
/// only when both halves pass every enabled check; otherwise the next column (by spread) is
/// tried; a part with no allowed cut becomes a group. Cuts fall between distinct values, so
/// the parts are disjoint boxes in QI space. The checks are part_check.hpp's (the ones
/// specialization uses) over any neighbour structure (Neighbours::for_checks: many distinct
/// values never make a graph): per distinct value of the half, O(sum of their degrees) over a
/// graph, class_counts.hpp's counts over an implicit structure; where the checks only count
/// rows, the part's weight and the criteria's weighted counts of its units (units.hpp). A
/// column tried at a part of m rows costs a selection of its median and a three-way split,
/// O(m), not a sort (over u units, a sort of them), so the cuts cost about O(n log n · d)
/// plus the checks (O(u log² u · d) over units). Polls `params.interrupt` per part and per
/// column tried (throws Interrupted).
MondrianResult mondrian(const LossModel& qi, const Neighbours& neighbours, const MondrianParams& params);

}  // namespace proxanon
