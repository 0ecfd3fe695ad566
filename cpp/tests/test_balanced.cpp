// C++ unit tests of the balanced split (balanced_split.hpp) and the covering split
// (cover_split.hpp), with no Python: run by ctest.
// A failing class whose QIs and sensitive values are correlated (every cut along a QI leaves
// a piece more crowded than the class) is split, and its parts are checked by brute force:
// together the class's rows, each of at least k rows, no riskier than the class, and no row
// that does not violate in the class violating in its part.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "proxanon/publish/balanced_split.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/publish/cover_split.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

/// Leaves 0-7 in pairs under nodes 8-11, those under 12 and 13, the root 14.
const std::vector<std::int32_t> kEightLeaves{8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, -1};

/// Per row of `rows`: D (its other rows within epsilon), by testing every pair of values.
std::vector<std::int64_t> brute_d(const std::vector<double>& sa, const Distance& distance,
                                  const std::vector<std::int32_t>& rows) {
    std::vector<std::int64_t> d(rows.size(), 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t j = 0; j < rows.size(); ++j) {
            d[i] += i != j && distance.within(&sa[static_cast<std::size_t>(rows[i])], &sa[static_cast<std::size_t>(rows[j])]);
        }
    }
    return d;
}

/// n rows: a taxonomy column (8 leaves) and a numeric one; sensitive levels 0..9 (neighbours
/// one level apart), crowded near level 0 under leaves 0-3 (`crowd` of their rows) and spread
/// under leaves 4-7, so that the class's crowd sits in half its QI space.
struct Correlated {
    std::size_t n;
    std::vector<double> qi, sa;
    Correlated(std::size_t rows, double crowd, unsigned seed) : n(rows), qi(rows * 2), sa(rows) {
        std::mt19937 rng(seed);
        for (std::size_t r = 0; r < n; ++r) {
            const auto leaf = static_cast<std::int32_t>(rng() % 8);
            qi[2 * r] = leaf;
            qi[2 * r + 1] = static_cast<double>(rng() % 50);
            const auto draw = static_cast<double>(rng() % 1000) / 1000.0;
            const bool crowded = leaf < 4 ? draw < crowd : draw < 0.1;
            sa[r] = crowded ? static_cast<double>(rng() % 2) / 9.0 : static_cast<double>(2 + rng() % 8) / 9.0;
        }
    }
};

/// The parts that balanced_parts (or, with `most` > 0, covering_parts into parts of at most
/// `most` rows, with `free` as the tuples no other class publishes) proposes for the class of
/// every row of `data`, its sensitive values `sa` (neighbours within `distance`).
std::vector<std::vector<std::int32_t>> propose(const Correlated& data, const std::vector<double>& sa,
                                               const Distance& distance, std::size_t k, double delta,
                                               const Publishable& publishable, std::size_t most = 0,
                                               const FreeKey& free = nullptr) {
    const ValueTable table = ValueTable::from_rows(sa.data(), data.n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 26);
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
    taxonomies.emplace_back(std::nullopt);
    const LossModel qi(data.qi.data(), data.n, 2, std::move(taxonomies));
    std::vector<std::int32_t> rows(data.n);
    for (std::size_t r = 0; r < data.n; ++r) rows[r] = static_cast<std::int32_t>(r);
    std::size_t work = 0;
    if (most == 0) return balanced_parts(rows, qi, Neighbours(table, graph), k, delta, publishable, work);
    // The class's tuple: the root (node 14) of the taxonomy column, the numeric column's range.
    double lo = data.qi[1], hi = data.qi[1];
    for (std::size_t r = 0; r < data.n; ++r) {
        lo = std::min(lo, data.qi[2 * r + 1]);
        hi = std::max(hi, data.qi[2 * r + 1]);
    }
    const Key key{14.0, 14.0, lo, hi};
    std::vector<std::vector<std::int32_t>> node_keys(2);
    for (std::int32_t v = 0; v < 15; ++v) node_keys[0].push_back(v);
    return covering_parts(rows, key, qi, node_keys, Neighbours(table, graph), k, delta, most, free, publishable,
                          work);
}

