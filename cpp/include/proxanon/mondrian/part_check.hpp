// Violating rows of a set of rows under the checks of a Mondrian part or a specialized class
// (docs/design/privacy-model.md), without a pass over pairs of rows.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"

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
    /// Over a graph with the dissimilarity check: the set last measured after `shed` (value,
    /// rows) rows leave it, `size` rows left, measured without its rows: what measure() of
    /// the rows left returns and leaves readable (the same values present, counts and D,
    /// and the same work counted). Counts drop by the rows shed, and D, where it was exact,
    /// by the shed rows among a value's neighbours: O(p + the shed values' degrees) instead
    /// of O(size + the present values' degrees); values whose D must become exact (t(G)
    /// shrank below their degree in the table) are counted as measure() counts them.
    std::int64_t measure_shed(const std::vector<std::pair<std::int32_t, std::int64_t>>& shed, std::size_t size);
    /// Whether the set passes (measure(...) == 0 and at least k rows), stopping at the first
    /// value over t(G) over a graph; afterwards only present() and allowed() are readable.
    bool passes(const std::int32_t* begin, const std::int32_t* end);
    /// passes() of a set given as m rows, `counts[i]` rows of the value (and criterion codes)
    /// of `rows[i]` each: the same answer as passes() of those rows, in O(m + the degrees
    /// read). With the distance check it needs a graph (throws std::logic_error without one).
    bool passes_weighted(const std::int32_t* rows, const std::int64_t* counts, std::size_t m);
    /// Whether the set last measured (measure(), not measure_shed()) failed a privacy
    /// criterion (MondrianParams::criteria); then measure() counted all its rows violating.
    bool criteria_failed() const { return criteria_failed_; }
    /// Whether the set fails a privacy criterion (what measure_shed() does not measure).
    bool fails_criteria(const std::int32_t* begin, const std::int32_t* end) {
        criteria_failed_ = criteria_ && !criteria_->holds(begin, end);
        return criteria_failed_;
    }

    /// Of the last set measured: its distinct values, t(G), and per value its rows and D.
    const std::vector<std::int32_t>& present() const { return present_; }
    std::int64_t allowed() const { return allowed_; }
    std::int64_t count(std::int32_t u) const { return count_[at(u)]; }
    /// D of a row of value u in the set when it exceeds allowed(), else at most allowed().
    std::int64_t degree(std::int32_t u) const { return degree_[at(u)]; }
    bool adjacent(std::int32_t a, std::int32_t b) const { return nb_.adjacent(a, b); }
    /// Whether the values lie on a line: one component with a distance, so that value ids
    /// follow the values' order (ValueTable::from_rows) and a value's neighbours are a run of
    /// ids around it.
    bool on_a_line() const { return nb_.distance() != nullptr && nb_.table().s == 1; }
    /// The graph the checks read, or nullptr over an implicit structure.
    const NeighbourGraph* graph() const { return graph_; }
    /// Work done by the measures so far: rows counted, plus adjacency entries read or pairs
    /// of values tested (a caller bounds its checks by it).
    std::size_t work() const { return work_; }
    std::int32_t value_of(std::int32_t row) const { return nb_.table().row_value[at(row)]; }
    const ValueTable& table() const { return nb_.table(); }
    std::size_t values() const { return nb_.size(); }

private:
    /// Adjacency entries read per pair test (a binary search) when choosing between them.
    static constexpr std::size_t kTestsPerEntry = 8;
    static std::size_t at(std::int32_t v) { return static_cast<std::size_t>(v); }
    /// Per present value, D over the graph (graph_degree), or with every pair of present
    /// values tested where that reads less; returns whether it tested pairs.
    bool graph_degrees();
    /// Whether graph_degrees() would test pairs: few present values with long adjacency.
    bool pairs_cheaper() const;
    /// measure()'s verdict from the counts and D now held.
    std::int64_t violating(std::size_t size) const;
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
    bool pairs_ = false;  ///< whether the last measure over a graph tested pairs (all D exact)
    std::optional<CriteriaCheck> criteria_;  ///< the privacy criteria, where asked for
    bool criteria_failed_ = false;
};

/// The violating rows of a table of n rows that fails as one group, ascending: all of them
/// when it lacks l distinct values or fails a criterion (no row alone can fix that), else
/// those with more than t(G) neighbours in it. One measure of the whole table.
std::vector<std::int32_t> whole_table_violating_rows(PartChecker& checker, const MondrianParams& params,
                                                     std::size_t n);

/// The relief of the violating values of a peeling round (specialize.cpp), asked in the
/// round's order: how many of the rows shed before a value are its neighbours. Pair tests
/// against the values shed so far grow with the square of the violating values, which
/// continuous values make as many as the rows (a piece of 150k lognormal incomes: 14 billion
/// tests, 47 s, in one round). On a line (PartChecker::on_a_line) a value's neighbours among
/// the violating ones are a run of them in id order, found by one sweep, and the rows shed
/// in each run come from a Fenwick tree over the ranks: O(v log v) a round. Over a graph, a
/// value's adjacency list is read against the rows shed per value (`shed_rows`, all zero
/// between rounds and left so) where it is shorter than the list of values shed, so a round
/// reads at most its values' adjacency. Elsewhere pair tests, at most `tests` in all, past
/// which a value's relief counts as none. Exact but for that bound.
class Relief {
public:
    /// `violating`: (minus excess, value) of the round's violating values.
    Relief(const PartChecker& check, const std::vector<std::pair<std::int64_t, std::int32_t>>& violating,
           std::size_t tests, std::vector<std::int64_t>& shed_rows);
    ~Relief();
    Relief(const Relief&) = delete;
    Relief& operator=(const Relief&) = delete;

    /// Rows shed so far among w's neighbours.
    std::int64_t of(std::int32_t w);
    /// x rows of w are shed.
    void shed(std::int32_t w, std::int64_t x);
    /// Adjacency tests, entries read and tree queries made.
    std::size_t work() const { return work_; }

private:
    std::size_t rank(std::int32_t w) const;
    /// Rows shed among the ranks below r.
    std::int64_t below(std::size_t r) const;

    const PartChecker& check_;
    std::size_t tests_;
    std::vector<std::int64_t>& shed_rows_;
    std::size_t work_ = 0;
    std::vector<std::int32_t> ids_;          ///< the violating values in id order (on a line)
    std::vector<std::size_t> first_, last_;  ///< per rank: its neighbours' ranks [first, last)
    std::vector<std::int64_t> tree_;         ///< Fenwick tree of rows shed, per rank
    std::vector<std::pair<std::int32_t, std::int64_t>> shed_;  ///< off a line: values shed
};

}  // namespace proxanon
