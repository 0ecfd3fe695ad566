// C++ unit tests of vacating (vacate.hpp), with no Python: run by ctest. Tables of random
// classes (a failing class over every row's leaf, small classes under its nodes, classes of
// one leaf) are vacated, and the result is checked by brute force against the classes before:
// no tuple published that was not, tuples pairwise distinct, every class kept holds its rows
// (and may gain some), a class that passed passes, no class grows past `most` but one that
// was above, and the violating rows never grow.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/vacate.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

/// Leaves 0-7 in pairs under nodes 8-11, those under 12 and 13, the root 14.
const std::vector<std::int32_t> kEightLeaves{8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, -1};
const Distance kDistance{Metric::L1, {1.0}, 1.0 / 9.0};

/// A table of one taxonomy column (eight leaves) and one numeric column, its sensitive levels
/// (neighbours one level apart) and its classes.
struct Table {
    std::vector<double> qi, sa;
    std::vector<std::int32_t> classes;
    std::size_t n() const { return sa.size(); }
    void add(std::int32_t leaf, double x, double level, std::int32_t cls) {
        qi.push_back(leaf);
        qi.push_back(x);
        sa.push_back(level / 9.0);
        classes.push_back(cls);
    }
};

/// Per class: its published tuple (the LCA of its leaves, its numeric range), by brute force.
std::map<std::int32_t, std::tuple<std::int32_t, double, double>> tuples(const Table& t, const Taxonomy& tax) {
    std::map<std::int32_t, std::tuple<std::int32_t, double, double>> out;
    std::map<std::int32_t, std::pair<std::int32_t, std::int32_t>> leaves;
    for (std::size_t r = 0; r < t.n(); ++r) {
        const auto leaf = static_cast<std::int32_t>(t.qi[2 * r]);
        const double x = t.qi[2 * r + 1];
        auto [it, fresh] = out.try_emplace(t.classes[r], 0, x, x);
        auto [lt, lfresh] = leaves.try_emplace(t.classes[r], leaf, leaf);
        std::get<1>(it->second) = std::min(std::get<1>(it->second), x);
        std::get<2>(it->second) = std::max(std::get<2>(it->second), x);
        lt->second.first = std::min(lt->second.first, leaf);
        lt->second.second = std::max(lt->second.second, leaf);
    }
    for (auto& [c, tuple] : out) std::get<0>(tuple) = tax.lca(leaves[c].first, leaves[c].second);
    return out;
}

/// Per class: its rows, and of them those that violate (D above t(G)), by testing every pair.
std::map<std::int32_t, std::pair<std::size_t, std::size_t>> audit(const Table& t, double delta) {
    std::map<std::int32_t, std::vector<std::size_t>> members;
    for (std::size_t r = 0; r < t.n(); ++r) members[t.classes[r]].push_back(r);
    std::map<std::int32_t, std::pair<std::size_t, std::size_t>> out;
    for (const auto& [c, rows] : members) {
        const std::int64_t allowed = allowed_neighbours(rows.size(), delta);
        std::size_t violating = 0;
        for (const std::size_t i : rows) {
            std::int64_t d = 0;
            for (const std::size_t j : rows) d += i != j && kDistance.within(&t.sa[i], &t.sa[j]);
            violating += d > allowed;
        }
        out[c] = {rows.size(), violating};
    }
    return out;
}

/// Vacates `t` (k, delta, classes of at most `most` rows) and checks it as above; returns the
/// classes emptied.
std::int64_t vacate_and_check(Table& t, std::size_t k, double delta, std::size_t most) {
    const Taxonomy taxonomy(kEightLeaves, 8);
    const ValueTable table = ValueTable::from_rows(t.sa.data(), t.n(), 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, kDistance, 1u << 26);
    const Neighbours neighbours(table, graph);
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(taxonomy);
    taxonomies.emplace_back(std::nullopt);
    const LossModel qi(t.qi.data(), t.n(), 2, std::move(taxonomies));
    std::vector<std::vector<std::int32_t>> node_keys(2);
    for (std::int32_t v = 0; v < 15; ++v) node_keys[0].push_back(v);
    MondrianParams params;
    params.k = k;
    params.dissimilarity = true;
    params.delta = delta;

    const Table before = t;
    const auto old_tuples = tuples(before, taxonomy);
    const auto old_audit = audit(before, delta);
    std::size_t failing_large = 0;
    const std::int64_t emptied = vacate(qi, node_keys, neighbours, t.classes, params, most, failing_large);
    CHECK(emptied == 0 || failing_large > 0);
    const auto new_tuples = tuples(t, taxonomy);
    const auto new_audit = audit(t, delta);

    CHECK(static_cast<std::int64_t>(old_tuples.size() - new_tuples.size()) == emptied);
    CHECK(new_tuples.rbegin()->first + 1 == static_cast<std::int32_t>(new_tuples.size()));  // ids 0 .. C-1
    std::set<std::tuple<std::int32_t, double, double>> published, seen;
    for (const auto& [c, tuple] : old_tuples) published.insert(tuple);
    for (const auto& [c, tuple] : new_tuples) {
        CHECK(published.count(tuple) == 1);  // no tuple published that was not
        CHECK(seen.insert(tuple).second);    // pairwise distinct
    }
    // A class kept holds every row it held: its rows share one new id, its own.
    std::map<std::int32_t, std::int32_t> new_id;
    std::map<std::int32_t, std::int32_t> old_of;
    for (std::size_t r = 0; r < t.n(); ++r) {
        const std::int32_t old = before.classes[r], now = t.classes[r];
        const auto [it, fresh] = new_id.try_emplace(old, now);
        if (it->second != now) it->second = -1;  // split: only an emptied class's rows spread
    }
    std::size_t kept = 0;
    for (const auto& [old, now] : new_id) {
        if (now < 0) continue;
        const std::pair<std::size_t, std::size_t>& was = old_audit.at(old);
        const std::pair<std::size_t, std::size_t>& is = new_audit.at(now);
        if (is.first >= was.first) {
            const auto [it, fresh] = old_of.try_emplace(now, old);
            if (!fresh) continue;  // an emptied class's rows all went to one class
            ++kept;
            if (was.second == 0 && was.first >= k) CHECK(is.second == 0 && is.first >= k);  // passed, passes
            if (is.first > was.first) CHECK(is.first <= most);  // took rows: at most `most`
        }
    }
    CHECK(kept == new_tuples.size());
    std::size_t old_bad = 0, new_bad = 0;
    for (const auto& [c, a] : old_audit) old_bad += a.second;
    for (const auto& [c, a] : new_audit) new_bad += a.second;
    CHECK(new_bad <= old_bad);
    return emptied;
}

