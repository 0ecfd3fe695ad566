// The cap on fruitless repair work (docs/design/xcolor.md): a repair that
// clears violations too slowly to finish within a bounded amount of further work stops,
// leaving them flagged, instead of spending minutes for a few percent of them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace proxanon {

/// Watches a repair in windows of `window` units of its work (classes examined, descent
/// steps). At the end of each window, given the violating rows now, it says stop when the
/// window cleared fewer than 1 / kCapAhead of them, and they are at least an eighth of the
/// rows (and 4096) of a table of at least 2^17 rows: at that rate kCapAhead more windows would
/// not clear them. A heuristic, not a proof: a repair that ends satisfied clears its
/// violations far faster (the feasible tables of bench/table_hashes.py and the tests are the
/// same with the cap), while one that stalls (1M uniform values, epsilon 0.5, delta 0.8: 0.2%
/// of the violations per window of n classes, over 94 windows a swap loop, 180 s in all)
/// stops after one window. `capped()` gives the violating rows
/// left when it stopped (0: it never did). Cost: O(1) a check.
class ProgressCap {
public:
    static constexpr std::int64_t kCapAhead = 16;

    /// Violations below max(rows / kCapShare, kCapFloor) are never capped: a repair left with
    /// few is let finish. Nor are tables below kCapMinRows: their repairs end within seconds
    /// under the searches' own budgets (swap_loop.hpp, excess_descent.hpp), and best-effort
    /// runs on Adult (30k rows) keep their tables.
    static constexpr std::int64_t kCapShare = 8;
    static constexpr std::int64_t kCapFloor = 4096;
    static constexpr std::size_t kCapMinRows = std::size_t{1} << 17;

    ProgressCap(std::size_t window, std::int64_t violations, std::size_t rows)
        : window_(window), end_(window), before_(violations),
          floor_(rows < kCapMinRows ? std::numeric_limits<std::int64_t>::max()
                                    : std::max(static_cast<std::int64_t>(rows) / kCapShare, kCapFloor)) {}

    /// Whether the repair, at `work` units done with `violations` violating rows, stops.
    bool stop(std::size_t work, std::int64_t violations) {
        if (work < end_) return false;
        if (violations >= floor_ && (before_ - violations) * kCapAhead < violations) {
            capped_ = violations;
            return true;
        }
        before_ = violations;
        end_ = work + window_;
        return false;
    }

    std::int64_t capped() const { return capped_; }
    std::size_t window() const { return window_; }

private:
    std::size_t window_;
    std::size_t end_;        ///< the work at which the current window ends
    std::int64_t before_;    ///< violating rows as the current window began
    std::int64_t floor_;     ///< fewer violating rows are never capped
    std::int64_t capped_ = 0;
};

}  // namespace proxanon
