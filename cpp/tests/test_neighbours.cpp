// C++ unit tests of the neighbour relation and its structures, with no Python: run by ctest.
// Distance's tolerance on Wang and Liu's Table I; the value table, the neighbour graph (L2,
// MinComponent, values at the ends of double range), the box tree's weights and degrees and
// NeighbourCount on the graph and the sorted values, each against a test of every pair; and
// the class counts (class_counts.hpp) of the audit's path, the graph's and one line's sweep.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/neighbours/box_tree.hpp"
#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// Wang and Liu, XColor, Table I, group 1 and 2 syndrome values.
const std::vector<double> kTableOne = {
    0.8, 0.0, 0.0, 0.6, 0.4, 0.4, 0.7, 0.1, 0.1, 1.0, 0.2, 0.2, 0.1, 0.9, 0.9,
    0.2, 0.5, 0.2, 0.8, 0.1, 0.9, 0.4, 0.3, 0.5, 0.6, 0.9, 0.3, 1.0, 0.7, 0.7};

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

void test_min_component_graph_against_brute_force() {
    const std::size_t n = 300, s = 3;
    const std::vector<double> rows = random_levels(n, s, 10, 11);
    const Distance distance(Metric::MinComponent, {1.0, 0.5, 2.0}, 0.1);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    for (std::size_t a = 0; a < table.size(); ++a) {
        for (std::size_t b = 0; b < table.size(); ++b) {
            bool close = a == b;
            for (std::size_t i = 0; i < s; ++i) {
                close = close || distance.weights()[i] * std::fabs(table.value(a)[i] - table.value(b)[i]) <= 0.1 + 1e-9;
            }
            CHECK(graph.adjacent(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)) == close);
        }
    }
}

/// NeighbourCount on every structure: count(w) is the times added for values u ~ w, whatever
/// order values are added in and however adds and counts interleave (Sorted sorts lazily).
void test_neighbour_count_against_brute_force() {
    for (unsigned seed = 0; seed < 20; ++seed) {
        const std::vector<double> rows = random_levels(300, 1, 40 + static_cast<int>(seed), seed);
        const ValueTable table = ValueTable::from_rows(rows.data(), rows.size(), 1);
        const Distance distance(Metric::L1, {1.0}, 0.01 * (seed % 7));
        const Neighbours graph(table, NeighbourGraph::build(table, distance, 1u << 24));
        const Neighbours sorted(table, distance, Structure::Sorted);
        NeighbourCount by_graph(graph), by_sorted(sorted);
        std::mt19937 rng(seed);
        const auto values = static_cast<std::int32_t>(table.size());
        std::vector<std::int32_t> times(table.size(), 0);
        for (int step = 0; step < 200; ++step) {
            if (rng() % 50 == 0) {
                by_graph.clear();
                by_sorted.clear();
                std::fill(times.begin(), times.end(), 0);
            }
            if (rng() % 2 == 0) {
                const auto u = static_cast<std::int32_t>(rng() % static_cast<unsigned>(values));
                const auto t = static_cast<std::int32_t>(1 + rng() % 3);
                by_graph.add(u, t);
                by_sorted.add(u, t);
                times[static_cast<std::size_t>(u)] += t;
            }
            const auto w = static_cast<std::int32_t>(rng() % static_cast<unsigned>(values));
            std::int32_t expected = 0;
            for (std::int32_t u = 0; u < values; ++u) {
                if (u == w || distance.within(table.value(static_cast<std::size_t>(u)),
                                              table.value(static_cast<std::size_t>(w)))) {
                    expected += times[static_cast<std::size_t>(u)];
                }
            }
            CHECK(by_graph.count(w) == expected);
            CHECK(by_sorted.count(w) == expected);
        }
    }
}

