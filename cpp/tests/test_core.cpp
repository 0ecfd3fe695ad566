// C++ unit tests of the core, with no Python: run by ctest (see README, "C++ tests").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "proxanon/neighbours/box_tree.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/publish/exchange.hpp"
#include "proxanon/xcolor/excess_descent.hpp"
#include "proxanon/xcolor/initialize.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/common/ordering.hpp"
#include "proxanon/publish/absorb.hpp"
#include "proxanon/mondrian/part_check.hpp"
#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/publish/specialize.hpp"
#include "proxanon/xcolor/swap_loop.hpp"
#include "proxanon/publish/tuple_counts.hpp"
#include "proxanon/xcolor/violation_queue.hpp"
#include "proxanon/xcolor/xcolor.hpp"
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
    // The colouring's classes are counted on the threads asked for: the same run on two.
    XColorOptions two = params;
    two.threads = 2;
    const XColorResult parallel = run_xcolor(table, Neighbours(table, graph), LossModel(), two);
    CHECK(parallel.groups == result.groups && parallel.swap_log == result.swap_log);
    CHECK(parallel.stats.initial_potential == result.stats.initial_potential);
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
    CHECK(ex.departure(model, model.row(0)) == -1.0 / 3.0);  // the unique minimum leaves
    CHECK(ex.departure(model, model.row(1)) == 0.0);         // the maximum is held twice
    CHECK(std::fabs(ex.exchange(model, model.row(0), model.row(3)) - 2.0 / 3.0) < 1e-12);

    // Kept through random arrivals and departures (add, remove where it can, else computed
    // again): the same extremes, loss and prices as computed from the members, on three
    // columns of few codes (extremes held by many members) and one of many.
    const std::size_t n = 300, d = 4;
    std::mt19937 rng(12);
    std::vector<double> codes(n * d);
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < d; ++i) codes[r * d + i] = static_cast<double>(rng() % (i == 3 ? 200 : 4));
    }
    const LossModel four(codes.data(), n, d);
    std::vector<std::int32_t> in, out;
    for (std::size_t r = 0; r < n; ++r) (r % 2 == 0 ? in : out).push_back(static_cast<std::int32_t>(r));
    GroupExtremes kept;
    kept.compute(four, in.data(), in.size());
    std::size_t removed = 0, recomputed = 0;
    for (int step = 0; step < 3000; ++step) {
        if (rng() % 2 == 0 && in.size() > 1) {
            const std::size_t i = rng() % in.size();
            const std::int32_t r = in[i];
            in.erase(in.begin() + static_cast<std::ptrdiff_t>(i));
            out.push_back(r);
            if (kept.remove(four.row(r))) ++removed;
            else { kept.compute(four, in.data(), in.size()); ++recomputed; }
        } else if (!out.empty()) {
            const std::size_t i = rng() % out.size();
            const std::int32_t r = out[i];
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(i));
            in.push_back(r);
            kept.add(four, four.row(r));
        }
        GroupExtremes fresh;
        fresh.compute(four, in.data(), in.size());
        CHECK(kept.same_as(fresh));
        CHECK(kept.loss() == fresh.loss());
        const std::int32_t probe = static_cast<std::int32_t>(rng() % n);
        CHECK(kept.departure(four, four.row(probe)) == fresh.departure(four, four.row(probe)));
        CHECK(kept.with(four, four.row(probe)) == fresh.with(four, four.row(probe)));
    }
    CHECK(removed > 10 * recomputed && recomputed > 0);  // both ways taken
}

void test_taxonomy_cost() {
    // Leaves 0..3 in DFS order; 0,1 under node 4, 2,3 under node 5, root 6.
    const Taxonomy tax({4, 4, 5, 5, 6, 6, -1}, 4);
    CHECK(tax.lca(0, 1) == 4);
    CHECK(tax.lca(1, 2) == 6);
    CHECK(tax.lca(3, 3) == 3);
    CHECK(tax.cost(0, 1) == 0.5);
    CHECK(tax.cost(0, 3) == 1.0);
    CHECK(tax.cost(2, 2) == 0.25);
    const std::vector<double> qi = {0.0, 1.0, 3.0};
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(tax);
    const LossModel model(qi.data(), 3, 1, taxonomies);
    const std::vector<std::int32_t> members = {0, 1};
    GroupExtremes ex;
    ex.compute(model, members.data(), members.size());
    CHECK(ex.loss() == 0.5);
    CHECK(ex.exchange(model, model.row(1), model.row(2)) == 1.0);
    CHECK(ex.departure(model, model.row(1)) == 0.25 - 0.5);
}

/// A random taxonomy over `leaves` leaves (ids 0..leaves-1 in DFS order, internal nodes after
/// them): each node's leaf range is cut into 1-4 consecutive children. `ranges` receives each
/// internal node's leaf range [first, last], and `parent` the parent array.
void random_taxonomy(std::mt19937& rng, std::size_t leaves, std::vector<std::int32_t>& parent,
                     std::vector<std::pair<std::int32_t, std::int32_t>>& ranges) {
    parent.assign(leaves, -1);
    ranges.clear();
    std::vector<std::tuple<std::int32_t, std::int32_t, std::int32_t>> open{{0, static_cast<std::int32_t>(leaves) - 1, -1}};
    while (!open.empty()) {
        const auto [first, last, above] = open.back();
        open.pop_back();
        const auto node = static_cast<std::int32_t>(parent.size());
        parent.push_back(above);
        ranges.emplace_back(first, last);
        std::int32_t begin = first;
        while (begin <= last) {
            const std::int32_t width = last - begin + 1;
            const std::int32_t take = begin == first && width > 1
                ? 1 + static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(width - 1))
                : 1 + static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(width));
            if (take == 1) parent[static_cast<std::size_t>(begin)] = node;
            else open.emplace_back(begin, begin + take - 1, node);
            begin += take;
        }
    }
}

/// Leaves not numbered depth-first (0 and 2 under one node, 1 and 3 under another): refused,
/// since a range's LCA would not be that of its extremes.
void test_taxonomy_refuses_leaves_out_of_order() {
    bool refused = false;
    try {
        const Taxonomy tax({4, 5, 4, 5, 6, 6, -1}, 4);
    } catch (const std::invalid_argument&) {
        refused = true;
    }
    CHECK(refused);
    const Taxonomy fine({4, 4, 5, 5, 6, 6, -1}, 4);  // the same shape numbered depth-first
    CHECK(fine.cost(0, 1) == 0.5);
}

