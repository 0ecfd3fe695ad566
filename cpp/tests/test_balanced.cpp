// C++ unit tests of the balanced split (balanced_split.hpp), with no Python: run by ctest.
// A failing class whose QIs and sensitive values are correlated (every cut along a QI leaves
// a piece more crowded than the class) is split, and its parts are checked by brute force:
// together the class's rows, each of at least k rows, no riskier than the class, and no row
// that does not violate in the class violating in its part.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "proxanon/balanced_split.hpp"
#include "proxanon/colouring.hpp"
#include "proxanon/distance.hpp"
#include "proxanon/loss.hpp"
#include "proxanon/neighbour_graph.hpp"
#include "proxanon/neighbours.hpp"
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

void test_balanced_parts_are_no_riskier_than_their_class() {
    for (const double crowd : {0.7, 0.9}) {
        for (const unsigned seed : {1u, 2u, 3u}) {
            const Correlated table_rows(1600, crowd, seed);
            const std::size_t n = table_rows.n, k = 5;
            const double delta = 0.8;
            const Distance distance{Metric::L1, {1.0}, 1.0 / 9.0};
            const ValueTable table = ValueTable::from_rows(table_rows.sa.data(), n, 1);
            const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
            const Neighbours neighbours(table, graph);
            std::vector<std::optional<Taxonomy>> taxonomies;
            taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
            taxonomies.emplace_back(std::nullopt);
            const LossModel qi(table_rows.qi.data(), n, 2, std::move(taxonomies));
            std::vector<std::int32_t> rows(n);
            for (std::size_t r = 0; r < n; ++r) rows[r] = static_cast<std::int32_t>(r);
            std::size_t work = 0;
            const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
            const auto parts = balanced_parts(rows, qi, neighbours, k, delta, any, work);
            CHECK(parts.size() >= 2);  // the class does split
            CHECK(work > 0);

            const std::vector<std::int64_t> whole_d = brute_d(table_rows.sa, distance, rows);
            std::int64_t worst = 0, violating = 0;
            const std::int64_t t_whole = allowed_neighbours(n, delta);
            for (const std::int64_t d : whole_d) {
                worst = std::max(worst, d);
                violating += d > t_whole;
            }
            std::vector<int> seen(n, 0);
            std::int64_t part_violating = 0;
            std::size_t largest = 0;
            for (const auto& part : parts) {
                CHECK(part.size() >= k);
                largest = std::max(largest, part.size());
                const std::vector<std::int64_t> d = brute_d(table_rows.sa, distance, part);
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
            for (const int s : seen) CHECK(s == 1);  // every row in exactly one part
            CHECK(part_violating <= violating);
            CHECK(largest < n / 2);
        }
    }
}

void test_balanced_parts_decline_classes_too_small_or_too_varied() {
    const Correlated small(2 * kBalancedLeafK * 5 - 1, 0.9, 4);  // below two leaves of k = 5
    const Distance distance{Metric::L1, {1.0}, 1.0 / 9.0};
    const ValueTable table = ValueTable::from_rows(small.sa.data(), small.n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
    taxonomies.emplace_back(std::nullopt);
    const LossModel qi(small.qi.data(), small.n, 2, std::move(taxonomies));
    std::vector<std::int32_t> rows(small.n);
    for (std::size_t r = 0; r < small.n; ++r) rows[r] = static_cast<std::int32_t>(r);
    std::size_t work = 0;
    const Publishable any = [](const std::vector<std::int32_t>&) { return true; };
    CHECK(balanced_parts(rows, qi, Neighbours(table, graph), 5, 0.8, any, work).empty());

    // More distinct values than kBalancedValues: no split is proposed.
    const std::size_t n = 2 * (kBalancedValues + 1);
    std::vector<double> sa(n), codes(n * 2);
    for (std::size_t r = 0; r < n; ++r) {
        sa[r] = static_cast<double>(r % (kBalancedValues + 1)) / static_cast<double>(kBalancedValues);
        codes[2 * r] = static_cast<double>(r % 8);
        codes[2 * r + 1] = static_cast<double>(r % 50);
    }
    const ValueTable varied = ValueTable::from_rows(sa.data(), n, 1);
    const Distance wide{Metric::L1, {1.0}, 0.5};
    const NeighbourGraph varied_graph = NeighbourGraph::build(varied, wide, 1u << 24);
    std::vector<std::optional<Taxonomy>> two;
    two.emplace_back(Taxonomy(kEightLeaves, 8));
    two.emplace_back(std::nullopt);
    const LossModel varied_qi(codes.data(), n, 2, std::move(two));
    std::vector<std::int32_t> all(n);
    for (std::size_t r = 0; r < n; ++r) all[r] = static_cast<std::int32_t>(r);
    CHECK(balanced_parts(all, varied_qi, Neighbours(varied, varied_graph), 1, 0.8, any, work).empty());
}

}  // namespace

int main() {
    test_balanced_parts_are_no_riskier_than_their_class();
    test_balanced_parts_decline_classes_too_small_or_too_varied();
    if (failures == 0) std::puts("all C++ balanced split tests passed");
    return failures == 0 ? 0 : 1;
}
