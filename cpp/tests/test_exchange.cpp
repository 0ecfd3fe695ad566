// C++ unit tests of the exchange of equal tuples (exchange.hpp) and of its counts
// (tuple_counts.hpp), with no Python: run by ctest. The exchange keeps every group's size and
// multiset of sensitive values and refuses a code that is not finite; TupleCounts and KeySet
// agree with std::map and std::set over random adds, and index() numbers tuples densely.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/publish/exchange.hpp"
#include "proxanon/publish/tuple_counts.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

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

}  // namespace

int main() {
    return run_tests("exchange", {test_exchange_keeps_sensitive_multisets,
                                  test_tuple_counts_and_key_set_against_std_maps});
}
