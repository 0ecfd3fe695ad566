// C++ unit tests of the excess descent (excess_descent.hpp) and of the colouring state its
// moves keep, with no Python: run by ctest. Every move the descent makes is replayed on a
// colouring of its own, and the change of the total excess E it recorded is checked against
// E counted by brute force before and after.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/xcolor/excess_descent.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

/// E over the members of one class: sum of max(0, D - t), every D counted by testing every
/// pair of its rows with the distance itself; t from its size.
std::int64_t class_excess(const ValueTable& table, const Distance& distance,
                          const std::vector<std::int32_t>& members, double delta) {
    const std::int64_t t = allowed_neighbours(members.size(), delta);
    const auto value = [&](std::int32_t row) {
        return table.value(static_cast<std::size_t>(table.row_value[static_cast<std::size_t>(row)]));
    };
    std::int64_t excess = 0;
    for (const std::int32_t y : members) {
        std::int64_t d = 0;
        for (const std::int32_t x : members) d += x != y && distance.within(value(x), value(y));
        if (d > t) excess += d - t;
    }
    return excess;
}

/// E of a class assignment (-1: left out): class_excess summed over its classes.
std::int64_t brute_excess(const ValueTable& table, const Distance& distance,
                          const std::vector<std::int32_t>& classes, double delta) {
    std::vector<std::vector<std::int32_t>> members;
    for (std::size_t r = 0; r < classes.size(); ++r) {
        if (classes[r] < 0) continue;
        const auto c = static_cast<std::size_t>(classes[r]);
        if (c >= members.size()) members.resize(c + 1);
        members[c].push_back(static_cast<std::int32_t>(r));
    }
    std::int64_t excess = 0;
    for (const auto& rows : members) excess += class_excess(table, distance, rows, delta);
    return excess;
}

/// The descent's options of these tests: k = 10, delta = 0.8, moves traced.
XColorOptions traced_options() {
    XColorOptions params;
    params.k = 10;
    params.delta = 0.8;
    params.trace = true;
    return params;
}

/// The descent run over the classes `initial` (traced_options): its result, with the move
/// log, and the classes it leaves in `after`.
XColorResult traced_descent(const ValueTable& table, const Neighbours& neighbours, const LossModel& loss,
                            const std::vector<std::int32_t>& initial, std::vector<std::int32_t>& after) {
    const XColorOptions params = traced_options();
    Colouring colouring(table, neighbours, loss, params.delta, initial, 1);
    XColorResult result;
    ExcessDescent descent(colouring, params);
    descent.run(result);
    CHECK(descent.moves() > 0);
    CHECK(result.move_log.size() == 4 * static_cast<std::size_t>(descent.moves()));
    after = colouring.class_ids();
    return result;
}

/// 360 rows on 30 levels of [0, 1] (a level's neighbours are the levels next to it), 150 of
/// them on three crowded levels, dealt into classes of 40 to 120 rows: large classes whose
/// values repeat, many rows over their allowance. The descent runs over the stored graph and
/// over the sorted structure, without a loss model and with one over two QIs (its swaps then
/// are chosen among equal changes of E by their loss), its moves traced;
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
        std::uniform_int_distribution<int> code(0, 999);
        for (double& x : qi) x = code(rng);
        const LossModel qi_loss(qi.data(), n, 2);
        const LossModel no_loss;  // the colouring keeps a reference: not a temporary
        for (const int structure : {0, 1, 2}) {
            const bool graph = structure != 1;
            const LossModel& loss = structure == 2 ? qi_loss : no_loss;
            const Neighbours neighbours = graph
                ? Neighbours(table, NeighbourGraph::build(table, distance, 1u << 24))
                : Neighbours::build(table, distance, Structure::Sorted, 1u << 24);
            const XColorOptions params = traced_options();
            std::vector<std::int32_t> left;  // the classes the descent leaves
            const XColorResult result = traced_descent(table, neighbours, loss, initial, left);
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
            CHECK(now == left);
            std::vector<std::size_t> size(classes, 0);
            for (const std::int32_t c : now) ++size[static_cast<std::size_t>(c)];
            for (const std::size_t s : size) CHECK(s >= params.k);
        }
    }
}