void test_taxonomy_cost_of_every_range() {
    // Against the leaf ranges themselves: the cost of [lo, hi] is the share of leaves of the
    // narrowest node covering both, with the table of ranges (few leaves) and without it.
    std::mt19937 rng(11);
    for (const std::size_t leaves : {std::size_t{1}, std::size_t{7}, std::size_t{100}, kCostTableLeaves,
                                     kCostTableLeaves + 1, std::size_t{400}}) {
        std::vector<std::int32_t> parent;
        std::vector<std::pair<std::int32_t, std::int32_t>> ranges;
        random_taxonomy(rng, leaves, parent, ranges);
        const Taxonomy tax(parent, leaves);
        for (std::int32_t lo = 0; lo < static_cast<std::int32_t>(leaves); ++lo) {
            for (std::int32_t hi = lo; hi < static_cast<std::int32_t>(leaves); ++hi) {
                std::int32_t width = lo == hi ? 1 : static_cast<std::int32_t>(leaves);
                for (const auto& [first, last] : ranges) {
                    if (first <= lo && hi <= last) width = std::min(width, last - first + 1);
                }
                const double expected = static_cast<double>(width) / static_cast<double>(leaves);
                CHECK(tax.cost(lo, hi) == expected);
                CHECK(tax.cost(hi, lo) == expected);
                CHECK(tax.cost(lo, hi) == tax.share(tax.lca(lo, hi)));
            }
        }
    }
}

void test_qi_order_is_the_same_for_any_thread_count() {
    // Above kParallelOrderRows the parts are split on several threads: the order must not
    // change. A numeric column with ties and a taxonomy column (subtree splits, sorted parts).
    const std::size_t n = kParallelOrderRows + 4099;
    std::mt19937_64 rng(11);
    std::vector<double> qi(2 * n);
    for (std::size_t r = 0; r < n; ++r) {
        qi[2 * r] = static_cast<double>(rng() % 97);
        qi[2 * r + 1] = static_cast<double>(rng() % 4);
    }
    std::vector<std::optional<Taxonomy>> taxonomies(2);
    taxonomies[1].emplace(Taxonomy({4, 4, 5, 5, 6, 6, -1}, 4));
    const LossModel model(qi.data(), n, 2, taxonomies);
    const auto one = qi_order(model, n, 10, 1);
    std::vector<int> seen(n, 0);
    for (auto r : one) seen[static_cast<std::size_t>(r)] += 1;
    for (int count : seen) CHECK(count == 1);
    for (std::size_t threads : {2, 3, 8}) CHECK(qi_order(model, n, 10, threads) == one);
    // The taxonomy column alone, single-row parts: parts are sorted by (leaf, row) (a radix
    // ordering past 4096 rows) and split at subtree boundaries until one leaf is left, whose
    // rows keep that order: the whole order is by (leaf, row).
    std::vector<double> leaves(n);
    for (std::size_t r = 0; r < n; ++r) leaves[r] = qi[2 * r + 1];
    std::vector<std::optional<Taxonomy>> one_taxonomy(1);
    one_taxonomy[0].emplace(Taxonomy({4, 4, 5, 5, 6, 6, -1}, 4));
    const LossModel by_leaf(leaves.data(), n, 1, one_taxonomy);
    std::vector<std::int32_t> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](std::int32_t a, std::int32_t b) {
        return leaves[static_cast<std::size_t>(a)] < leaves[static_cast<std::size_t>(b)];
    });
    CHECK(qi_order(by_leaf, n, 1, 1) == expected);
    CHECK(qi_order(by_leaf, n, 1, 2) == expected);
}

void test_qi_start_is_local_and_equitable() {
    // One numeric QI 0..99 in shuffled row order: the QI order sorts it, and classes cut from
    // it hold consecutive values.
    const std::size_t n = 100;
    std::vector<double> qi(n);
    for (std::size_t r = 0; r < n; ++r) qi[r] = static_cast<double>((r * 37) % n);
    const LossModel model(qi.data(), n, 1);
    const auto order = qi_order(model, n, 1);
    std::vector<int> seen(n, 0);
    for (auto r : order) seen[static_cast<std::size_t>(r)] += 1;
    for (int count : seen) CHECK(count == 1);
    for (std::size_t i = 0; i + 1 < n; ++i) {  // single-row parts: the order sorts the QI
        CHECK(qi[static_cast<std::size_t>(order[i])] < qi[static_cast<std::size_t>(order[i + 1])]);
    }
    const std::vector<std::int64_t> degree(n, 3);
    const auto classes = initialize_in_blocks(degree, order, 10, 1);
    for (std::size_t c = 0; c < 10; ++c) {
        double lo = 1e9, hi = -1e9;
        int size = 0;
        for (std::size_t r = 0; r < n; ++r) {
            if (classes[r] != static_cast<std::int32_t>(c)) continue;
            lo = std::min(lo, qi[r]);
            hi = std::max(hi, qi[r]);
            ++size;
        }
        CHECK(size == 10);
        CHECK(hi - lo == 9.0);  // ten consecutive values
    }
    // A taxonomy column splits at subtree boundaries: leaves 0-1 | 2-3.
    const Taxonomy tax({4, 4, 5, 5, 6, 6, -1}, 4);
    CHECK(tax.child_range(0, 3, 1) == std::make_pair(0, 1));
    CHECK(tax.child_range(0, 3, 2) == std::make_pair(2, 3));
    CHECK(tax.child_range(0, 1, 1) == std::make_pair(1, 1));
}

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
    // The colouring's classes are counted on the threads asked for: the same run on two.
    XColorOptions two = params;
    two.threads = 2;
    const XColorResult parallel = run_xcolor(table, Neighbours(table, graph), LossModel(), two);
    CHECK(parallel.groups == result.groups && parallel.swap_log == result.swap_log);
    CHECK(parallel.stats.initial_potential == result.stats.initial_potential);
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

/// Rows of `classes` with more epsilon-neighbours in their class than t(class), pair by pair.
std::size_t brute_violating_rows(const std::vector<std::int32_t>& classes, const std::vector<double>& sens,
                                 std::size_t s, const Distance& distance, double delta) {
    std::size_t bad = 0;
    for (std::size_t a = 0; a < classes.size(); ++a) {
        std::size_t size = 0;
        std::int32_t near = 0;
        for (std::size_t b = 0; b < classes.size(); ++b) {
            if (classes[b] != classes[a]) continue;
            ++size;
            near += a != b && distance.within(&sens[a * s], &sens[b * s]);
        }
        bad += near > allowed_neighbours(size, delta);
    }
    return bad;
}

/// The two-column QIs of the specialization tests: column 0 a leaf of the 8-leaf taxonomy
/// below, column 1 a number in 0 .. 49, drawn from `seed`.
const std::vector<std::int32_t> kEightLeaves{8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, -1};

std::vector<double> two_column_qis(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<double> qi(n * 2);
    for (std::size_t r = 0; r < n; ++r) {
        qi[2 * r] = static_cast<double>(rng() % 8);
        qi[2 * r + 1] = static_cast<double>(rng() % 50);
    }
    return qi;
}

LossModel two_column_loss(const std::vector<double>& qi) {
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
    taxonomies.emplace_back(std::nullopt);
    return LossModel(qi.data(), qi.size() / 2, 2, std::move(taxonomies));
}