/// Values at the ends of double range and an epsilon far below the data's resolution: grid
/// keys stay in range (float-cast-overflow sanitizer) and the graph is the pairs within reach.
void test_graph_at_floating_point_extremes() {
    const std::vector<double> far = {1e308, -1e308, 1e308, -1e308, 0.0};
    const ValueTable wide = ValueTable::from_rows(far.data(), far.size(), 1);
    for (Metric metric : {Metric::L1, Metric::L2, Metric::Linf, Metric::MinComponent}) {
        const NeighbourGraph graph = NeighbourGraph::build(wide, Distance(metric, {1.0}, 0.1), 1000);
        CHECK(graph.value_edges() == 0);
    }
    const std::vector<double> spread = {0.0, 1e10, 5e9, 1.0, 1e-300};
    const ValueTable table = ValueTable::from_rows(spread.data(), spread.size(), 1);
    const NeighbourGraph tiny = NeighbourGraph::build(table, Distance(Metric::L1, {1.0}, 1e-300), 1000);
    CHECK(tiny.value_edges() == 1);  // 0 and 1e-300, within the absolute slack
    bool refused = false;
    try {
        NeighbourGraph::build(table, Distance(Metric::L1, {1.0}, 1e11), 3);
    } catch (const GraphTooDense& e) {
        refused = e.entries() > 3 && e.bytes() > e.entries();
    }
    CHECK(refused);
}

/// The box tree's weights and degrees equal a test of every pair: values on a lattice of step
/// epsilon / 4 (many pairs exactly at epsilon: the corners' rounding decides), random values,
/// zero weights, more components than kept on the stack, duplicates; and the degrees equal the
/// grid's, through implicit_row_degrees whichever it picks.
void test_box_tree_against_brute_force() {
    std::mt19937 rng(11);
    for (Metric metric : {Metric::L1, Metric::L2, Metric::Linf}) {
        for (std::size_t s : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{10}}) {
            for (const bool lattice : {true, false}) {
                const std::size_t n = 700;
                const double eps = 0.1;
                std::vector<double> rows = lattice ? random_levels(n, s, 40, static_cast<unsigned>(s)) : std::vector<double>(n * s);
                std::uniform_real_distribution<double> unit(0.0, 1.0);
                if (!lattice) {
                    for (double& x : rows) x = unit(rng) * unit(rng);  // crowded near 0
                }
                std::vector<double> weights(s, 1.0 / static_cast<double>(s));
                if (s == 3) weights[1] = 0.0;
                const Distance distance(metric, weights, eps);
                const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
                const BoxTree tree(table, distance);
                std::vector<std::int64_t> brute(table.size());
                for (std::size_t u = 0; u < table.size(); ++u) {
                    std::int64_t weight = 0;
                    for (std::size_t w = 0; w < table.size(); ++w) {
                        if (distance.within(table.value(u), table.value(w))) weight += table.count[w];
                    }
                    CHECK(tree.weight_within(table.value(u)) == weight);
                    brute[u] = weight - 1;
                }
                CHECK(box_tree_degrees(table, distance, 3, nullptr) == brute);
                CHECK(implicit_row_degrees(table, distance, 2, nullptr) == brute);
            }
        }
    }
    bool refused = false;
    try {
        BoxTree(ValueTable::from_rows(kTableOne.data(), 1, 1), Distance(Metric::MinComponent, {1.0}, 0.1));
    } catch (const std::invalid_argument&) {
        refused = true;
    }
    CHECK(refused);
}