/// Every move the descent makes is the best of its step: over 9 classes of 40 rows (so that
/// a step examines every other class), each move replayed is checked against every swap of
/// its violation with a row of another class and every transfer of it (its class keeping k
/// rows), priced by brute force: the move's change of E is the least, and among the moves of
/// that change its loss change (QI extremes computed afresh) is the least, up to rounding;
/// over a graph and over the sorted structure.
void test_descent_moves_are_the_best_of_their_step() {
    const std::size_t n = 360, m = 9;
    const Distance distance(Metric::L1, {1.0}, 0.04);
    std::mt19937 rng(33);
    std::vector<double> rows(n), qi(2 * n);
    std::uniform_int_distribution<int> level(0, 29), code(0, 999);
    for (std::size_t r = 0; r < n; ++r) rows[r] = (r < 150 ? static_cast<int>(10 + 3 * (r % 3)) : level(rng)) / 29.0;
    for (double& x : qi) x = code(rng);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
    const LossModel loss(qi.data(), n, 2);
    // Over the stored graph and over the sorted structure (home_change by running sums).
    for (const bool sorted : {false, true}) {
        const Neighbours nb = sorted ? Neighbours::build(table, distance, Structure::Sorted, 1u << 24)
                                     : Neighbours(table, NeighbourGraph::build(table, distance, 1u << 24));
        std::vector<std::int32_t> initial(n);
        for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>((r * 7 + r / 11) % m);
        const XColorOptions params = traced_options();
        std::vector<std::int32_t> left;
        const XColorResult result = traced_descent(table, nb, loss, initial, left);
        std::vector<std::int32_t> now = initial;
        const auto members_of = [&](std::size_t c) {
            std::vector<std::int32_t> out;
            for (std::size_t r = 0; r < n; ++r) {
                if (now[r] == static_cast<std::int32_t>(c)) out.push_back(static_cast<std::int32_t>(r));
            }
            return out;
        };
        const auto loss_of = [&](const std::vector<std::int32_t>& members) {
            GroupExtremes e;
            e.compute(loss, members.data(), members.size());
            return e.loss();
        };
        std::size_t ties_broken_by_loss = 0;
        for (std::size_t i = 0; i < result.move_log.size(); i += 4) {
            const auto v = static_cast<std::int32_t>(result.move_log[i]);
            const std::int64_t partner = result.move_log[i + 1];
            const auto to = static_cast<std::size_t>(result.move_log[i + 2]);
            const auto home = static_cast<std::size_t>(now[static_cast<std::size_t>(v)]);
            const std::vector<std::int32_t> home_rows = members_of(home);
            const std::int64_t home_e = class_excess(table, distance, home_rows, params.delta);
            const double home_loss = loss_of(home_rows);
            std::int64_t best = 0;
            double best_loss = 0.0, chosen_loss = 0.0;
            std::int64_t chosen = 1;
            std::size_t at_best = 0;
            const auto consider = [&](std::int64_t change, double loss_change, bool is_chosen) {
                if (is_chosen) { chosen = change; chosen_loss = loss_change; }
                if (change < best || (change == best && at_best == 0)) {
                    if (change < best) at_best = 0;
                    best = change;
                    best_loss = loss_change;
                } else if (change == best) {
                    best_loss = std::min(best_loss, loss_change);
                }
                if (change == best) ++at_best;
            };
            for (std::size_t c = 0; c < m; ++c) {
                if (c == home) continue;
                const std::vector<std::int32_t> away_rows = members_of(c);
                const std::int64_t away_e = class_excess(table, distance, away_rows, params.delta);
                const double away_loss = loss_of(away_rows);
                if (home_rows.size() > params.k) {  // v alone to c
                    std::vector<std::int32_t> h, a = away_rows;
                    for (const std::int32_t y : home_rows) if (y != v) h.push_back(y);
                    a.push_back(v);
                    consider(class_excess(table, distance, h, params.delta) + class_excess(table, distance, a, params.delta) - home_e - away_e,
                             loss_of(h) + loss_of(a) - home_loss - away_loss, partner == -1 && to == c);
                }
                for (const std::int32_t w : away_rows) {  // v and w trade places
                    std::vector<std::int32_t> h, a;
                    for (const std::int32_t y : home_rows) h.push_back(y == v ? w : y);
                    for (const std::int32_t y : away_rows) a.push_back(y == w ? v : y);
                    consider(class_excess(table, distance, h, params.delta) + class_excess(table, distance, a, params.delta) - home_e - away_e,
                             loss_of(h) + loss_of(a) - home_loss - away_loss, partner == w);
                }
            }
            CHECK(chosen == result.move_log[i + 3]);
            CHECK(chosen == best);
            CHECK(chosen_loss <= best_loss + 1e-9);
            if (at_best > 1 && chosen_loss < best_loss + 1e-9) ++ties_broken_by_loss;
            if (partner >= 0) now[static_cast<std::size_t>(partner)] = now[static_cast<std::size_t>(v)];
            now[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(to);
        }
        CHECK(now == left);
        CHECK(ties_broken_by_loss > 0);  // the loss decided some steps
    }
}

/// The colouring's extremes are computed when read after a change: through swaps (the swap
/// loop's moves), detaches and attaches (the descent's and suppression's), read at random
/// moments, each class's extremes give the loss, and each member's departure, of extremes
/// computed afresh from its members; and every row's D and the potential stay those counted
/// by brute force.
void test_extremes_are_current_when_read() {
    const std::size_t n = 240;  // 12 classes of 20 rows
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
        CHECK(col.extremes(c).same_as(fresh));
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
        const std::uint64_t kind = rng() % 3;
        if (kind == 0) {  // the swap loop's move: D of both rows in their new classes given
            const auto neighbours_in = [&](std::int32_t row, std::size_t cls, std::int32_t leaving) {
                std::int32_t d = 0;
                for (const std::int32_t* p = col.begin(cls); p != col.end(cls); ++p) {
                    if (*p != leaving && col.adjacent(col.value_of(row), col.value_of(*p))) ++d;
                }
                return d;
            };
            const std::int32_t v_after = neighbours_in(v, other, w);
            const std::int32_t w_after = neighbours_in(w, c, v);
            col.swap(v, w, v_after + w_after - col.own(v) - col.own(w), v_after);
        } else if (kind == 1) {  // the descent's swap
            col.detach(v);
            col.detach(w);
            col.attach(v, other);
            col.attach(w, c);
        } else if (col.size(c) > 12) {  // a transfer
            col.detach(v);
            col.attach(v, other);
        }
        if (rng() % 3 == 0) check(rng() % 2 == 0 ? c : other);
    }
    for (std::size_t c = 0; c < 12; ++c) check(c);
    // The counts kept through those moves: every row's D and the potential, by brute force.
    std::int64_t edges = 0;
    for (std::size_t r = 0; r < n; ++r) {
        std::int32_t d = 0;
        for (std::size_t q = 0; q < n; ++q) {
            if (q != r && col.class_of(static_cast<std::int32_t>(q)) == col.class_of(static_cast<std::int32_t>(r)) &&
                col.adjacent(col.value_of(static_cast<std::int32_t>(r)), col.value_of(static_cast<std::int32_t>(q)))) {
                ++d;
            }
        }
        CHECK(col.own(static_cast<std::int32_t>(r)) == d);
        edges += d;
    }
    CHECK(col.potential() == edges / 2);
}
}  // namespace

int main() {
    test_descent_moves_change_the_excess_as_recorded();
    test_descent_moves_are_the_best_of_their_step();
    test_extremes_are_current_when_read();
    if (failures == 0) std::puts("all C++ descent tests passed");
    return failures == 0 ? 0 : 1;
}
