// One native session per published table (docs/design/publishing.md): XColor's run, the exchange
// step, and the rounds that merge groups publishing one QI tuple (an attacker sees them as one
// class) and repair the merged classes, over one value table, neighbour structure and loss model.
//
// A round: the groups of the last run (after the first run, the exchange step of
// exchange.hpp spreads equal tuples apart); their published tuples (published_key.hpp) merge
// groups into classes, numbered in the order of their first group; if no two groups share a
// tuple, the last run failed, more rows are left out than the budget allows, or
// `max_rounds` rounds were made, the session ends; otherwise run_xcolor repairs the classes
// as its starting colouring. Rows a suppressing run leaves out stay out: the structures are
// built again over the rows left in, which is the only time they are rebuilt.
//
// Invariant: each round that goes on merges at least two classes (or leaves rows out), so a
// session ends after at most n / k rounds. Cost: one build, then per round O(n d) for the
// tuples and merging plus the run (xcolor.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/xcolor.hpp"

namespace proxanon {

/// Fills `table` with the values of the rows given (ascending ids of the whole table) and
/// builds the neighbour structure over it, on `threads` threads.
using RowsRelation = std::function<Neighbours(ValueTable& table, const std::vector<std::int32_t>& rows,
                                              std::size_t threads, Interrupt* interrupt)>;

struct SessionOptions {
    XColorOptions xcolor;       ///< every run's options (suppress: leave rows out)
    bool qi_aware = true;       ///< the runs' loss model holds the QIs (false: the plain path)
    std::size_t max_rounds = std::numeric_limits<std::size_t>::max();
    double budget = 0.0;        ///< share of all rows that may be left out before merging stops
};

/// What the QIs are: row-major n x d codes, with a taxonomy (DFS leaf indices) per column
/// that has one and `node_keys` naming its nodes by published label.
struct QuasiIdentifiers {
    const double* codes = nullptr;
    std::size_t d = 0;
    const std::vector<std::optional<Taxonomy>>* taxonomies = nullptr;
    const std::vector<std::vector<std::int32_t>>* node_keys = nullptr;
};

struct SessionResult {
    std::vector<std::int32_t> released;     ///< rows in the release, ascending
    std::vector<std::int32_t> classes;      ///< published class per released row, 0 .. C-1
    std::vector<std::int64_t> formed_from;  ///< per class: first-run groups it gathers (> 1: merged)
    std::vector<std::int32_t> last_rows;    ///< the rows the last run ran over, ascending
    XColorResult last;                      ///< the last run (groups over last_rows)
    XColorStats first;                      ///< the first run's statistics
    std::int64_t rounds = 0;
    std::int64_t swaps = 0;                 ///< over all runs
    bool too_few = false;                   ///< a run left fewer than k rows in: nothing published
    std::size_t distinct = 0, value_edges = 0;
    Structure structure = Structure::Graph;
    double seconds_graph = 0.0;             ///< the first build
    double seconds_merge = 0.0;             ///< everything after the first run
};

/// Runs a session over n rows; `start` (class id per row, every id used) replaces INITIALIZE
/// in the first run; `sensitive_ids` marks interchangeable rows for the exchange step. Polls
/// `options.xcolor.interrupt` (throws Interrupted).
SessionResult run_session(const RowsRelation& relation, std::size_t n, const QuasiIdentifiers& qi,
                          const std::vector<std::int64_t>& sensitive_ids, const SessionOptions& options,
                          const std::vector<std::int32_t>* start);

}  // namespace proxanon
