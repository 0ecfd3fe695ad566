// C++ unit tests of the colouring and its repairs, with no Python: run by ctest. On a crowded
// table that no equitable grouping can hold: the stronger repair with suppression (classes of
// k, no violation left, the same on two threads), the excess descent within its work budget,
// Colouring's kept class tallies and its outward order of classes; and ViolationQueue's order.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/excess_descent.hpp"
#include "proxanon/xcolor/violation_queue.hpp"
#include "proxanon/xcolor/xcolor.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// 200 rows, 120 of them one value: with delta = 0.9 no equitable grouping into classes of
/// k = 10 can hold them (the stronger repair's and the descent's test table).
struct CrowdedTable {
    static constexpr std::size_t n = 200;
    std::vector<double> rows;
    Distance distance{Metric::L1, {1.0}, 0.01};
    ValueTable table;
    NeighbourGraph graph;
    XColorOptions params;

    CrowdedTable() : rows(crowded_rows()), table(ValueTable::from_rows(rows.data(), n, 1)),
                     graph(NeighbourGraph::build(table, distance, 1u << 24)) {
        params.k = 10;
        params.delta = 0.9;
        params.moves = Moves::Auto;
    }

    static std::vector<double> crowded_rows() {
        std::vector<double> out = random_levels(n, 1, 50, 13);
        for (std::size_t r = 0; r < 120; ++r) out[r] = 0.5;
        return out;
    }
};

void test_stronger_repair_and_suppression() {
    const CrowdedTable crowded;
    const std::size_t n = CrowdedTable::n;
    const std::vector<double>& rows = crowded.rows;
    const Distance& distance = crowded.distance;
    const ValueTable& table = crowded.table;
    const NeighbourGraph& graph = crowded.graph;
    XColorOptions params = crowded.params;
    params.suppress = true;
    const XColorResult result = run_xcolor(table, Neighbours(table, graph), LossModel(), params);
    CHECK(result.stats.remaining_violations == 0);
    check_same_on_two_threads(table, graph, params, result);
    CHECK(result.stats.suppressed > 0);
    CHECK(result.stats.suppressed == static_cast<std::int64_t>(result.suppressed_rows.size()));
    std::vector<int> size(static_cast<std::size_t>(result.stats.m), 0);
    for (std::size_t r = 0; r < n; ++r) {
        const bool left_out = std::binary_search(result.suppressed_rows.begin(),
                                                 result.suppressed_rows.end(),
                                                 static_cast<std::int32_t>(r));
        CHECK(left_out == (result.groups[r] < 0));
        if (result.groups[r] >= 0) size[static_cast<std::size_t>(result.groups[r])] += 1;
    }
    for (int sz : size) CHECK(sz >= 10);
    for (std::size_t r = 0; r < n; ++r) {
        if (result.groups[r] < 0) continue;
        int count = 0;
        for (std::size_t q = 0; q < n; ++q) {
            if (q != r && result.groups[q] == result.groups[r] && distance.within(&rows[r], &rows[q])) ++count;
        }
        CHECK(count <= allowed_neighbours(static_cast<std::size_t>(size[static_cast<std::size_t>(result.groups[r])]), 0.9));
    }
}

void test_excess_descent_stops_on_its_work_budget() {
    // The strong repair's table, its rows dealt round robin into 20 classes: the descent
    // moves rows until the excess stops falling, unless its budget of rows read runs out.
    const CrowdedTable crowded;
    const std::size_t n = CrowdedTable::n;
    const ValueTable& table = crowded.table;
    const Neighbours neighbours(table, crowded.graph);
    const XColorOptions& params = crowded.params;
    std::vector<std::int32_t> initial(n);
    for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>(r % 20);
    const LossModel no_loss;  // the colouring keeps a reference: not a temporary
    const auto descend = [&](std::size_t work_per_row) {
        Colouring colouring(table, neighbours, no_loss, params.delta, initial, 1);
        const std::int64_t before = colouring.violations();
        XColorResult result;
        ExcessDescent descent(colouring, params, work_per_row);
        descent.run(result);
        CHECK(colouring.violations() <= before);
        for (std::size_t c = 0; c < 20; ++c) CHECK(colouring.size(c) >= 10);  // no class below k
        return std::make_pair(descent.moves(), colouring.violations());
    };
    const auto [full_moves, full_left] = descend(kDescentWorkPerRow);
    // A budget of 2^12 rows read in all: about six steps of 64 classes of 10 rows each.
    const auto [cut_moves, cut_left] = descend(1);
    CHECK(full_moves > cut_moves);
    CHECK(cut_moves <= 6);
    CHECK(cut_left >= full_left);
}

