// The colouring counts of Wang and Liu, XColor, Algorithm 2 (§V-D; docs/design/xcolor.md): which
// class each row is in, and for every row D_V(v), its number of epsilon-neighbours inside its own
// class V.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "proxanon/common/interrupt.hpp"

#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// t(V) = floor((1 - delta)(|V| - 1) + kAllowanceSlack) for a class of `size` rows
/// (docs/design/privacy-model.md).
std::int32_t allowed_neighbours(std::size_t size, double delta);

/// The colouring and its per-class neighbour counts, shared by the swap loop, the excess
/// descent and suppression.
///
/// Invariants between operations: members(c) lists the rows of class c and class_of(r) is r's
/// class (-1 for a row left out); own(r) = D_V(r) for r's class V; allowed(c) = t(|c|);
/// potential() = sum(own) / 2, the monochromatic edges; extremes(c), when the loss model is
/// active, is current whenever it is read; an indexed class's index (index_of) lists its
/// members in ascending (value id, row).
/// Cost, with the counts of neighbours.hpp: construction O(n + sum over classes of the cost
/// of counting a class against itself); swap O(|V| + |V'|) adjacency tests (two per row);
/// detach and attach O(|class|) adjacency tests. Over the sorted structure, for a class indexed
/// once it had kIndexedRows rows or more when counted (count_near, tally_class; kept after it
/// shrinks), the tests are replaced by two binary searches and the rows near the values
/// concerned, and the index is kept by moving at most |class| entries per change (one pass). The
/// extremes follow each change in O(d) (GroupExtremes::add, remove), and are computed again,
/// O(|class| d) when next read, only where the member leaving held a lowest or highest value with
/// at most one other, or a second one alone.
class Colouring {
public:
    /// `initial` gives a class id 0..m-1 per row, every id used, or -1 for a row left out.
    /// The classes are counted on `threads` threads (0: the hardware's; the same colouring for
    /// any number), the calling thread polling `interrupt` between its classes.
    Colouring(const ValueTable& table, const Neighbours& neighbours, const LossModel& loss,
              double delta, const std::vector<std::int32_t>& initial, std::size_t threads = 1, Interrupt* interrupt = nullptr);

    std::size_t rows() const { return class_of_.size(); }
    std::size_t classes() const { return members_.size(); }
    std::size_t size(std::size_t c) const { return members_[c].size(); }
    const std::int32_t* begin(std::size_t c) const { return members_[c].data(); }
    const std::int32_t* end(std::size_t c) const { return members_[c].data() + members_[c].size(); }
    std::int32_t class_of(std::int32_t r) const { return class_of_[at(r)]; }
    /// r's place in its class's members (begin(c)[position(r)] == r).
    std::int32_t position(std::int32_t r) const { return pos_[at(r)]; }
    const std::vector<std::int32_t>& class_ids() const { return class_of_; }
    std::int32_t own(std::int32_t r) const { return own_[at(r)]; }
    std::int32_t allowed(std::size_t c) const { return allowed_[c]; }
    std::int32_t value_of(std::int32_t r) const { return table_.row_value[at(r)]; }
    /// own(r) and value_of(r) for every row, for loops that read them per pair of rows.
    const std::int32_t* own_counts() const { return own_.data(); }
    const std::int32_t* row_values() const { return table_.row_value.data(); }
    std::int64_t potential() const { return potential_; }
    double delta() const { return delta_; }
    const Neighbours& neighbours() const { return nb_; }
    const LossModel& loss() const { return loss_; }
    /// Per-column extremes of class c; only when loss().active(). Computed when first read
    /// after the class changed, O(|c| QIs), not at every change: suppression leaves rows of a
    /// merged class out one by one and never reads them, and a move of the descent changes
    /// each class twice. Not for concurrent readers.
    const GroupExtremes& extremes(std::size_t c) const {
        if (stale_[c]) {
            extremes_of_[c].compute(loss_, begin(c), size(c));
            stale_[c] = 0;
        }
        return extremes_of_[c];
    }

    bool is_violation(std::int32_t r) const {
        const std::int32_t c = class_of_[at(r)];
        return c >= 0 && own_[at(r)] > allowed_[static_cast<std::size_t>(c)];
    }
    /// Rows with D_V(v) > t(V). O(n).
    std::int64_t violations() const;

