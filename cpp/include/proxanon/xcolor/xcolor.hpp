// XColor (Wang and Liu, XColor, Algorithm 2, §V-D; docs/design/xcolor.md): repair an equitable
// colouring until no vertex has more than t(V) neighbours in its own class. The parts, in the
// order a run uses them:
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

/// The numbers of one engine run, each described once here as X(name, type, doc): the struct
/// XColorStats below, the binding's read-only `_core.Stats` (its attributes, their docs) and
/// `_core.ENGINE_STATS_FIELDS` (the names in this order) are generated from it
/// (cpp/bindings/bind_engine.cpp). A field added here reaches Python with nothing else to edit
/// in C++; python/proxanon/_core.pyi lists the attributes for type checkers.
#define PROXANON_ENGINE_STATS(X)                                                                  \
    X(n, std::int64_t, "rows of the run")                                                         \
    X(m, std::int64_t, "classes: floor(n / k), or those of the starting colouring given")         \
    X(max_degree, std::int64_t, "Theta: the largest row degree in Psi")                           \
    X(row_edges, std::int64_t, "|E| of Psi (never materialized)")                                 \
    X(initial_violations, std::int64_t, "violating rows of the starting colouring")               \
    X(initial_potential, std::int64_t, "monochromatic edges after INITIALIZE")                    \
    X(final_potential, std::int64_t, "monochromatic edges at the end")                            \
    X(swaps, std::int64_t, "pairwise swaps of the swap loop")                                     \
    X(set_aside, std::int64_t, "times a violation had no exchangeable partner")                  \
    X(classes_examined, std::int64_t, "classes examined for a swap partner")                      \
    X(remaining_violations, std::int64_t, "violating rows at the end")                            \
    X(excess_moves, std::int64_t, "phase 2 swaps and transfers")                                  \
    X(transfers, std::int64_t, "of which transfers (sizes change)")                               \
    X(stalled_violations, std::int64_t, "violating rows when the pairwise swaps stopped")         \
    X(suppressed, std::int64_t, "rows left out")                                                  \
    X(regrouped_size, std::int64_t, "group size chosen when swaps stalled (0: kept k)")           \
    X(repair_capped, std::int64_t,                                                                \
      "violating rows left because the cap on fruitless repair work stopped the swap loop or "    \
      "the excess descent (progress_cap.hpp; 0: no cap bit)")                                     \
    X(exact_search, std::int64_t,                                                                 \
      "1: the exact search settled a small table (the partition it found, or proof that none "    \
      "exists)")                                                                                  \
    X(seconds_suppress, double, "seconds spent leaving rows out (suppress)")                      \
    X(seconds_initialize, double, "seconds of INITIALIZE and the start's neighbour counts")       \
    X(seconds_repair, double, "seconds of the swap loop and the stronger repair")

struct XColorStats {
#define PROXANON_STATS_MEMBER(name, type, doc) type name{};
    PROXANON_ENGINE_STATS(PROXANON_STATS_MEMBER)
#undef PROXANON_STATS_MEMBER
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
/// suppression included. Cost: see the parts; the swap loop dominates, O(|E| |V|) (Wang and Liu,
/// XColor, Theorem 3).
XColorResult run_xcolor(const ValueTable& table, const Neighbours& neighbours,
                        const LossModel& loss, const XColorOptions& options,
                        const std::vector<std::int32_t>* initial = nullptr);

}  // namespace proxanon
