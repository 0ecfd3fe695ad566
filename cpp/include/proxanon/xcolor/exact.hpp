// Exact search over partitions for very small tables (not in Wang and Liu's XColor paper):
// settles every instance the heuristics leave unsatisfied, and finds the least suppression.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Tables of at most this many rows are searched exactly when the heuristics fail.
inline constexpr std::size_t kExactRows = 16;

struct ExactPartition {
    std::vector<std::int32_t> groups;  ///< class of each row, 0..m-1 by smallest row; -1: left out
    std::size_t kept = 0;              ///< rows in groups (n when every row is kept)
};

/// Over all sets of disjoint groups, each of >= k rows satisfying (epsilon, delta)^k-
/// dissimilarity on its own: the one covering the most rows (all n unless `allow_left_out`;
/// then the fewest left out), then of least loss, then with the most groups. Empty `groups`
/// when no set covers all rows (or, with `allow_left_out`, any row).
///
/// Invariant of the dynamic programme: for every row set S, best[S] is the optimum over
/// partitions of exactly S, built from the group holding S's lowest row and best of the rest.
/// Cost O(2^n · n) to test every candidate group plus O(3^n) to combine them: about 2e7
/// steps and 2 MB at n = 16. Requires n <= kExactRows.
ExactPartition exact_partition(const ValueTable& table, const Neighbours& neighbours,
                               const LossModel& loss, std::size_t k, double delta,
                               bool allow_left_out, Interrupt* interrupt = nullptr);

}  // namespace proxanon