void test_class_counts_paths_against_brute_force() {
    // 3,000 rows on a 12-level lattice in 3 components: 1,728 possible values, far more than
    // a class's pairwise path takes; 19 classes and rows left out (-1).
    const std::size_t n = 3000, s = 3;
    const std::vector<double> rows = random_levels(n, s, 12, 7);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
    std::mt19937_64 rng(8);
    std::vector<std::int64_t> labels(n);
    for (auto& l : labels) l = static_cast<std::int64_t>(rng() % 20) - 1;
    // epsilon 0.1: a lattice step (1/11) in one component, so a handful of neighbours per
    // value (a small graph); epsilon 1.5: most values are neighbours (no small graph).
    for (const double eps : {0.1, 1.5}) {
        const Distance distance(Metric::L1, {1.0, 1.0, 1.0}, eps);
        std::vector<std::int64_t> expected(n, -1);
        for (std::size_t a = 0; a < n; ++a) {
            if (labels[a] < 0) continue;
            expected[a] = 0;
            for (std::size_t b = 0; b < n; ++b) {
                if (b != a && labels[b] == labels[a] && distance.within(&rows[a * s], &rows[b * s])) ++expected[a];
            }
        }
        // The audit's path: the rows grouped by class, counts in that order.
        const ClassRuns runs = class_runs(labels);
        const std::vector<std::int64_t> in_runs = class_neighbour_counts(table, distance, runs, 2, nullptr);
        std::vector<std::int64_t> counts(n, -1);
        for (std::size_t i = 0; i < runs.rows.size(); ++i) counts[static_cast<std::size_t>(runs.rows[i])] = in_runs[i];
        CHECK(counts == expected);
        CHECK(small_value_graph(table, distance, std::size_t{1} << 30).has_value() == (eps < 1.0));
        // Each class by both paths.
        const NeighbourGraph graph = NeighbourGraph::build(table, distance, std::size_t{1} << 30);
        GraphClassCounter counter(table, graph);
        for (std::int64_t c = 0; c < 19; ++c) {
            std::vector<std::int32_t> members;
            for (std::size_t r = 0; r < n; ++r) {
                if (labels[r] == c) members.push_back(static_cast<std::int32_t>(r));
            }
            std::vector<std::int64_t> by_index(members.size()), by_graph(members.size()), want(members.size());
            count_in_class(table, distance, members.data(), members.size(), by_index.data());
            counter.count(members.data(), members.size(), by_graph.data());
            for (std::size_t i = 0; i < members.size(); ++i) want[i] = expected[static_cast<std::size_t>(members[i])];
            CHECK(by_index == want);
            CHECK(by_graph == want);
        }
    }
}

/// The sweep over values on a line under a relation that holds for no pair, not even a value
/// with itself (MinComponent with no positive weight, which only C++ callers can ask for):
/// each value's run is itself alone, and the sweep stays within the values.
void test_line_runs_hold_their_own_value() {
    std::size_t calls = 0;
    for_each_line_run(5, [](std::size_t, std::size_t) { return false; },
                      [&](std::size_t i, std::size_t first, std::size_t last) {
                          CHECK(first == i && last == i + 1);
                          ++calls;
                      });
    CHECK(calls == 5);
}

void test_one_component_class_counts_against_brute_force() {
    // One component on a 400-level lattice: classes of ~200 rows hold far more distinct
    // values than the pairwise path takes, so count_in_class sweeps its window over them;
    // epsilon a whole number of lattice steps puts neighbours exactly epsilon apart.
    const std::size_t n = 2000;
    const std::vector<double> rows = random_levels(n, 1, 400, 21);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
    for (const double eps : {0.0, 3.0 / 400, 0.05, 0.6}) {
        const Distance distance(Metric::L1, {1.0}, eps);
        for (std::size_t c = 0; c < 10; ++c) {
            std::vector<std::int32_t> members;
            for (std::size_t r = c; r < n; r += 10) members.push_back(static_cast<std::int32_t>(r));
            std::vector<std::int64_t> got(members.size()), want(members.size(), 0);
            count_in_class(table, distance, members.data(), members.size(), got.data());
            for (std::size_t a = 0; a < members.size(); ++a) {
                for (std::size_t b = 0; b < members.size(); ++b) {
                    const auto ra = static_cast<std::size_t>(members[a]), rb = static_cast<std::size_t>(members[b]);
                    if (a != b && distance.within(&rows[ra], &rows[rb])) ++want[a];
                }
            }
            CHECK(got == want);
        }
    }
}

}  // namespace

int main() {
    return run_tests("neighbour structure", {test_line_runs_hold_their_own_value,
                                             test_one_component_class_counts_against_brute_force,
                                             test_distance_tolerance,
                                             test_value_table_and_graph_against_brute_force,
                                             test_min_component_graph_against_brute_force,
                                             test_neighbour_count_against_brute_force,
                                             test_graph_at_floating_point_extremes,
                                             test_box_tree_against_brute_force,
                                             test_class_counts_paths_against_brute_force});
}
