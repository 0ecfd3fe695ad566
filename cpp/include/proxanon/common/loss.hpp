// The information-loss model (Wang and Liu, XColor, §V-B; docs/design/publishing.md) over
// numeric and taxonomy quasi-identifiers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace proxanon {

/// Taxonomies of at most this many leaves keep the share of every leaf range's LCA in a
/// table (512 KiB at most): the swap loop and the descent price each candidate row by
/// cost() per column, and a walk to the LCA was a tenth of a merging session's time (Adult's
/// ARX hierarchies: at most 100 leaves).
inline constexpr std::size_t kCostTableLeaves = 256;

/// A generalization taxonomy in the form the loss needs. Nodes 0..L-1 are the leaves in
/// depth-first order, so every node covers a contiguous range of leaf indices and the lowest
/// common ancestor of a set of leaves is the LCA of its smallest and largest index.
/// Invariant: exactly one root, parent[root] = -1, every node reaches it; depth[root] = 0.
/// Cost: lca O(depth); cost() of a leaf range O(1) with at most kCostTableLeaves leaves (a
/// table of every range's share, O(L^2 depth) time and L^2 doubles once), else O(depth).
class Taxonomy {
public:
    /// `parent` over all nodes; the first `leaves` nodes are the leaves in DFS order.
    Taxonomy(std::vector<std::int32_t> parent, std::size_t leaves)
        : parent_(std::move(parent)), depth_(parent_.size(), -1),
          fraction_(parent_.size(), 0.0), leaves_(leaves) {
        const std::size_t nodes = parent_.size();
        if (leaves == 0 || leaves > nodes) throw std::invalid_argument("taxonomy needs 1..nodes leaves");
        std::size_t roots = 0;
        for (std::size_t v = 0; v < nodes; ++v) {
            if (parent_[v] < -1 || parent_[v] >= static_cast<std::int32_t>(nodes)) {
                throw std::invalid_argument("taxonomy parent out of range");
            }
            roots += parent_[v] == -1;
        }
        if (roots != 1) throw std::invalid_argument("taxonomy must have exactly one root");
        for (std::size_t v = 0; v < nodes; ++v) depth_of(v);
        std::vector<std::int64_t> below(nodes, 0);
        for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
            for (std::int32_t v = static_cast<std::int32_t>(leaf); v >= 0; v = parent_[at(v)]) below[at(v)] += 1;
        }
        for (std::size_t v = 0; v < nodes; ++v) {
            fraction_[v] = static_cast<double>(below[v]) / static_cast<double>(leaves);
        }
        first_.assign(nodes, std::numeric_limits<std::int32_t>::max());
        last_.assign(nodes, -1);
        for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
            for (std::int32_t v = static_cast<std::int32_t>(leaf); v >= 0; v = parent_[at(v)]) {
                first_[at(v)] = std::min(first_[at(v)], static_cast<std::int32_t>(leaf));
                last_[at(v)] = std::max(last_[at(v)], static_cast<std::int32_t>(leaf));
            }
        }
        // Leaves numbered depth-first: every node's leaves are the contiguous range between
        // its first and last (the LCA of a set of leaves is then that of its extremes, and a
        // wider range's LCA an ancestor of a narrower one's, which pricing relies on).
        for (std::size_t v = 0; v < nodes; ++v) {
            if (below[v] != static_cast<std::int64_t>(last_[v]) - first_[v] + 1) {
                throw std::invalid_argument("taxonomy leaves must be numbered depth-first");
            }
        }
        if (leaves <= kCostTableLeaves) {
            range_cost_.resize(leaves * leaves);
            for (std::size_t lo = 0; lo < leaves; ++lo) {
                for (std::size_t hi = 0; hi < leaves; ++hi) {
                    range_cost_[lo * leaves + hi] =
                        fraction_[at(lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi)))];
                }
            }
        }
    }

    std::size_t leaves() const { return leaves_; }
    std::size_t nodes() const { return parent_.size(); }

    std::int32_t lca(std::int32_t a, std::int32_t b) const {
        while (a != b) {
            if (depth_[at(a)] >= depth_[at(b)]) a = parent_[at(a)]; else b = parent_[at(b)];
        }
        return a;
    }

    /// Leaf-index range [first, last] of the child of LCA(lo, hi) that holds `leaf`
    /// (lo <= leaf <= hi): the subtree boundaries a split of [lo, hi] can follow.
    std::pair<std::int32_t, std::int32_t> child_range(std::int32_t lo, std::int32_t hi,
                                                      std::int32_t leaf) const {
        const std::int32_t top = lca(lo, hi);
        std::int32_t v = leaf;
        while (parent_[at(v)] != top && v != top) v = parent_[at(v)];
        return {first_[at(v)], last_[at(v)]};
    }

    /// The leaves under `node`: the leaf-index range [first, last].
    std::pair<std::int32_t, std::int32_t> leaf_range(std::int32_t node) const {
        return {first_[at(node)], last_[at(node)]};
    }

    /// |G.A| / |A|: leaves under the LCA of the leaf range [lo, hi] over all leaves.
    double cost(std::int32_t lo, std::int32_t hi) const {
        if (!range_cost_.empty() && at(lo) < leaves_ && at(hi) < leaves_) return range_cost_[at(lo) * leaves_ + at(hi)];
        return fraction_[at(lca(lo, hi))];
    }

    /// The parent of `node`, -1 for the root.
    std::int32_t parent(std::int32_t node) const { return parent_[at(node)]; }

    /// The share of all leaves that lie under `node`.
    double share(std::int32_t node) const { return fraction_[at(node)]; }

    /// The largest depth of a leaf (edges from the root): 1 for a flat taxonomy.
    std::int32_t height() const {
        std::int32_t top = 0;
        for (std::size_t leaf = 0; leaf < leaves_; ++leaf) top = std::max(top, depth_[leaf]);
        return top;
    }

