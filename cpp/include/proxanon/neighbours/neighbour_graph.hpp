// The epsilon-neighbour graph over the distinct sensitive values, in CSR form
// (docs/design/xcolor.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"

namespace proxanon {

/// The largest number of adjacency entries (4 bytes each, both directions of every edge
/// between different values) a neighbour graph may hold: 1.6 GB of targets. The one cap;
/// Python reads it as _core.MAX_GRAPH_ENTRIES.
inline constexpr std::size_t kMaxGraphEntries = 400'000'000;

/// Thrown (before any adjacency is allocated) when a graph would exceed its entry cap; the
/// binding registers it as proxanon.GraphTooDenseError, a ValueError.
class GraphTooDense : public std::length_error {
public:
    GraphTooDense(const std::string& message, std::uint64_t entries, std::uint64_t bytes)
        : std::length_error(message), entries_(entries), bytes_(bytes) {}
    /// The entries the graph would hold (an estimate from a sample, or a lower bound).
    std::uint64_t entries() const { return entries_; }
    /// The memory the graph would need, in bytes.
    std::uint64_t bytes() const { return bytes_; }

private:
    std::uint64_t entries_;
    std::uint64_t bytes_;
};

/// The distinct sensitive values of a table and which one each row holds.
/// Invariant: values are in lexicographic order, `count[u] >= 1`, sum(count) == n,
/// and row r holds values[row_value[r] * s .. + s). Built by sorting the rows: O(n log n · s).
struct ValueTable {
    std::size_t s = 0;                  ///< components of the sensitive attribute
    std::vector<double> values;         ///< distinct values, row-major, size U * s
    std::vector<std::int64_t> count;    ///< multiplicity of each distinct value
    std::vector<std::int32_t> row_value;///< value id of each row

    std::size_t size() const { return count.size(); }
    const double* value(std::size_t u) const { return values.data() + u * s; }

    /// Groups the n rows of `sensitive` (row-major n x s) by exact value; values must be finite.
    static ValueTable from_rows(const double* sensitive, std::size_t n, std::size_t s);

    /// Every row as a value of its own (count 1, id = row), values as given (finite): for a
    /// single pass over the rows, where grouping them by value would cost more than it saves.
    static ValueTable each_row(const double* sensitive, std::size_t n, std::size_t s);

    /// A table of `values` abstract values (no coordinates, s = 0) given each row's value id,
    /// for relations computed elsewhere (a user's distance, a precomputed graph).
    static ValueTable from_labels(std::vector<std::int32_t> row_value, std::size_t values);
};

/// Epsilon-neighbour graph between distinct values. Identical values are neighbours by
/// definition, so a row of value u has `count[u] - 1` neighbours of its own value; the graph
/// stores only the edges between *different* values (the row-level graph is implied and
/// never materialized: Adult at eps = 0.15 has ~1.3e8 row edges but ~2.6e4 value edges).
///
/// Invariant: `offsets` has U + 1 entries; the neighbours of u are
/// targets[offsets[u] .. offsets[u+1]), sorted ascending, never u itself; the relation is
/// symmetric. Construction is a uniform grid over (up to three) components with cell width
/// equal to the neighbour box radius, so each value is compared only with the values of the
/// 3^g adjacent cells, never all pairs of rows. Before anything is stored, the candidate pairs
/// of the grid bound the size; when that bound exceeds the cap, a sample of values and then
/// an exact count (stopping at the cap) decide, so a refusal allocates nothing.
class NeighbourGraph {
public:
    NeighbourGraph() = default;

    /// Builds the graph over `table` for `distance`; throws GraphTooDense, before allocating
    /// the adjacency, when it would hold more than `max_entries` entries; polls `interrupt`.
    static NeighbourGraph build(const ValueTable& table, const Distance& distance,
                                std::size_t max_entries, Interrupt* interrupt = nullptr);

    /// Builds from an explicit symmetric adjacency (for tests and precomputed relations).
    static NeighbourGraph from_csr(std::vector<std::int64_t> offsets,
                                   std::vector<std::int32_t> targets);

    std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
    std::size_t value_edges() const { return targets_.size() / 2; }

    const std::int32_t* begin(std::size_t u) const { return targets_.data() + offsets_[u]; }
    const std::int32_t* end(std::size_t u) const { return targets_.data() + offsets_[u + 1]; }
    std::size_t degree(std::size_t u) const {
        return static_cast<std::size_t>(offsets_[u + 1] - offsets_[u]);
    }

    /// True iff a == b or a and b are neighbours. O(log degree(a)).
    bool adjacent(std::int32_t a, std::int32_t b) const;

    const std::vector<std::int64_t>& offsets() const { return offsets_; }
    const std::vector<std::int32_t>& targets() const { return targets_; }

private:
    std::vector<std::int64_t> offsets_;
    std::vector<std::int32_t> targets_;
};

/// Row-weighted adjacency per row up to which a stored graph is "small" (small_value_graph).
inline constexpr std::size_t kGraphWorkPerRow = 64;

/// The graph of `table`'s values when it is small: its row-weighted adjacency (the sum over
/// values of count x degree, what counting every class of a partition over it reads at
/// most) is at most kGraphWorkPerRow per row, and it holds at most `max_entries` entries;
/// else nullopt (a graph too large is refused before its adjacency is allocated). Cost: the
/// build's.
std::optional<NeighbourGraph> small_value_graph(const ValueTable& table, const Distance& distance,
                                                std::size_t max_entries, Interrupt* interrupt = nullptr);

/// Row-level degree of each distinct value: count[u] - 1 + sum of count over its neighbours,
/// i.e. the degree in the abstract graph Psi of any row holding u. O(U + value edges).
std::vector<std::int64_t> row_degrees(const ValueTable& table, const NeighbourGraph& graph);

/// Candidate pairs per value (the grid's tests) above which implicit_row_degrees weighs each
/// value's neighbours with a box tree instead (box_tree.hpp), on a grid of one or two
/// components; twice as many on three, where the tree's boxes along a sphere's boundary are
/// more. Two components, 200k values: grid 2.8 s, tree 1.7 s at 15,700 candidates a value
/// (uniform, epsilon 0.05); 6.0 s and 2.2 s at 27,700 (incomes and amounts, lognormal and
/// gamma scaled to [0, 1], epsilon 0.01); about equal near 6,600. Three (uniform, 300k and
/// 1M): the grid ahead at 14,300 (20.5 s, 23.8 s), the tree at 19,200 (7.0 s, 5.9 s).
inline constexpr std::size_t kTreeAbove = 8192;

/// The same degrees for `distance` without storing any edge: neighbours are found by the
/// graph builder's grid (each pair of values in adjacent cells tested once) or component
/// windows and weighed on the spot, or, for an Lp metric past kTreeAbove candidates per value
/// (twice that on a grid of three components), by a box tree. Memory O(s U), plus one count
/// per value for each of up to 8 threads on the grid; time that of the candidate search,
/// O(sum of candidates), or the box tree's queries, over `threads` threads (0: the
/// hardware's; the degrees are exact, the same for any number and either way).
std::vector<std::int64_t> implicit_row_degrees(const ValueTable& table, const Distance& distance,
                                               std::size_t threads = 0,
                                               Interrupt* interrupt = nullptr);

}  // namespace proxanon
