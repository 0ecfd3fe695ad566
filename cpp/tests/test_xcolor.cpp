// C++ unit tests of whole XColor runs (xcolor.hpp), with no Python: run by ctest. A run holds
// and lowers the potential (the same on two threads); a passing start is returned without the
// colouring; every option combination agrees with a pair-by-pair count and runs move for move
// alike on the graph and on both implicit structures; a stop request unwinds a run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/xcolor.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// 2,000 rows on a 9-level lattice in two components, L1 at epsilon 0.1, k = 10, delta = 0.7.
struct LatticeCase {
    static constexpr std::size_t n = 2000, s = 2;
    std::vector<double> rows = random_levels(n, s, 9, 9);
    Distance distance{Metric::L1, {0.5, 0.5}, 0.1};
    ValueTable table = ValueTable::from_rows(rows.data(), n, s);
    NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    XColorOptions params = [] {
        XColorOptions o;
        o.k = 10;
        o.delta = 0.7;
        return o;
    }();
};

void test_xcolor_satisfies_and_lowers_potential() {
    const LatticeCase lattice;
    const std::size_t n = lattice.n, s = lattice.s;
    const auto& [rows, distance, table, graph, given] = lattice;
    XColorOptions params = given;
    params.trace = true;
    params.threads = 1;
    const XColorResult result = run_xcolor(table, Neighbours(table, graph), LossModel(), params);
    CHECK(result.stats.remaining_violations == 0);
    check_same_on_two_threads(table, graph, params, result);
    CHECK(result.stats.final_potential < result.stats.initial_potential);
    for (std::size_t i = 2; i < result.swap_log.size(); i += 3) CHECK(result.swap_log[i] < 0);
    // Independent count of same-group neighbours.
    for (std::size_t r = 0; r < n; ++r) {
        int count = 0, size = 0;
        for (std::size_t q = 0; q < n; ++q) {
            if (result.groups[q] != result.groups[r]) continue;
            ++size;
            if (q != r && distance.within(&rows[r * s], &rows[q * s])) ++count;
        }
        CHECK(count <= allowed_neighbours(static_cast<std::size_t>(size), params.delta));
    }
}

/// A start whose classes all pass is returned as it is, from the class counts alone (no
/// colouring): the same groups and statistics as the full run (which trace forces), on the
/// graph and on the grid; a start with a violation still runs the swap loop.
void test_passing_start_skips_the_colouring() {
    const LatticeCase lattice;
    const std::size_t n = lattice.n;
    const auto& [rows, distance, table, graph, params] = lattice;
    const XColorResult solved = run_xcolor(table, Neighbours(table, graph), LossModel(), params);
    CHECK(solved.stats.remaining_violations == 0);
    for (const bool on_graph : {true, false}) {
        const Neighbours nb = on_graph ? Neighbours(table, graph) : Neighbours(table, distance, Structure::Grid, 1);
        XColorOptions full = params;
        full.trace = true;
        const XColorResult fast = run_xcolor(table, nb, LossModel(), params, &solved.groups);
        const XColorResult slow = run_xcolor(table, nb, LossModel(), full, &solved.groups);
        CHECK(fast.groups == solved.groups && slow.groups == solved.groups);
        CHECK(fast.stats.initial_potential == slow.stats.initial_potential);
        CHECK(fast.stats.final_potential == slow.stats.final_potential);
        CHECK(fast.stats.m == slow.stats.m && fast.stats.n == slow.stats.n);
        CHECK(fast.stats.max_degree == slow.stats.max_degree && fast.stats.row_edges == slow.stats.row_edges);
        CHECK(fast.stats.swaps == 0 && slow.stats.swaps == 0);
        CHECK(fast.stats.classes_examined == slow.stats.classes_examined);
        CHECK(fast.stats.initial_violations == 0 && slow.stats.initial_violations == 0);
        CHECK(fast.violating_rows.empty() && slow.violating_rows.empty());
    }
    // Classes of 10 rows in value order (each gathers equal values): violations, so swaps.
    std::vector<std::int32_t> order(n), by_value(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return table.row_value[static_cast<std::size_t>(a)] < table.row_value[static_cast<std::size_t>(b)];
    });
    for (std::size_t i = 0; i < n; ++i) by_value[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i / 10);
    const XColorResult repaired = run_xcolor(table, Neighbours(table, graph), LossModel(), params, &by_value);
    CHECK(repaired.stats.initial_violations > 0 && repaired.stats.swaps > 0);
}