private:
    static std::size_t at(std::int32_t v) { return static_cast<std::size_t>(v); }

    std::int32_t depth_of(std::size_t v) {
        if (depth_[v] >= 0) return depth_[v];
        // Iterative walk up to a node of known depth; a cycle is an error, not a hang.
        std::vector<std::size_t> path;
        std::size_t u = v;
        while (depth_[u] < 0) {
            if (path.size() > parent_.size()) throw std::invalid_argument("taxonomy has a cycle");
            path.push_back(u);
            if (parent_[u] < 0) { depth_[u] = 0; path.pop_back(); break; }
            u = at(parent_[u]);
        }
        for (auto it = path.rbegin(); it != path.rend(); ++it) depth_[*it] = depth_[at(parent_[*it])] + 1;
        return depth_[v];
    }

    std::vector<std::int32_t> parent_;
    std::vector<std::int32_t> depth_;
    std::vector<double> fraction_;
    std::vector<std::int32_t> first_, last_;  ///< leaf-index range under each node
    std::size_t leaves_;
    std::vector<double> range_cost_;  ///< share of LCA(lo, hi) at lo * leaves + hi (few leaves)
};

/// loss(G) = sum_i |G.A_i| / |A_i|. A numeric QI costs the width of the group's interval over
/// the width of the column (values are stored pre-divided by the column width; a constant
/// column costs nothing). A taxonomy QI holds DFS leaf indices and costs the share of leaves
/// under the group's lowest common ancestor. Either way a column's cost depends only on the
/// group's smallest and largest value, so one group is priced from its per-column extremes.
/// With no QI columns every loss is 0 and the swap loop selects on the potential alone.
class LossModel {
public:
    LossModel() = default;

