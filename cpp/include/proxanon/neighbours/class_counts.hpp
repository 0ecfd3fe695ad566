// The neighbour counts inside classes (docs/design/privacy-model.md): D_V(v), how many other rows
// of v's class V are epsilon-neighbours of v (rows of identical value always are). The one
// implementation behind the engine's class counts on the implicit structures and behind `audit`
// for the built-in metrics.
//
// A class is taken by its distinct values with their multiplicities: up to kPairwiseValues
// distinct values are tested pairwise (O(u^2) tests, u <= kPairwiseValues); more, with one
// component, by one sweep of a window over the class's sorted values (for_each_line_run,
// O(u) tests);
// with several, indexed like a table of their own (a grid of cell size the neighbour box over
// up to three components, or sorted components for min_component; neighbour_graph.hpp),
// O(u log u + candidate pairs in adjacent cells), never a test of every pair of rows.
// Where the values' own graph is small (discrete values, few neighbours each: a census's
// coded attributes; neighbour_graph.hpp's small_value_graph), `class_neighbour_counts` builds
// it once and counts every class by its values' multiplicities summed over their adjacency
// lists, O(m + sum of the degrees of the class's distinct values): at most kGraphWorkPerRow
// per row in all, linear in the rows.
// Invariant: the counts equal brute force over Distance::within, whatever the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Distinct values in a class up to which its counts come from pairwise tests.
inline constexpr std::size_t kPairwiseValues = 48;

/// Values on a line (one component, in order, the distance growing away from each value on
/// either side): calls run(i, first, last) for i = 0 .. u-1, where [first, last) are the
/// indices of i's neighbours (i included), `near(a, b)` telling whether a and b are. Both
/// ends only move up as i does: one sweep, O(u) tests (binary searches for each end took
/// 2u log u, most of specialization's time on 100k continuous values).
template <typename Near, typename Run>
void for_each_line_run(std::size_t u, Near near, Run run) {
    std::size_t first = 0, last = 0;
    for (std::size_t i = 0; i < u; ++i) {
        while (first < i && !near(i, first)) ++first;  // i is its own neighbour
        last = last > i + 1 ? last : i + 1;
        while (last < u && near(i, last)) ++last;
        run(i, first, last);
    }
}

/// D_V(rows[i]) into out[i] for the m rows of one class (value ids from `table`).
/// Cost O(m log m) plus the tests described above; thread-safe (no shared scratch).
void count_in_class(const ValueTable& table, const Distance& distance, const std::int32_t* rows,
                    std::size_t m, std::int64_t* out);

/// The same counts over a stored graph of the values: O(m + sum of the degrees of the class's
/// distinct values) with one multiplicity per value of scratch (owned: one counter per thread).
class GraphClassCounter {
public:
    GraphClassCounter(const ValueTable& table, const NeighbourGraph& graph);
    void count(const std::int32_t* rows, std::size_t m, std::int64_t* out);

private:
    const ValueTable& table_;
    const NeighbourGraph& graph_;
    std::vector<std::int32_t> times_;     ///< per value: its rows in the class (0 between calls)
    std::vector<std::int64_t> degree_;    ///< per distinct value of the class: its count
    std::vector<std::int32_t> distinct_;
};

/// The counts of classes 0 .. classes-1, class c's rows given by `rows_of(c)`, over `graph`
/// when given (else count_in_class for `distance`), on `threads` threads (0: the hardware's):
/// `done(c, counts)` receives class c's counts (in the order of its rows) and must write only
/// what belongs to c, so the results are the same for any number. Threads take classes in
/// short runs (parallel_for_slots); the calling thread polls `interrupt` between its classes.
void for_each_class_count(const ValueTable& table, const NeighbourGraph* graph, const Distance* distance,
                          std::size_t classes,
                          const std::function<std::pair<const std::int32_t*, std::size_t>(std::size_t)>& rows_of,
                          const std::function<void(std::size_t, const std::int64_t*)>& done,
                          std::size_t threads, Interrupt* interrupt);

/// A partition's rows grouped by class: class c's rows are rows[start[c] .. start[c + 1]),
/// classes in ascending label and rows ascending inside (a stable order by label); start ends
/// with rows.size().
struct ClassRuns {
    std::vector<std::int32_t> rows;
    std::vector<std::size_t> start;
};

/// The runs of `labels` (class id per row; rows labelled -1 are left out). O(n) per 11 bits
/// of the largest label, one counting pass for group ids (ordering.hpp's radix_order).
ClassRuns class_runs(const std::vector<std::int64_t>& labels);

/// D_V(r) for every row of a partition given as `runs` (class_runs, or a caller that ordered
/// its rows by class already), in the order of runs.rows. Classes are counted on `threads`
/// threads (0: the hardware's); the result is the same for any number. Polls `interrupt`
/// between blocks of classes.
std::vector<std::int64_t> class_neighbour_counts(const ValueTable& table, const Distance& distance,
                                                 const ClassRuns& runs, std::size_t threads,
                                                 Interrupt* interrupt);

/// D_V(r) for every row of a partition given as `labels` (class id per row, -1 for a row left
/// out, whose count is -1), over a structure built already (the engine's): over its graph's
/// adjacency lists when it stores one, else by count_in_class.
std::vector<std::int64_t> class_neighbour_counts(const Neighbours& neighbours, const std::vector<std::int64_t>& labels,
                                                 std::size_t threads, Interrupt* interrupt);

}  // namespace proxanon
