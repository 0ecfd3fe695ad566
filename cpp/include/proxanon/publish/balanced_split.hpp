// A balanced split of a failing class (specialize.hpp's failing target): where no
// table satisfies, the rows that cannot be protected gather in a class publishing a coarse
// tuple, and every cut of it along the QIs leaves some piece with a larger share of its
// crowded values than the class has (its rows would be exposed more), because the QIs and
// the sensitive values are correlated. Parts that keep the class's mix need rows from
// several cells, so each node of a tree of QI cuts hosts one class of its own.
//
// The tree: the class's rows cut along one QI at a time (a taxonomy column by the child of
// the rows' common node that holds each row's leaf, a numeric column at its median), at each
// node the column whose pieces exceed the class's risk least (then the smaller largest
// piece, then the lower column), until a piece holds at most kBalancedLeafK * k rows. A piece
// whose tuple another class publishes is cut further within its node (up to kExpandDepth
// levels), or else joins the node's class whole; so do pieces below k rows.
//
// Top down, each node hosts a class gathered from its pieces: a piece beyond the class's risk
// (or beyond its margin, below) gives it, one row at a time, the row whose departure lowers
// the piece's excess most (then the node's class's least); then, while the node's class
// exceeds the class's risk, it takes the row that lowers its excess most among those a piece
// can spare without exceeding it. Each piece keeps the rest for its own subtree; a leaf keeps
// what reaches it. Where a node cannot be brought within the class's risk, its parent keeps
// it kMarginStep rows further below (taking more of its crowded rows) and the tree is built
// again, kAttempts times at most.
//
// "Exceeding the class's risk", for a set of rows: a value in it whose D (its other rows that
// are neighbours) is above risk(class) * (size - 1), or a value that does not violate in the
// class whose D is above t(set). A set within both is no riskier than the class and violates
// only where the class did, so the table's violating rows do not grow.
//
// The split proposes parts; specialize.cpp checks them with its own check (part_check.hpp)
// and keeps them only where every invariant of specialize.hpp holds (k, risks, violating
// rows, tuples of their own). Adult with the ARX taxonomies on the four QIs, best effort:
// at epsilon 0.1, delta 0.8 the class of 8,061 rows publishing "*" (27% of the table, 7,923
// violating, risk 0.76) became parts of at most 3,491 rows; the table's largest class
// went from 26.7% to 11.6% of the rows (violating rows 10,955 -> 10,776, risk 0.76067 ->
// 0.76052; parts still above 2% of the rows balanced again); at 0.15, 0.9 from 71.3% to
// 42.7%, at 0.2, 0.6 from 43.5% to 20.0%.
//
// Cost: the class's distinct values (at most kBalancedValues, else no split is proposed) and
// their adjacency, O(v^2) tests; per try of the tree, its cuts, O(d m) per level for m rows,
// and per row a node takes, the excess of every value leaving its piece or joining the
// node's class, O(v log v + v s) where s values are within a row of the worst (excess_each);
// at most kBalancedWorkPerRow units per row of the class in all, after which no split is
// proposed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Distinct sensitive values a class may hold for a balanced split to be proposed: the
/// guidance weighs every value against every other one.
inline constexpr std::size_t kBalancedValues = 1024;

/// Work a balanced split may do per row of its class (values weighed and neighbours counted),
/// after which it proposes nothing: on Adult it took at most about 3,600 (epsilon 0.2, delta 0.6).
inline constexpr std::size_t kBalancedWorkPerRow = std::size_t{1} << 14;

/// Leaf size of the tree, in multiples of k: the pieces must be large enough for their mix
/// of values to stay near the class's (Adult: 50 k = 500 rows).
inline constexpr std::size_t kBalancedLeafK = 50;

/// Whether a set of rows would publish a tuple of its own (no other class publishes it).
using Publishable = std::function<bool(const std::vector<std::int32_t>&)>;

/// The parts proposed for class `rows` (row ids into `qi` and `neighbours`' table), each at
/// least k rows, together exactly `rows`; empty where no balanced split is found (too many
/// distinct values, a class too small for two leaves, or a node or leaf that cannot be
/// brought within the class's risk). A leaf of the tree that is not `publishable` joins its
/// node's class. `work` is charged one unit per value weighed, neighbour counted and value
/// ranked; past kBalancedWorkPerRow per row of the class, or past `work_cap` in all, no split
/// is proposed.
std::vector<std::vector<std::int32_t>> balanced_parts(const std::vector<std::int32_t>& rows,
                                                      const LossModel& qi, const Neighbours& neighbours,
                                                      std::size_t k, double delta, const Publishable& publishable,
                                                      std::size_t& work,
                                                      std::size_t work_cap = static_cast<std::size_t>(-1));

}  // namespace proxanon
