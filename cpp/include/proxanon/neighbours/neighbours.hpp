// The epsilon-neighbour relation over the distinct sensitive values, as the engine asks it
// (docs/design/privacy-model.md): the row degree of a value (INITIALIZE, Theta), whether two
// values are neighbours, and how many rows of a small set (a class) are neighbours of a value.
// One interface, three structures, chosen per instance by `choose_structure`:
//   Graph   the materialized CSR graph (neighbour_graph.hpp); adjacency by a bit matrix when
//           the values are few, else by binary search; memory O(U + value edges).
//   Sorted  one component: values in ascending order with prefix sums of their counts; a
//           closed neighbourhood is a rank interval found by binary search; memory O(U).
//   Grid    several components (L1, L2, Linf: a uniform grid of cell size the neighbour box
//           radius over up to three components; MinComponent: each component's values
//           sorted), queried on demand and never stored; memory O(s U).
// Invariant: every structure answers exactly Distance::within (equal values are always
// neighbours), so the engine's results do not depend on the structure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"

namespace proxanon {

enum class Structure { Auto, Graph, Sorted, Grid };

/// "auto", "graph", "sorted" or "grid"; throws std::invalid_argument for anything else.
Structure parse_structure(const std::string& name);
const char* structure_name(Structure structure);

/// Distinct values above which `Auto` picks an implicit structure: up to here the graph's bit
/// matrix answers adjacency in O(1) and its size is bounded by kDenseValues^2 entries.
inline constexpr std::size_t kImplicitAbove = 8192;

/// The structure `Auto` picks: Graph up to kImplicitAbove distinct values, then Sorted for one
/// component and Grid for more; never Grid when no component has a positive weight (then
/// every pair is a neighbour (Lp) or no distinct pair is (MinComponent) and no index helps).
/// A structure asked for explicitly is checked: Sorted needs one component.
Structure choose_structure(Structure asked, const ValueTable& table, const Distance& distance);

/// Cost: construction O(U log U) (Sorted), O(U + sum over values of the candidates in their
/// adjacent cells or windows) (Grid), or the graph's; adjacent O(1) (Graph, few values),
/// O(log degree) (Graph) or O(s) (implicit). The table must outlive the structure.
class Neighbours {
public:
    /// Over a materialized graph (owned from now on).
    Neighbours(const ValueTable& table, NeighbourGraph graph, Interrupt* interrupt = nullptr);
    /// An implicit structure (Sorted or Grid) for `distance` over `table`; its degrees are
    /// computed on `threads` threads (0: the hardware's), the same for any number.
    Neighbours(const ValueTable& table, const Distance& distance, Structure structure,
               std::size_t threads = 0, Interrupt* interrupt = nullptr);

    /// The structure `choose_structure` picks, built; Graph may throw GraphTooDense. Where
    /// `Auto` picks a Grid, the graph is built instead when small_value_graph finds it small
    /// (at most kGraphWorkPerRow row-weighted entries per row, and `max_entries`).
    static Neighbours build(const ValueTable& table, const Distance& distance, Structure asked,
                            std::size_t max_entries, std::size_t threads = 0,
                            Interrupt* interrupt = nullptr);
    /// A structure for checking sets of rows only (Mondrian's and specialization's
    /// PartChecker): the one `Auto` picks, except that where it picks a Grid the graph is
    /// built when it fits in `max_entries` (checks repeat, and summing a value's neighbours
    /// over stored adjacency beats searching cells), else the Grid without its row degrees
    /// (row_degrees() is then empty); with `grid_fallback` false, GraphTooDense instead (a
    /// caller for whom checks over a grid would cost too much).
    static Neighbours for_checks(const ValueTable& table, const Distance& distance,
                                 std::size_t max_entries, Interrupt* interrupt = nullptr,
                                 bool grid_fallback = true);

    Structure structure() const { return structure_; }
    std::size_t size() const { return table_->size(); }
    const ValueTable& table() const { return *table_; }
    /// Row degree of each value: count[u] - 1 + sum of count over its other neighbours
    /// (empty for a Grid built by for_checks).
    const std::vector<std::int64_t>& row_degrees() const { return degree_; }
    /// The graph, or nullptr for an implicit structure.
    const NeighbourGraph* graph() const { return structure_ == Structure::Graph ? &graph_ : nullptr; }
    /// The relation of an implicit structure (nullptr for a graph).
    const Distance* distance() const { return distance_ ? &*distance_ : nullptr; }
    /// Edges between distinct values (stored ones; 0 for an implicit structure).
    std::size_t value_edges() const { return graph_.value_edges(); }
    /// Sorted: the closed neighbourhood of u is the value ids [first, last); O(1). Neither
    /// bound falls as u rises (ids ascend with the value, and x - y never falls as x rises or
    /// y falls): the swap loop walks a class's values against them with forward pointers.
    std::pair<std::int32_t, std::int32_t> interval(std::int32_t u) const {
        const auto i = static_cast<std::size_t>(u);
        return {first_[i], last_[i]};
    }
    /// Sorted: the entries of [begin, end), in ascending order of value_of(entry), whose
    /// values lie in w's closed neighbourhood, by two binary searches.
    template <typename It, typename ValueOf>
    std::pair<It, It> in_interval(It begin, It end, std::int32_t w, ValueOf value_of) const {
        const auto [first, last] = interval(w);
        const auto below = [&](const auto& entry, std::int32_t id) { return value_of(entry) < id; };
        const It lo = std::lower_bound(begin, end, first, below);
        return {lo, std::lower_bound(lo, end, last, below)};
    }