    /// `qi` is row-major n x d; `taxonomies[i]`, when set, makes column i a taxonomy column.
    LossModel(const double* qi, std::size_t n, std::size_t d,
              std::vector<std::optional<Taxonomy>> taxonomies = {})
        : d_(d), scaled_(n * d), taxonomies_(std::move(taxonomies)) {
        taxonomies_.resize(d);
        for (std::size_t i = 0; i < d; ++i) {
            if (taxonomies_[i]) {
                const double top = static_cast<double>(taxonomies_[i]->leaves());
                for (std::size_t r = 0; r < n; ++r) {
                    const double x = qi[r * d + i];
                    if (!(x >= 0.0 && x < top && x == static_cast<double>(static_cast<std::int64_t>(x)))) {
                        throw std::invalid_argument("taxonomy QI values must be leaf indices");
                    }
                    scaled_[r * d + i] = x;
                }
                continue;
            }
            double lo = std::numeric_limits<double>::infinity();
            double hi = -lo;
            for (std::size_t r = 0; r < n; ++r) {
                lo = std::min(lo, qi[r * d + i]);
                hi = std::max(hi, qi[r * d + i]);
            }
            // A width past the float range (e.g. -1e308 .. 1e308) is taken on halved
            // operands, which cannot overflow, as tables.span_fraction does in Python.
            const bool halve = !std::isfinite(hi - lo);
            const double scale = halve ? 0.5 : 1.0;
            const double width = hi * scale - lo * scale;
            for (std::size_t r = 0; r < n; ++r) {
                scaled_[r * d + i] = width > 0.0 ? (qi[r * d + i] * scale - lo * scale) / width : 0.0;
            }
        }
    }

    std::size_t dimensions() const { return d_; }
    bool active() const { return d_ > 0; }
    const double* row(std::int32_t r) const {
        return scaled_.data() + static_cast<std::size_t>(r) * d_;
    }

    /// The taxonomy of column i, or null for a numeric column.
    const Taxonomy* taxonomy(std::size_t i) const {
        return taxonomies_[i] ? &*taxonomies_[i] : nullptr;
    }

    /// |G.A_i| / |A_i| for a group whose column-i values span [lo, hi].
    double cost(std::size_t i, double lo, double hi) const {
        if (taxonomies_[i]) {
            return taxonomies_[i]->cost(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
        }
        return hi - lo;
    }

private:
    std::size_t d_ = 0;
    std::vector<double> scaled_;
    std::vector<std::optional<Taxonomy>> taxonomies_;
};

/// Per-column extremes of one group, enough to price the removal of any one member and the
/// arrival of any one outsider in O(d) cost evaluations (the two-step greedy of Wang and Liu,
/// XColor, §V-B). Invariant per column: lo <= lo2 where lo2 is the minimum once one holder of lo
/// leaves (equal to lo when lo is held twice; +inf when the group has a single member); hi
/// likewise.
class GroupExtremes {
public:
    void compute(const LossModel& model, const std::int32_t* members, std::size_t size) {
        const std::size_t d = model.dimensions();
        const double inf = std::numeric_limits<double>::infinity();
        lo_.assign(d, inf); lo2_.assign(d, inf); hi_.assign(d, -inf); hi2_.assign(d, -inf);
        at_lo_.assign(d, 0); at_hi_.assign(d, 0);
        for (std::size_t j = 0; j < size; ++j) hold(model.row(members[j]));
        price(model);
    }

    /// One member more: the same extremes as compute() over the members with it. O(d), and
    /// O(d) cost evaluations where a lowest or highest value changes. Returns whether any
    /// extreme (lo, lo2, hi, hi2 of a column) moved.
    bool add(const LossModel& model, const double* x) {
        const auto [outer, any] = hold(x);
        if (outer) price(model);
        return any;
    }

    /// One member `x` fewer: the same extremes as compute() over the members left (none of
    /// lo, lo2, hi, hi2 moves), and true;
    /// false (nothing known: compute again) where x held a lowest or highest value with at
    /// most one other member, or a second one alone (the next value is not kept). O(d).
    bool remove(const double* x) {
        const std::size_t d = lo_.size();
        for (std::size_t i = 0; i < d; ++i) {
            if ((x[i] == lo_[i] ? at_lo_[i] < 3 : x[i] == lo2_[i]) ||
                (x[i] == hi_[i] ? at_hi_[i] < 3 : x[i] == hi2_[i])) {
                return false;
            }
        }
        for (std::size_t i = 0; i < d; ++i) {
            at_lo_[i] -= x[i] == lo_[i] ? 1 : 0;
            at_hi_[i] -= x[i] == hi_[i] ? 1 : 0;
        }
        return true;  // no lowest or highest value changed: the loss stands
    }

