// The swap loop of XColor (Wang and Liu, XColor, Algorithm 2, §V-D, lines 4-11;
// docs/design/xcolor.md): drain the violations by pairwise
// exchanges that lower the potential.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/violation_queue.hpp"
#include "proxanon/xcolor/xcolor.hpp"

namespace proxanon {

/// Pops a violation v, swaps it with the partner v' that lowers the loss most among the
/// exchangeable ones (v may join V' without a violation and Lambda < 0; Lemma 4), and repeats.
/// A violation with no partner is set aside and retried when a class it has not yet examined
/// changed. With a search_limit, the classes examined past the limit by a violation with no
/// partner in the first ones, and those examined by retries, come out of one budget of 16 n
/// per run (at least 2^18); once it is spent, searches stop at the limit and retries end.
/// The classes of first searches that found no partner within the limit come out of a
/// second budget of 64 n (at least 2^18); once it is spent, searches stop at 16 classes.
/// Without it a table whose violations have no partner cost a scan of every class per
/// violation and a retry of every set-aside violation per swap, O(n^2) in all: minutes at
/// 50k rows. With search_limit = 0 (the paper's full scan) there is no budget. With a
/// search_limit, the loop also stops once a window of n classes examined (at least 2^18)
/// cleared fewer than 1/16 of the violations left, at least n / 8 of them (ProgressCap, progress_cap.hpp): the
/// budgets above bound the work at 80 n classes, which where few searches find a partner
/// was 94 n classes for 0.2% of the violations (1M rows: 18 s a loop); stopping after one
/// such window leaves them flagged (capped()). A loop that ends satisfied clears its
/// violations far faster than that (a heuristic: see progress_cap.hpp).
///
/// Invariant between steps: every violating row is queued or set aside, never both; queue
/// priority is the loss its departure saves. Every swap lowers the potential by at least one,
/// so the loop makes at most |E| swaps (Wang and Liu, XColor, Theorem 3); each examines at most
/// every class once, O(n), and costs O(|V| + |V'| + degrees) to apply. With a search_limit L, all
/// searches together examine at most 80 n classes plus L per search that finds a partner and 16
/// per search once the second budget is spent. Examining class W for v costs O(|W|) to count
/// D_W(v), unless the count for (W, v's value) is kept from an earlier search and W has not
/// changed since: then O(1) (a table of at most 2^21 slots of 16 bytes, made once a quarter as
/// many classes were counted; classes of 256 rows or more keep theirs in a map). Once a partner
/// is found, a movable class is read only where a floor of its exchanges' loss change (V \ {v}'s
/// ranges, and V''s second extremes with v: O(d)) does not exceed the best change so far, and a
/// row's exchange is priced only where that floor with the row's own home price does not: exact,
/// since every term of the floor is at most its price's. A search for a row whose value and class
/// a search since the last swap found without a partner is settled without reading a class
/// (O(classes it would examine) to charge the budgets): where a few merged classes hold thousands
/// of rows of a few values, most searches were so. The loop's shortcuts: each gives the same run
/// as without it (off, the tests compare).
struct SwapLoopShortcuts {
    /// A search that an earlier one since the last swap proved fruitless is settled without
    /// reading its classes.
    bool settle_known = true;
    /// After a swap, a class whose queued rows keep their prices brings the queue in line by
    /// reading only the rows that can need it: the row that came, the rows whose count crossed
    /// the allowance (Colouring::crossed) and the rows it set aside, in member order. A full
    /// read of each class after each swap was a sixth of the coarse-QI run at 80k rows.
    bool refresh_crossed = true;
};

class SwapLoop {
public:
    SwapLoop(Colouring& colouring, const XColorOptions& options, SwapLoopShortcuts shortcuts = {});

    /// Runs until no queued or set-aside violation can move.
    void run(XColorResult& result);
    /// Publishes the live counters to options.progress, if any.
    void publish() const;

    std::int64_t swaps() const { return static_cast<std::int64_t>(swap_classes_.size() / 2); }
    std::int64_t set_aside_count() const { return set_aside_count_; }
    std::int64_t classes_examined() const { return classes_examined_; }
    /// Violating rows left when the cap on fruitless work stopped the loop (0: it did not).
    std::int64_t capped() const { return capped_; }
    /// Searches settled by no_partner_ without reading a class.
    std::int64_t settled_searches() const { return settled_searches_; }

private:
    static std::size_t at(std::int32_t r) { return static_cast<std::size_t>(r); }
    std::size_t priority(std::int32_t r, std::size_t c) const;
    void refresh_class(std::size_t c);
    /// refresh_class(c) after a swap brought row `came` into c, reading only the rows that can
    /// need it where c's queued prices stand (SwapLoopShortcuts::refresh_crossed).
    void refresh_after_swap(std::size_t c, std::int32_t came);
    /// One row of refresh_class: `keeps()` says whether c's queued rows keep their price.
    template <typename Keeps>
    void refresh_row(std::int32_t r, std::int32_t c, const Keeps& keeps);
    void set_aside(std::int32_t v);
    bool retry_set_aside(XColorResult& result);
    bool try_exchange(std::int32_t v, const std::vector<std::size_t>* only, XColorResult& result);

