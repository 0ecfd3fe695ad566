// C++ unit tests of the loss model (loss.hpp) and the orderings (ordering.hpp), with no
// Python: run by ctest. GroupExtremes' loss and prices, computed and kept through arrivals and
// departures; a taxonomy's LCA and cost of every leaf range, on random taxonomies with the
// table of ranges and without it, and one whose leaves are not numbered depth-first refused;
// the radix orders, sorts and dense ranks against std::stable_sort.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/common/ordering.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

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

}  // namespace

int main() {
    return run_tests("loss model and ordering", {test_group_extremes, test_taxonomy_cost,
                                                 test_taxonomy_cost_of_every_range,
                                                 test_taxonomy_refuses_leaves_out_of_order,
                                                 test_orderings_against_sorting});
}
