// C++ unit tests of hierarchy_cut.hpp and level_rounds.hpp, with no Python: run by ctest. On
// random tables with two taxonomy columns and a numeric one or a third taxonomy (where the
// bottom-up rounds compete), the cut's classes are checked against counts made
// here: every row in one class, at least k rows per class, distinct published tuples (the
// LCA per taxonomy column, the range per numeric one), distinct l of a criterion column,
// and, with the distance check, no row with more than t(G) neighbours in its class. With a
// suppression budget: the rows left out are counted, within it, and the table costs no more
// than the cut without one.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/mondrian/hierarchy_cut.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "check.hpp"
#include "two_levels.hpp"

namespace {

using namespace proxanon;

/// Cases whose cut with a budget suppressed rows (the budget is exercised).
int suppressing_cases = 0;

struct Case {
    std::size_t n, k, l;
    bool distance;
    double delta;
    bool numeric = true;  ///< a numeric third column (else a taxonomy: the bottom-up rounds run)
};

double check_result(const HierarchyCutResult& result, const Case& c, std::int64_t budget,
                    const std::vector<double>& qi, const std::vector<double>& sa,
                    const CriteriaData& criteria, const std::vector<std::optional<Taxonomy>>& taxonomies,
                    const LossModel& loss, double epsilon);

void check_case(const Case& c, std::mt19937& rng) {
    const std::size_t d = 3;
    std::vector<double> qi(c.n * d);
    std::vector<double> sa(c.n);
    CriteriaData criteria;
    criteria.columns.push_back(CriteriaColumn{std::vector<std::int32_t>(c.n), 4, false});
    std::uniform_int_distribution<int> a(0, 8), b(0, 5), x(0, 30), s(0, 9), crit(0, 3);
    for (std::size_t r = 0; r < c.n; ++r) {
        qi[r * d] = a(rng);
        qi[r * d + 1] = b(rng);
        qi[r * d + 2] = x(rng) / 3;
        sa[r] = s(rng) / 9.0;
        criteria.columns[0].codes[r] = crit(rng);
    }
    if (c.l > 0) criteria.specs.push_back(CriterionSpec{CriterionSpec::Distinct, static_cast<double>(c.l), 0.0, 0});
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(two_levels(9, 3));
    taxonomies.emplace_back(two_levels(6, 4));
    if (c.numeric) taxonomies.emplace_back(std::nullopt); else taxonomies.emplace_back(two_levels(11, 4));
    const LossModel loss(qi.data(), c.n, d, taxonomies);
    const ValueTable table = ValueTable::from_rows(sa.data(), c.n, 1);
    const double epsilon = 0.12;
    const Neighbours nb = c.distance
        ? Neighbours::for_checks(table, Distance(Metric::L1, {1.0}, epsilon), std::size_t{1} << 20, nullptr)
        : Neighbours(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}));
    MondrianParams params;
    params.k = c.k;
    params.dissimilarity = c.distance;
    params.delta = c.delta;
    params.criteria = &criteria;
    // Without a budget, and with one of a tenth of the rows.
    const std::int64_t budget = static_cast<std::int64_t>(c.n / 10);
    const HierarchyCutResult plain = hierarchy_cut(loss, nb, params);
    const HierarchyCutResult with = hierarchy_cut(loss, nb, params, budget);
    const double plain_cost = check_result(plain, c, 0, qi, sa, criteria, taxonomies, loss, epsilon);
    const double with_cost = check_result(with, c, budget, qi, sa, criteria, taxonomies, loss, epsilon);
    if (plain.satisfied && with.satisfied) CHECK(with_cost <= plain_cost + 1e-9);
    if (with.suppressed > 0) ++suppressing_cases;
}

/// The checks of one cut's result; returns its cost (rows times the sum of their NCPs, a
/// suppressed row costing d).
double check_result(const HierarchyCutResult& result, const Case& c, std::int64_t budget,
                    const std::vector<double>& qi, const std::vector<double>& sa,
                    const CriteriaData& criteria, const std::vector<std::optional<Taxonomy>>& taxonomies,
                    const LossModel& loss, double epsilon) {
    const std::size_t d = 3;
    CHECK(result.groups.size() == c.n);
    std::map<std::int32_t, std::vector<std::size_t>> classes;
    std::int64_t left_out = 0;
    for (std::size_t r = 0; r < c.n; ++r) {
        CHECK(result.groups[r] >= -1);
        if (result.groups[r] < 0) ++left_out; else classes[result.groups[r]].push_back(r);
    }
    CHECK(left_out == result.suppressed);
    CHECK(left_out <= budget);
    if (!result.satisfied) {
        // Only a table that fails as a whole is left so: one class.
        CHECK(classes.size() == 1);
        return 0.0;
    }
    double cost = static_cast<double>(left_out * static_cast<std::int64_t>(d));
    std::set<std::vector<double>> tuples;
    for (const auto& [g, rows] : classes) {
        CHECK(rows.size() >= c.k);
        std::vector<double> tuple;
        for (std::size_t i = 0; i < d; ++i) {
            double lo = 1e300, hi = -1e300;
            for (const std::size_t r : rows) {
                lo = std::min(lo, qi[r * d + i]);
                hi = std::max(hi, qi[r * d + i]);
            }
            if (taxonomies[i]) {
                const double node = taxonomies[i]->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
                tuple.push_back(node);
                tuple.push_back(node);
            } else {
                tuple.push_back(lo);
                tuple.push_back(hi);
            }
            double scaled_lo = 1e300, scaled_hi = -1e300;
            for (const std::size_t r : rows) {
                scaled_lo = std::min(scaled_lo, loss.row(static_cast<std::int32_t>(r))[i]);
                scaled_hi = std::max(scaled_hi, loss.row(static_cast<std::int32_t>(r))[i]);
            }
            if (lo != hi) cost += static_cast<double>(rows.size()) * loss.cost(i, scaled_lo, scaled_hi);
        }
        CHECK(tuples.insert(tuple).second);  // one class per published tuple
        std::set<std::int32_t> distinct;
        for (const std::size_t r : rows) distinct.insert(criteria.columns[0].codes[r]);
        CHECK(distinct.size() >= c.l);
        if (c.distance) {
            const std::int64_t allowed = allowed_neighbours(rows.size(), c.delta);
            for (const std::size_t r : rows) {
                std::int64_t near = 0;
                for (const std::size_t q : rows) near += q != r && std::abs(sa[q] - sa[r]) <= epsilon + 1e-9;
                CHECK(near <= allowed);
            }
        }
    }
    return cost;
}

