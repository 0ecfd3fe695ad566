// Violating rows of a set of rows under the checks of a Mondrian part or a specialized class
// (SPEC §2), without a pass over pairs of rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/mondrian.hpp"
#include "proxanon/neighbours.hpp"

namespace proxanon {

/// Measures a set of rows under the checks of `params`: its distinct values, the rows of
/// each and D(v) of a row of each (its epsilon-neighbours in the set), and its violating
/// rows: all of them when it has fewer than k rows or fewer than l distinct values, else
/// those with more than t(G) neighbours (an empty set has none: callers check k).
/// Rows are counted per distinct value first; over a graph each value's neighbours among the
/// values present are summed, O(p + sum of their degrees), skipping values whose degree in
/// the whole table is within t(G) (it bounds their degree in the set), or, when the p
/// present values are few against their adjacency, their pairs are tested, O(p^2 log degree);
/// over an implicit structure the counts come from class_counts.hpp (the engine's and
/// audit's), O(p log p + candidate pairs). Memory O(U) once. What it measured stays readable
/// until the next call: D exactly for every value over t(G), and a number within t(G) for
/// the others.
class PartChecker {
public:
    PartChecker(const Neighbours& neighbours, const MondrianParams& params);

    std::int64_t measure(const std::int32_t* begin, const std::int32_t* end);
    /// Whether the set passes (measure(...) == 0 and at least k rows), stopping at the first
    /// value over t(G) over a graph; afterwards only present() and allowed() are readable.
    bool passes(const std::int32_t* begin, const std::int32_t* end);

    /// Of the last set measured: its distinct values, t(G), and per value its rows and D.
    const std::vector<std::int32_t>& present() const { return present_; }
    std::int64_t allowed() const { return allowed_; }
    std::int64_t count(std::int32_t u) const { return count_[at(u)]; }
    /// D of a row of value u in the set when it exceeds allowed(), else at most allowed().
    std::int64_t degree(std::int32_t u) const { return degree_[at(u)]; }
    bool adjacent(std::int32_t a, std::int32_t b) const { return nb_.adjacent(a, b); }
    /// Work done by the measures so far: rows counted, plus adjacency entries read or pairs
    /// of values tested (a caller bounds its checks by it).
    std::size_t work() const { return work_; }
    std::int32_t value_of(std::int32_t row) const { return nb_.table().row_value[at(row)]; }
    std::size_t values() const { return nb_.size(); }

private:
    /// Adjacency entries read per pair test (a binary search) when choosing between them.
    static constexpr std::size_t kTestsPerEntry = 8;
    static std::size_t at(std::int32_t v) { return static_cast<std::size_t>(v); }
    void graph_degrees();
    /// D of a row of value u in the set (present values counted), over the graph, exact when
    /// over allowed(), else at most allowed(); O(degree), O(1) when the whole table's D is
    /// within allowed().
    std::int64_t graph_degree(std::int32_t u);
    void count_present(const std::int32_t* begin, const std::int32_t* end);
    void implicit_degrees(const std::int32_t* begin, const std::int32_t* end);

    const Neighbours& nb_;
    const NeighbourGraph* graph_;
    const MondrianParams& params_;
    std::vector<std::int64_t> count_;   ///< rows per value of the last set, else 0
    std::vector<std::int64_t> degree_;  ///< D of a row per value of the last set, else 0
    std::vector<std::int32_t> present_;
    std::vector<std::int64_t> row_counts_;  ///< scratch: D per row of the last set
    std::int64_t allowed_ = 0;
    std::size_t work_ = 0;
};

}  // namespace proxanon