std::vector<std::vector<std::int32_t>> split_and_check(const Correlated& data, std::size_t k, double delta,
                                                       const Publishable& publishable, std::size_t most = 0,
                                                       const FreeKey& free = nullptr) {
    const std::size_t n = data.n;
    const std::vector<double>& sa = data.sa;
    const Distance distance{Metric::L1, {1.0}, 1.0 / 9.0};
    const auto parts = propose(data, sa, distance, k, delta, publishable, most, free);
    std::vector<std::int32_t> rows(n);
    for (std::size_t r = 0; r < n; ++r) rows[r] = static_cast<std::int32_t>(r);

    const std::vector<std::int64_t> whole_d = brute_d(sa, distance, rows);
    std::int64_t worst = 0, violating = 0;
    const std::int64_t t_whole = allowed_neighbours(n, delta);
    for (const std::int64_t d : whole_d) {
        worst = std::max(worst, d);
        violating += d > t_whole;
    }
    std::vector<int> seen(n, 0);
    std::int64_t part_violating = 0;
    for (const auto& part : parts) {
        CHECK(part.size() >= k);
        const std::vector<std::int64_t> d = brute_d(sa, distance, part);
        const std::int64_t t = allowed_neighbours(part.size(), delta);
        for (std::size_t i = 0; i < part.size(); ++i) {
            const auto r = static_cast<std::size_t>(part[i]);
            ++seen[r];
            // No riskier than the class: D / (size - 1) <= worst / (n - 1).
            CHECK(d[i] * static_cast<std::int64_t>(n - 1) <= worst * static_cast<std::int64_t>(part.size() - 1));
            // A row that does not violate in the class does not in its part.
            if (whole_d[r] <= t_whole) CHECK(d[i] <= t);
            part_violating += d[i] > t;
        }
    }
    if (!parts.empty()) {
        for (const int s : seen) CHECK(s == 1);  // every row in exactly one part
        CHECK(part_violating <= violating);
    }
    return parts;
}

void test_balanced_parts_are_no_riskier_than_their_class() {
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    for (const double crowd : {0.7, 0.9}) {
        for (const unsigned seed : {1u, 2u, 3u}) {
            const Correlated data(1600, crowd, seed);
            const auto parts = split_and_check(data, 5, 0.8, any);
            CHECK(parts.size() >= 2);  // the class does split
            std::size_t largest = 0;
            for (const auto& part : parts) largest = std::max(largest, part.size());
            CHECK(largest < data.n / 2);
        }
    }
}

void test_pieces_that_cannot_publish_join_their_node() {
    // Sets of rows all below 25 in the numeric column publish a tuple another class holds:
    // such pieces are cut further or join their node's class, and the parts still hold.
    const Correlated data(1600, 0.8, 5);
    std::size_t refused = 0;
    const Publishable upper = [&](const std::vector<std::int32_t>& set) {
        for (const std::int32_t r : set) {
            if (data.qi[2 * static_cast<std::size_t>(r) + 1] >= 25.0) return true;
        }
        ++refused;
        return false;
    };
    const auto parts = split_and_check(data, 5, 0.8, upper);
    CHECK(refused > 0);
    CHECK(parts.size() >= 2);
}

/// The parts proposed for `data`'s class with each of its 10 levels spread over `copies`
/// values a tiny step apart (the same neighbours: up to 10 copies distinct values).
std::size_t proposed_parts(const Correlated& data, std::size_t copies) {
    std::vector<double> sa = data.sa;
    for (std::size_t r = 0; r < data.n; ++r) sa[r] += 1e-9 * static_cast<double>(r % copies);
    const Distance distance{Metric::L1, {1.0}, 1.0 / 9.0 + 1e-6};
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    return propose(data, sa, distance, 5, 0.8, any).size();
}