/// A key per node of kEightLeaves, each its own (every node publishes its own label).
std::vector<std::int32_t> eight_leaf_keys() {
    std::vector<std::int32_t> keys(kEightLeaves.size());
    for (std::size_t v = 0; v < keys.size(); ++v) keys[v] = static_cast<std::int32_t>(v);
    return keys;
}

/// The one-column QIs of the absorption tests: leaves 0 .. 3 of a two-level taxonomy, whose
/// nodes each publish their own label.
const std::vector<std::int32_t> kFourLeaves{4, 4, 5, 5, 6, 6, -1};

LossModel four_leaf_loss(const std::vector<double>& qi) {
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kFourLeaves, 4));
    return LossModel(qi.data(), qi.size(), 1, std::move(taxonomies));
}

std::vector<std::int32_t> four_leaf_keys() {
    std::vector<std::int32_t> keys(kFourLeaves.size());
    for (std::size_t v = 0; v < keys.size(); ++v) keys[v] = static_cast<std::int32_t>(v);
    return keys;
}

/// The checks of k rows and (epsilon, delta)^k-dissimilarity, without l.
MondrianParams dissimilarity_checks(std::size_t k, double delta) {
    MondrianParams params;
    params.k = k;
    params.dissimilarity = true;
    params.delta = delta;
    return params;
}

/// Every class of `classes` over two_column_qis has k rows at least, and `each` accepts its
/// rows; their published tuples (column 0's LCA, column 1's range) are pairwise distinct.
template <typename Each>
void check_classes_apart(const std::vector<std::int32_t>& classes, const std::vector<double>& qi, std::size_t k,
                         Each each) {
    const Taxonomy tax(kEightLeaves, 8);
    const std::int32_t count = *std::max_element(classes.begin(), classes.end()) + 1;
    std::vector<std::vector<double>> tuples;
    for (std::int32_t c = 0; c < count; ++c) {
        std::vector<std::size_t> rows;
        for (std::size_t r = 0; r < classes.size(); ++r) {
            if (classes[r] == c) rows.push_back(r);
        }
        CHECK(rows.size() >= k);
        CHECK(each(rows));
        double lo0 = 1e9, hi0 = -1e9, lo1 = 1e9, hi1 = -1e9;
        for (std::size_t a : rows) {
            lo0 = std::min(lo0, qi[2 * a]); hi0 = std::max(hi0, qi[2 * a]);
            lo1 = std::min(lo1, qi[2 * a + 1]); hi1 = std::max(hi1, qi[2 * a + 1]);
        }
        tuples.push_back({static_cast<double>(tax.lca(static_cast<std::int32_t>(lo0), static_cast<std::int32_t>(hi0))), lo1, hi1});
    }
    std::sort(tuples.begin(), tuples.end());
    CHECK(std::adjacent_find(tuples.begin(), tuples.end()) == tuples.end());
}

/// Every swap of the loss-aware swap loop (search_limit 0: every class examined) replayed: its
/// partner is, by brute force over every row of every other class, an exchangeable one
/// (movable class, Lambda < 0) with the least change of loss (losses computed from the
/// members), then the least Lambda, then the lower row; its Lambda is the one logged. QI
/// codes make every cost a multiple of 1/8, so the sums are exact and ties are real.
void test_swap_loop_takes_the_least_loss_partner() {
    const std::size_t n = 400, k = 10;
    const std::vector<double> sa = random_levels(n, 1, 12, 21);
    const Distance distance{Metric::L1, {1.0}, 1.0 / 12.0};
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    std::mt19937 rng(22);
    std::vector<double> qi(n * 2);
    for (std::size_t r = 0; r < n; ++r) {
        qi[2 * r] = static_cast<double>(rng() % 8);                 // a leaf of kEightLeaves
        qi[2 * r + 1] = static_cast<double>(r < 2 ? 8 * r : rng() % 9);  // 0 .. 8: eighths
    }
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
    taxonomies.emplace_back(std::nullopt);
    const LossModel loss(qi.data(), n, 2, std::move(taxonomies));
    std::size_t stopped_violations = 0;
    for (const double delta : {0.7, 0.8}) {
        XColorOptions options;
        options.k = k;
        options.delta = delta;
        options.trace = true;
        options.threads = 1;
        const XColorResult result = run_xcolor(table, Neighbours(table, graph), loss, options);
        CHECK(result.swap_log.size() >= 3 * 20);  // enough swaps to mean something
        std::vector<std::int32_t> groups = result.initial_groups;
        const auto near = [&](std::size_t a, std::size_t b) { return distance.within(&sa[a], &sa[b]); };
        const auto count_in = [&](std::size_t row, std::int32_t c, std::size_t skip) {  // rows of c near row
            std::int64_t d = 0;
            for (std::size_t q = 0; q < n; ++q) d += groups[q] == c && q != row && q != skip && near(row, q);
            return d;
        };
        const auto class_loss = [&](std::int32_t c, std::size_t out, std::size_t in) {
            double total = 0.0;
            for (std::size_t i = 0; i < 2; ++i) {
                double lo = 1e300, hi = -1e300;
                for (std::size_t q = 0; q < n; ++q) {
                    if ((groups[q] != c || q == out) && q != in) continue;
                    lo = std::min(lo, loss.row(static_cast<std::int32_t>(q))[i]);
                    hi = std::max(hi, loss.row(static_cast<std::int32_t>(q))[i]);
                }
                total += loss.cost(i, lo, hi);
            }
            return total;
        };
        const std::size_t none = n;
        for (std::size_t e = 0; e < result.swap_log.size(); e += 3) {
            const auto v = static_cast<std::size_t>(result.swap_log[e]);
            const auto w = static_cast<std::size_t>(result.swap_log[e + 1]);
            const std::int32_t home = groups[v];
            std::vector<std::int64_t> size(n / k, 0);
            for (const std::int32_t g : groups) ++size[static_cast<std::size_t>(g)];
            const auto allowed = [&](std::int32_t c) {
                return static_cast<std::int64_t>(allowed_neighbours(static_cast<std::size_t>(size[static_cast<std::size_t>(c)]), delta));
            };
            const std::int64_t own_v = count_in(v, home, none);
            std::int64_t best = -1, best_lambda = 0;
            double best_change = 0.0;
            for (std::size_t x = 0; x < n; ++x) {
                const std::int32_t away = groups[x];
                if (away == home) continue;
                const std::int64_t d_away = count_in(v, away, none);
                if (d_away > allowed(away)) continue;  // not movable
                const std::int64_t lambda = d_away - own_v + count_in(x, home, none) - count_in(x, away, none) -
                                            2 * (near(v, x) ? 1 : 0);
                if (lambda >= 0) continue;
                const double change = class_loss(home, v, x) + class_loss(away, x, v) -
                                      class_loss(home, none, none) - class_loss(away, none, none);
                if (best < 0 || change < best_change || (change == best_change && lambda < best_lambda)) {
                    best = static_cast<std::int64_t>(x);
                    best_change = change;
                    best_lambda = lambda;
                }
            }
            CHECK(best == static_cast<std::int64_t>(w));
            CHECK(best_lambda == result.swap_log[e + 2]);
            std::swap(groups[v], groups[w]);
        }
        // Where the loop stopped, no violation has an exchangeable partner: each was set
        // aside by a search that found none, or by one that another row of its value and
        // class made since the last swap (the loop's record of searches that found none).
        std::vector<std::int64_t> size(n / k, 0);
        for (const std::int32_t g : groups) ++size[static_cast<std::size_t>(g)];
        const auto allowed = [&](std::int32_t c) {
            return static_cast<std::int64_t>(allowed_neighbours(static_cast<std::size_t>(size[static_cast<std::size_t>(c)]), delta));
        };
        for (std::size_t v = 0; v < n; ++v) {
            const std::int32_t home = groups[v];
            const std::int64_t own_v = count_in(v, home, none);
            if (own_v <= allowed(home)) continue;
            ++stopped_violations;
            for (std::size_t x = 0; x < n; ++x) {
                const std::int32_t away = groups[x];
                if (away == home || count_in(v, away, none) > allowed(away)) continue;
                const std::int64_t lambda = count_in(v, away, none) - own_v + count_in(x, home, none) -
                                            count_in(x, away, none) - 2 * (near(v, x) ? 1 : 0);
                CHECK(lambda >= 0);
            }
        }
    }
    CHECK(stopped_violations > 0);  // the stopping state is tested
}

