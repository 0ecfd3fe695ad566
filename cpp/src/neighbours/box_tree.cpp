#include "proxanon/neighbours/box_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "proxanon/common/parallel.hpp"

namespace proxanon {

BoxTree::BoxTree(const ValueTable& table, const Distance& distance)
    : distance_(distance), s_(table.s) {
    if (distance.metric() == Metric::MinComponent) throw std::invalid_argument("BoxTree needs an Lp metric");
    if (distance.dimensions() != s_) throw std::invalid_argument("metric weights and sensitive components differ in number");
    for (const double x : table.values) {
        if (!std::isfinite(x)) throw std::invalid_argument("BoxTree needs finite values");
    }
    const std::size_t u_count = table.size();
    order_.resize(u_count);
    for (std::size_t u = 0; u < u_count; ++u) order_[u] = static_cast<std::int32_t>(u);
    // How far apart two values along component i can lie in the metric's units, per unit of
    // coordinate: the widest such spread is split.
    std::vector<double> scale(s_);
    for (std::size_t i = 0; i < s_; ++i) {
        const double w = distance.weights()[i];
        scale[i] = distance.metric() == Metric::L2 ? std::sqrt(w) : w;
    }
    if (u_count == 0) return;
    nodes_.push_back(Node{0, u_count, 0, 0});
    std::vector<std::uint8_t> depth{0};  // each node's level
    // Nodes are made parent first (children adjacent); each is boxed when it is taken.
    for (std::size_t at = 0; at < nodes_.size(); ++at) {
        const std::size_t begin = nodes_[at].begin, end = nodes_[at].end;
        box_.resize((at + 1) * 2 * s_);
        double* low = box_.data() + at * 2 * s_;
        double* high = low + s_;
        std::fill(low, low + s_, std::numeric_limits<double>::infinity());
        std::fill(high, high + s_, -std::numeric_limits<double>::infinity());
        std::int64_t weight = 0;
        for (std::size_t p = begin; p < end; ++p) {
            const auto u = static_cast<std::size_t>(order_[p]);
            const double* x = table.value(u);
            for (std::size_t i = 0; i < s_; ++i) {
                low[i] = std::min(low[i], x[i]);
                high[i] = std::max(high[i], x[i]);
            }
            weight += table.count[u];
        }
        nodes_[at].weight = weight;
        if (end - begin <= kLeaf) continue;
        std::size_t dim = 0;
        double widest = 0.0;
        for (std::size_t i = 0; i < s_; ++i) {
            const double spread = scale[i] * (high[i] - low[i]);
            if (spread > widest) {
                widest = spread;
                dim = i;
            }
        }
        if (!(widest > 0.0)) continue;  // one point in every weighted component: decided whole
        if (depth[at] == kMaxDepth) continue;  // never reached: halving from 2^32 values
        const std::size_t middle = begin + (end - begin) / 2;
        const auto first = order_.begin() + static_cast<std::ptrdiff_t>(begin);
        std::nth_element(first, order_.begin() + static_cast<std::ptrdiff_t>(middle),
                         order_.begin() + static_cast<std::ptrdiff_t>(end), [&](std::int32_t a, std::int32_t b) {
                             const double xa = table.value(static_cast<std::size_t>(a))[dim];
                             const double xb = table.value(static_cast<std::size_t>(b))[dim];
                             return xa != xb ? xa < xb : a < b;
                         });
        nodes_[at].left = nodes_.size();
        nodes_.push_back(Node{begin, middle, 0, 0});
        nodes_.push_back(Node{middle, end, 0, 0});
        depth.push_back(static_cast<std::uint8_t>(depth[at] + 1));
        depth.push_back(static_cast<std::uint8_t>(depth[at] + 1));
    }
    // The values again in tree order, so that a leaf's are read in sequence.
    ordered_.resize(u_count * s_);
    weight_.resize(u_count);
    for (std::size_t p = 0; p < u_count; ++p) {
        const auto u = static_cast<std::size_t>(order_[p]);
        std::copy(table.value(u), table.value(u) + s_, ordered_.begin() + static_cast<std::ptrdiff_t>(p * s_));
        weight_[p] = table.count[u];
    }
}

std::int64_t BoxTree::weight_within(const double* x) const {
    if (nodes_.empty()) return 0;
    // The two corners of a box nearest to and farthest from x: on the stack for up to
    // kInline components (a thread-local buffer cost more than a query's tests).
    constexpr std::size_t kInline = 8;
    double inline_corners[2 * kInline];
    std::vector<double> heap_corners(s_ > kInline ? 2 * s_ : 0);
    double* far = s_ > kInline ? heap_corners.data() : inline_corners;
    double* near = far + s_;
    // Depth first, a node's second child waiting: at most one entry per level, plus one.
    std::size_t stack[2 * kMaxDepth + 2];
    std::size_t top = 0;
    stack[top++] = 0;
    std::int64_t total = 0;
    while (top > 0) {
        const std::size_t at = stack[--top];
        const Node& node = nodes_[at];
        const double* low = lo(at);
        const double* high = hi(at);
        for (std::size_t i = 0; i < s_; ++i) {
            far[i] = std::fabs(x[i] - low[i]) >= std::fabs(x[i] - high[i]) ? low[i] : high[i];
            near[i] = std::clamp(x[i], low[i], high[i]);
        }
        if (!distance_.within(x, near)) continue;  // no value of the box is within
        if (distance_.within(x, far)) {              // every value of the box is
            total += node.weight;
            continue;
        }
        if (node.left != 0) {
            stack[top++] = node.left + 1;
            stack[top++] = node.left;
            continue;
        }
        for (std::size_t p = node.begin; p < node.end; ++p) {
            if (distance_.within(x, ordered_.data() + p * s_)) total += weight_[p];
        }
    }
    return total;
}

std::vector<std::int64_t> box_tree_degrees(const ValueTable& table, const Distance& distance,
                                           std::size_t threads, Interrupt* interrupt) {
    const BoxTree tree(table, distance);
    std::vector<std::int64_t> degree(table.size());
    // A value is within epsilon of itself (finite: the tree checked), so its own count is in
    // its weight: a row of it has weight - 1 neighbours.
    // In the tree's order: consecutive queries then visit mostly the same boxes.
    const std::vector<std::int32_t>& order = tree.order();
    parallel_for(table.size(), threads, interrupt, [&](std::size_t p) {
        const auto u = static_cast<std::size_t>(order[p]);
        degree[u] = tree.weight_within(table.value(u)) - 1;
    });
    return degree;
}

}  // namespace proxanon
