// XColor (Algorithm 2, §V-D): repair an equitable colouring until no vertex has more than
// t(V) neighbours in its own class. The parts, in the order a run uses them:
//   initialize.hpp      INITIALIZE (Algorithm 1): the degree-balanced starting colouring
//   colouring.hpp       the colouring and D_V(v) per row, kept current under moves
//   violation_queue.hpp the violations still to repair (Algorithm 2, line 5)
//   swap_loop.hpp       the pairwise exchanges of Algorithm 2 (lines 4-11)
//   excess_descent.hpp  the stronger repair when the swaps stall (moves = auto)
//   suppression.hpp     leave rows out until every class satisfies (on_infeasible = suppress)
//   exact.hpp           exhaustive search of tables of <= 16 rows the heuristics cannot settle
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Counters a run publishes as it works, for another thread to read (relaxed atomics: each
/// number is current, the set of them is not a snapshot).
struct Progress {
    enum Phase : int { kGraph = 0, kInitialize = 1, kRepair = 2, kDone = 3 };
    std::atomic<int> phase{kGraph};
    std::atomic<std::int64_t> queued{0};     ///< violations waiting in the queue
    std::atomic<std::int64_t> set_aside{0};  ///< violations with no partner for now
    std::atomic<std::int64_t> swaps{0};
};

/// Which moves the repair may make. Swap: the paper's pairwise exchanges only (Algorithm 2).
/// Auto: when the swaps stall, regroup into the roomiest group size, then the excess descent.
enum class Moves { Swap, Auto };

/// How the starting colouring is built: Algorithm 1 as published (QI-blind), or the QI-aware
/// start of `initialize_in_blocks` over `qi_order` (needs QI columns in the loss model).
enum class Init { Degree, Qi };

/// Everything a run may be asked to do (mirrored by proxanon.engine.EngineOptions).
struct XColorOptions {
    std::size_t k = 1;            ///< minimum group size; m = floor(n / k) classes
    double delta = 0.0;           ///< t(V) = floor((1 - delta)(|V| - 1))
    Init init = Init::Degree;
    std::size_t init_block = 8;   ///< classes per QI-local run (Init::Qi)
    Moves moves = Moves::Swap;
    bool suppress = false;        ///< finally leave out rows until every class satisfies
    std::size_t search_limit = 0; ///< classes to examine per violation before settling for the
                                  ///< best partner seen (0 = all classes: the paper's full scan)
    bool trace = false;           ///< keep the initial colouring and every move
    std::size_t threads = 0;      ///< for the row degrees and the QI order (0: one per hardware thread); the
                                  ///< result is the same for any number
    Progress* progress = nullptr; ///< optional live counters
    Interrupt* interrupt = nullptr; ///< optional stop request, polled between units of work
};

struct XColorStats {
    std::int64_t n = 0;
    std::int64_t m = 0;
    std::int64_t max_degree = 0;         ///< Theta: the largest row degree in Psi
    std::int64_t row_edges = 0;          ///< |E| of Psi (never materialized)
    std::int64_t initial_violations = 0;
    std::int64_t initial_potential = 0;  ///< monochromatic edges after INITIALIZE
    std::int64_t final_potential = 0;
    std::int64_t swaps = 0;
    std::int64_t set_aside = 0;          ///< times a violation had no exchangeable partner
    std::int64_t classes_examined = 0;
    std::int64_t remaining_violations = 0;
    std::int64_t excess_moves = 0;        ///< phase 2 swaps and transfers
    std::int64_t transfers = 0;           ///< of which transfers (sizes change)
    std::int64_t stalled_violations = 0;  ///< violating rows when the pairwise swaps stopped
    std::int64_t suppressed = 0;
    std::int64_t regrouped_size = 0;      ///< group size chosen when swaps stalled (0: kept k)
    std::int64_t exact_search = 0;        ///< 1: the exact search settled a small table
                                          ///< (the partition it found, or proof that none exists)
    double seconds_suppress = 0.0;
    double seconds_initialize = 0.0;
    double seconds_repair = 0.0;
};

struct XColorResult {
    std::vector<std::int32_t> groups;          ///< class of each row, 0 .. m-1 (-1: suppressed)
    std::vector<std::int32_t> violating_rows;  ///< rows with D_V(v) > t(V) at the end, ascending
    std::vector<std::int32_t> violating_groups;///< their classes, ascending, once each
    std::vector<std::int32_t> initial_groups;  ///< trace only: the colouring INITIALIZE built
    std::vector<std::int64_t> swap_log;        ///< trace only: (v, v', Lambda) per swap, flat
    std::vector<std::int64_t> move_log;        ///< trace only: (v, v' or -1, target class,
                                               ///< change of E) per phase-2 move, flat
    std::vector<std::int32_t> suppressed_rows; ///< left out (class -1 in groups), ascending
    XColorStats stats;
};

/// Runs INITIALIZE (or starts from `initial`, a class id 0..m-1 per row, every id used), the
/// swap loop, and what `options` asks for after it, over the rows described by `table` and
/// the relation `neighbours` (built over the same table). With Moves::Auto, a table of at
/// most kExactRows rows that the heuristics leave unsatisfied is searched exactly (exact.hpp),
/// suppression included. Cost: see the parts; the swap loop dominates, O(|E| |V|) (Theorem 3).
XColorResult run_xcolor(const ValueTable& table, const Neighbours& neighbours,
                        const LossModel& loss, const XColorOptions& options,
                        const std::vector<std::int32_t>* initial = nullptr);

}  // namespace proxanon