    /// One violation's search for a partner (try_exchange): what it reads v through, and the
    /// best partner so far (best < 0: none yet).
    struct Search {
        Search(std::int32_t v_, std::int32_t a_, std::size_t home_, std::int32_t own_v_, bool priced_)
            : v(v_), a(a_), home(home_), own_v(own_v_), priced(priced_) {}
        std::int32_t v;
        std::int32_t a;            ///< v's value
        std::size_t home;          ///< v's class V
        std::int32_t own_v;        ///< D_V(v)
        bool priced;               ///< the loss model is active: partners are ranked by loss
        double home_loss = 0.0;    ///< loss(V), priced
        /// A floor of loss(V \ {v} ∪ {w}) over every partner w: the cost of V \ {v}'s own
        /// ranges (a column it leaves empty costs at least 0). Summed in the order of
        /// consider()'s home_after, as exchange_floor() is in exchange()'s: a class whose
        /// floor exceeds the best change priced so far holds no better partner, in floating
        /// point too, and its rows are not priced.
        double home_floor = 0.0;
        std::int32_t best = -1;
        double best_loss = 0.0;
        std::int64_t best_lambda = 0;
        std::int32_t best_own_v = 0;
    };
    /// The class V' examined: c, D_V'(v) and a floor of its loss after any exchange bringing v.
    struct Away {
        std::size_t c;
        std::int32_t d_c;
        double floor;
    };
    /// Whether an earlier search since the last swap settles this one (`key`: v's class and
    /// value) without reading a class; clears that record after a swap.
    bool settled_without_partner(std::uint64_t key);
    /// Marks N[v's value], tallies V \ {v} and, priced, fills rest_lo_/rest_hi_, home_loss and
    /// home_floor.
    void prepare_home(Search& s);
    /// D_W(v) for class c and v's value a, kept between searches while c is unchanged. Inline
    /// (defined in swap_loop.cpp, its only user): a search reads it for every class it examines.
    inline std::int32_t count_in_class(std::size_t c, std::int32_t a);
    /// Considers every row of class c (d_c = D_c(v), v movable to c) as v's partner, unless a
    /// floor of the loss change rules the class out first.
    void examine_class(Search& s, std::size_t c, std::int32_t d_c);
    /// examine_class over an indexed class, its rows (`entries`) in value order.
    void examine_indexed(Search& s, const Away& away, const std::vector<Colouring::Entry>& entries);
    /// Row w of V' (adjacent = [v's value ~ w's]; `tally()` gives its tally count) as the best
    /// partner, where it is exchangeable and beats the best so far.
    template <typename Tally>
    void consider(Search& s, const Away& away, std::int32_t w, std::int32_t adjacent, const Tally& tally);

    Colouring& col_;
    const XColorOptions& options_;
    NeighbourCount mark_;  ///< N[value of the violation being repaired]
    ViolationQueue queue_;
    std::vector<std::uint8_t> state_;          ///< kNone, kQueued or kAside per row
    /// Per class, Colouring::extremes_moved() + 1 when its queued rows were priced, or when a
    /// refresh found none to price (no violation: with refresh_crossed) (0: not yet), and per
    /// queued row the class that priced it: refresh_class prices again only rows whose price
    /// may have changed.
    std::vector<std::uint64_t> priced_;
    std::vector<std::int32_t> priced_in_;
    std::vector<std::size_t> aside_epoch_;     ///< swaps made when the row was set aside
    std::vector<std::uint8_t> in_aside_list_;
    std::vector<std::int32_t> aside_;
    /// Per class: rows set aside in it since its last refresh (some may have left since).
    std::vector<std::vector<std::int32_t>> aside_in_;
    std::vector<std::int32_t> refresh_rows_;  ///< scratch for refresh_after_swap
    std::vector<std::int32_t> swap_classes_;   ///< (V, V') of every swap so far
    /// (class, value) of the searches that found no partner since the last swap (see
    /// try_exchange: another row of that value in that class finds none either).
    std::unordered_set<std::uint64_t> no_partner_;
    std::size_t no_partner_swaps_ = 0;  ///< the swaps made when no_partner_ was last cleared
    std::vector<std::uint32_t> class_seen_;
    std::uint32_t seen_gen_ = 0;
    std::vector<std::size_t> changed_;
    std::vector<double> rest_lo_, rest_hi_;
    /// D_W(v) by (class W, v's value) for classes of kCountedClassRows rows or more, with the
    /// class's version it was counted at: a violation's search reads every class it examines,
    /// and merged classes of thousands of rows were read again at every try.
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::int32_t>> big_counts_;
    /// The same for smaller classes, in a direct-mapped table (a pair's slot holds the last
    /// pair counted there): the count is read again only once the class changed or another
    /// pair took its slot.
    struct SmallCount {
        std::uint32_t cls = 0;
        std::int32_t value = -1;
        std::uint32_t stamp = 0;  ///< the class's version + 1 when counted (0: none)
        std::int32_t count = 0;
    };
    std::vector<SmallCount> small_counts_;  ///< small_slots_ of them, once made
    std::size_t small_slots_ = 1;           ///< a power of two
    std::size_t small_counted_ = 0;         ///< small classes counted before the table was made
    std::size_t small_slot(std::size_t c, std::int32_t a) const;
    std::int64_t set_aside_count_ = 0;
    std::int64_t aside_now_ = 0;
    std::int64_t classes_examined_ = 0;
    std::int64_t capped_ = 0;
    std::size_t speculative_left_;  ///< classes still to spend past the limit or in retries
    std::size_t in_vain_left_;      ///< classes still to spend on first searches that fail
    SwapLoopShortcuts shortcuts_;
    std::int64_t settled_searches_ = 0;
};

}  // namespace proxanon