/// A search settled by the swap loop's record of searches that found no partner (another
/// row of the same value and class, since the last swap, covering the classes this one
/// examines) against every search reading its classes: the same swaps, set-asides, classes
/// examined and classes, with the paper's full scan and with a search limit whose budgets run
/// out (an infeasible table of few values, so that searches fail and repeat).
void test_swap_loop_settles_repeated_searches_exactly() {
    const std::size_t n = 3000, k = 10;
    const std::vector<double> sa = random_levels(n, 1, 2, 31);  // 0, 1/2, 1: the middle near all
    const Distance distance{Metric::L1, {1.0}, 1.0 / 2.0};
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    const Neighbours neighbours(table, graph);
    std::vector<std::int32_t> initial(n);
    for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>(r % (n / k));
    const LossModel no_loss;  // the colouring keeps a reference: not a temporary
    for (const std::size_t limit : {std::size_t{0}, std::size_t{4}}) {
        XColorOptions options;
        options.k = k;
        options.delta = 0.5;
        options.trace = true;
        options.threads = 1;
        options.search_limit = limit;
        const auto run = [&](bool settle_known) {
            Colouring colouring(table, neighbours, no_loss, options.delta, initial, 1);
            SwapLoop loop(colouring, options, SwapLoopShortcuts{settle_known, true});
            XColorResult result;
            loop.run(result);
            return std::make_tuple(result.swap_log, loop.set_aside_count(), loop.classes_examined(),
                                   colouring.class_ids(), loop.settled_searches());
        };
        const auto [log, aside, examined, classes, settled] = run(true);
        const auto [log_read, aside_read, examined_read, classes_read, settled_read] = run(false);
        CHECK(log == log_read && aside == aside_read && examined == examined_read && classes == classes_read);
        CHECK(settled > 0 && settled_read == 0);
        CHECK(log.size() >= 3 * 20);  // enough swaps to mean something
        // With the limit, retries and searches past it spent the budget of 2^18 classes.
        if (limit != 0) CHECK(examined > (std::int64_t{1} << 18));
    }
}

void test_specialize_against_brute_force() {
    // Taxonomy over 8 leaves: pairs under 4 nodes (8-11), those under 2 (12, 13), the root 14.
    for (std::size_t s : {std::size_t{1}, std::size_t{2}}) {
        const std::size_t n = 600, k = 5;
        const std::vector<double> sens = random_levels(n, s, 40, static_cast<unsigned>(17 + s));
        const std::vector<double> qi = two_column_qis(n, 5);
        const std::vector<double> weights(s, 1.0 / static_cast<double>(s));
        const Distance distance(Metric::L1, weights, 0.02);
        const ValueTable table = ValueTable::from_rows(sens.data(), n, s);
        const Neighbours nb = Neighbours::build(table, distance, s == 1 ? Structure::Sorted : Structure::Graph,
                                                kMaxGraphEntries);
        const LossModel loss = two_column_loss(qi);
        const std::vector<std::int32_t> keys = eight_leaf_keys();
        const MondrianParams params = dissimilarity_checks(k, 0.7);
        const std::vector<std::int32_t> whole(n, 0);
        const SpecializeResult result = specialize(loss, {keys, {}}, nb, whole, params);
        CHECK(result.splits > 0);
        CHECK(!result.stopped);
        // With almost no work allowed it stops early, and what it made keeps every invariant:
        // classes of k rows at least, distinct tuples, no more violating rows than before.
        const SpecializeResult hasty = specialize(loss, {keys, {}}, nb, whole, params, SpecializeTarget::Passing, 1);
        CHECK(hasty.stopped);
        CHECK(hasty.splits < result.splits);
        CHECK(brute_violating_rows(hasty.classes, sens, s, distance, params.delta) <=
              brute_violating_rows(whole, sens, s, distance, params.delta));
        CHECK(brute_violating_rows(result.classes, sens, s, distance, params.delta) == 0);
        CHECK(*std::max_element(result.classes.begin(), result.classes.end()) > 0);
        for (const SpecializeResult* made : {&result, &hasty}) {
            check_classes_apart(made->classes, qi, k, [](const std::vector<std::size_t>&) { return true; });
        }
    }
}

/// Classes speculated on in parallel and committed in order (specialize.hpp): 2 and 3
/// threads make the classes one thread makes, for the passing and the failing target, from
/// one class and from 50 (one per value of the numeric column), and where the work allowed
/// runs out midway (speculations then fail to hold and are run again).
void test_specialize_same_for_any_thread_count() {
    const std::size_t n = 4000, k = 5;
    const std::vector<double> qi = two_column_qis(n, 11);
    const LossModel loss = two_column_loss(qi);
    const std::vector<std::int32_t> keys = eight_leaf_keys();
    const Distance distance(Metric::L1, {1.0}, 0.02);
    std::vector<std::int32_t> bands(n);
    for (std::size_t r = 0; r < n; ++r) bands[r] = static_cast<std::int32_t>(qi[2 * r + 1]);
    const std::vector<std::int32_t> whole(n, 0);
    std::int64_t splits = 0;
    for (const SpecializeTarget target : {SpecializeTarget::Passing, SpecializeTarget::Failing}) {
        const bool failing = target == SpecializeTarget::Failing;
        // Failing: three crowded levels, every row violating at delta 0.8.
        const std::vector<double> sens = random_levels(n, 1, failing ? 2 : 40, 29);
        const ValueTable table = ValueTable::from_rows(sens.data(), n, 1);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        const MondrianParams params = dissimilarity_checks(k, failing ? 0.8 : 0.7);
        const std::vector<std::int32_t>* starts[] = {&whole, &bands};
        for (const std::vector<std::int32_t>* start : starts) {
            for (const std::size_t per_row : {std::size_t{4}, std::size_t{64}, kSpecializeWorkPerRow}) {
                const SpecializeResult one = specialize(loss, {keys, {}}, nb, *start, params, target, per_row, 1);
                splits += one.splits;
                for (const std::size_t threads : {std::size_t{2}, std::size_t{3}}) {
                    const SpecializeResult more = specialize(loss, {keys, {}}, nb, *start, params, target, per_row, threads);
                    CHECK(more.classes == one.classes && more.splits == one.splits && more.stopped == one.stopped);
                }
            }
        }
    }
    CHECK(splits > 1000);
}

