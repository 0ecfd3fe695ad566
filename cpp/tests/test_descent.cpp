// C++ unit tests of the excess descent (excess_descent.hpp) and of the colouring state its
// moves keep, with no Python: run by ctest. Every move the descent makes is replayed on a
// colouring of its own, and the change of the total excess E it recorded is checked against
// E counted by brute force before and after.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "proxanon/colouring.hpp"
#include "proxanon/loss.hpp"
#include "proxanon/excess_descent.hpp"
#include "proxanon/neighbour_graph.hpp"
#include "proxanon/neighbours.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

/// E = sum over rows of max(0, D - t) of a class assignment (-1: left out), every D counted
/// by testing every pair of rows of a class; t from the class's size.
std::int64_t brute_excess(const ValueTable& table, const Distance& distance,
                          const std::vector<std::int32_t>& classes, double delta) {
    const std::size_t n = classes.size();
    std::vector<std::size_t> size;
    for (const std::int32_t c : classes) {
        if (c < 0) continue;
        if (static_cast<std::size_t>(c) >= size.size()) size.resize(static_cast<std::size_t>(c) + 1, 0);
        ++size[static_cast<std::size_t>(c)];
    }
    std::int64_t excess = 0;
    for (std::size_t r = 0; r < n; ++r) {
        if (classes[r] < 0) continue;
        const double* x = table.value(static_cast<std::size_t>(table.row_value[r]));
        std::int64_t d = 0;
        for (std::size_t q = 0; q < n; ++q) {
            if (q != r && classes[q] == classes[r] &&
                distance.within(x, table.value(static_cast<std::size_t>(table.row_value[q])))) {
                ++d;
            }
        }
        const std::int64_t t = allowed_neighbours(size[static_cast<std::size_t>(classes[r])], delta);
        if (d > t) excess += d - t;
    }
    return excess;
}

/// 360 rows on 30 levels of [0, 1] (a level's neighbours are the levels next to it), 150 of
/// them on three crowded levels, dealt into classes of 40 to 120 rows: large classes whose
/// values repeat, many rows over their allowance. The descent runs over the stored graph and
/// over the sorted structure, without a loss model and with one over two QIs of few values
/// (its swaps then are chosen among equal changes of E by their loss), its moves traced;
/// each move replayed must change E by what it recorded, lower it, and leave every class at
/// k rows or more.
void test_descent_moves_change_the_excess_as_recorded() {
    const std::size_t n = 360;
    const Distance distance(Metric::L1, {1.0}, 0.04);
    std::mt19937 rng(21);
    for (const int layout : {0, 1, 2}) {
        std::vector<double> rows(n);
        std::uniform_int_distribution<int> level(0, 29);
        for (std::size_t r = 0; r < n; ++r) {
            const int at = r < 150 ? static_cast<int>(10 + 3 * (r % 3)) : level(rng);
            rows[r] = at / 29.0;
        }
        const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
        std::vector<std::int32_t> initial(n);
        const std::size_t classes = layout == 0 ? 3 : layout == 1 ? 6 : 9;
        for (std::size_t r = 0; r < n; ++r) {
            initial[r] = static_cast<std::int32_t>(layout == 2 ? (r * 7 + r / 11) % classes : r % classes);
        }
        std::vector<double> qi(2 * n);
        std::uniform_int_distribution<int> code(0, 4);
        for (double& x : qi) x = code(rng);
        const LossModel qi_loss(qi.data(), n, 2);
        const LossModel no_loss;  // the colouring keeps a reference: not a temporary
        for (const int structure : {0, 1, 2}) {
            const bool graph = structure != 1;
            const LossModel& loss = structure == 2 ? qi_loss : no_loss;
            const Neighbours neighbours = graph
                ? Neighbours(table, NeighbourGraph::build(table, distance, 1u << 24))
                : Neighbours::build(table, distance, Structure::Sorted, 1u << 24);
            XColorOptions params;
            params.k = 10;
            params.delta = 0.8;
            params.trace = true;
            Colouring colouring(table, neighbours, loss, params.delta, initial, 1);
            XColorResult result;
            ExcessDescent descent(colouring, params);
            descent.run(result);
            CHECK(descent.moves() > 0);
            CHECK(result.move_log.size() == 4 * static_cast<std::size_t>(descent.moves()));
            // Replay: a swap sends v to the class recorded and its partner to v's class; a
            // transfer (partner -1) moves v alone.
            std::vector<std::int32_t> now = initial;
            std::int64_t excess = brute_excess(table, distance, now, params.delta);
            for (std::size_t i = 0; i < result.move_log.size(); i += 4) {
                const auto v = static_cast<std::size_t>(result.move_log[i]);
                const std::int64_t partner = result.move_log[i + 1];
                const auto to = static_cast<std::int32_t>(result.move_log[i + 2]);
                const std::int64_t change = result.move_log[i + 3];
                if (partner >= 0) now[static_cast<std::size_t>(partner)] = now[v];
                now[v] = to;
                const std::int64_t after = brute_excess(table, distance, now, params.delta);
                CHECK(after - excess == change);
                CHECK(change < 0);
                excess = after;
            }
            CHECK(now == colouring.class_ids());
            std::vector<std::size_t> size(classes, 0);
            for (const std::int32_t c : now) ++size[static_cast<std::size_t>(c)];
            for (const std::size_t s : size) CHECK(s >= params.k);
        }
    }
}


