// C++ unit tests of specialization (specialize.hpp), with no Python: run by ctest. On two
// QIs (a leaf of an 8-leaf taxonomy and a number), against pair-by-pair counts: the passing
// target leaves no violating row and, stopped early, no more than before; the failing target
// makes parts no riskier than their class; every class keeps k rows and a tuple of its own;
// and 2 or 3 threads make the classes one thread makes.
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
#include "proxanon/publish/specialize.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// The two-column QIs of the specialization tests: column 0 a leaf of kEightLeaves
/// (core_cases.hpp), column 1 a number in 0 .. 49, drawn from `seed`.

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

}  // namespace

int main() {
    return run_tests("specialization", {test_specialize_against_brute_force,
                                        test_failing_specialize_against_brute_force,
                                        test_specialize_same_for_any_thread_count});
}