/// The largest D_G(v) over a class's rows, times (|G| - 1) of `other`, compared by cross
/// products: whether risk(rows) <= risk(other) (docs/design/privacy-model.md), pair by pair.
bool brute_no_riskier(const std::vector<std::size_t>& rows, const std::vector<std::size_t>& other,
                      const std::vector<double>& sens, std::size_t s, const Distance& distance) {
    const auto worst = [&](const std::vector<std::size_t>& set) {
        std::int64_t most = 0;
        for (std::size_t a : set) {
            std::int64_t d = 0;
            for (std::size_t b : set) d += a != b && distance.within(&sens[a * s], &sens[b * s]);
            most = std::max(most, d);
        }
        return most;
    };
    return worst(rows) * (static_cast<std::int64_t>(other.size()) - 1) <=
           worst(other) * (static_cast<std::int64_t>(rows.size()) - 1);
}

void test_failing_specialize_against_brute_force() {
    // One class of every row on three crowded sensitive levels (a third of the rows each, so
    // every row violates at delta 0.8): the failing target may split it only into parts of k
    // rows with tuples of their own, each no riskier than the class, with no more violating
    // rows in all. Over the seeds some split must happen (random QIs leave some cuts even).
    std::int64_t splits = 0;
    for (unsigned seed = 0; seed < 24; ++seed) {
        const std::size_t n = 100 + 100 * (seed % 2), k = 5, s = 1 + seed / 12;
        const std::vector<double> sens = random_levels(n, s, 2, seed + 31);
        const std::vector<double> qi = two_column_qis(n, seed);
        const Distance distance(Metric::L1, std::vector<double>(s, 1.0 / static_cast<double>(s)), 0.02);
        const ValueTable table = ValueTable::from_rows(sens.data(), n, s);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        const LossModel loss = two_column_loss(qi);
        const std::vector<std::int32_t> keys = eight_leaf_keys();
        const MondrianParams params = dissimilarity_checks(k, 0.8);
        const std::vector<std::int32_t> whole(n, 0);
        const SpecializeResult result = specialize(loss, {keys, {}}, nb, whole, params, SpecializeTarget::Failing);
        splits += result.splits;
        CHECK(brute_violating_rows(result.classes, sens, s, distance, params.delta) <=
              brute_violating_rows(whole, sens, s, distance, params.delta));
        std::vector<std::size_t> all(n);
        for (std::size_t r = 0; r < n; ++r) all[r] = r;
        check_classes_apart(result.classes, qi, k, [&](const std::vector<std::size_t>& rows) {
            return brute_no_riskier(rows, all, sens, s, distance);
        });
    }
    CHECK(splits > 0);
}

void test_absorb_moves_rows_to_covering_classes() {
    // One coarse class (id 0, 60 rows over all four leaves of a two-level taxonomy: it
    // publishes the root) and four leaf classes of 3 rows; every row has its own far value.
    // With k = 3 the cap is 2k = 6 and takers may reach twice it: each leaf class takes 9
    // rows of its own leaf, and the coarse class keeps rows of the first and of the last leaf
    // (its tuple stays the root).
    const std::size_t n = 72;
    std::vector<double> qi(n), sens(n);
    std::vector<std::int32_t> classes(n);
    for (std::size_t r = 0; r < n; ++r) {
        const bool small = r < 12;
        qi[r] = static_cast<double>(small ? r / 3 : r % 4);
        classes[r] = small ? static_cast<std::int32_t>(r / 3 + 1) : 0;
        sens[r] = static_cast<double>(r) / static_cast<double>(n);
    }
    const Distance distance(Metric::L1, {1.0}, 0.001);
    const ValueTable table = ValueTable::from_rows(sens.data(), n, 1);
    const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
    const LossModel loss = four_leaf_loss(qi);
    const std::vector<std::int32_t> keys = four_leaf_keys();
    MondrianParams params;
    params.k = 3;
    params.dissimilarity = true;
    params.delta = 0.8;
    const std::size_t cap = absorb_cap(n, params.k);
    CHECK(cap == 6);
    std::vector<std::int32_t> after = classes;
    CHECK(absorb(loss, {keys}, nb, after, params, cap) == 36);
    std::vector<std::size_t> size(5, 0);
    std::int32_t lo = 4, hi = -1;
    for (std::size_t r = 0; r < n; ++r) {
        ++size[static_cast<std::size_t>(after[r])];
        if (after[r] > 0) CHECK(static_cast<double>(after[r] - 1) == qi[r]);  // its own leaf
        if (after[r] == 0) {
            lo = std::min(lo, static_cast<std::int32_t>(qi[r]));
            hi = std::max(hi, static_cast<std::int32_t>(qi[r]));
        }
    }
    CHECK(size == (std::vector<std::size_t>{24, 12, 12, 12, 12}));
    CHECK(lo == 0 && hi == 3);
    // Classes already at the takers' limit take nothing.
    std::vector<std::int32_t> full = after;
    CHECK(absorb(loss, {keys}, nb, full, params, cap) == 0);
    CHECK(full == after);
}