/// The colouring's extremes are computed when read after a change: through detaches and
/// attaches (the descent's and suppression's moves) and swaps, read at random moments, each
/// class's extremes give the loss, and each member's departure, of extremes computed afresh
/// from its members.
void test_extremes_are_current_when_read() {
    const std::size_t n = 240;
    std::mt19937 rng(8);
    std::vector<double> rows(n), qi(3 * n);
    std::uniform_int_distribution<int> level(0, 19), code(0, 9);
    for (double& x : rows) x = level(rng) / 19.0;
    for (double& x : qi) x = code(rng);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
    const Distance distance(Metric::L1, {1.0}, 0.06);
    const Neighbours neighbours(table, NeighbourGraph::build(table, distance, 1u << 24));
    const LossModel loss(qi.data(), n, 3);
    std::vector<std::int32_t> initial(n);
    for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>(r % 12);
    Colouring col(table, neighbours, loss, 0.8, initial, 2);
    const auto check = [&](std::size_t c) {
        GroupExtremes fresh;
        fresh.compute(loss, col.begin(c), col.size(c));
        CHECK(col.extremes(c).loss() == fresh.loss());
        for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) {
            CHECK(col.extremes(c).departure(loss, loss.row(*p)) == fresh.departure(loss, loss.row(*p)));
        }
    };
    for (std::size_t c = 0; c < 12; ++c) check(c);
    for (int move = 0; move < 300; ++move) {
        const std::size_t c = rng() % 12, other = (c + 1 + rng() % 11) % 12;
        const std::int32_t v = col.begin(c)[rng() % col.size(c)];
        const std::int32_t w = col.begin(other)[rng() % col.size(other)];
        if (rng() % 2 == 0) {
            col.detach(v);
            col.detach(w);
            col.attach(v, other);
            col.attach(w, c);
        } else if (col.size(c) > 12) {
            col.detach(v);
            col.attach(v, other);
        }
        if (rng() % 3 == 0) check(rng() % 2 == 0 ? c : other);
    }
    for (std::size_t c = 0; c < 12; ++c) check(c);
}
}  // namespace

int main() {
    test_descent_moves_change_the_excess_as_recorded();
    test_extremes_are_current_when_read();
    if (failures == 0) std::puts("all C++ descent tests passed");
    return failures == 0 ? 0 : 1;
}