/// Every option combination on small random instances with QI columns (one of them a
/// taxonomy): each result's groups, suppressed rows and violations agree with a pair-by-pair
/// count. Runs every part of the engine with the loss model active and inactive, on the
/// graph and on both implicit structures.
void test_every_part_against_brute_force() {
    const Taxonomy tax({4, 4, 5, 5, 6, 6, -1}, 4);
    for (unsigned seed = 0; seed < 40; ++seed) {
        std::mt19937 rng(seed);
        const std::size_t n = 8 + seed % 30;
        const std::vector<double> rows = random_levels(n, 1, 4, seed + 100);
        std::vector<double> qi(n * 2);
        for (std::size_t r = 0; r < n; ++r) {
            qi[r * 2] = static_cast<double>(rng() % 20);
            qi[r * 2 + 1] = static_cast<double>(rng() % 4);  // leaf index of `tax`
        }
        std::vector<std::optional<Taxonomy>> taxonomies;
        taxonomies.emplace_back(std::nullopt);
        taxonomies.emplace_back(tax);
        const LossModel with_qi(qi.data(), n, 2, taxonomies);
        const Distance distance(Metric::L1, {1.0}, 0.25);
        const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
        const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
        for (int variant = 0; variant < 8; ++variant) {
            XColorOptions options;
            options.k = 1 + seed % 4;
            options.delta = (seed % 3 == 0) ? 0.9 : 0.5;
            options.moves = (variant & 1) ? Moves::Auto : Moves::Swap;
            options.suppress = (variant & 2) != 0;
            options.search_limit = (variant & 4) ? 1 : 0;
            options.init = (variant & 1) && seed % 2 ? Init::Qi : Init::Degree;
            options.trace = true;
            const bool priced = variant % 3 != 0 || options.init == Init::Qi;
            const XColorResult result = run_xcolor(table, Neighbours(table, graph), priced ? with_qi : LossModel(), options);
            // The implicit structures hold the same relation: the same run, move for move.
            for (Structure implicit : {Structure::Sorted, Structure::Grid}) {
                const XColorResult same = run_xcolor(table, Neighbours(table, distance, implicit),
                                                     priced ? with_qi : LossModel(), options);
                CHECK(same.groups == result.groups);
                CHECK(same.swap_log == result.swap_log);
                CHECK(same.move_log == result.move_log);
                CHECK(same.suppressed_rows == result.suppressed_rows);
            }
            std::vector<std::int32_t> violating;
            for (std::size_t r = 0; r < n; ++r) {
                if (result.groups[r] < 0) continue;
                int count = 0, size = 0;
                for (std::size_t q = 0; q < n; ++q) {
                    if (result.groups[q] != result.groups[r]) continue;
                    ++size;
                    if (q != r && distance.within(&rows[r], &rows[q])) ++count;
                }
                CHECK(static_cast<std::size_t>(size) >= options.k || options.suppress);
                if (count > allowed_neighbours(static_cast<std::size_t>(size), options.delta)) {
                    violating.push_back(static_cast<std::int32_t>(r));
                }
            }
            CHECK(violating == result.violating_rows);
            if (options.suppress) CHECK(result.violating_rows.empty());
            std::size_t left_out = 0;
            for (auto g : result.groups) left_out += g < 0;
            CHECK(left_out == result.suppressed_rows.size());
        }
    }
}

/// A stop request unwinds a run with Interrupted; the hook is consulted at most every 0.1 s.
void test_interrupt_unwinds_a_run() {
    const std::size_t n = 3000;
    const std::vector<double> rows = random_levels(n, 1, 40, 21);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, Distance(Metric::L1, {1.0}, 0.05), 1u << 24);
    int asked = 0;
    Interrupt always([&] { ++asked; return true; });
    XColorOptions options;
    options.k = 10;
    options.delta = 0.95;
    options.moves = Moves::Auto;
    options.suppress = true;
    options.interrupt = &always;
    bool stopped = false;
    const auto start = std::chrono::steady_clock::now();
    while (!stopped && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
        try {
            run_xcolor(table, Neighbours(table, graph), LossModel(), options);
        } catch (const Interrupted&) {
            stopped = true;
        }
    }
    CHECK(stopped);
    CHECK(asked == 1);
}

/// The quick hook (flags another thread sets) is read at every poll, the slow one (which
/// takes the GIL in the binding) at most every 0.1 s: a set flag unwinds at the next poll,
/// before the slow hook is ever consulted.
void test_quick_stop_needs_no_slow_hook() {
    int slow = 0, quick = 0;
    Interrupt interrupt([&] { ++slow; return false; }, [&] { ++quick; return quick >= 3; });
    bool stopped = false;
    try {
        for (;;) interrupt.poll();
    } catch (const Interrupted&) {
        stopped = true;
    }
    CHECK(stopped);
    CHECK(quick == 3);
    CHECK(slow == 0);
}

}  // namespace

int main() {
    return run_tests("XColor run", {test_xcolor_satisfies_and_lowers_potential, test_every_part_against_brute_force,
                                    test_interrupt_unwinds_a_run, test_quick_stop_needs_no_slow_hook,
                                    test_passing_start_skips_the_colouring});
}