/// A failing class of 600 rows over every leaf (crowded on levels 0-1), a class of 10 rows
/// publishing node 8 (leaves 0 and 1, levels 9 and 7), and classes of 10 rows on leaf 0 and
/// on leaf 1 (levels 2, 5 and 8) that take its rows and still pass.
void test_an_owner_of_a_wanted_tuple_is_emptied_into_classes_that_cover_its_rows() {
    Table t;
    std::mt19937 rng(7);
    for (std::int32_t r = 0; r < 600; ++r) t.add(r % 8, 0.0, static_cast<double>(rng() % 2), 0);
    for (std::int32_t r = 0; r < 10; ++r) t.add(r % 2, 0.0, r % 2 == 0 ? 9.0 : 7.0, 1);  // node 8
    for (std::int32_t r = 0; r < 20; ++r) t.add(r / 10, 0.0, static_cast<double>(2 + (r % 3) * 3), 2 + r / 10);
    const std::int64_t emptied = vacate_and_check(t, 5, 0.3, 40);
    CHECK(emptied == 1);
    for (std::size_t r = 600; r < 610; ++r) CHECK(t.classes[r] != t.classes[0]);  // not into the failing class
    // Without room in the classes that cover its rows (at most 10 rows each), it stays.
    Table full;
    for (std::int32_t r = 0; r < 600; ++r) full.add(r % 8, 0.0, static_cast<double>(rng() % 2), 0);
    for (std::int32_t r = 0; r < 10; ++r) full.add(r % 2, 0.0, r % 2 == 0 ? 9.0 : 7.0, 1);
    for (std::int32_t r = 0; r < 20; ++r) full.add(r / 10, 0.0, static_cast<double>(2 + (r % 3) * 3), 2 + r / 10);
    CHECK(vacate_and_check(full, 5, 0.3, 10) == 0);
}

/// Random tables: a failing class over every leaf, classes under random nodes and leaves of
/// random sizes and values; every invariant above, whatever is emptied.
void test_random_tables_keep_every_invariant() {
    std::int64_t emptied = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        Table t;
        const std::size_t big = 200 + rng() % 200;
        for (std::size_t r = 0; r < big; ++r) t.add(static_cast<std::int32_t>(rng() % 8), 0.0, static_cast<double>(rng() % 3), 0);
        const std::int32_t classes = 6 + static_cast<std::int32_t>(rng() % 10);
        std::set<std::int32_t> used{14};
        std::int32_t id = 1;
        for (std::int32_t c = 0; c < classes; ++c) {
            const auto node = static_cast<std::int32_t>(rng() % 14);  // a leaf or a node below the root
            if (!used.insert(node).second) continue;
            const Taxonomy tax(kEightLeaves, 8);
            const auto [lo, hi] = tax.leaf_range(node);
            const std::size_t size = 2 + rng() % 8;
            for (std::size_t r = 0; r < size; ++r) {
                const std::int32_t leaf = r < 2 ? (r == 0 ? lo : hi) : lo + static_cast<std::int32_t>(rng() % static_cast<unsigned>(hi - lo + 1));
                t.add(leaf, 0.0, static_cast<double>(rng() % 10), id);
            }
            ++id;
        }
        emptied += vacate_and_check(t, 2, 0.5, t.n() / 10);
    }
    CHECK(emptied > 0);  // some tables have owners to empty
}

}  // namespace

int main() {
    test_an_owner_of_a_wanted_tuple_is_emptied_into_classes_that_cover_its_rows();
    test_random_tables_keep_every_invariant();
    if (failures == 0) std::puts("vacate tests passed");
    return failures == 0 ? 0 : 1;
}