void test_absorb_from_failing_classes_against_brute_force() {
    // A coarse class over all four leaves of a two-level taxonomy whose rows crowd on a few
    // sensitive levels (it fails), beside leaf classes of its leaves, some failing too. With
    // failing givers, rows leave the coarse class for leaf classes that cover them; checked
    // pair by pair: every class keeps k rows and its tuple, no failing class is riskier than
    // it was (worst D over size - 1), passing classes pass, the table holds no more
    // violating rows, and the largest class does not grow. Without failing givers the
    // failing classes keep their rows. Over the seeds some rows must move.
    const Taxonomy tax(kFourLeaves, 4);
    std::int64_t moved_in_all = 0;
    for (unsigned seed = 0; seed < 400; ++seed) {
        std::mt19937 rng(seed);
        const std::size_t coarse = 40 + rng() % 40, per_leaf = 4 + rng() % 12, k = 3;
        const unsigned leaf_crowd = 1 + (seed / 5) % 6;  // in tenths
        const std::size_t n = coarse + 4 * per_leaf;
        const double delta = 0.5 + 0.1 * static_cast<double>(seed % 5);
        std::vector<double> qi(n), sens(n);
        std::vector<std::int32_t> classes(n);
        for (std::size_t r = 0; r < n; ++r) {
            const bool in_coarse = r < coarse;
            qi[r] = static_cast<double>(in_coarse ? r % 4 : (r - coarse) / per_leaf);
            classes[r] = in_coarse ? 0 : static_cast<std::int32_t>((r - coarse) / per_leaf + 1);
            // The coarse class: mostly two to four crowded levels; every class: some far
            // values. Every other seed, adjacent levels are neighbours too.
            const bool crowded = rng() % 10 < (in_coarse ? 7u : leaf_crowd);
            sens[r] = crowded ? 0.1 * static_cast<double>(rng() % (2 + seed % 3)) : 1.0 + static_cast<double>(r);
        }
        const Distance distance(Metric::L1, {1.0}, seed % 2 == 0 ? 0.001 : 0.15);
        const ValueTable table = ValueTable::from_rows(sens.data(), n, 1);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        const LossModel loss = four_leaf_loss(qi);
        const std::vector<std::int32_t> keys = four_leaf_keys();
        const MondrianParams params = dissimilarity_checks(k, delta);
        const std::size_t cap = absorb_cap(n, k);
        // Per class: rows, worst D, violating rows, its leaves' LCA (pair by pair).
        struct Seen { std::size_t size = 0; std::int64_t worst = 0, bad = 0; std::int32_t lo = 9, hi = -1; };
        const auto seen = [&](const std::vector<std::int32_t>& of) {
            std::vector<Seen> out(5);
            for (std::size_t a = 0; a < n; ++a) {
                Seen& c = out[static_cast<std::size_t>(of[a])];
                ++c.size;
                c.lo = std::min(c.lo, static_cast<std::int32_t>(qi[a]));
                c.hi = std::max(c.hi, static_cast<std::int32_t>(qi[a]));
            }
            for (std::size_t a = 0; a < n; ++a) {
                Seen& c = out[static_cast<std::size_t>(of[a])];
                std::int64_t d = 0;
                for (std::size_t b = 0; b < n; ++b) d += a != b && of[b] == of[a] && distance.within(&sens[a], &sens[b]);
                c.worst = std::max(c.worst, d);
                c.bad += d > allowed_neighbours(c.size, delta);
            }
            return out;
        };
        const std::vector<Seen> before = seen(classes);
        std::vector<std::int32_t> plain = classes;
        absorb(loss, {keys}, nb, plain, params, cap);
        std::vector<std::int32_t> after = classes;
        const std::int64_t moved = absorb(loss, {keys}, nb, after, params, cap, true);
        moved_in_all += moved;
        const std::vector<Seen> now = seen(after);
        std::int64_t bad_before = 0, bad_now = 0;
        std::size_t largest_before = 0, largest_now = 0;
        for (std::size_t c = 0; c < 5; ++c) {
            const Seen& b = before[c];
            const Seen& a = now[c];
            CHECK(a.size >= k);
            CHECK(tax.lca(a.lo, a.hi) == tax.lca(b.lo, b.hi));
            // A failing class is no riskier than it was; a passing one passes.
            if (b.bad > 0) CHECK(a.worst * static_cast<std::int64_t>(b.size - 1) <= b.worst * static_cast<std::int64_t>(a.size - 1));
            if (b.bad == 0) CHECK(a.bad == 0);
            bad_before += b.bad;
            bad_now += a.bad;
            largest_before = std::max(largest_before, b.size);
            largest_now = std::max(largest_now, a.size);
            if (b.bad > 0) {  // without failing givers, a failing class keeps its rows
                const auto id = static_cast<std::int32_t>(c);
                for (std::size_t r = 0; r < n; ++r) CHECK((classes[r] == id) == (plain[r] == id));
            }
        }
        CHECK(bad_now <= bad_before);
        CHECK(largest_now <= largest_before);
        std::int64_t changed = 0;
        for (std::size_t r = 0; r < n; ++r) changed += after[r] != classes[r];
        CHECK(changed == moved);
    }
    CHECK(moved_in_all > 0);
}

}  // namespace

void test_absorb_is_the_same_over_any_structure() {
    // The giving class's counts change by its values' adjacency lists over a graph, and by
    // adjacency tests over the values it holds elsewhere: the same rows move, over a graph
    // and over the sorted values of one column, and no class it leaves fails. A coarse class
    // of 360 rows (the root tuple) over four leaf classes of 3 rows; 120 value levels with
    // neighbours 2 levels apart, so values repeat and the coarse class holds more values
    // than one has neighbours.
    const std::vector<std::int32_t> parent{4, 4, 5, 5, 6, 6, -1};
    const std::size_t n = 372;
    std::vector<double> qi(n);
    std::vector<std::int32_t> classes(n);
    for (std::size_t r = 0; r < n; ++r) {
        const bool small = r < 12;
        qi[r] = static_cast<double>(small ? r / 3 : r % 4);
        classes[r] = small ? static_cast<std::int32_t>(r / 3 + 1) : 0;
    }
    const std::vector<double> sens = random_levels(n, 1, 120, 57);
    const Distance distance(Metric::L1, {1.0}, 2.0 / 120);
    const ValueTable table = ValueTable::from_rows(sens.data(), n, 1);
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(parent, 4));
    const LossModel loss(qi.data(), n, 1, std::move(taxonomies));
    std::vector<std::int32_t> keys(parent.size());
    for (std::size_t v = 0; v < keys.size(); ++v) keys[v] = static_cast<std::int32_t>(v);
    const MondrianParams params = dissimilarity_checks(3, 0.9);
    CHECK(brute_violating_rows(classes, sens, 1, distance, params.delta) == 0);
    std::vector<std::vector<std::int32_t>> made;
    std::vector<std::int64_t> moved;
    for (const Structure structure : {Structure::Graph, Structure::Sorted}) {
        const Neighbours nb = Neighbours::build(table, distance, structure, kMaxGraphEntries);
        made.push_back(classes);
        moved.push_back(absorb(loss, {keys}, nb, made.back(), params, absorb_cap(n, params.k)));
        CHECK(brute_violating_rows(made.back(), sens, 1, distance, params.delta) == 0);
    }
    CHECK(moved[0] > 12);
    CHECK(moved[0] == moved[1]);
    CHECK(made[0] == made[1]);
    // At delta 0.97 the coarse class fails: as a failing giver it moves the same rows over
    // either structure, with the checks' budget plentiful or spent midway (they charge the
    // same whatever the structure).
    const MondrianParams strict = dissimilarity_checks(3, 0.97);
    CHECK(brute_violating_rows(classes, sens, 1, distance, strict.delta) > 0);
    for (const std::size_t per_row : {kFailingTestsPerRow, std::size_t{2}}) {
        made.clear();
        moved.clear();
        for (const Structure structure : {Structure::Graph, Structure::Sorted}) {
            const Neighbours nb = Neighbours::build(table, distance, structure, kMaxGraphEntries);
            made.push_back(classes);
            moved.push_back(absorb(loss, {keys}, nb, made.back(), strict, absorb_cap(n, strict.k), true, per_row));
        }
        CHECK(moved[0] > 0);
        CHECK(moved[0] == moved[1]);
        CHECK(made[0] == made[1]);
    }
}

