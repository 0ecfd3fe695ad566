// Full-domain (global) recoding: one generalization level per quasi-identifier for the whole
// table, found by a search of the generalization lattice that is exact for its loss
// (docs/design/full-domain.md).
// A node is a level per column; its classes are the rows sharing their nodes at those
// levels. A class that fails the checks (k, the criteria, (epsilon, delta)^k) is suppressed;
// a node holds when it suppresses at most the budget. Its loss is the GCP numerator: every
// kept row's NCPs at the node plus d per suppressed row. Since a suppressed row costs at
// least what generalizing it would, the loss of a node is at least the NCP sum of every row
// at its levels (a per-column sum, O(d) per node): nodes are checked in the order of that
// bound, and the search stops once the bound reaches the best loss found.
// Invariant: the node returned holds and no node of lower loss holds (ties: the first in
// bound order, then node index). Cost: O(N log N) to order the N nodes, O(U (d + log U))
// per node checked over U weighted units (identical rows), plus the checks; where the checks
// are monotone (k and the union-closed criteria, no distance check), a node below one that
// failed is skipped unchecked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// One quasi-identifier's levels: node[l][leaf] is the node a leaf is published as at level
/// l (level 0 the leaf itself), ncp[node] what a row published as that node costs (0 for a
/// leaf, its share of the leaves otherwise).
struct LatticeColumn {
    std::vector<std::vector<std::int32_t>> node;
    std::vector<double> ncp;
};

/// The table as weighted units: per unit its leaf code per column (units x d, row-major),
/// its rows (CSR: offsets, rows), so that a unit's weight is its row count.
struct LatticeUnits {
    std::vector<std::int32_t> leaf;
    std::vector<std::int64_t> offsets;
    std::vector<std::int32_t> rows;
    std::size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
    std::int64_t weight(std::size_t u) const { return offsets[u + 1] - offsets[u]; }
};

struct LatticeResult {
    bool found = false;
    std::vector<std::int32_t> levels;       ///< the node: a level per column
    std::vector<std::int32_t> groups;       ///< class of each row, 0..classes-1; -1 suppressed
    std::int64_t suppressed = 0;            ///< rows left out at the node
    double cost = 0.0;                      ///< its loss (GCP numerator, suppressed rows d each)
    std::int64_t nodes = 0;                 ///< nodes in the lattice
    std::int64_t checked = 0;               ///< nodes whose classes were checked
    std::int64_t top_suppressed = 0;        ///< rows the top node (every column at its root) leaves out
};

/// The node of lowest loss that suppresses at most `max_suppressed` rows under the checks of
/// `params` (k, distinct l, (epsilon, delta)^k when params.dissimilarity, criteria).
/// `monotone`: the checks hold of every union of passing classes (k and the union-closed
/// criteria, no distance check), so a node below a failing one fails too. Deterministic.
/// Polls params.interrupt per node.
LatticeResult search_lattice(const std::vector<LatticeColumn>& columns, const LatticeUnits& units,
                             const Neighbours& neighbours, const MondrianParams& params,
                             std::int64_t max_suppressed, bool monotone);

}  // namespace proxanon
