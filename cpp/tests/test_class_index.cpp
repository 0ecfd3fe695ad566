// C++ unit tests of the colouring's index of large classes (colouring.hpp, count_near) and of
// the swap loop's refresh of the rows that can need it (swap_loop.hpp), with no Python: run
// by ctest. Over the sorted structure a class of Colouring::kIndexedRows rows
// or more keeps its members in value order; its counts, the rows' own counts and the swap
// loop's choices are checked against counts made row by row and against the same run over
// the graph, which keeps no index.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/swap_loop.hpp"
#include "check.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

constexpr std::size_t kRows = 3000, kClasses = 6;  // classes of 500 rows: indexed

/// Values on 401 levels, two rows in five crowded on seven of them (so that large classes
/// violate and their spread rows are partners), epsilon three levels.
std::vector<double> crowded_levels() {
    std::vector<double> rows = random_levels(kRows, 1, 400, 41);
    for (std::size_t r = 0; r < kRows; ++r) {
        if (r % 5 < 2) rows[r] = static_cast<double>(200 + r % 7) / 400;
    }
    return rows;
}

struct Table {
    std::vector<double> rows = crowded_levels();
    Distance distance{Metric::L1, {1.0}, 3.0 / 400};
    ValueTable table = ValueTable::from_rows(rows.data(), kRows, 1);
};

/// Rows of class c (but `skip`) within epsilon of value a, counted row by row.
std::int32_t count_of(const Colouring& col, std::size_t c, std::int32_t a, std::int32_t skip = -1) {
    std::int32_t count = 0;
    for (std::size_t r = 0; r < col.rows(); ++r) {
        const auto row = static_cast<std::int32_t>(r);
        count += row != skip && col.class_of(row) == static_cast<std::int32_t>(c) && col.adjacent(a, col.value_of(row));
    }
    return count;
}

/// count_near, tally_count and every row's own count against counts made row by row, and the
/// potential against their sum, through swaps, detaches and attaches, a class shrinking
/// below kIndexedRows and growing back among them.
void test_indexed_counts_against_brute_force() {
    const Table t;
    const Neighbours sorted = Neighbours::build(t.table, t.distance, Structure::Sorted, 1u << 24);
    CHECK(sorted.structure() == Structure::Sorted);
    std::vector<std::int32_t> initial(kRows);
    for (std::size_t r = 0; r < kRows; ++r) initial[r] = static_cast<std::int32_t>(r % kClasses);
    const LossModel no_loss;  // the colouring keeps a reference: not a temporary
    Colouring col(t.table, sorted, no_loss, 0.8, initial, 1);
    std::mt19937_64 rng(7);
    const auto values = static_cast<std::int32_t>(t.table.size());
    const auto check_all = [&] {
        std::int64_t potential = 0;
        for (std::size_t r = 0; r < kRows; ++r) {
            const auto row = static_cast<std::int32_t>(r);
            const std::int32_t c = col.class_of(row);
            if (c < 0) continue;
            const std::int32_t own = count_of(col, static_cast<std::size_t>(c), col.value_of(row), row);
            CHECK(col.own(row) == own);
            potential += own;
        }
        CHECK(col.potential() * 2 == potential);
    };
    const auto check_class = [&](std::size_t c) {
        if (const auto* index = col.index_of(c)) {  // the members, in ascending (value, row)
            std::vector<Colouring::Entry> members;
            for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) members.emplace_back(col.value_of(*p), *p);
            std::sort(members.begin(), members.end());
            CHECK(*index == members);
        }
        const std::int32_t skip = col.size(c) > 0 ? col.begin(c)[rng() % col.size(c)] : -1;
        col.tally_class(c, skip);
        for (int i = 0; i < 20; ++i) {
            const auto a = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(values));
            CHECK(col.count_near(c, a) == count_of(col, c, a));
            CHECK(col.tally_count(a) == count_of(col, c, a, skip));
        }
    };
    for (std::size_t c = 0; c < kClasses; ++c) {
        check_class(c);
        CHECK(col.index_of(c) != nullptr);  // large: indexed once counted
    }
    std::vector<std::int32_t> out;  // rows detached from class 0, to come back
    for (int step = 0; step < 600; ++step) {
        const std::size_t c = rng() % kClasses;
        const std::size_t other = (c + 1 + rng() % (kClasses - 1)) % kClasses;
        const std::int32_t v = col.begin(c)[rng() % col.size(c)];
        const std::int32_t w = col.begin(other)[rng() % col.size(other)];
        switch (step < 300 ? rng() % 3 : 3) {
        case 0: {  // a swap, with Lambda and D_V'(v) after it counted row by row
            const std::int32_t a = col.value_of(v), b = col.value_of(w);
            const std::int32_t v_after = count_of(col, other, a, w);
            const std::int64_t lambda = std::int64_t{v_after} - count_of(col, c, a, v) +
                                        count_of(col, c, b, v) - count_of(col, other, b, w);
            col.swap(v, w, lambda, v_after);
            break;
        }
        case 1:
            col.detach(v);
            col.attach(v, other);
            break;
        case 2:
            if (c == 0) {
                col.detach(v);
                out.push_back(v);
            }
            break;
        default:  // class 0 shrinks below kIndexedRows, then takes the rows back
            if (step < 500) {
                for (int i = 0; i < 2 && col.size(0) > 20; ++i) {
                    const std::int32_t x = col.begin(0)[rng() % col.size(0)];
                    col.detach(x);
                    out.push_back(x);
                }
                if (step == 499) CHECK(col.size(0) < Colouring::kIndexedRows);
            } else if (!out.empty()) {
                col.attach(out.back(), 0);
                out.pop_back();
            }
            break;
        }
        if (step % 25 == 0) {
            check_class(c);
            check_class(0);
            check_all();
        }
    }
    CHECK(col.index_of(0) != nullptr);
    check_class(0);
    check_all();
}

