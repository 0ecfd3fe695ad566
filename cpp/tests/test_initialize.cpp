// C++ unit tests of XColor's starts (initialize.hpp), with no Python: run by ctest. The
// degree start deals classes of equal size (within one row); the QI order visits every row
// once, the same on any number of threads, and sorts a single numeric QI or splits a taxonomy
// at its subtrees; classes cut from it in blocks hold consecutive values.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/xcolor/initialize.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

void test_initialize_is_equitable() {
    std::vector<std::int64_t> degree(103);
    for (std::size_t i = 0; i < degree.size(); ++i) degree[i] = static_cast<std::int64_t>((i * 37) % 11);
    const auto classes = initialize(degree, 10);
    std::vector<int> size(10, 0);
    for (auto c : classes) size[static_cast<std::size_t>(c)] += 1;
    for (int sz : size) CHECK(sz == 10 || sz == 11);
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

}  // namespace

int main() {
    return run_tests("XColor start", {test_initialize_is_equitable, test_qi_start_is_local_and_equitable,
                                      test_qi_order_is_the_same_for_any_thread_count});
}
