// Local recoding bottom-up, in rounds (docs/design/mondrian.md#the-hierarchy-cut): every
// distinct QI tuple that passes the checks alone is published exactly; then, round after
// round, the rows left are lifted one level in one taxonomy column (the column whose lift
// publishes rows at the lowest cost each), and every tuple that now passes is published.
// What is left once every column is at its root is one class, published if it passes.
// Invariant: every class published passes the checks; the rows left share their lifted
// nodes per column, so the classes of a round publish distinct tuples.
// Cost: per round O(d · u log u) over the u units left (a sort of their lifted tuples per
// column tried), at most the sum of the taxonomies' heights rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"

namespace proxanon {

/// Whether a set of units (ids into the caller's units) passes the checks.
using UnitsCheck = std::function<bool(const std::vector<std::int32_t>&)>;

/// The classes, as lists of unit ids, of the rounds over units whose QI codes are the rows
/// `rep[u]` of `qi` and that stand for `weight[u]` rows each; none where a column has no
/// taxonomy (numeric columns have no levels), and not complete where the rows left at the
/// roots fail the checks.
/// `after`, when given, receives after each round the number of classes published so far
/// and the units left then (a caller may cut those another way).
struct RoundsResult {
    std::vector<std::vector<std::int32_t>> classes;
    bool complete = false;  ///< every unit is in a class (else the classes hold a prefix)
    std::vector<std::pair<std::size_t, std::vector<std::int32_t>>> after;
};
RoundsResult level_rounds(const LossModel& qi, const std::vector<std::int32_t>& rep,
                          const std::vector<std::int64_t>& weight, const UnitsCheck& passes,
                          Interrupt* interrupt);

}  // namespace proxanon