void test_exchange_keeps_sensitive_multisets() {
    // 60 rows, one numeric QI and one deep-taxonomy QI, 3 sensitive values, groups of 5 in a
    // random order: the exchange keeps every group's size and multiset of sensitive ids.
    std::mt19937 rng(7);
    const std::size_t n = 60;
    std::vector<double> qi(2 * n);
    std::vector<std::int64_t> ids(n), groups(n);
    for (std::size_t r = 0; r < n; ++r) {
        qi[2 * r] = static_cast<double>(rng() % 6);
        qi[2 * r + 1] = static_cast<double>(rng() % 4);
        ids[r] = static_cast<std::int64_t>(rng() % 3);
        groups[r] = static_cast<std::int64_t>(r / 5);
    }
    std::shuffle(groups.begin(), groups.end(), rng);
    std::vector<std::optional<Taxonomy>> taxonomies(2);
    taxonomies[1].emplace(Taxonomy({4, 4, 5, 5, 6, 6, -1}, 4));
    const std::vector<std::int64_t> out = spread_equal_tuples(groups, qi.data(), 2, taxonomies, ids, {});
    CHECK(out.size() == n);
    CHECK(out != groups);
    for (std::int64_t g = 0; g < 12; ++g) {
        std::vector<std::int64_t> before, after;
        for (std::size_t r = 0; r < n; ++r) {
            if (groups[r] == g) before.push_back(ids[r]);
            if (out[r] == g) after.push_back(ids[r]);
        }
        std::sort(before.begin(), before.end());
        std::sort(after.begin(), after.end());
        CHECK(before == after);
    }
    // A code that is not finite is refused, naming its row and column.
    qi[2 * 17 + 1] = std::numeric_limits<double>::quiet_NaN();
    std::string message;
    try {
        spread_equal_tuples(groups, qi.data(), 2, taxonomies, ids, {});
    } catch (const std::invalid_argument& error) {
        message = error.what();
    }
    CHECK(message.find("row 17, column 1") != std::string::npos);
}

void test_orderings_against_sorting() {
    std::mt19937_64 rng(11);
    for (const std::size_t n : {0, 1, 2, 7, 1000, 5000}) {
        for (const int spread : {0, 3, 100, 1 << 30, -1}) {  // -1: any 64-bit key, negative doubles
            std::vector<std::uint64_t> keys(n);
            for (auto& k : keys) {
                if (spread < 0) k = proxanon::ordered_bits(std::normal_distribution<double>(0.0, 1e6)(rng));
                else k = spread == 0 ? 42 : 1000 + rng() % static_cast<std::uint64_t>(spread);
            }
            std::vector<std::int64_t> expected(n);
            for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<std::int64_t>(i);
            std::stable_sort(expected.begin(), expected.end(), [&](std::int64_t a, std::int64_t b) {
                return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)];
            });
            CHECK(proxanon::radix_order(keys) == expected);
            std::vector<std::uint64_t> sorted = keys, spare;
            proxanon::radix_sort(sorted, spare);
            CHECK(std::is_sorted(sorted.begin(), sorted.end()));
            CHECK(std::is_permutation(sorted.begin(), sorted.end(), keys.begin()));
            std::vector<std::uint32_t> rank;
            const std::size_t distinct = proxanon::dense_ranks(keys, rank);
            std::vector<std::uint64_t> uniques = keys;
            std::sort(uniques.begin(), uniques.end());
            uniques.erase(std::unique(uniques.begin(), uniques.end()), uniques.end());
            CHECK(distinct == uniques.size());
            bool ranks_ok = rank.size() == n;
            for (std::size_t i = 0; i < n && ranks_ok; ++i) {
                ranks_ok = uniques[rank[i]] == keys[i];
            }
            CHECK(ranks_ok);
        }
    }
    CHECK(proxanon::ordered_bits(-0.0) == proxanon::ordered_bits(0.0));
    CHECK(proxanon::ordered_bits(-1.5) < proxanon::ordered_bits(-1.0));
    CHECK(proxanon::ordered_bits(-1.0) < proxanon::ordered_bits(2.0));
}

