// C++ unit tests of held_values.hpp, with no Python: run by ctest. HeldValues' counts and
// FailingChecks' answers against counts made pair by pair, over the neighbour structures
// (a graph with and without its bit matrix, sorted values, a grid), with epsilon wide enough
// that distinct values are neighbours.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/publish/held_values.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// A HeldValues of `values` (rows' values, any order), and `slot` (per value of the table its
/// place in values(), -1 where not held).
HeldValues held_of(std::vector<std::int32_t> values, const Neighbours& nb, std::vector<std::int64_t>& slot) {
    std::sort(values.begin(), values.end());
    HeldValues held;
    NeighbourCount counter(nb);
    held.build(values, counter);
    slot.assign(nb.size(), -1);
    for (std::size_t i = 0; i < held.values().size(); ++i) slot[static_cast<std::size_t>(held.values()[i])] = static_cast<std::int64_t>(i);
    return held;
}

/// Rows per value of a class, and by brute force each value's closed count (the class's
/// rows within epsilon of it, its own included).
using Counts = std::map<std::int32_t, std::int64_t>;

Counts closed_counts(const Counts& count, const ValueTable& table, const Distance& distance) {
    Counts closed;
    for (const auto& [u, rows] : count) {
        std::int64_t near = 0;
        for (const auto& [w, c] : count) {
            near += u == w || distance.within(table.value(static_cast<std::size_t>(u)), table.value(static_cast<std::size_t>(w))) ? c : 0;
        }
        closed[u] = near;
    }
    return closed;
}

/// The largest D, and the rows with D over `allowed`.
std::pair<std::int64_t, std::int64_t> worst_and_over(const Counts& count, const Counts& closed, std::int64_t allowed) {
    std::int64_t worst = 0, over = 0;
    for (const auto& [u, c] : count) {
        worst = std::max(worst, closed.at(u) - 1);
        over += closed.at(u) - 1 > allowed ? c : 0;
    }
    return {worst, over};
}

void test_held_values_against_brute_force() {
    // HeldValues (held_values.hpp) through random joins and leaves, with and without the slot
    // index (adjacency lists read where shorter), against counts made by brute force: the
    // values held, their rows, the rows in their closed neighbourhoods, and the largest D.
    const std::size_t n = 500;
    const std::vector<double> rows = random_levels(n, 1, 200, 77);
    const ValueTable table = ValueTable::from_rows(rows.data(), n, 1);
    const Distance distance(Metric::L1, {1.0}, 3.0 / 200);
    for (const Structure structure : {Structure::Graph, Structure::Sorted}) {
        const Neighbours nb = Neighbours::build(table, distance, structure, kMaxGraphEntries);
        for (const bool indexed : {false, true}) {
            std::mt19937 rng(indexed ? 5 : 6);
            std::vector<std::int32_t> members;  // rows held
            for (std::size_t r = 0; r < n; ++r) {
                if (rng() % 3 == 0) members.push_back(static_cast<std::int32_t>(r));
            }
            std::vector<std::int32_t> held_rows;
            for (const std::int32_t r : members) held_rows.push_back(table.row_value[static_cast<std::size_t>(r)]);
            std::vector<std::int64_t> slot;
            HeldValues held = held_of(held_rows, nb, slot);
            for (int step = 0; step < 2000; ++step) {
                // Leave more often than join while the class is large, so that D falls far.
                const bool leave = !members.empty() && rng() % 100 < (members.size() > 40 ? 70u : 40u);
                std::int32_t r;
                if (leave) {
                    const std::size_t i = rng() % members.size();
                    r = members[i];
                    members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
                } else {
                    r = static_cast<std::int32_t>(rng() % n);
                    members.push_back(r);
                }
                held.change(nb, table.row_value[static_cast<std::size_t>(r)], leave ? -1 : +1, indexed ? &slot : nullptr);
                std::map<std::int32_t, std::int64_t> count;
                for (const std::int32_t m : members) ++count[table.row_value[static_cast<std::size_t>(m)]];
                CHECK(held.values().size() == count.size());
                std::int64_t worst = 0;
                for (std::size_t i = 0; i < held.values().size(); ++i) {
                    const std::int32_t u = held.values()[i];
                    std::int64_t closed = 0;
                    for (const auto& [w, c] : count) {
                        if (distance.within(table.value(static_cast<std::size_t>(u)), table.value(static_cast<std::size_t>(w)))) closed += c;
                    }
                    CHECK(count.count(u) == 1 && held.count(i) == count[u]);
                    CHECK(held.closed(i) == closed);
                    worst = std::max(worst, closed - 1);
                    if (indexed) CHECK(slot[static_cast<std::size_t>(u)] == static_cast<std::int64_t>(i));
                }
                CHECK(held.worst() == worst);
            }
            if (indexed) {
                std::size_t marked = 0;
                for (const std::int64_t i : slot) marked += i >= 0;
                CHECK(marked == held.values().size());
            }
        }
    }
}

