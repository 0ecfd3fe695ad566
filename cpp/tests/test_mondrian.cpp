// C++ unit tests of mondrian.hpp and units.hpp, with no Python: run by ctest. On random
// tables with many repeated rows, strict Mondrian over weighted units (k and a criterion,
// the checks that only count rows) gives the groups that the same cut over single rows
// gives (forced here by distinct l = 1, which every non-empty part passes and which makes
// every row a unit), group for group; every class holds at least k rows and passes the
// criterion, counted here; and the units hold every row once, rows of a unit identical.
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/mondrian/units.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"
#include "two_levels.hpp"

namespace {

using namespace proxanon;

void check_case(std::size_t n, std::size_t k, double criterion_l, int spread, std::mt19937& rng) {
    const std::size_t d = 3;
    std::vector<double> qi(n * d), sa(n, 0.0);
    CriteriaData criteria;
    criteria.columns.push_back(CriteriaColumn{std::vector<std::int32_t>(n), 3, false});
    std::uniform_int_distribution<int> a(0, 5), b(0, spread), c(0, 2);
    for (std::size_t r = 0; r < n; ++r) {
        qi[r * d] = a(rng);
        qi[r * d + 1] = b(rng);
        qi[r * d + 2] = c(rng) * 0.5;
        criteria.columns[0].codes[r] = c(rng);
    }
    if (criterion_l > 0) criteria.specs.push_back(CriterionSpec{CriterionSpec::Distinct, criterion_l, 0.0, 0});
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(two_levels(6, 3));
    taxonomies.emplace_back(std::nullopt);
    taxonomies.emplace_back(std::nullopt);
    const LossModel loss(qi.data(), n, d, taxonomies);
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const Neighbours nb(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}));

    // The units: every row once, the rows of a unit equal in every code.
    const RowUnits units = identical_rows(loss, &criteria, n);
    std::vector<int> seen(n, 0);
    for (std::size_t u = 0; u < units.size(); ++u) {
        const std::int32_t first = units.representative(u);
        for (std::int64_t e = units.begin[u]; e < units.begin[u + 1]; ++e) {
            const auto r = static_cast<std::size_t>(units.rows[static_cast<std::size_t>(e)]);
            ++seen[r];
            for (std::size_t i = 0; i < d; ++i) CHECK(qi[r * d + i] == qi[static_cast<std::size_t>(first) * d + i]);
            CHECK(criteria.columns[0].codes[r] == criteria.columns[0].codes[static_cast<std::size_t>(first)]);
        }
    }
    for (const int s : seen) CHECK(s == 1);
    // One unit per distinct (codes, criterion code) tuple.
    std::set<std::vector<double>> tuples;
    for (std::size_t row = 0; row < n; ++row) {
        tuples.insert({qi[row * d], qi[row * d + 1], qi[row * d + 2],
                       static_cast<double>(criteria.columns[0].codes[row])});
    }
    CHECK(units.size() == tuples.size());

    MondrianParams weighted;
    weighted.k = k;
    weighted.criteria = &criteria;
    MondrianParams by_rows = weighted;
    by_rows.l = 1;
    const MondrianResult w = mondrian(loss, nb, weighted);
    const MondrianResult r = mondrian(loss, nb, by_rows);
    CHECK(w.groups == r.groups);
    CHECK(w.cuts == r.cuts);
    CHECK(w.satisfied == r.satisfied);
    if (!w.satisfied) return;
    std::map<std::int32_t, std::size_t> size;
    std::map<std::int32_t, std::set<std::int32_t>> values;
    for (std::size_t row = 0; row < n; ++row) {
        CHECK(w.groups[row] >= 0);
        ++size[w.groups[row]];
        values[w.groups[row]].insert(criteria.columns[0].codes[row]);
    }
    for (const auto& [g, s] : size) {
        CHECK(s >= k);
        if (criterion_l > 0) CHECK(static_cast<double>(values[g].size()) >= criterion_l);
    }
}

}  // namespace

int main() {
    std::mt19937 rng(20261202);
    for (int round = 0; round < 30; ++round) {
        check_case(60, 3, 0, 3, rng);
        check_case(400, 5, 2, 6, rng);
        check_case(1000, 10, 3, 20, rng);
        check_case(300, 4, 0, 40, rng);
        check_case(8, 8, 2, 3, rng);
    }
    if (failures > 0) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures > 0 ? 1 : 0;
}