    /// True iff a == b or the values are epsilon-neighbours: on the sorted structure whether
    /// b lies in a's interval (no distance computed).
    bool adjacent(std::int32_t a, std::int32_t b) const {
        if (a == b) return true;
        if (structure_ == Structure::Sorted) {
            const auto i = static_cast<std::size_t>(a);
            return first_[i] <= b && b < last_[i];
        }
        if (structure_ != Structure::Graph) {
            return distance_->within(table_->value(static_cast<std::size_t>(a)),
                                     table_->value(static_cast<std::size_t>(b)));
        }
        if (!dense_.empty()) return bit(dense_.data(), static_cast<std::size_t>(a) * size() + static_cast<std::size_t>(b));
        return graph_.adjacent(a, b);
    }
    /// The bit matrix adjacent() reads when values are few (bit a * size() + b), else nullptr.
    const std::uint64_t* dense_bits() const { return dense_.empty() ? nullptr : dense_.data(); }
    /// Bit i of a bit matrix such as dense_bits().
    static bool bit(const std::uint64_t* bits, std::size_t i) { return (bits[i >> 6] >> (i & 63)) & 1U; }

private:
    struct ChecksOnly {};
    /// A Grid without its row degrees (for_checks).
    Neighbours(const ValueTable& table, const Distance& distance, ChecksOnly);
    void sorted_degrees(std::size_t threads, Interrupt* interrupt);

    Structure structure_;
    const ValueTable* table_;
    std::optional<Distance> distance_;
    NeighbourGraph graph_;
    std::vector<std::uint64_t> dense_;  ///< Graph: value adjacency bit matrix when values are few
    std::vector<std::int64_t> degree_;
    std::vector<std::int32_t> first_, last_;  ///< Sorted: each value's neighbourhood interval
};

/// adjacent(u, v) for one value v against many u: the row of v in the bit matrix, read
/// directly where the structure keeps one (a loop over a class's values then tests a bit
/// per value); on the sorted structure whether u lies in v's interval (two comparisons, no
/// distance); else Neighbours::adjacent.
class AdjacentTo {
public:
    AdjacentTo(const Neighbours& neighbours, std::int32_t v)
        : nb_(neighbours), v_(v), bits_(neighbours.dense_bits()),
          base_(static_cast<std::size_t>(v) * neighbours.size()),
          sorted_(neighbours.structure() == Structure::Sorted) {
        if (sorted_) std::tie(first_, last_) = neighbours.interval(v);
    }
    bool operator()(std::int32_t u) const {
        if (sorted_) return first_ <= u && u < last_;
        if (bits_ == nullptr) return nb_.adjacent(u, v_);
        return Neighbours::bit(bits_, base_ + static_cast<std::size_t>(u));  // symmetric matrix
    }

private:
    const Neighbours& nb_;
    std::int32_t v_;
    const std::uint64_t* bits_;
    std::size_t base_;
    bool sorted_;
    std::int32_t first_ = 0, last_ = 0;  ///< sorted: v's closed neighbourhood [first, last)
};

/// Rows of a set, added value by value, counted in the closed neighbourhood of any value w:
/// count(w) = sum over added (u, times) with u ~ w of times.
/// Cost: Graph: add O(degree(u)), count O(1), clear O(what was touched), memory O(U) once;
/// Sorted: add O(1), the first count after adds sorts the d values added (O(d log d)), then
/// count O(log d) (two binary searches for the neighbourhood interval), O(1) inline where
/// one add was made (the swap loop counts one value's neighbours in every row it reads); Grid:
/// add O(1), count O(d) distance tests (sets are classes: small). Not for concurrent use: a count
/// may sort what was added.
class NeighbourCount {
public:
    explicit NeighbourCount(const Neighbours& neighbours);
    void clear();
    void add(std::int32_t u, std::int32_t times);
    /// Whether an add costs O(deg(u)) and keeps nothing more (counts stored per value, over a
    /// graph), so that adds which cancel out may be made freely.
    bool stored() const { return graph_ != nullptr; }
    std::int32_t count(std::int32_t w) const {
        if (graph_) return count_[static_cast<std::size_t>(w)];
        if (sorted_ && added_.size() == 1) {  // one value (the swap loop's marks): no search
            const auto [first, last] = nb_.interval(w);
            const std::int32_t u = added_.front().first;
            return first <= u && u < last ? added_.front().second : 0;
        }
        if (sorted_) return count_sorted(w);
        std::int32_t total = 0;
        for (const auto& [u, times] : added_) {
            if (nb_.adjacent(u, w)) total += times;
        }
        return total;
    }

private:
    std::int32_t count_sorted(std::int32_t w) const;

    const Neighbours& nb_;
    const NeighbourGraph* graph_;
    bool sorted_;                        ///< the Sorted structure: count by intervals
    std::vector<std::int32_t> count_;    ///< Graph: count per value touched
    std::vector<std::int32_t> touched_;  ///< Graph
    /// implicit: (value, times); Sorted: in value order once `ordered_`, with `prefix_` the
    /// running sums of times (prefix_[i] = times of added_[0..i)).
    mutable std::vector<std::pair<std::int32_t, std::int32_t>> added_;
    mutable std::vector<std::int32_t> prefix_;
    mutable bool ordered_ = false;
};

}  // namespace proxanon
