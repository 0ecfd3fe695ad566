// The stronger repair (moves = auto, phase 2): a local search on the total excess once the
// paper's pairwise swaps (Algorithm 2) stall.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/xcolor.hpp"

namespace proxanon {

/// Descends on E = sum_v max(0, D_V(v) - t(V)). Passes over the violating rows (ascending)
/// and, for each, makes the move that lowers E most (ties: least loss change, then lowest
/// partner row), among swaps with any row of the first min(search_limit, 64) classes examined
/// outward and transfers of the row alone to one of them when its class keeps >= k rows.
/// Stops after a pass without a move, once max(n / 8, 2^12) steps found no move (each
/// pass retries every violating row; where few can move, passes of a few moves each added up
/// to a minute at 50k rows), or once it has read `work_per_row` rows (class members and
/// adjacency tests) per row of the table, counting at least 2^12 rows: the step count is
/// bounded, but where merged classes hold thousands of rows each step reads millions (a
/// suppressing run on Adult whose merging gathered a class of 22,000 rows did not end in 10
/// minutes; with the budget it ends in 18 s). The benchmarks' descents read at most 4,400
/// rows per row, a quarter of the default budget. Not in Wang and Liu's XColor paper: its
/// Algorithm 2 only swaps and only when the potential drops, which can stall with violations left
/// (docs/design/decisions.md).
///
/// Invariant: E drops by at least one per move and every class keeps >= k rows, so it ends
/// after at most E moves and E + max(n / 8, 2^12) steps, and after reading at most
/// work_per_row · max(n, 2^12) rows plus one class. Within a step, a swap's change of E
/// depends on the partner only through its value (rows of one value in one class have the
/// same D): V is read once per step, O(|V|) (which also prices v's transfer out of it), and
/// the part in V costs one adjacency test per distinct value of V (d_V) per partner value;
/// each class W examined is read once, O(|W|) (which also prices v's transfer into it),
/// and the part in W costs one test per distinct value of P per value of W, where P are W's
/// rows that a departure could leave over t(W) (D_W(y) + [y ~ v] > t(W)). The loss change of
/// a swap, O(QIs), is priced only for swaps whose change of E is the best so far or ties it.
/// One step is O(|V| + 64 · (|W| + d_W · (d_V + d_P))) at most, d_W the values of W. The work
/// budget still counts |V| rows per partner value and |P| rows per value of W, as when each
/// part read every row, so the descent stops where it did and makes the same moves (the part
/// in V was 43% of a best-effort Adult run whose merged classes hold thousands of rows of a
/// few hundred values). Besides, it stops once a window of max(n / 32, 2^12) steps cleared
/// fewer than 1/16 of the violating rows left, at least n / 8 of them (ProgressCap, progress_cap.hpp; capped()): 1M
/// uniform values at epsilon 0.5, delta 0.8 made 0.5 M moves over minutes for 2% of them.
/// A descent that ends satisfied clears them far faster (a heuristic: progress_cap.hpp).
/// Rows the descent may read per row of the table (see ExcessDescent).
inline constexpr std::size_t kDescentWorkPerRow = std::size_t{1} << 14;

class ExcessDescent {
public:
    ExcessDescent(Colouring& colouring, const XColorOptions& options,
                  std::size_t work_per_row = kDescentWorkPerRow)
        : col_(colouring), options_(options), work_per_row_(work_per_row),
          sorted_(colouring.neighbours().structure() == Structure::Sorted) {}

    void run(XColorResult& result);