void test_class_tally_is_kept_until_its_class_changes() {
    // tally_class(c, skip) against a count over the class's rows, for skipped rows of the same
    // value, of another value and none, after swaps, detaches and attaches (which must drop a
    // kept tally), over the stored graph (two adds per new value) and an implicit structure.
    const CrowdedTable crowded;
    const std::size_t n = CrowdedTable::n;
    const ValueTable& table = crowded.table;
    std::vector<std::int32_t> initial(n);
    for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>(r % 10);
    const LossModel no_loss;  // the colouring keeps a reference: not a temporary
    for (const bool graph : {true, false}) {
        const Neighbours neighbours = graph ? Neighbours(table, crowded.graph)
                                            : Neighbours::build(table, crowded.distance, Structure::Sorted, 1u << 24);
        Colouring col(table, neighbours, no_loss, 0.9, initial, 1);
        std::mt19937_64 rng(5);
        const auto check = [&](std::size_t c, std::int32_t skip) {
            col.tally_class(c, skip);
            for (std::int32_t w = 0; w < static_cast<std::int32_t>(table.size()); ++w) {
                std::int32_t expected = 0;
                for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) {
                    if (*p != skip && col.adjacent(w, col.value_of(*p))) ++expected;
                }
                CHECK(col.tally_count(w) == expected);
            }
        };
        for (int round = 0; round < 40; ++round) {
            const std::size_t c = rng() % 10;
            const std::int32_t a = col.begin(c)[rng() % col.size(c)];
            const std::int32_t b = col.begin(c)[rng() % col.size(c)];
            check(c, a);
            check(c, b);   // the same class less another row (same value or not)
            check(c, -1);  // the whole class
            check(c, a);
            switch (rng() % 3) {
            case 0: {  // a swap with a row of the next class
                const std::size_t other = (c + 1) % 10;
                const std::int32_t w = col.begin(other)[0];
                col.detach(a);
                col.detach(w);
                col.attach(a, other);
                col.attach(w, c);
                break;
            }
            case 1:
                col.detach(a);
                col.attach(a, (c + 3) % 10);
                break;
            default:
                break;
            }
            check(c, b == a ? -1 : b);
        }
    }
}

void test_outward_covers_every_other_class_near_home_first() {
    // Colouring::outward against its definition: home+1, home-1, home+2, home-2, ... modulo
    // m, and once more upward where m - 1 is odd; every other class exactly once.
    const CrowdedTable crowded;
    const ValueTable& table = crowded.table;
    const Neighbours neighbours(table, crowded.graph);
    const LossModel no_loss;
    for (std::size_t m = 1; m <= 41; ++m) {
        std::vector<std::int32_t> initial(CrowdedTable::n);
        for (std::size_t r = 0; r < initial.size(); ++r) initial[r] = static_cast<std::int32_t>(r % m);
        const Colouring col(table, neighbours, no_loss, 0.9, initial, 1);
        for (std::size_t home = 0; home < m; ++home) {
            std::vector<int> seen(m, 0);
            for (std::size_t step = 0; step + 1 < m; ++step) {
                const std::size_t distance = step / 2 + 1;
                const std::size_t expected = distance > (m - 1) / 2 ? (home + (m - 1) / 2 + 1) % m
                                             : step % 2 == 0       ? (home + distance) % m
                                                                   : (home + m - distance) % m;
                const std::size_t c = col.outward(home, step);
                CHECK(c == expected);
                CHECK(c < m && c != home);
                if (c < m) ++seen[c];
            }
            for (std::size_t c = 0; c < m; ++c) CHECK(seen[c] == (c == home ? 0 : 1));
        }
    }
}

void test_queue_order() {
    ViolationQueue queue(6, 3);
    queue.push(4, 1);
    queue.push(2, 2);
    queue.push(0, 1);
    queue.push(5, 0);
    queue.update(0, 2);
    CHECK(queue.pop() == 2);
    CHECK(queue.pop() == 0);
    CHECK(queue.pop() == 4);
    CHECK(queue.pop() == 5);
    CHECK(queue.empty());
}

}  // namespace

int main() {
    return run_tests("colouring and repair", {test_stronger_repair_and_suppression,
                                              test_excess_descent_stops_on_its_work_budget,
                                              test_class_tally_is_kept_until_its_class_changes,
                                              test_outward_covers_every_other_class_near_home_first,
                                              test_queue_order});
}