/// The swap loop over the sorted structure (large classes indexed, each movable class read
/// in value order) against the graph (no index, read row by row), each with and without the
/// refresh that reads only the rows that can need it: the same swaps, set-asides, classes
/// examined and colouring, with and without a loss model and a search limit, over classes of
/// 500 rows (indexed) and of 10 (not), three seeds.
void test_swap_loop_is_the_same_with_the_shortcuts() {
    for (const unsigned seed : {41u, 42u, 43u}) {
        std::vector<double> rows = crowded_levels();
        std::mt19937 shuffle(seed);
        std::shuffle(rows.begin(), rows.end(), shuffle);
        const ValueTable table = ValueTable::from_rows(rows.data(), kRows, 1);
        const Distance distance{Metric::L1, {1.0}, 3.0 / 400};
        const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
        const Neighbours over_graph(table, graph);
        const Neighbours sorted = Neighbours::build(table, distance, Structure::Sorted, 1u << 24);
        std::mt19937 rng(seed);
        std::vector<double> qi(kRows * 2);
        for (double& x : qi) x = static_cast<double>(rng() % 12);
        std::vector<std::optional<Taxonomy>> none(2);
        const LossModel priced(qi.data(), kRows, 2, std::move(none));
        const LossModel no_loss;
        for (const bool large : {true, false}) {
            // Large: the crowded rows start in classes 0 and 1, the others in 2 .. 5, and swaps
            // spread them. Small: 300 classes of 10 rows in row order.
            std::vector<std::int32_t> initial(kRows);
            for (std::size_t r = 0; r < kRows; ++r) {
                const bool crowded = rows[r] >= 200.0 / 400 && rows[r] <= 206.0 / 400;
                initial[r] = static_cast<std::int32_t>(large ? (crowded ? r % 2 : 2 + r % 4) : r / 10);
            }
            for (const LossModel* loss : {&no_loss, &priced}) {
                for (const std::size_t limit : {std::size_t{0}, std::size_t{3}}) {
                    XColorOptions options;
                    options.k = 10;
                    options.delta = 0.8;
                    options.trace = true;
                    options.threads = 1;
                    options.search_limit = limit;
                    const auto run = [&](const Neighbours& nb, bool crossed) {
                        Colouring colouring(table, nb, *loss, options.delta, initial, 1);
                        SwapLoop loop(colouring, options, SwapLoopShortcuts{true, crossed});
                        XColorResult result;
                        loop.run(result);
                        return std::make_tuple(result.swap_log, loop.set_aside_count(), loop.classes_examined(),
                                               colouring.class_ids(), colouring.potential());
                    };
                    const auto reference = run(over_graph, false);
                    CHECK(run(over_graph, true) == reference);
                    CHECK(run(sorted, false) == reference);
                    CHECK(run(sorted, true) == reference);
                    CHECK(std::get<0>(reference).size() >= 3 * 20);  // enough swaps to mean something
                }
            }
        }
    }
}

}  // namespace

int main() {
    test_indexed_counts_against_brute_force();
    test_swap_loop_is_the_same_with_the_shortcuts();
    if (failures == 0) std::puts("all C++ class index tests passed");
    return failures == 0 ? 0 : 1;
}
