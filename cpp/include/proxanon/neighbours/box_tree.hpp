// Exact epsilon-neighbour weights of many values at once (the row degrees of the implicit
// structures and of a class's own values), by a k-d tree over the distinct values whose
// boxes are accepted or rejected whole: L1, L2 and Linf.
//
// A box of values lies wholly within epsilon of x when its corner farthest from x in every
// component does, and wholly outside when its point nearest to x does not: a computed
// difference never exceeds a larger one (rounding is monotone), and the weighted sums, sums
// of squares and maxima that Distance::within takes of larger terms are no smaller. So
// Distance::within on one corner answers for every value in the box, and only the values of
// leaves the ball's boundary crosses are tested one by one. Where values crowd (incomes
// scaled to [0, 1]: most of them in a few hundredths), a value has thousands of neighbours
// and the grid's pair tests grow with their square; the tree's work grows with the boxes
// along the boundary.
//
// Invariant: every weight is exactly the sum of count over the values v with
// Distance::within(x, v), as testing each of them would give. Cost: building O(U log U)
// (median splits along the widest weighted component, leaves of at most kLeaf values),
// memory O(U s); a query O(s) per box visited: the boxes the ball's boundary crosses, their
// ancestors, and the leaves' values tested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"

namespace proxanon {

class BoxTree {
public:
    /// Values per leaf at most, and levels below the root at most (a leaf may then hold more).
    static constexpr std::size_t kLeaf = 8;
    static constexpr std::size_t kMaxDepth = 48;

    /// Over the values of `table` (finite: throws std::invalid_argument otherwise; they are
    /// copied) for an Lp `distance` (not MinComponent), which must outlive the tree.
    BoxTree(const ValueTable& table, const Distance& distance);

    /// The sum of count over the values within epsilon of x (s components), x's own value
    /// included when x is one of them. Safe to call from several threads at once.
    std::int64_t weight_within(const double* x) const;

    /// The value ids in the order of the tree's leaves (near values near each other).
    const std::vector<std::int32_t>& order() const { return order_; }

private:
    struct Node {
        std::size_t begin = 0, end = 0;  ///< its values: order_[begin, end)
        std::size_t left = 0;            ///< its children are left and left + 1 (0: a leaf)
        std::int64_t weight = 0;         ///< the sum of count over its values
    };
    const double* lo(std::size_t node) const { return box_.data() + node * 2 * s_; }
    const double* hi(std::size_t node) const { return lo(node) + s_; }

    const Distance& distance_;
    std::size_t s_;
    std::vector<Node> nodes_;
    std::vector<double> box_;              ///< per node: its values' least, then greatest, per component
    std::vector<std::int32_t> order_;      ///< value ids, each node's a contiguous range
    std::vector<double> ordered_;          ///< their components in that order
    std::vector<std::int64_t> weight_;     ///< their counts in that order
};

/// The row degree of every value of `table` (count - 1 plus the counts of its neighbours),
/// each value a query of a BoxTree, over `threads` threads (0: the hardware's); the same for
/// any number. Polls `interrupt` between blocks of values.
std::vector<std::int64_t> box_tree_degrees(const ValueTable& table, const Distance& distance,
                                           std::size_t threads, Interrupt* interrupt);

}  // namespace proxanon
