// The stronger repair (moves = auto, phase 2): a local search on the total excess once the
// paper's pairwise swaps (Algorithm 2) stall.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "proxanon/colouring.hpp"
#include "proxanon/xcolor.hpp"

namespace proxanon {

/// Descends on E = sum_v max(0, D_V(v) - t(V)). Passes over the violating rows (ascending)
/// and, for each, makes the move that lowers E most (ties: least loss change, then lowest
/// partner row), among swaps with any row of the first min(search_limit, 64) classes examined
/// outward and transfers of the row alone to one of them when its class keeps >= k rows.
/// Stops after a pass without a move, or once max(n / 8, 2^12) steps found no move (each
/// pass retries every violating row; where few can move, passes of a few moves each added up
/// to a minute at 50k rows). Not in the paper: Algorithm 2 only swaps and only when the
/// potential drops, which can stall with violations left (issue 5).
///
/// Invariant: E drops by at least one per move and every class keeps >= k rows, so it ends
/// after at most E moves and E + max(n / 8, 2^12) steps. Cost per examined move O(|V| + |W|)
/// adjacency tests, so one step is O(64 · (k · |V| + |W|)) at most. Within a step, a swap's
/// change of E depends on the partner only through its value (rows of one value in one class
/// have the same D): the part in V is computed once per partner value, the part in W once
/// per (value, class).
class ExcessDescent {
public:
    ExcessDescent(Colouring& colouring, const XColorOptions& options)
        : col_(colouring), options_(options) {}

    void run(XColorResult& result);

    std::int64_t moves() const { return moves_; }
    std::int64_t transfers() const { return transfers_; }

private:
    std::int64_t class_excess(std::size_t c) const;
    /// Change of E in v's class V if v leaves for a row of value b, and D of that row in V.
    std::pair<std::int64_t, std::int64_t> home_change(std::int32_t v, std::int32_t b) const;
    /// Change of E in w's class W if w leaves for v, and D of v in W.
    std::pair<std::int64_t, std::int64_t> away_change(std::int32_t v, std::int32_t w) const;
    std::int64_t transfer_excess_change(std::int32_t v, std::size_t away) const;
    bool improve(std::int32_t v, XColorResult& result);

    Colouring& col_;
    const XColorOptions& options_;
    std::int64_t moves_ = 0;
    std::int64_t transfers_ = 0;
    /// Per value: the step (home_) or the step and class (away_) its cached change is of.
    std::vector<std::uint64_t> home_stamp_, away_stamp_;
    std::vector<std::pair<std::int64_t, std::int64_t>> home_, away_;
    std::uint64_t stamp_ = 0;
};

}  // namespace proxanon