    /// True iff values a and b are equal or epsilon-neighbours. Inline: the excess descent
    /// and suppression call it per pair of rows they examine.
    bool adjacent(std::int32_t a, std::int32_t b) const { return nb_.adjacent(a, b); }

    /// tally_count(w) := the rows of class c other than `skip` in N[w]. The class's rows are
    /// first counted per distinct value, so the cost is that of adding its distinct values,
    /// not its rows: merged classes can be large. The tally is kept until class c changes: it
    /// depends on `skip` only through its value, so another skipped row of the same value
    /// costs nothing, and one of another value O(degree) over a graph (two adds) or nothing
    /// on an implicit structure, whose tally holds the whole class and tally_count takes the
    /// skipped row off with one adjacency test (the swap loop tallies a violation's class at
    /// every try: on a merged class of 20,000 rows that was 42 s of a 45 s run; on the sorted
    /// structure, whose classes' values are mostly distinct, every try counted and sorted its
    /// class again). A class that counts_by_index is not counted: tally_count reads its index
    /// (made here if it has none yet).
    void tally_class(std::size_t c, std::int32_t skip);
    /// On an implicit structure each value's count of the whole class is kept until the
    /// tally is counted again (a search reads many classes, and tries between swaps many
    /// searches, whose rows' values repeat: a binary search per row was a quarter of a
    /// suppressing run whose merged classes held thousands of continuous values).
    std::int32_t tally_count(std::int32_t w) const {
        if (tally_.stored()) return tally_.count(w);
        const auto i = static_cast<std::size_t>(w);
        if (kept_stamp_[i] != tally_epoch_) {
            kept_stamp_[i] = tally_epoch_;
            kept_count_[i] = tally_indexed_ ? indexed_count(tallied_, w) : tally_.count(w);
        }
        return tallied_skip_ < 0 ? kept_count_[i] : kept_count_[i] - adjacent(tallied_skip_, w);
    }
    /// Whether count_near(c, a) reads class c's values in order (two binary searches) rather
    /// than its rows: on the sorted structure, for a class of kIndexedRows rows or more.
    bool counts_by_index(std::size_t c) const {
        return nb_.structure() == Structure::Sorted && size(c) >= kIndexedRows;
    }
    /// D_c(a), the rows of class c in N[a]. Where counts_by_index(c), the class's members in
    /// ascending order of value are kept from its first count on (made in O(|c| log |c|), then
    /// kept at each change by a move of at most |c| entries, not a test per row), and a count
    /// is two binary searches in them; elsewhere O(|c|) adjacency tests. On
    /// the sorted structure a value's neighbourhood is an interval of ids: merged classes of
    /// thousands of continuous values were read row by row at every search that examined them
    /// (bench/test_bench_coarse_qis.py, 80k rows: a sixth of the run).
    std::int32_t count_near(std::size_t c, std::int32_t a);
    static constexpr std::size_t kIndexedRows = 256;
    /// An indexed class's members as (value id, row), in ascending order.
    using Entry = std::pair<std::int32_t, std::int32_t>;
    /// Class c's members in value order where count_near or tally_class indexed it (kept
    /// from then on), else nullptr.
    const std::vector<Entry>* index_of(std::size_t c) const {
        return index_slot_[c] < 0 ? nullptr : &indexes_[static_cast<std::size_t>(index_slot_[c])];
    }

    /// Changes of class c so far: equal numbers, equal members.
    std::uint64_t version(std::size_t c) const { return version_[c]; }
    /// How often class c's extremes may have moved (unchanged: the same extremes).
    std::uint64_t extremes_moved(std::size_t c) const { return extremes_moved_[c]; }

    /// Swaps v (class V) and w (class V') and updates exactly what changed: the counts of the
    /// members of V and V' and the potential, which changes by `lambda`; `own_v_after` is
    /// D_V'(v) after the swap (the caller computed both while choosing the swap).
    void swap(std::int32_t v, std::int32_t w, std::int64_t lambda, std::int32_t own_v_after);
    /// The rows of the last swap's two classes, v and w aside, whose count crossed their
    /// class's allowance at an update (once per crossing): every row whose violation changed
    /// in that swap is among them. O(1) to read; a swap's upkeep records them as it goes.
    const std::vector<std::int32_t>& crossed() const { return crossed_; }
    /// Takes row v out of its class (its class becomes -1), updating the counts left there.
    void detach(std::int32_t v);
    /// Puts a detached row v into class c, updating every count that changes.
    void attach(std::int32_t v, std::size_t c);