void test_balanced_parts_decline_classes_too_small_or_too_varied() {
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    // Below two leaves of k = 5 rows: nothing is proposed.
    CHECK(split_and_check(Correlated(2 * kBalancedLeafK * 5 - 1, 0.9, 4), 5, 0.8, any).empty());
    // At most kBalancedValues distinct values a split is proposed; one copy more per level
    // (past kBalancedValues values, the same neighbours) and none is.
    const Correlated data(8000, 0.7, 1);
    const std::size_t copies = kBalancedValues / 10;
    CHECK(proposed_parts(data, copies) >= 2);
    CHECK(proposed_parts(data, copies + 1) == 0);
}

/// The leaf-range of the taxonomy column that a part's rows span.
std::pair<double, double> span(const Correlated& data, const std::vector<std::int32_t>& part) {
    double lo = 8.0, hi = -1.0;
    for (const std::int32_t r : part) {
        lo = std::min(lo, data.qi[2 * static_cast<std::size_t>(r)]);
        hi = std::max(hi, data.qi[2 * static_cast<std::size_t>(r)]);
    }
    return {lo, hi};
}

void test_covering_parts_hold_at_most_most_rows() {
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    const FreeKey every = [](const Key&) { return true; };
    // (At crowd 0.9 nearly every crowded row must stay in the class's own part, the only one
    // that may mix rows of leaves 0-3 with lighter ones of leaves 4-7: no split is found.)
    for (const double crowd : {0.6, 0.7}) {
        for (const unsigned seed : {1u, 2u, 3u}) {
            const Correlated data(1600, crowd, seed);
            const auto parts = split_and_check(data, 5, 0.8, any, 400, every);
            CHECK(parts.size() >= 4);  // the class does split, into parts of at most 400 rows
            std::size_t spanning = 0;  // parts whose rows span the root: the class's own part
            for (const auto& part : parts) {
                const auto [lo, hi] = span(data, part);
                if (lo < 4.0 && hi >= 4.0) {
                    ++spanning;
                } else {
                    CHECK(part.size() <= 400);  // a candidate's part
                }
            }
            CHECK(spanning <= 1);
            // The same class is always split alike.
            CHECK(split_and_check(data, 5, 0.8, any, 400, every) == parts);
        }
    }
}

void test_covering_parts_only_publish_free_tuples() {
    const Correlated data(1600, 0.6, 2);
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    // No candidate's tuple is free: nothing is proposed.
    const FreeKey none = [](const Key&) { return false; };
    CHECK(split_and_check(data, 5, 0.8, any, 400, none).empty());
    // Nodes 8-13 taken (only single leaves free): every part but the class's own lies under
    // one leaf.
    const FreeKey leaves = [](const Key& key) { return key[0] < 8.0; };
    const auto parts = split_and_check(data, 5, 0.8, any, 400, leaves);
    CHECK(parts.size() >= 2);
    std::size_t spanning = 0;
    for (const auto& part : parts) {
        const auto [lo, hi] = span(data, part);
        spanning += lo != hi;
    }
    CHECK(spanning <= 1);
    // Where no part could ever publish a tuple of its own, every candidate part is dissolved
    // and nothing is proposed (a search that once ran without end here).
    const Publishable never = [](const std::vector<std::int32_t>&) { return false; };
    CHECK(split_and_check(data, 5, 0.8, never, 400, leaves).empty());
    // A class of at most `most` rows is not split.
    CHECK(split_and_check(data, 5, 0.8, any, 1600, leaves).empty());
}

}  // namespace

int main() {
    test_balanced_parts_are_no_riskier_than_their_class();
    test_pieces_that_cannot_publish_join_their_node();
    test_balanced_parts_decline_classes_too_small_or_too_varied();
    test_covering_parts_hold_at_most_most_rows();
    test_covering_parts_only_publish_free_tuples();
    if (failures == 0) std::puts("all C++ balanced and covering split tests passed");
    return failures == 0 ? 0 : 1;
}
