// C++ unit tests of global/lattice.hpp, with no Python: run by ctest. On random tables of two
// or three columns with two-level taxonomies (a leaf, its group, the root), k and a distinct
// l-diversity of a criterion column, and budgets from none to a fifth of the rows: the node
// found is checked against every node of the lattice enumerated here (its classes formed,
// failing ones suppressed, its cost counted): it holds, and no node that holds costs less.
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "proxanon/global/lattice.hpp"
#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

/// `leaves` leaves in groups of `fan`: node ids 0..leaves-1 leaves, then groups, then root.
LatticeColumn two_levels(std::int32_t leaves, std::int32_t fan) {
    const std::int32_t groups = (leaves + fan - 1) / fan;
    LatticeColumn c;
    c.node.assign(3, std::vector<std::int32_t>(static_cast<std::size_t>(leaves)));
    c.ncp.assign(static_cast<std::size_t>(leaves + groups + 1), 0.0);
    for (std::int32_t v = 0; v < leaves; ++v) {
        c.node[0][static_cast<std::size_t>(v)] = v;
        c.node[1][static_cast<std::size_t>(v)] = leaves + v / fan;
        c.node[2][static_cast<std::size_t>(v)] = leaves + groups;
    }
    for (std::int32_t g = 0; g < groups; ++g) {
        const std::int32_t size = std::min(fan, leaves - g * fan);
        c.ncp[static_cast<std::size_t>(leaves + g)] = size > 1 ? static_cast<double>(size) / leaves : 0.0;
    }
    c.ncp.back() = 1.0;
    return c;
}

struct Brute {
    std::int64_t suppressed;
    double cost;
};

/// A node's classes formed row by row, failing ones (under k rows or l distinct codes)
/// suppressed, and its cost.
Brute brute(const std::vector<LatticeColumn>& columns, const std::vector<std::vector<std::int32_t>>& rows,
            const std::vector<std::int32_t>& crit, const std::vector<std::int32_t>& levels, std::size_t k,
            std::size_t l) {
    std::map<std::vector<std::int32_t>, std::vector<std::size_t>> classes;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        std::vector<std::int32_t> key;
        for (std::size_t j = 0; j < columns.size(); ++j) {
            key.push_back(columns[j].node[static_cast<std::size_t>(levels[j])][static_cast<std::size_t>(rows[r][j])]);
        }
        classes[key].push_back(r);
    }
    Brute out{0, 0.0};
    for (const auto& [key, members] : classes) {
        std::set<std::int32_t> distinct;
        for (const std::size_t r : members) distinct.insert(crit[r]);
        if (members.size() < k || distinct.size() < l) {
            out.suppressed += static_cast<std::int64_t>(members.size());
            out.cost += static_cast<double>(members.size() * columns.size());
            continue;
        }
        double row = 0.0;
        for (std::size_t j = 0; j < columns.size(); ++j) row += columns[j].ncp[static_cast<std::size_t>(key[j])];
        out.cost += row * static_cast<double>(members.size());
    }
    return out;
}

void check_case(std::mt19937& rng, std::size_t n, std::size_t d, std::size_t k, std::size_t l, std::int64_t budget) {
    std::vector<LatticeColumn> columns = {two_levels(6, 3), two_levels(5, 2), two_levels(4, 4)};
    columns.resize(d);
    std::vector<std::vector<std::int32_t>> rows(n, std::vector<std::int32_t>(d));
    std::vector<std::int32_t> crit(n);
    std::uniform_int_distribution<int> c(0, 3);
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t j = 0; j < d; ++j) {
            std::uniform_int_distribution<int> leaf(0, static_cast<int>(columns[j].node[0].size()) - 1);
            rows[r][j] = leaf(rng);
        }
        crit[r] = c(rng);
    }
    // Units: identical rows (leaves and criterion code), rows in input order.
    std::map<std::vector<std::int32_t>, std::vector<std::int32_t>> grouped;
    for (std::size_t r = 0; r < n; ++r) {
        std::vector<std::int32_t> key = rows[r];
        key.push_back(crit[r]);
        grouped[key].push_back(static_cast<std::int32_t>(r));
    }
    LatticeUnits units;
    units.offsets.push_back(0);
    for (const auto& [key, members] : grouped) {
        units.leaf.insert(units.leaf.end(), key.begin(), key.begin() + static_cast<std::ptrdiff_t>(d));
        units.rows.insert(units.rows.end(), members.begin(), members.end());
        units.offsets.push_back(static_cast<std::int64_t>(units.rows.size()));
    }
    CriteriaData criteria;
    criteria.columns.push_back(CriteriaColumn{crit, 4, false});
    if (l > 1) criteria.specs.push_back(CriterionSpec{CriterionSpec::Distinct, static_cast<double>(l), 0.0, 0});
    std::vector<double> sa(n, 0.0);
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const Neighbours nb(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}));
    MondrianParams params;
    params.k = k;
    params.criteria = &criteria;
    const LatticeResult found = search_lattice(columns, units, nb, params, budget, true);
    // Every node, enumerated.
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::int32_t> levels(d, 0);
    std::int64_t nodes = 0;
    for (;;) {
        ++nodes;
        const Brute b = brute(columns, rows, crit, levels, k, l);
        if (b.suppressed <= budget) best = std::min(best, b.cost);
        std::size_t j = d;
        while (j > 0 && levels[j - 1] == 2) levels[--j] = 0;
        if (j == 0) break;
        ++levels[j - 1];
    }
    CHECK(found.nodes == nodes);
    CHECK(found.checked <= nodes);
    CHECK(found.found == std::isfinite(best));
    if (!found.found) return;
    const Brute at = brute(columns, rows, crit, found.levels, k, l);
    CHECK(at.suppressed == found.suppressed && at.suppressed <= budget);
    CHECK(std::abs(at.cost - found.cost) < 1e-9);
    CHECK(std::abs(found.cost - best) < 1e-9);
    // The rows suppressed are those whose group is -1.
    std::int64_t left_out = 0;
    for (const std::int32_t g : found.groups) left_out += g < 0;
    CHECK(left_out == found.suppressed);
}

}  // namespace

int main() {
    std::mt19937 rng(20261202);
    for (int round = 0; round < 60; ++round) {
        for (const std::size_t d : {2, 3}) {
            for (const std::int64_t budget : {0, 3, 12}) {
                check_case(rng, 30 + static_cast<std::size_t>(round) * 2, d, 2 + static_cast<std::size_t>(round % 4),
                           round % 3 == 0 ? 2 : 0, budget);
            }
        }
    }
    if (failures > 0) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures > 0 ? 1 : 0;
}