void test_tuple_counts_and_key_set_against_std_maps() {
    std::mt19937_64 rng(5);
    proxanon::TupleCounts counts(4);
    proxanon::KeySet keys;
    std::map<std::vector<double>, std::int64_t> expected;
    std::set<std::uint64_t> expected_keys;
    for (int step = 0; step < 20000; ++step) {
        std::vector<double> t(4);
        for (double& x : t) x = static_cast<double>(rng() % 5) - 2.0;
        if (rng() % 7 == 0) t[0] = -0.0 * t[0];  // -0.0 and 0.0 are one tuple
        const std::int64_t delta = static_cast<std::int64_t>(rng() % 3) - 1;
        counts.add(t, delta);
        for (double& x : t) x = x + 0.0;
        expected[t] += delta;
        const std::uint64_t key = rng() % 3000;  // key 0 included: it stands for 1
        const std::uint64_t as = key == 0 ? 1 : key;
        if (rng() % 2) {
            keys.insert(key);
            expected_keys.insert(as);
        }
        CHECK(keys.contains(key) == (expected_keys.count(as) == 1));
    }
    bool same = counts.keys() == expected.size();
    for (const auto& [t, c] : expected) same = same && counts.get(t) == c;
    CHECK(same);
    CHECK(counts.get({9.0, 9.0, 9.0, 9.0}) == 0);
    // A set started small (the exchange step's per-remainder sets) grows and keeps every key.
    proxanon::KeySet small(2);
    for (std::uint64_t key = 1; key <= 100; ++key) small.insert(key * 7);
    bool all_found = true;
    for (std::uint64_t key = 1; key <= 100; ++key) all_found = all_found && small.contains(key * 7) && !small.contains(key * 7 + 1);
    CHECK(all_found);
    bool refused = false;
    try {
        proxanon::KeySet odd(12);
    } catch (const std::invalid_argument&) {
        refused = true;
    }
    CHECK(refused);
    // index(): tuples numbered densely in the order they were first added.
    proxanon::TupleCounts numbered(2);
    CHECK(numbered.index({1.0, 2.0}) == 0);
    CHECK(numbered.index({3.0, 4.0}) == 1);
    CHECK(numbered.index({-0.0, 2.0}) == 2);
    CHECK(numbered.index({1.0, 2.0}) == 0);
    CHECK(numbered.index({0.0, 2.0}) == 2);
    CHECK(numbered.keys() == 3 && numbered.get({3.0, 4.0}) == 0);
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

void test_measure_shed_against_measure() {
    // PartChecker::measure_shed leaves what measure() of the rows left gives: the verdict,
    // t(G), the values present with their counts and D, and the work counted. Over a sparse
    // graph (adjacency lists read) and a dense one (pairs of present values tested).
    for (const double epsilon : {0.04, 0.6}) {
        const std::size_t n = 800, s = 2;
        const std::vector<double> rows = random_levels(n, s, 60, 41);
        const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
        const Distance distance(Metric::L1, {0.5, 0.5}, epsilon);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        const MondrianParams params = dissimilarity_checks(5, 0.7);
        PartChecker shedding(nb, params), fresh(nb, params);
        std::mt19937 rng(static_cast<unsigned>(epsilon * 1000));
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<std::int32_t> piece;
            for (std::size_t r = 0; r < n; ++r) {
                if (rng() % 2 == 0) piece.push_back(static_cast<std::int32_t>(r));
            }
            shedding.measure(piece.data(), piece.data() + piece.size());
            while (piece.size() > 10) {
                // Shed the last x rows of a few present values, as a peeling round does.
                std::vector<std::pair<std::int32_t, std::int64_t>> shed;
                for (const std::int32_t u : shedding.present()) {
                    if (rng() % 4 == 0) shed.emplace_back(u, 1 + static_cast<std::int64_t>(rng() % shedding.count(u)));
                }
                std::map<std::int32_t, std::int64_t> left(shed.begin(), shed.end());
                std::vector<std::int32_t> kept;
                for (std::size_t i = piece.size(); i-- > 0;) {
                    auto it = left.find(shedding.value_of(piece[i]));
                    if (it != left.end() && it->second > 0) --it->second; else kept.push_back(piece[i]);
                }
                piece.assign(kept.rbegin(), kept.rend());
                const std::size_t work_shed = shedding.work(), work_fresh = fresh.work();
                const std::int64_t got = shedding.measure_shed(shed, piece.size());
                CHECK(got == fresh.measure(piece.data(), piece.data() + piece.size()));
                CHECK(shedding.work() - work_shed == fresh.work() - work_fresh);
                CHECK(shedding.allowed() == fresh.allowed());
                std::set<std::int32_t> a(shedding.present().begin(), shedding.present().end());
                std::set<std::int32_t> b(fresh.present().begin(), fresh.present().end());
                CHECK(a == b && a.size() == shedding.present().size());
                for (const std::int32_t u : b) {
                    CHECK(shedding.count(u) == fresh.count(u));
                    CHECK(shedding.degree(u) == fresh.degree(u));
                }
            }
        }
    }
}

void test_relief_against_brute_force() {
    // A peeling round's relief (part_check.hpp) on a line (sorted, and a graph over the same
    // one component), over a graph off a line and by pair tests in two components: the rows
    // shed before each violating value among its neighbours, as brute force counts them.
    for (const std::size_t s : {std::size_t{1}, std::size_t{2}}) {
        const std::size_t n = 900;
        const std::vector<double> rows = random_levels(n, s, 300, static_cast<unsigned>(31 + s));
        const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
        const std::vector<double> weights(s, 1.0 / static_cast<double>(s));
        const Distance distance(Metric::L1, weights, 4.0 / 300);  // neighbours exactly epsilon apart
        for (const Structure structure : {Structure::Sorted, Structure::Graph, Structure::Grid}) {
            if (s == 1 && structure == Structure::Grid) continue;
            if (s == 2 && structure == Structure::Sorted) continue;
            const Neighbours nb = Neighbours::build(table, distance, structure, kMaxGraphEntries);
            MondrianParams params;
            const PartChecker check(nb, params);
            CHECK(check.on_a_line() == (structure == Structure::Sorted) || structure == Structure::Graph);
            std::mt19937 rng(3);
            std::vector<std::pair<std::int64_t, std::int32_t>> violating;
            for (std::size_t u = 0; u < table.size(); ++u) {
                if (rng() % 3 == 0) violating.emplace_back(-static_cast<std::int64_t>(rng() % 50), static_cast<std::int32_t>(u));
            }
            std::sort(violating.begin(), violating.end());
            std::vector<std::int64_t> shed_rows;
            Relief relief(check, violating, std::size_t{1} << 30, shed_rows);
            std::vector<std::pair<std::int32_t, std::int64_t>> shed;
            for (const auto& [minus, w] : violating) {
                std::int64_t want = 0;
                for (const auto& [u, x] : shed) {
                    if (distance.within(table.value(static_cast<std::size_t>(u)), table.value(static_cast<std::size_t>(w)))) want += x;
                }
                CHECK(relief.of(w) == want);
                if (rng() % 2 == 0) {
                    const auto x = static_cast<std::int64_t>(1 + rng() % 4);
                    shed.emplace_back(w, x);
                    relief.shed(w, x);
                }
            }
        }
    }
}

int main() {
    test_relief_against_brute_force();
    test_measure_shed_against_measure();
    test_line_runs_hold_their_own_value();
    test_one_component_class_counts_against_brute_force();
    test_distance_tolerance();
    test_value_table_and_graph_against_brute_force();
    test_min_component_graph_against_brute_force();
    test_stronger_repair_and_suppression();
    test_excess_descent_stops_on_its_work_budget();
    test_class_tally_is_kept_until_its_class_changes();
    test_outward_covers_every_other_class_near_home_first();
    test_initialize_is_equitable();
    test_queue_order();
    test_group_extremes();
    test_taxonomy_cost();
    test_taxonomy_cost_of_every_range();
    test_taxonomy_refuses_leaves_out_of_order();
    test_qi_start_is_local_and_equitable();
    test_qi_order_is_the_same_for_any_thread_count();
    test_xcolor_satisfies_and_lowers_potential();
    test_every_part_against_brute_force();
    test_neighbour_count_against_brute_force();
    test_graph_at_floating_point_extremes();
    test_box_tree_against_brute_force();
    test_interrupt_unwinds_a_run();
    test_quick_stop_needs_no_slow_hook();
    test_swap_loop_takes_the_least_loss_partner();
    test_swap_loop_settles_repeated_searches_exactly();
    test_specialize_against_brute_force();
    test_failing_specialize_against_brute_force();
    test_specialize_same_for_any_thread_count();
    test_absorb_moves_rows_to_covering_classes();
    test_absorb_is_the_same_over_any_structure();
    test_absorb_from_failing_classes_against_brute_force();
    test_exchange_keeps_sensitive_multisets();
    test_orderings_against_sorting();
    test_tuple_counts_and_key_set_against_std_maps();
    test_class_counts_paths_against_brute_force();
    test_passing_start_skips_the_colouring();
    if (failures == 0) std::puts("all C++ core tests passed");
    return failures == 0 ? 0 : 1;
}