/// Identical rows travel as one unit: the cut ran on fewer units than rows where rows repeat,
/// with the distance check (over a graph) too where they share their sensitive value.
void check_units() {
    const std::size_t n = 60, d = 1;
    std::vector<double> qi(n), sa(n, 0.0);
    for (std::size_t r = 0; r < n; ++r) qi[r] = static_cast<double>(r % 3);
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(two_levels(3, 3));
    const LossModel loss(qi.data(), n, d, taxonomies);
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const Neighbours nb(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}));
    MondrianParams params;
    params.k = 20;
    const HierarchyCutResult cut = hierarchy_cut(loss, nb, params);
    CHECK(cut.units == 3);
    CHECK(cut.satisfied);
    // Each leaf holds exactly 20 rows: each is published exactly, in a class of its own.
    for (std::size_t r = 0; r < n; ++r) CHECK(cut.groups[r] == cut.groups[r % 3]);
    CHECK(cut.groups[0] != cut.groups[1] && cut.groups[1] != cut.groups[2]);
    // Two sensitive values, far apart: six units of rows equal in both, and the same cut.
    for (std::size_t r = 0; r < n; ++r) sa[r] = r % 2 == 0 ? 0.0 : 1.0;
    const ValueTable two = ValueTable::from_rows(sa.data(), n, 1);
    const Neighbours graph = Neighbours::for_checks(two, Distance(Metric::L1, {1.0}, 0.1), std::size_t{1} << 20, nullptr);
    params.dissimilarity = true;
    params.delta = 0.5;
    const HierarchyCutResult checked = hierarchy_cut(loss, graph, params);
    CHECK(checked.units == 6);
    CHECK(checked.satisfied);
    for (std::size_t r = 0; r < n; ++r) CHECK(checked.groups[r] == checked.groups[r % 3]);
}

/// CriteriaCheck's running counts (start, add, holds_running) agree with holds() of the
/// same rows and counts, for every kind of criterion, on random sets.
void check_running_criteria(std::mt19937& rng) {
    const std::size_t n = 400;
    CriteriaData data;
    CriteriaColumn column{std::vector<std::int32_t>(n), 6, true};
    std::uniform_int_distribution<int> value(0, 5);
    for (std::size_t r = 0; r < n; ++r) column.codes[r] = value(rng) % (r % 3 == 0 ? 2 : 6);
    data.columns.push_back(column);
    data.specs = {CriterionSpec{CriterionSpec::Distinct, 3, 0, 0}, CriterionSpec{CriterionSpec::Entropy, 2, 0, 0},
                  CriterionSpec{CriterionSpec::Recursive, 2, 3, 0}, CriterionSpec{CriterionSpec::TCloseness, 0.3, 0, 0},
                  CriterionSpec{CriterionSpec::Beta, 2.0, 0, 0}, CriterionSpec{CriterionSpec::Delta, 1.5, 0, 0}};
    for (const CriterionSpec& spec : data.specs) {
        CriteriaData one{data.columns, {spec}};
        CriteriaCheck check(one);
        std::uniform_int_distribution<int> row(0, static_cast<int>(n) - 1), count(1, 4), size(1, 40);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<std::int32_t> rows;
            std::vector<std::int64_t> counts;
            check.start();
            const int m = size(rng);
            for (int i = 0; i < m; ++i) {
                rows.push_back(row(rng));
                counts.push_back(count(rng));
                check.add(rows.back(), counts.back());
                const bool running = check.holds_running();
                CriteriaCheck fresh(one);
                CHECK(running == fresh.holds(rows.data(), counts.data(), rows.size()));
            }
        }
    }
}

}  // namespace

int main() {
    std::mt19937 rng(20261202);
    const Case cases[] = {
        {40, 3, 0, false, 0.0}, {200, 5, 0, false, 0.0}, {500, 10, 2, false, 0.0},
        {300, 4, 3, false, 0.0}, {150, 5, 0, true, 0.5}, {400, 6, 2, true, 0.3},
        {7, 10, 0, false, 0.0}, {12, 12, 0, false, 0.0},
        {60, 3, 0, false, 0.0, false}, {300, 5, 0, false, 0.0, false},
        {500, 10, 3, false, 0.0, false}, {200, 4, 2, true, 0.4, false},
    };
    for (int round = 0; round < 20; ++round) {
        for (const Case& c : cases) {
            if (c.k > c.n) continue;
            check_case(c, rng);
        }
    }
    CHECK(suppressing_cases > 0);
    std::printf("%d case(s) suppressed rows\n", suppressing_cases);
    check_units();
    check_running_criteria(rng);
    if (failures > 0) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures > 0 ? 1 : 0;
}
