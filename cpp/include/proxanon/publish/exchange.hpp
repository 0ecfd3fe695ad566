// The exchange step of `anonymize`, run once on the engine's groups before groups that publish
// the same quasi-identifier (QI) tuple are merged into one equivalence class.
//
// Two rows with identical sensitive values can trade groups without changing either group's
// multiset of sensitive values, so every group keeps its (epsilon, delta)^k verdict exactly;
// only the published tuples change. A group whose tuple another group also publishes trades
// one row for a row of a nearby QI combination with the same sensitive value, when that gives
// it a tuple no group publishes, leaves the other group's tuple unused or unchanged, and lifts
// no value of a taxonomy of several levels to a node that covers more leaves (flat taxonomies
// and intervals may widen: that is how their tuples come apart).
//
// Invariants: group sizes and every group's multiset of sensitive value ids are unchanged; the
// number of distinct published tuples never falls. Greedy and deterministic.
// Cost: O(n · d) expected to order the rows (plus a sort of the distinct QI combinations),
// then at most `tries_per_row` · n candidate exchanges, each O(d) to price from the two
// groups' per-column extremes (O(group size · d) to update them after an exchange); memory
// O(n · d).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"

namespace proxanon {

struct ExchangeParams {
    std::size_t cells = 8;          ///< runs of one QI combination tried on each side of a row
    std::size_t rows_per_cell = 3;  ///< rows tried per such run
    std::size_t tries_per_row = 8;  ///< candidate exchanges in all, per row of the table
    Interrupt* interrupt = nullptr;
};

/// `groups`: 0 .. G-1 per row; `qi`: row-major n x d codes (numbers, or DFS leaf indices for a
/// column whose `taxonomies` entry is set: its published value is the LCA node, else the
/// interval [min, max]); `sensitive_ids`: rows with equal ids are interchangeable. Returns the
/// group of every row after the exchanges.
std::vector<std::int64_t> spread_equal_tuples(const std::vector<std::int64_t>& groups,
                                              const double* qi, std::size_t d,
                                              const std::vector<std::optional<Taxonomy>>& taxonomies,
                                              const std::vector<std::int64_t>& sensitive_ids,
                                              const ExchangeParams& params);

}  // namespace proxanon
