// The stronger repair (moves = auto, phase 2): a local search on the total excess once the
// paper's pairwise swaps (Algorithm 2) stall.
#pragma once

#include <cstddef>
#include <cstdint>

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
/// adjacency tests, so one step is O(64 · (k · |V| + |W|)).
class ExcessDescent {
public:
    ExcessDescent(Colouring& colouring, const XColorOptions& options)
        : col_(colouring), options_(options) {}

    void run(XColorResult& result);

    std::int64_t moves() const { return moves_; }
    std::int64_t transfers() const { return transfers_; }

private:
    std::int64_t class_excess(std::size_t c) const;
    std::int64_t swap_excess_change(std::int32_t v, std::int32_t w) const;
    std::int64_t transfer_excess_change(std::int32_t v, std::size_t away) const;
    bool improve(std::int32_t v, XColorResult& result);

    Colouring& col_;
    const XColorOptions& options_;
    std::int64_t moves_ = 0;
    std::int64_t transfers_ = 0;
};

}  // namespace proxanon