void test_failing_checks_against_brute_force() {
    // A giving class and a taking class drawn around a few values (so D grows large), over
    // each structure; at each step a member's value is offered: FailingChecks::spares must
    // answer what counting the giver without that row says (at least l values stay, within
    // the bound, no more violations among the rows that stay), and takes() what counting the
    // taker with it says (within its bound, no more violating rows but the row itself if it
    // violated in the giver). The row then moves where both agree, else leaves the giver, so
    // that sizes, t(G) and the largest D all change. Bounds are drawn at, above and below
    // the classes' risks.
    struct Case { std::size_t n, s; int steps; double epsilon; Structure structure; };
    const std::vector<Case> cases = {
        {400, 1, 60, 2.5 / 60, Structure::Graph},        // few values: a bit matrix
        {400, 1, 60, 2.5 / 60, Structure::Sorted},
        {12000, 1, 100000, 30.0 / 100000, Structure::Graph},  // many values: adjacency lists
        {400, 2, 12, 1.5 / 12, Structure::Grid},
        {400, 2, 12, 1.5 / 12, Structure::Graph},
    };
    std::int64_t yes = 0, no = 0, taken = 0;
    for (const Case& c : cases) {
        const std::vector<double> rows = random_levels(c.n, c.s, c.steps, 91);
        const ValueTable table = ValueTable::from_rows(rows.data(), c.n, c.s);
        const Distance distance(Metric::L1, std::vector<double>(c.s, 1.0), c.epsilon);
        const Neighbours nb = Neighbours::build(table, distance, c.structure, kMaxGraphEntries);
        CHECK(nb.structure() == c.structure);
        std::mt19937 rng(7);
        for (int trial = 0; trial < 150; ++trial) {
            const double delta = 0.3 + 0.1 * static_cast<double>(rng() % 7);
            const std::size_t l = rng() % 4;
            const auto draw = [&](std::size_t size) {
                std::vector<std::int32_t> values;
                const std::size_t hub = rng() % c.n;
                for (std::size_t i = 0; i < size; ++i) {
                    const std::size_t r = rng() % 3 == 0 ? (hub + rng() % 8) % c.n : rng() % c.n;
                    values.push_back(table.row_value[r]);
                }
                return values;
            };
            std::vector<std::int32_t> giver = draw(10 + rng() % 70), taker = draw(3 + rng() % 30);
            std::vector<std::int64_t> slot, taker_slot;
            HeldValues held_giver = held_of(giver, nb, slot);
            HeldValues held_taker = held_of(taker, nb, taker_slot);
            Counts in_giver, in_taker;
            for (const std::int32_t v : giver) ++in_giver[v];
            for (const std::int32_t v : taker) ++in_taker[v];
            const auto risk_of = [&](const Counts& count, std::int64_t size, int mode) {
                const std::int64_t worst = worst_and_over(count, closed_counts(count, table, distance), 0).first;
                const std::int64_t nudge = mode == 0 ? 0 : mode == 1 ? 1 : -1;
                return Risk{std::max<std::int64_t>(0, worst + nudge), std::max<std::int64_t>(1, size - 1)};
            };
            const Risk giver_bound = risk_of(in_giver, static_cast<std::int64_t>(giver.size()), static_cast<int>(rng() % 3));
            const Risk taker_bound = risk_of(in_taker, static_cast<std::int64_t>(taker.size()), static_cast<int>(rng() % 3));
            FailingChecks checks(nb, delta, l);
            checks.budget(std::size_t{1} << 40);
            checks.new_giver();
            while (giver.size() > 3) {
                const std::size_t size = giver.size(), taker_size = taker.size();
                const std::int32_t v = giver[rng() % size];
                // The giver without a row of v.
                const Counts closed = closed_counts(in_giver, table, distance);
                const std::int64_t allowed = allowed_neighbours(size, delta);
                const std::int64_t violating = worst_and_over(in_giver, closed, allowed).second;
                Counts after = in_giver;
                if (--after[v] == 0) after.erase(v);
                const auto [worst_after, over_after] =
                    worst_and_over(after, closed_counts(after, table, distance), allowed_neighbours(size - 1, delta));
                const bool offered_violating = closed.at(v) - 1 > allowed;
                const bool spares = after.size() >= l &&
                                    giver_bound.admits(worst_after, static_cast<std::int64_t>(size) - 2) &&
                                    over_after <= violating - (offered_violating ? 1 : 0);
                CHECK(checks.spares(held_giver, size, giver_bound, v, slot) == spares);
                CHECK(checks.offered_violating() == offered_violating);
                // The taker with it.
                const Counts taker_closed = closed_counts(in_taker, table, distance);
                const std::int64_t taker_violating =
                    worst_and_over(in_taker, taker_closed, allowed_neighbours(taker_size, delta)).second;
                Counts joined = in_taker;
                ++joined[v];
                const auto [taker_worst, taker_over] =
                    worst_and_over(joined, closed_counts(joined, table, distance), allowed_neighbours(taker_size + 1, delta));
                const bool takes = taker_bound.admits(taker_worst, static_cast<std::int64_t>(taker_size)) &&
                                   taker_over <= taker_violating + (offered_violating ? 1 : 0);
                CHECK(checks.takes(held_taker, taker_size, taker_bound, v) == takes);
                (spares ? yes : no) += 1;
                // The row leaves the giver, and joins the taker where both agreed.
                giver.erase(std::find(giver.begin(), giver.end(), v));
                in_giver = after;
                held_giver.change(nb, v, -1, &slot);
                if (spares && takes) {
                    ++taken;
                    taker.push_back(v);
                    in_taker = joined;
                    held_taker.change(nb, v, +1, nullptr);
                }
            }
        }
    }
    CHECK(yes > 100 && no > 100 && taken > 100);
}

