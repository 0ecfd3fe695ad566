// C++ unit tests of the core, with no Python: run by ctest (see README, "C++ tests").
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "proxanon/distance.hpp"
#include "proxanon/initialize.hpp"
#include "proxanon/loss.hpp"
#include "proxanon/neighbour_graph.hpp"
#include "proxanon/violation_queue.hpp"
#include "proxanon/xcolor.hpp"

namespace {

int failures = 0;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                          \
        }                                                                        \
    } while (0)

using namespace proxanon;

/// Paper Table I, group 1 and 2 syndrome values.
const std::vector<double> kTableOne = {
    0.8, 0.0, 0.0, 0.6, 0.4, 0.4, 0.7, 0.1, 0.1, 1.0, 0.2, 0.2, 0.1, 0.9, 0.9,
    0.2, 0.5, 0.2, 0.8, 0.1, 0.9, 0.4, 0.3, 0.5, 0.6, 0.9, 0.3, 1.0, 0.7, 0.7};

/// n x s values drawn from {0, 1/levels, ..., 1}, so that values repeat.
std::vector<double> random_levels(std::size_t n, std::size_t s, int levels, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> level(0, levels);
    std::vector<double> rows(n * s);
    for (double& x : rows) x = level(rng) / static_cast<double>(levels);
    return rows;
}

void test_distance_tolerance() {
    const Distance linf(Metric::Linf, {1.0, 1.0, 1.0}, 0.1);
    CHECK(linf.within(&kTableOne[0], &kTableOne[6]));   // #1 ~ #3: |0.8 - 0.7| = 0.1
    CHECK(!linf.within(&kTableOne[0], &kTableOne[3]));  // #1 vs #2: 0.4 apart
    const Distance l1(Metric::L1, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 0.1);
    CHECK(l1.within(&kTableOne[0], &kTableOne[6]));     // (0.1 + 0.1 + 0.1) / 3 = 0.1
}

void test_value_table_and_graph_against_brute_force() {
    const std::size_t n = 400, s = 3;
    const std::vector<double> rows = random_levels(n, s, 6, 5);
    const Distance distance(Metric::L2, {0.5, 0.3, 0.2}, 0.2);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
    std::int64_t total = 0;
    for (auto c : table.count) total += c;
    CHECK(total == static_cast<std::int64_t>(n));
    for (std::size_t r = 0; r < n; ++r) {
        const double* v = table.value(static_cast<std::size_t>(table.row_value[r]));
        for (std::size_t i = 0; i < s; ++i) CHECK(v[i] == rows[r * s + i]);
    }
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    for (std::size_t a = 0; a < table.size(); ++a) {
        for (std::size_t b = 0; b < table.size(); ++b) {
            const bool expected = a == b || distance.within(table.value(a), table.value(b));
            CHECK(graph.adjacent(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)) == expected);
        }
    }
}

void test_initialize_is_equitable() {
    std::vector<std::int64_t> degree(103);
    for (std::size_t i = 0; i < degree.size(); ++i) degree[i] = static_cast<std::int64_t>((i * 37) % 11);
    const auto classes = initialize(degree, 10);
    std::vector<int> size(10, 0);
    for (auto c : classes) size[static_cast<std::size_t>(c)] += 1;
    for (int sz : size) CHECK(sz == 10 || sz == 11);
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

void test_group_extremes() {
    const std::vector<double> qi = {0.0, 1.0, 1.0, 3.0};  // one column, four rows
    const LossModel model(qi.data(), 4, 1);
    const std::vector<std::int32_t> members = {0, 1, 2};
    GroupExtremes ex;
    ex.compute(model, members.data(), members.size());
    CHECK(ex.loss() == 1.0 / 3.0);
    CHECK(ex.departure(model.row(0)) == -1.0 / 3.0);  // the unique minimum leaves
    CHECK(ex.departure(model.row(1)) == 0.0);         // the maximum is held twice
    CHECK(std::fabs(ex.exchange(model.row(0), model.row(3)) - 2.0 / 3.0) < 1e-12);
}

void test_xcolor_satisfies_and_lowers_potential() {
    const std::size_t n = 2000, s = 2;
    const std::vector<double> rows = random_levels(n, s, 9, 9);
    const Distance distance(Metric::L1, {0.5, 0.5}, 0.1);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    XColorParams params;
    params.k = 10;
    params.delta = 0.7;
    params.trace = true;
    const XColorResult result = run_xcolor(table, graph, LossModel(), params);
    CHECK(result.stats.remaining_violations == 0);
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

}  // namespace

int main() {
    test_distance_tolerance();
    test_value_table_and_graph_against_brute_force();
    test_initialize_is_equitable();
    test_queue_order();
    test_group_extremes();
    test_xcolor_satisfies_and_lowers_potential();
    if (failures == 0) std::puts("all C++ core tests passed");
    return failures == 0 ? 0 : 1;
}
