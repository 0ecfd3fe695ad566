// Rows that no count-based check can tell apart, grouped into weighted units: the rows of a
// unit have equal QI codes and equal codes in every privacy criterion's column, so a cut
// that checks only k-anonymity and the criteria (no distance between sensitive values, no
// distinct-l over them) sends a unit's rows to one side together, and measures a set of
// units by their weights (docs/design/mondrian.md#units). With equal sensitive value ids
// too, the distance check and distinct l measure a set of units by their weights as well.
// Invariant: `rows` holds each row once; units in lexicographic order of their codes, rows in
// input order within a unit.
// Cost: O(n (d + criteria)) time through dense ranks and one radix sort; memory O(n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/criteria_check.hpp"

namespace proxanon {

struct RowUnits {
    std::vector<std::int32_t> rows;   ///< rows grouped by unit
    std::vector<std::int64_t> begin;  ///< per unit, its first entry in `rows`; then n

    std::size_t size() const { return begin.empty() ? 0 : begin.size() - 1; }
    /// The first row of unit u, whose codes every row of u shares.
    std::int32_t representative(std::size_t u) const { return rows[static_cast<std::size_t>(begin[u])]; }
    std::int64_t weight(std::size_t u) const { return begin[u + 1] - begin[u]; }
};

/// Every row its own unit, in input order.
RowUnits single_rows(std::size_t n);

/// The units of identical rows of `qi` (n rows), of the criteria's columns (may be null) and,
/// where given, of `values` (a sensitive value id per row: units whose rows the distance
/// check and distinct l cannot tell apart either).
RowUnits identical_rows(const LossModel& qi, const CriteriaData* criteria, std::size_t n,
                        const std::vector<std::int32_t>* values = nullptr);

}  // namespace proxanon