    std::int64_t moves() const { return moves_; }
    std::int64_t transfers() const { return transfers_; }
    /// Violating rows left when the cap on fruitless work stopped the descent (0: it did not).
    std::int64_t capped() const { return capped_; }

private:
    /// Reads v's class V for violation v: its distinct values other than v's row, with their
    /// rows and D less [y ~ v], home_base_ (see home_change) and leaving_.
    void read_home(std::int32_t v);
    /// Change of E in v's class V (read by read_home, t(V) = th) if v leaves for a row of
    /// value b, and D of that row in V. O(distinct values of V) adjacency tests; on the
    /// sorted structure O(log of them).
    std::pair<std::int64_t, std::int64_t> home_change(std::int32_t b, std::int64_t th) const;
    /// Reads class W for violation v (value a): v's neighbours there, the rows whose excess
    /// can depend on who leaves W for v, and joining_.
    void read_away(std::int32_t a, std::size_t away);
    /// Change of E in class W (`away`, read by read_away) if a row of value b leaves it for
    /// v (value a), and D of v in W. O(distinct values of W's pressed rows); on the sorted
    /// structure O(log of them).
    std::pair<std::int64_t, std::int64_t> away_change(std::int32_t a, std::int32_t b, std::size_t away) const;
    bool improve(std::int32_t v, XColorResult& result);
    /// Takes `rows` read from the work left; false once it is spent (the step then ends
    /// without a move, and the descent stops).
    bool charge(std::size_t rows) {
        if (rows >= work_left_) {
            work_left_ = 0;
            return false;
        }
        work_left_ -= rows;
        return true;
    }

    Colouring& col_;
    const XColorOptions& options_;
    std::int64_t moves_ = 0;
    std::int64_t capped_ = 0;
    std::int64_t transfers_ = 0;
    std::size_t work_per_row_;
    bool sorted_;  ///< the sorted structure: changes of E by running sums over value order
    std::size_t work_left_ = 0;  ///< rows the descent may still read (run() sets it)
    /// Per value: the step (home_) or the step and class (away_) its cached change is of.
    std::vector<std::uint64_t> home_stamp_, away_stamp_;
    std::vector<std::pair<std::int64_t, std::int64_t>> home_, away_;
    std::uint64_t stamp_ = 0;
    /// A value of the rows y of the class W read_away last read with D_W(y) + [y ~ v] > t(W)
    /// (pressed): only such rows can be over t(W) after a row of W leaves for v, since a
    /// departure lowers D. Rows of one value in W are all pressed or none.
    struct Pressed {
        std::int32_t value;
        std::int64_t rows;              ///< W's rows of the value
        std::int64_t with_v, over_now;  ///< D_W(y) + [y ~ v], and max(0, D_W(y) - t(W))
    };
    std::vector<Pressed> pressed_;
    /// On the sorted structure: pressed_ in value order; the change of E over W if no row of
    /// it were b's neighbour, and before each pressed value the running sum of what nearness
    /// to b adds (rows * (over(with_v - 1) - over(with_v))).
    std::int64_t away_far_ = 0;
    std::vector<std::int64_t> away_near_before_;
    std::size_t pressed_rows_ = 0;      ///< their rows in all
    /// Change of E in W (read by read_away) if v joins it alone (|W| + 1 rows).
    std::int64_t joining_ = 0;
    /// A value of v's class V other than v's row (read_home): its rows there, and their
    /// D_V(y) - [y ~ v] ("pressed" where at least t(V)).
    struct HomeValue {
        std::int32_t value;
        std::int64_t rows, base;
    };
    std::vector<HomeValue> home_values_;
    /// On the sorted structure: home_values_ in value order, and before each its running
    /// sums of rows and of pressed rows (base >= t(V)).
    std::vector<std::int64_t> home_rows_before_, home_pressed_before_;
    /// Per value: its place in home_values_ or pressed_ while read_home or read_away reads
    /// a class, else -1.
    std::vector<std::int32_t> value_slot_;
    /// The part of home_change that does not depend on b: over the pressed rows of V \ {v},
    /// D_V(y) - [y ~ v] - t(V), less max(0, D_V(y) - t(V)) over all of V \ {v}.
    std::int64_t home_base_ = 0;
    /// Change of E in V (read by read_home) if v leaves it alone (|V| - 1 rows).
    std::int64_t leaving_ = 0;
    std::int64_t v_in_away_ = 0;        ///< v's neighbours in W
};

}  // namespace proxanon
