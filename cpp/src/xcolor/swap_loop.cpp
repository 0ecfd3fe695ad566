#include "proxanon/xcolor/swap_loop.hpp"

#include <algorithm>
#include <limits>

#include "proxanon/xcolor/progress_cap.hpp"

namespace proxanon {

namespace {
/// Classes from this many rows up keep their D_W(v) per value of v between tries (smaller
/// ones are read again: a table's 10-row groups would fill the map for nothing).
constexpr std::size_t kCountedClassRows = 256;
/// Slots of the table of D_W(v) for smaller classes (16 bytes each: 32 MiB at most). A
/// violation's search reads every class it examines, and where most searches find no partner
/// (an infeasible table) the same classes are read for the same values over and over: on
/// Adult at epsilon 0.1, 98% of 3.2M reads found the count kept, unchanged since.
constexpr std::size_t kSmallCountSlots = std::size_t{1} << 21;
constexpr std::size_t kLossBuckets = 1024;
/// Entries ahead of the one read whose row's counts and QI values are prefetched.
constexpr std::ptrdiff_t kAhead = 8;
constexpr std::uint8_t kNone = 0, kQueued = 1, kAside = 2;
/// Classes a run may examine speculatively, per row: past search_limit by searches that found
/// no partner in the first classes, and in retries of set-aside violations (n / k classes
/// make one full scan, so this allows about 16 k full scans), and at least kSpeculativeFloor
/// (small tables keep the complete search). Then searches stop at the limit and set-aside
/// violations are no longer retried.
constexpr std::size_t kSpeculativePerRow = 16;
constexpr std::size_t kSpeculativeFloor = std::size_t{1} << 18;
/// Classes a run may examine, per row, in first searches within search_limit that found no
/// partner (at least kSpeculativeFloor); then such searches stop after kSpentLimit classes.
/// Feasible tables spend far less (50k lognormal rows, eps = 0.005, delta = 0.5: about 20 n).
constexpr std::size_t kInVainPerRow = 64;
constexpr std::size_t kSpentLimit = 16;
/// Buckets past which the record of searches without a partner is made anew, not cleared.
constexpr std::size_t kNoPartnerBuckets = 64;
}  // namespace

SwapLoop::SwapLoop(Colouring& colouring, const XColorOptions& options, SwapLoopShortcuts shortcuts)
    : col_(colouring), options_(options), mark_(colouring.neighbours()),
      queue_(colouring.rows(), colouring.loss().active() ? kLossBuckets : 1),
      state_(colouring.rows(), kNone), priced_(colouring.loss().active() ? colouring.classes() : 0, 0),
      priced_in_(priced_.empty() ? 0 : colouring.rows(), -1), aside_epoch_(colouring.rows(), 0),
      in_aside_list_(colouring.rows(), 0), aside_in_(colouring.classes()), class_seen_(colouring.classes(), 0),
      speculative_left_(std::max(kSpeculativePerRow * colouring.rows(), kSpeculativeFloor)),
      in_vain_left_(std::max(kInVainPerRow * colouring.rows(), kSpeculativeFloor)), shortcuts_(shortcuts) {
    std::size_t values = 0;
    for (std::size_t r = 0; r < colouring.rows(); ++r) {
        values = std::max(values, static_cast<std::size_t>(colouring.row_values()[r]) + 1);
    }
    // One slot per (class, value) pair up to kSmallCountSlots, a power of two; the table is
    // made only once the loop has counted a quarter as many classes (small_counts_ empty
    // until then): zeroing it cost more than it saved in runs whose searches end quickly
    // (a run and merging rounds make several loops per anonymize call).
    const std::size_t pairs = std::max<std::size_t>(1, values) * std::max<std::size_t>(1, colouring.classes());
    small_slots_ = 1;
    while (small_slots_ < pairs && small_slots_ < kSmallCountSlots) small_slots_ <<= 1;
}

std::size_t SwapLoop::small_slot(std::size_t c, std::int32_t a) const {
    // Value-major: the classes a search examines lie around its own, so their slots for one
    // value share cache lines (hashed slots made every read a miss in a table of 16 MiB).
    return (static_cast<std::size_t>(a) * col_.classes() + c) & (small_slots_ - 1);
}

void SwapLoop::run(XColorResult& result) {
    for (std::size_t c = 0; c < col_.classes(); ++c) refresh_class(c);
    // Budgeted searches only (the paper's full scan, search_limit 0, runs to the end): a
    // window of n classes examined, at least the budgets' floor.
    const bool budgeted = options_.search_limit != 0;
    ProgressCap cap(std::max(col_.rows(), kSpeculativeFloor), static_cast<std::int64_t>(queue_.size()) + aside_now_,
                    col_.rows());
    while (true) {
        publish();
        poll(options_.interrupt);
        if (budgeted && cap.stop(static_cast<std::size_t>(classes_examined_), static_cast<std::int64_t>(queue_.size()) + aside_now_)) {
            capped_ = cap.capped();
            break;
        }
        if (!queue_.empty()) {
            const std::int32_t v = queue_.pop();
            state_[at(v)] = kNone;
            if (!try_exchange(v, nullptr, result)) set_aside(v);
            continue;
        }
        if (!retry_set_aside(result)) break;
    }
}

void SwapLoop::publish() const {
    if (Progress* p = options_.progress) {
        p->queued.store(static_cast<std::int64_t>(queue_.size()), std::memory_order_relaxed);
        p->set_aside.store(aside_now_, std::memory_order_relaxed);
        p->swaps.store(swaps(), std::memory_order_relaxed);
    }
}

/// Queue priority of a violation: how much its departure lowers its class's loss, in 1/1024
/// steps of the largest possible drop (one whole column per QI).
std::size_t SwapLoop::priority(std::int32_t r, std::size_t c) const {
    const LossModel& loss = col_.loss();
    if (!loss.active()) return 0;
    const double gain = -col_.extremes(c).departure(loss, loss.row(r));
    const double scaled = gain / static_cast<double>(loss.dimensions()) *
                          static_cast<double>(kLossBuckets - 1);
    return static_cast<std::size_t>(std::clamp(scaled, 0.0, double(kLossBuckets - 1)));
}

/// Brings the queue in line with the violations of class c after its members changed. A row
/// that c priced and queued keeps its place while c's extremes are those it was priced by
/// (update() to the same bucket would keep it too): in a class of thousands of rows a swap
/// rarely moves an extreme, and pricing every violation again read every row's QI values.
void SwapLoop::refresh_class(std::size_t c) {
    // Whether c's queued rows keep their price: asked at its first violation (a class
    // without any prices nothing), -1 until then.
    int kept = priced_.empty() ? 0 : -1;
    const auto keeps = [&] {
        if (kept < 0) {
            const std::uint64_t now = col_.extremes_moved(c) + 1;
            kept = priced_[c] == now ? 1 : 0;
            priced_[c] = now;
        }
        return kept == 1;
    };
    const auto cls = static_cast<std::int32_t>(c);
    for (const std::int32_t* p = col_.begin(c); p != col_.end(c); ++p) refresh_row(*p, cls, keeps);
    aside_in_[c].clear();
    // With no violation in c, no row of c is queued now: every queued row c prices from here
    // on is priced by its extremes as they are, so they stand as priced (a refresh that
    // reads the rows that can need it is then possible after c's next swap).
    if (kept < 0 && shortcuts_.refresh_crossed) priced_[c] = col_.extremes_moved(c) + 1;
}

template <typename Keeps>
void SwapLoop::refresh_row(std::int32_t r, std::int32_t c, const Keeps& keeps) {
    auto& state = state_[at(r)];
    if (state == kAside) --aside_now_;
    if (col_.is_violation(r)) {
        if (keeps() && state == kQueued && priced_in_[at(r)] == c) return;
        const std::size_t key = priority(r, static_cast<std::size_t>(c));
        if (!priced_in_.empty()) priced_in_[at(r)] = c;
        if (state == kQueued) queue_.update(r, key);
        else { queue_.push(r, key); state = kQueued; }
    } else {
        if (state == kQueued) queue_.remove(r);
        state = kNone;
    }
}

/// Where c's queued rows keep their prices (or none has one), refresh_class acts only on:
/// the row that came (its state is from another class, or from the pop); rows whose
/// violation changed (Colouring::crossed, a superset); rows set aside in c (a refresh
/// re-queues them). Every other row is a violation queued at its standing price, or no
/// violation and not queued, on which refresh_row does nothing; and refresh_row on a row it
/// already brought in line does nothing. So reading those rows in member order, once each,
/// does what refresh_class does. O(k log k) for the k rows read.
void SwapLoop::refresh_after_swap(std::size_t c, std::int32_t came) {
    if (!shortcuts_.refresh_crossed || (!priced_.empty() && priced_[c] != col_.extremes_moved(c) + 1)) {
        refresh_class(c);
        return;
    }
    const auto cls = static_cast<std::int32_t>(c);
    refresh_rows_.clear();
    refresh_rows_.push_back(came);
    for (const std::int32_t r : col_.crossed()) {
        if (col_.class_of(r) == cls) refresh_rows_.push_back(r);
    }
    for (const std::int32_t r : aside_in_[c]) {
        if (col_.class_of(r) == cls && state_[at(r)] == kAside) refresh_rows_.push_back(r);
    }
    aside_in_[c].clear();
    std::sort(refresh_rows_.begin(), refresh_rows_.end(),
              [&](std::int32_t x, std::int32_t y) { return col_.position(x) < col_.position(y); });
    refresh_rows_.erase(std::unique(refresh_rows_.begin(), refresh_rows_.end()), refresh_rows_.end());
    const bool kept = !priced_.empty();
    const auto keeps = [kept] { return kept; };
    for (const std::int32_t r : refresh_rows_) refresh_row(r, cls, keeps);
}

void SwapLoop::set_aside(std::int32_t v) {
    ++set_aside_count_;
    ++aside_now_;
    state_[at(v)] = kAside;
    aside_in_[static_cast<std::size_t>(col_.class_of(v))].push_back(v);
    aside_epoch_[at(v)] = swap_classes_.size() / 2;
    if (!in_aside_list_[at(v)]) {
        in_aside_list_[at(v)] = 1;
        aside_.push_back(v);
    }
}

/// A set-aside violation can only have gained a partner in a class that changed since it was
/// set aside (its own class has not, or it would have been re-queued): examine those.
/// Returns true after the first swap it makes, false when none of them can move.
bool SwapLoop::retry_set_aside(XColorResult& result) {
    if (options_.search_limit != 0 && speculative_left_ == 0) return false;
    std::size_t keep = 0;
    for (std::size_t i = 0; i < aside_.size(); ++i) {
        const std::int32_t v = aside_[i];
        if (state_[at(v)] != kAside) { in_aside_list_[at(v)] = 0; continue; }
        aside_[keep++] = v;
    }
    aside_.resize(keep);
    const std::size_t epoch = swap_classes_.size() / 2;
    for (std::size_t i = 0; i < aside_.size(); ++i) {
        const std::int32_t v = aside_[i];
        if (state_[at(v)] != kAside || aside_epoch_[at(v)] == epoch) continue;
        poll(options_.interrupt);
        changed_.clear();
        ++seen_gen_;
        for (std::size_t e = aside_epoch_[at(v)] * 2; e < swap_classes_.size(); ++e) {
            const auto c = static_cast<std::size_t>(swap_classes_[e]);
            if (class_seen_[c] != seen_gen_) { class_seen_[c] = seen_gen_; changed_.push_back(c); }
        }
        std::sort(changed_.begin(), changed_.end());
        aside_epoch_[at(v)] = epoch;
        if (try_exchange(v, &changed_, result)) return true;
    }
    return false;
}

/// Whether a search since the last swap found no partner for another row of value a in class
/// V (`key`: V and a): then this one finds none either, and is settled without reading a class
/// (its budgets and counters charged as if it had). Every movability test and every term of
/// Lambda reads v only through a and V (D_V(v), D_W(v), N[a], the tally of V \ {v}); the loss
/// only ranks partners. And the classes that search covered cover this one's: while the
/// speculative budget lasts, a search that finds no partner has, itself or with the searches
/// that set v aside before (a retry reads the classes changed since), examined every other
/// class; once it is spent, retries end and first searches examine the first `limit` classes
/// outward from V, a limit that only shrinks.
bool SwapLoop::settled_without_partner(std::uint64_t key) {
    const std::size_t swaps_now = swap_classes_.size() / 2;
    if (no_partner_swaps_ != swaps_now) {
        // clear() costs the table's buckets, which never shrink: after a burst of searches
        // without a swap, a fresh table keeps each later swap's clearing small.
        if (no_partner_.bucket_count() > kNoPartnerBuckets) no_partner_ = {};
        else if (!no_partner_.empty()) no_partner_.clear();
        no_partner_swaps_ = swaps_now;
    }
    const bool settled = shortcuts_.settle_known && no_partner_.count(key) != 0;
    settled_searches_ += settled ? 1 : 0;
    return settled;
}

/// N[a] marked, V \ {v} tallied and, priced, V's loss and the floor of its loss after any
/// exchange: per-column range of V \ {v}, from V's extremes, O(d), not O(|V| d).
void SwapLoop::prepare_home(Search& s) {
    mark_.clear();
    mark_.add(s.a, 1);
    // tally_count(w): members of V \ {v} in the closed neighbourhood of w, i.e. D_V(v') - [v~v'].
    col_.tally_class(s.home, s.v);
    if (!s.priced) return;
    const LossModel& loss = col_.loss();
    s.home_loss = col_.extremes(s.home).loss();
    col_.extremes(s.home).without(loss.row(s.v), rest_lo_, rest_hi_);
    for (std::size_t i = 0; i < rest_lo_.size(); ++i) {
        s.home_floor += rest_lo_[i] <= rest_hi_[i] ? loss.cost(i, rest_lo_[i], rest_hi_[i]) : 0.0;
    }
}

/// D_W(v) for class c and v's value a: from c's index, else kept from an earlier search while
/// c has not changed (big_counts_ for classes of kCountedClassRows rows or more, small_counts_
/// once made), else counted over c's rows, O(|c|).
std::int32_t SwapLoop::count_in_class(std::size_t c, std::int32_t a) {
    const std::int32_t* value = col_.row_values();
    const std::int32_t* first = col_.begin(c);
    const std::int32_t* last = col_.end(c);
    const auto count_v = [&] {  // D_V'(v)
        std::int32_t d = 0;
        for (const std::int32_t* p = first; p != last; ++p) d += mark_.count(value[*p]);
        return d;
    };
    std::int32_t d_c = 0;
    if (col_.counts_by_index(c)) {
        d_c = col_.count_near(c, a);
    } else if (col_.size(c) >= kCountedClassRows) {
        auto& kept = big_counts_[(static_cast<std::uint64_t>(c) << 32) | static_cast<std::uint32_t>(a)];
        if (kept.first != col_.version(c) + 1) kept = {col_.version(c) + 1, count_v()};  // 0: none yet
        d_c = kept.second;
    } else if (small_counts_.empty()) {
        d_c = count_v();
        if (++small_counted_ >= small_slots_ / 4) small_counts_.resize(small_slots_);
    } else {
        SmallCount& kept = small_counts_[small_slot(c, a)];
        const auto stamp = static_cast<std::uint32_t>(col_.version(c) + 1);  // 0: none yet
        if (kept.stamp != stamp || kept.cls != static_cast<std::uint32_t>(c) || kept.value != a) {
            kept = {static_cast<std::uint32_t>(c), a, stamp, count_v()};
        }
        d_c = kept.count;
    }
    return d_c;
}

/// Row w of V' with value b, adjacent = [a ~ b]: `tally()` gives tally_count(b). Makes w the
/// best partner where it is exchangeable and beats the best so far.
template <typename Tally>
void SwapLoop::consider(Search& s, const Away& away, std::int32_t w, std::int32_t adjacent, const Tally& tally) {
    // Lambda without its one non-negative term, the tally: when that alone rules w
    // out (or, unpriced, cannot beat the best), the tally is never counted.
    const std::int64_t floor = std::int64_t{away.d_c} - s.own_v - col_.own_counts()[w] - adjacent;
    if (floor >= 0 || (!s.priced && s.best >= 0 && floor > s.best_lambda)) return;
    const std::int64_t lambda = floor + tally();
    if (lambda >= 0) return;
    double loss_change = 0.0;
    if (s.priced) {
        const LossModel& loss = col_.loss();
        const GroupExtremes& extremes = col_.extremes(away.c);
        const double* xv = loss.row(s.v);
        const double* xw = loss.row(w);
        double home_after = 0.0;
        for (std::size_t i = 0; i < rest_lo_.size(); ++i) {
            home_after += loss.cost(i, std::min(rest_lo_[i], xw[i]), std::max(rest_hi_[i], xw[i]));
        }
        if (s.best >= 0 && home_after + away.floor - s.home_loss - extremes.loss() > s.best_loss) return;
        loss_change = home_after + extremes.exchange(loss, xw, xv) - s.home_loss - extremes.loss();
    }
    const bool better = s.best < 0 || loss_change < s.best_loss ||
        (loss_change == s.best_loss && (lambda < s.best_lambda || (lambda == s.best_lambda && w < s.best)));
    if (better) {
        s.best = w; s.best_loss = loss_change; s.best_lambda = lambda;
        s.best_own_v = away.d_c - adjacent;
    }
}

/// Class c, to which v is movable (d_c = D_c(v)), examined as V' for v: skipped where, priced,
/// a floor of its exchanges' loss change exceeds the best change so far; else every row of it
/// considered.
void SwapLoop::examine_class(Search& s, std::size_t c, std::int32_t d_c) {
    const LossModel& loss = col_.loss();
    // A floor of V''s loss after any exchange bringing v: the class is skipped, or a row's
    // exchange() not priced, where a floor of the change exceeds the best one so far.
    const double away_floor = s.priced ? col_.extremes(c).exchange_floor(loss, loss.row(s.v)) : 0.0;
    if (s.priced && s.best >= 0 && s.home_floor + away_floor - s.home_loss - col_.extremes(c).loss() > s.best_loss) return;
    const Away away{c, d_c, away_floor};
    const auto* entries = col_.index_of(c);
    if (entries == nullptr) {
        const std::int32_t* value = col_.row_values();
        const std::int32_t* last = col_.end(c);
        for (const std::int32_t* p = col_.begin(c); p != last; ++p) {
            const std::int32_t w = *p;
            const std::int32_t b = value[w];
            consider(s, away, w, mark_.count(b), [&] { return col_.tally_count(b); });
        }
        return;
    }
    examine_indexed(s, away, *entries);
}

/// The rows of an indexed class V' in value order. The best partner is the least (loss change,
/// Lambda, row) over V', whatever order its rows are read in. An indexed class is read in value
/// order, so the tally of each value is read from V's index by two pointers that only move
/// forward (the neighbourhood of an ascending value ascends, Neighbours::interval), placed by
/// one binary search: O(log |V| + |V'| + the entries of V they pass) for the class, not a
/// binary search per value (at 80k rows of bench/test_bench_coarse_qis.py those were a fifth of
/// the run).
void SwapLoop::examine_indexed(Search& s, const Away& away, const std::vector<Colouring::Entry>& entries) {
    const LossModel& loss = col_.loss();
    const std::int32_t* own = col_.own_counts();
    const auto* home_entries = col_.index_of(s.home);
    const Colouring::Entry* lo = home_entries ? home_entries->data() : nullptr;
    const Colouring::Entry* hi = lo;
    const Colouring::Entry* home_end = home_entries ? lo + home_entries->size() : nullptr;
    bool placed = false;  // lo found by binary search at the first tally, then walked
    const Colouring::Entry* const entry_end = entries.data() + entries.size();
    for (const Colouring::Entry* ep = entries.data(); ep != entry_end; ++ep) {
        const Colouring::Entry& e = *ep;
        // The rows read in value order lie anywhere in memory: their counts and QI
        // values are fetched a few entries ahead.
        if (entry_end - ep > kAhead) {
            const std::int32_t ahead = ep[kAhead].second;
            __builtin_prefetch(own + ahead);
            if (s.priced) __builtin_prefetch(loss.row(ahead));
        }
        const std::int32_t b = e.first;
        const std::int32_t adjacent = mark_.count(b);
        if (home_entries == nullptr) {
            consider(s, away, e.second, adjacent, [&] { return col_.tally_count(b); });
            continue;
        }
        consider(s, away, e.second, adjacent, [&] {
            const auto [from, to] = col_.neighbours().interval(b);
            if (!placed) {
                lo = std::lower_bound(lo, home_end, from,
                                      [](const Colouring::Entry& x, std::int32_t id) { return x.first < id; });
                placed = true;
            }
            while (lo != home_end && lo->first < from) ++lo;
            if (hi < lo) hi = lo;
            while (hi != home_end && hi->first < to) ++hi;
            return static_cast<std::int32_t>(hi - lo) - adjacent;
        });
    }
}

/// Steps 2-3 of the loop for violation v: among exchangeable partners v' (v movable to the
/// class V' of v', Lambda < 0) pick the one minimizing loss(V \ {v} ∪ {v'}) +
/// loss(V' \ {v'} ∪ {v}) - loss(V) - loss(V'), then Lambda, then the lower row index; swap.
/// `only` restricts the search to those classes (retries); otherwise classes are examined
/// outward from v's own class until `search_limit` were examined and a partner was seen;
/// past the limit with no partner yet (and in retries), only while the run's budget lasts.
bool SwapLoop::try_exchange(std::int32_t v, const std::vector<std::size_t>* only,
                            XColorResult& result) {
    const std::int32_t a = col_.row_values()[v];
    const auto home = static_cast<std::size_t>(col_.class_of(v));
    const std::uint64_t key = (static_cast<std::uint64_t>(home) << 32) | static_cast<std::uint32_t>(a);
    const bool settled = settled_without_partner(key);
    Search s(v, a, home, col_.own_counts()[v], col_.loss().active());
    if (!settled) prepare_home(s);

    std::size_t examined = 0;
    const std::size_t m = col_.classes();
    const std::size_t total = only ? only->size() : m - 1;
    const bool budgeted = options_.search_limit != 0;
    const std::size_t limit = !budgeted ? m
        : in_vain_left_ == 0 ? std::min(options_.search_limit, kSpentLimit)
        : options_.search_limit;
    for (std::size_t step = 0; step < total; ++step) {
        if (examined >= limit && s.best >= 0) break;
        // Past the limit with no partner yet, and every class of a retry, are speculative:
        // only while the run's budget lasts (search_limit = 0, the paper's full scan: none).
        if (budgeted && (only || examined >= limit)) {
            if (speculative_left_ == 0) break;
            --speculative_left_;
        }
        // A full scan (search_limit 0) reads every class for one violation: poll within it.
        if ((step & 15) == 15) poll(options_.interrupt);
        const std::size_t c = only ? (*only)[step] : col_.outward(home, step);
        if (c == home) continue;
        ++examined;
        if (settled) continue;
        const std::int32_t d_c = count_in_class(c, a);
        if (d_c > col_.allowed(c)) continue;  // not movable
        examine_class(s, c, d_c);
    }
    classes_examined_ += static_cast<std::int64_t>(examined);
    if (s.best < 0) {
        if (budgeted && !only) in_vain_left_ -= std::min(in_vain_left_, std::min(examined, limit));
        no_partner_.insert(key);
        return false;
    }
    const auto away = static_cast<std::size_t>(col_.class_of(s.best));
    col_.swap(v, s.best, s.best_lambda, s.best_own_v);
    swap_classes_.push_back(static_cast<std::int32_t>(home));
    swap_classes_.push_back(static_cast<std::int32_t>(away));
    if (options_.trace) result.swap_log.insert(result.swap_log.end(), {v, s.best, s.best_lambda});
    refresh_after_swap(home, s.best);
    refresh_after_swap(away, v);
    return true;
}

}  // namespace proxanon