void test_failing_checks_stop_once_spent() {
    // A budget that one check of the giver exhausts: that check, and every later one, says
    // no, however little it would cost.
    const std::vector<double> rows = random_levels(200, 1, 40, 5);
    const ValueTable table = ValueTable::from_rows(rows.data(), 200, 1);
    const Distance distance(Metric::L1, {1.0}, 1.5 / 40);
    const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
    const std::vector<std::int32_t> values(table.row_value.begin(), table.row_value.begin() + 60);
    std::vector<std::int64_t> slot;
    const HeldValues held = held_of(values, nb, slot);
    const Risk loose{1, 1};  // any risk
    FailingChecks checks(nb, 0.0, 0);
    checks.budget(std::size_t{1} << 40);
    checks.new_giver();
    CHECK(checks.spares(held, values.size(), loose, values[0], slot));
    FailingChecks short_of(nb, 0.0, 0);
    short_of.budget(held.values().size() + 1);  // the counts at this size, not the check too
    short_of.new_giver();
    CHECK(!short_of.spares(held, values.size(), loose, values[0], slot));
    CHECK(!short_of.takes(held, values.size(), loose, values[0]));
    short_of.budget(0);
    CHECK(!short_of.spares(held, values.size(), loose, values[0], slot));
}

}  // namespace

int main() {
    test_held_values_against_brute_force();
    test_failing_checks_against_brute_force();
    test_failing_checks_stop_once_spent();
    if (failures == 0) std::puts("all C++ held values tests passed");
    return failures == 0 ? 0 : 1;
}
