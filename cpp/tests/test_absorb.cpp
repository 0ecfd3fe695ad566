// C++ unit tests of absorption (absorb.hpp), with no Python: run by ctest. Rows of a coarse
// class move to the leaf classes that cover them, up to the takers' limit; from failing
// classes, checked pair by pair, every class keeps k rows and its tuple and none grows
// riskier; and the same rows move over a graph and over the sorted values of one column.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/absorb.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

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

}  // namespace

int main() {
    return run_tests("absorption", {test_absorb_moves_rows_to_covering_classes,
                                    test_absorb_is_the_same_over_any_structure,
                                    test_absorb_from_failing_classes_against_brute_force});
}
