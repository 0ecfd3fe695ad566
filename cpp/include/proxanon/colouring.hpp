// The colouring counts of Algorithm 2 (§V-D): which class each row is in, and for every row
// D_V(v), its number of epsilon-neighbours inside its own class V.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/loss.hpp"
#include "proxanon/neighbour_graph.hpp"

namespace proxanon {

/// t(V) = floor((1 - delta)(|V| - 1) + kAllowanceSlack) for a class of `size` rows (SPEC §2).
std::int32_t allowed_neighbours(std::size_t size, double delta);

/// A set of value ids that can be emptied in O(1): value w is in the set iff stamp[w] == gen.
class ValueMark {
public:
    explicit ValueMark(std::size_t values) : stamp_(values, 0) {}
    /// Marks u and its neighbours (the closed neighbourhood N[u]). O(degree(u)).
    void set_closed_neighbourhood(const NeighbourGraph& graph, std::int32_t u);
    bool operator[](std::int32_t w) const { return stamp_[static_cast<std::size_t>(w)] == gen_; }

private:
    std::vector<std::uint32_t> stamp_;
    std::uint32_t gen_ = 0;
};

/// Number of rows of one group in the closed neighbourhood of each value, for the values
/// touched; clearing costs only what was touched.
class NeighbourTally {
public:
    explicit NeighbourTally(std::size_t values) : count_(values, 0) {}
    void clear();
    /// Adds `times` rows of value u: each counts in the closed neighbourhood of u.
    void add_closed_neighbourhood(const NeighbourGraph& graph, std::int32_t u, std::int32_t times);
    std::int32_t operator[](std::int32_t w) const { return count_[static_cast<std::size_t>(w)]; }

private:
    std::vector<std::int32_t> count_;
    std::vector<std::int32_t> touched_;
};

/// The colouring and its per-class neighbour counts, shared by the swap loop, the excess
/// descent and suppression.
///
/// Invariants between operations: members(c) lists the rows of class c and class_of(r) is r's
/// class (-1 for a row left out); own(r) = D_V(r) for r's class V; allowed(c) = t(|c|);
/// potential() = sum(own) / 2, the monochromatic edges; extremes(c) is current when the loss
/// model is active.
/// Cost: construction O(n + sum over classes of the degrees of their distinct values);
/// swap O(|V| + |V'| + degree of the two values); detach and attach O(|class|) adjacency
/// tests, each O(1) when the values are few (a bit matrix) and O(log degree) otherwise.
class Colouring {
public:
    /// `initial` gives a class id 0..m-1 per row, every id used, or -1 for a row left out.
    Colouring(const ValueTable& table, const NeighbourGraph& graph, const LossModel& loss,
              double delta, const std::vector<std::int32_t>& initial);

    std::size_t rows() const { return class_of_.size(); }
    std::size_t classes() const { return members_.size(); }
    std::size_t size(std::size_t c) const { return members_[c].size(); }
    const std::int32_t* begin(std::size_t c) const { return members_[c].data(); }
    const std::int32_t* end(std::size_t c) const { return members_[c].data() + members_[c].size(); }
    std::int32_t class_of(std::int32_t r) const { return class_of_[at(r)]; }
    const std::vector<std::int32_t>& class_ids() const { return class_of_; }
    std::int32_t own(std::int32_t r) const { return own_[at(r)]; }
    std::int32_t allowed(std::size_t c) const { return allowed_[c]; }
    std::int32_t value_of(std::int32_t r) const { return table_.row_value[at(r)]; }
    /// own(r) and value_of(r) for every row, for loops that read them per pair of rows.
    const std::int32_t* own_counts() const { return own_.data(); }
    const std::int32_t* row_values() const { return table_.row_value.data(); }
    std::int64_t potential() const { return potential_; }
    double delta() const { return delta_; }
    const NeighbourGraph& graph() const { return graph_; }
    const LossModel& loss() const { return loss_; }
    /// Per-column extremes of class c; only when loss().active().
    const GroupExtremes& extremes(std::size_t c) const { return extremes_of_[c]; }

    bool is_violation(std::int32_t r) const {
        const std::int32_t c = class_of_[at(r)];
        return c >= 0 && own_[at(r)] > allowed_[static_cast<std::size_t>(c)];
    }
    /// Rows with D_V(v) > t(V). O(n).
    std::int64_t violations() const;

    /// True iff values a and b are equal or epsilon-neighbours. Inline: the excess descent
    /// and suppression call it per pair of rows they examine.
    bool adjacent(std::int32_t a, std::int32_t b) const {
        if (!dense_.empty()) {
            const std::size_t bit = static_cast<std::size_t>(a) * graph_.size() + static_cast<std::size_t>(b);
            return (dense_[bit >> 6] >> (bit & 63)) & 1U;
        }
        return graph_.adjacent(a, b);
    }

    /// tally()[w] := the rows of class c other than `skip` in N[w]. The class's rows are first
    /// counted per distinct value, so the cost is O(|c| + sum over its distinct values of their
    /// degree), not O(sum over its rows): merged classes can be large.
    void tally_class(std::size_t c, std::int32_t skip);
    const NeighbourTally& tally() const { return tally_; }

    /// Swaps v (class V) and w (class V') and updates exactly what changed: the counts of the
    /// members of V and V' and the potential, which changes by `lambda`; `own_v_after` is
    /// D_V'(v) after the swap (the caller computed both while choosing the swap).
    void swap(std::int32_t v, std::int32_t w, std::int64_t lambda, std::int32_t own_v_after);
    /// Takes row v out of its class (its class becomes -1), updating the counts left there.
    void detach(std::int32_t v);
    /// Puts a detached row v into class c, updating every count that changes.
    void attach(std::int32_t v, std::size_t c);

    /// The step-th class other than `home` in the order home+1, home-1, home+2, home-2, ...
    /// (wrapping around), covering every other class once for step < classes() - 1, so that a
    /// colouring whose class order follows the QIs is searched near home first.
    std::size_t outward(std::size_t home, std::size_t step) const;

private:
    static std::size_t at(std::int32_t r) { return static_cast<std::size_t>(r); }
    /// own_ for every member of class c from scratch.
    void count_class(std::size_t c);
    void class_changed(std::size_t c);

    const ValueTable& table_;
    const NeighbourGraph& graph_;
    const LossModel& loss_;
    double delta_;
    std::vector<std::vector<std::int32_t>> members_;  ///< rows of each class (any order)
    std::vector<std::int32_t> pos_, class_of_, own_, allowed_;
    ValueMark mark_a_, mark_b_;
    NeighbourTally tally_;
    std::vector<std::int32_t> value_count_;  ///< scratch for tally_class, all zero between uses
    std::vector<std::int32_t> distinct_;
    std::vector<GroupExtremes> extremes_of_;
    std::vector<std::uint64_t> dense_;  ///< value adjacency bit matrix when the values are few
    std::int64_t potential_ = 0;
};

}  // namespace proxanon