    double loss() const { return loss_; }

    /// Whether `other` holds the same extremes (so prices every removal and arrival alike).
    bool same_as(const GroupExtremes& other) const {
        return lo_ == other.lo_ && lo2_ == other.lo2_ && hi_ == other.hi_ && hi2_ == other.hi2_;
    }

    /// loss(G \ {x}) - loss(G) for a member x: negative when x alone holds an extreme.
    double departure(const LossModel& model, const double* x) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            const double lo = x[i] == lo_[i] ? lo2_[i] : lo_[i];
            const double hi = x[i] == hi_[i] ? hi2_[i] : hi_[i];
            if (lo <= hi) after += model.cost(i, lo, hi);
        }
        return after - loss_;
    }

    /// The per-column extremes of G \ {out} for a member `out` into lo and hi (infinite
    /// when G holds only `out`). O(d).
    void without(const double* out, std::vector<double>& lo, std::vector<double>& hi) const {
        lo.resize(lo_.size());
        hi.resize(hi_.size());
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            lo[i] = out[i] == lo_[i] ? lo2_[i] : lo_[i];
            hi[i] = out[i] == hi_[i] ? hi2_[i] : hi_[i];
        }
    }

    /// loss(G ∪ {in}) for an outsider `in`.
    double with(const LossModel& model, const double* in) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            after += model.cost(i, std::min(lo_[i], in[i]), std::max(hi_[i], in[i]));
        }
        return after;
    }

    /// A floor of exchange(model, out, in) over every member `out`: the cost of a range holding
    /// `in` and [lo2, hi2] per column (what stays whoever leaves), summed in exchange()'s
    /// order, so that exchange() is at least this in floating point too. O(d).
    double exchange_floor(const LossModel& model, const double* in) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            after += model.cost(i, std::min(lo2_[i], in[i]), std::max(hi2_[i], in[i]));
        }
        return after;
    }

    /// loss(G \ {out} ∪ {in}) for a member `out` and an outsider `in`.
    double exchange(const LossModel& model, const double* out, const double* in) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            const double lo = out[i] == lo_[i] ? lo2_[i] : lo_[i];
            const double hi = out[i] == hi_[i] ? hi2_[i] : hi_[i];
            after += model.cost(i, std::min(lo, in[i]), std::max(hi, in[i]));
        }
        return after;
    }

private:
    /// One member more, per column: lo, lo2 (the second lowest, equal to lo when lo is held
    /// twice), the members at lo; hi likewise. Returns whether some lo or hi moved, and
    /// whether any of lo, lo2, hi, hi2 did.
    std::pair<bool, bool> hold(const double* x) {
        bool outer = false, any = false;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            if (x[i] < lo_[i]) { lo2_[i] = lo_[i]; lo_[i] = x[i]; at_lo_[i] = 1; outer = true; }
            else {
                if (x[i] == lo_[i]) ++at_lo_[i];
                if (x[i] < lo2_[i]) { lo2_[i] = x[i]; any = true; }
            }
            if (x[i] > hi_[i]) { hi2_[i] = hi_[i]; hi_[i] = x[i]; at_hi_[i] = 1; outer = true; }
            else {
                if (x[i] == hi_[i]) ++at_hi_[i];
                if (x[i] > hi2_[i]) { hi2_[i] = x[i]; any = true; }
            }
        }
        return {outer, outer || any};
    }

    void price(const LossModel& model) {
        loss_ = 0.0;  // an empty group (dissolved by suppression) costs nothing
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            if (lo_[i] <= hi_[i]) loss_ += model.cost(i, lo_[i], hi_[i]);
        }
    }

    std::vector<double> lo_, lo2_, hi_, hi2_;
    std::vector<std::int64_t> at_lo_, at_hi_;  ///< members holding lo, hi
    double loss_ = 0.0;
};

}  // namespace proxanon