    /// The step-th class other than `home` in the order home+1, home-1, home+2, home-2, ...
    /// (wrapping around), covering every other class once for step < classes() - 1, so that a
    /// colouring whose class order follows the QIs is searched near home first.
    std::size_t outward(std::size_t home, std::size_t step) const;

private:
    static std::size_t at(std::int32_t r) { return static_cast<std::size_t>(r); }
    /// own(r) for every member of class c: on the graph from the class tally, O(sum of the
    /// degrees of its values); on an implicit structure by class_counts.hpp.
    /// After class c changed (member `out` left, `in` came, -1: none; both -1: made anew):
    /// its version, allowance and extremes (kept, or marked stale).
    void class_changed(std::size_t c, std::int32_t out = -1, std::int32_t in = -1);

    const ValueTable& table_;
    const Neighbours& nb_;
    const LossModel& loss_;
    double delta_;
    std::vector<std::vector<std::int32_t>> members_;  ///< rows of each class (any order)
    std::vector<std::int32_t> pos_, class_of_, own_, allowed_;
    std::vector<std::int32_t> crossed_;  ///< see crossed()
    NeighbourCount tally_;
    std::vector<std::uint64_t> version_;  ///< per class: how often it changed
    std::size_t tallied_ = static_cast<std::size_t>(-1);  ///< the class tally_ counts (none: -1)
    std::uint64_t tallied_version_ = 0;  ///< that class's version when it was counted
    /// The value of the row it leaves out (-1: none): on a graph left out of tally_, else
    /// taken off by tally_count.
    std::int32_t tallied_skip_ = -1;
    /// Implicit structures: per value, its count in tally_ where kept_stamp_ is tally_epoch_
    /// (which moves on at every count of a class; stamps start at 0, epochs at 1).
    mutable std::vector<std::uint32_t> kept_stamp_;
    mutable std::vector<std::int32_t> kept_count_;
    std::uint32_t tally_epoch_ = 0;
    std::vector<std::int32_t> value_count_;  ///< scratch for tally_class, all zero between uses
    std::vector<std::int32_t> distinct_;
    /// The indexes made so far (at most n / kIndexedRows), and per class the place of its
    /// index among them, -1 while it has none (4 bytes a class: a table of 10M rows in
    /// classes of 2 has 5M). Over the sorted structure the rows of an indexed class in N[a]
    /// are one run of it: swap, detach and attach update only the counts of those rows.
    std::vector<std::vector<Entry>> indexes_;
    std::vector<std::int32_t> index_slot_;
    /// The entries of indexed class c whose values lie in N[a]. O(log |c|).
    std::pair<const Entry*, const Entry*> near(std::size_t c, std::int32_t a) const;
    /// own(y) += by for each member y of class c in N[a] but `skip`, by the index where class
    /// c has one, else by a test per member; returns how many there were. With `crossed`, each
    /// such row whose count crosses allowed(c) is added to it.
    std::int32_t add_near(std::size_t c, std::int32_t a, std::int32_t skip, std::int32_t by,
                          std::vector<std::int32_t>* crossed = nullptr);
    /// For a swap: own(y) += [y ~ comes] - [y ~ goes] for each member y of class c but `skip`
    /// (the row leaving), by add_near twice, each crossing of allowed(c) added to crossed_;
    /// returns the members but `skip` near `comes`.
    std::int32_t trade_counts(std::size_t c, std::int32_t skip, std::int32_t comes, std::int32_t goes);
    /// Keeps class c's index, if any, after `out` left (-1: none) and `in` came.
    void reindex(std::size_t c, std::int32_t out, std::int32_t in);
    /// Makes class c's index if it is not kept yet. O(|c| log |c|).
    void index_class(std::size_t c);
    /// D_c(a) from class c's index (indexed). O(log |c|).
    std::int32_t indexed_count(std::size_t c, std::int32_t a) const;
    /// Whether the tally is read from the tallied class's ordered values (tally_ unused).
    bool tally_indexed_ = false;
    mutable std::vector<GroupExtremes> extremes_of_;
    std::vector<std::uint64_t> extremes_moved_;  ///< per class: see extremes_moved()
    mutable std::vector<char> stale_;  ///< per class: its extremes are not kept since it changed
    std::int64_t potential_ = 0;
};

}  // namespace proxanon
