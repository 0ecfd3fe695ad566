#include "proxanon/xcolor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "proxanon/initialize.hpp"
#include "proxanon/violation_queue.hpp"

namespace proxanon {

std::int32_t allowed_neighbours(std::size_t size, double delta) {
    if (size == 0) return 0;
    return static_cast<std::int32_t>(
        std::floor((1.0 - delta) * static_cast<double>(size - 1) + 1e-9));
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A set of value ids that can be emptied in O(1): value w is in the set iff stamp[w] == gen.
class ValueMark {
public:
    explicit ValueMark(std::size_t values) : stamp_(values, 0) {}
    /// Marks u and its neighbours (the closed neighbourhood N[u]). O(degree(u)).
    void set_closed_neighbourhood(const NeighbourGraph& graph, std::int32_t u) {
        ++gen_;
        const auto uu = static_cast<std::size_t>(u);
        stamp_[uu] = gen_;
        for (const std::int32_t* p = graph.begin(uu); p != graph.end(uu); ++p) {
            stamp_[static_cast<std::size_t>(*p)] = gen_;
        }
    }
    bool operator[](std::int32_t w) const { return stamp_[static_cast<std::size_t>(w)] == gen_; }

private:
    std::vector<std::uint32_t> stamp_;
    std::uint32_t gen_ = 0;
};

/// Number of rows of one group in the closed neighbourhood of each value, for the values
/// touched; reset costs only what was touched.
class NeighbourTally {
public:
    explicit NeighbourTally(std::size_t values) : count_(values, 0) {}
    void clear() {
        for (std::int32_t w : touched_) count_[static_cast<std::size_t>(w)] = 0;
        touched_.clear();
    }
    /// Adds `times` rows of value u: each counts in the closed neighbourhood of u.
    void add_closed_neighbourhood(const NeighbourGraph& graph, std::int32_t u, std::int32_t times = 1) {
        bump(u, times);
        const auto uu = static_cast<std::size_t>(u);
        for (const std::int32_t* p = graph.begin(uu); p != graph.end(uu); ++p) bump(*p, times);
    }
    std::int32_t operator[](std::int32_t w) const { return count_[static_cast<std::size_t>(w)]; }

private:
    void bump(std::int32_t w, std::int32_t times) {
        auto& c = count_[static_cast<std::size_t>(w)];
        if (c == 0) touched_.push_back(w);
        c += times;
    }
    std::vector<std::int32_t> count_;
    std::vector<std::int32_t> touched_;
};

/// The state of Algorithm 2: the colouring, the per-row neighbour counts inside each row's own
/// class, and the violation queue with its set-aside list.
///
/// Invariants between moves: members_[c] lists the rows of class c and pos_[r] is r's index
/// there (class_of_[r] = -1 for a suppressed row); own_[r] = D_V(r) for r's class V;
/// potential_ = sum(own_) / 2; every row with own_[r] > t(V) is queued or set aside.
class Engine {
public:
    Engine(const ValueTable& table, const NeighbourGraph& graph, const LossModel& loss,
           const XColorParams& params, const std::vector<std::int32_t>& initial)
        : table_(table), graph_(graph), loss_(loss), params_(params),
          n_(table.row_value.size()), m_(0), mark_a_(table.size()), mark_b_(table.size()),
          tally_(table.size()), value_count_(table.size(), 0), queue_(n_, loss.active() ? kLossBuckets : 1),
          state_(n_, kNone), aside_epoch_(n_, 0), in_aside_list_(n_, 0) {
        const std::size_t values = graph.size();
        if (values <= kDenseValues) {
            dense_.assign((values * values + 63) / 64, 0);
            for (std::size_t u = 0; u < values; ++u) {
                dense_[(u * values + u) >> 6] |= std::uint64_t{1} << ((u * values + u) & 63);
                for (const std::int32_t* p = graph.begin(u); p != graph.end(u); ++p) {
                    const std::size_t bit = u * values + static_cast<std::size_t>(*p);
                    dense_[bit >> 6] |= std::uint64_t{1} << (bit & 63);
                }
            }
        }
        for (std::int32_t c : initial) m_ = std::max(m_, static_cast<std::size_t>(c) + 1);
        members_.resize(m_);
        pos_.resize(n_);
        class_of_ = initial;
        for (std::size_t r = 0; r < n_; ++r) {
            auto& list = members_[static_cast<std::size_t>(initial[r])];
            pos_[r] = static_cast<std::int32_t>(list.size());
            list.push_back(static_cast<std::int32_t>(r));
        }
        if (loss_.active()) {
            extremes_of_.resize(m_);
            for (std::size_t c = 0; c < m_; ++c) extremes_of_[c].compute(loss_, class_begin(c), class_size(c));
        }
        allowed_.resize(m_);
        for (std::size_t c = 0; c < m_; ++c) allowed_[c] = allowed_neighbours(class_size(c), params.delta);
        class_seen_.assign(m_, 0);
        own_.assign(n_, 0);
        for (std::size_t c = 0; c < m_; ++c) count_class(c);
        potential_ = 0;
        for (std::int32_t d : own_) potential_ += d;
        potential_ /= 2;
    }

    std::int64_t potential() const { return potential_; }
    std::int64_t swaps() const { return static_cast<std::int64_t>(swap_log_classes_.size() / 2); }
    std::int64_t excess_moves() const { return excess_moves_; }
    std::int64_t transfers() const { return transfers_; }
    std::int64_t violations() const {
        std::int64_t count = 0;
        for (std::size_t r = 0; r < n_; ++r) count += is_violation(static_cast<std::int32_t>(r));
        return count;
    }

    /// Algorithm 2 lines 4-11, with set-aside and retry of violations that have no partner.
    void repair(XColorResult& result) {
        for (std::size_t c = 0; c < m_; ++c) refresh_class(c);
        while (true) {
            publish();
            if (!queue_.empty()) {
                const std::int32_t v = queue_.pop();
                state_[at(v)] = kNone;
                if (!try_exchange(v, nullptr, result)) set_aside(v);
                continue;
            }
            if (!retry_set_aside(result)) break;
        }
    }

    void publish() const {
        if (Progress* p = params_.progress) {
            p->queued.store(static_cast<std::int64_t>(queue_.size()), std::memory_order_relaxed);
            p->set_aside.store(aside_now_, std::memory_order_relaxed);
            p->swaps.store(swaps(), std::memory_order_relaxed);
        }
    }

    const std::vector<std::int32_t>& classes() const { return class_of_; }
    std::size_t class_count() const { return m_; }

    /// Phase 2 (Moves::Auto): local search on the total excess E. Passes over the violating
    /// rows (ascending) and, for each, makes the move that lowers E most (ties: least loss
    /// change, then lowest partner row), among swaps with any row of the first
    /// `search_limit` classes examined (outward) and transfers of the row alone to one of them
    /// when its class keeps >= k rows. Stops after a pass without a move. E drops by >= 1 per
    /// move, so the passes end.
    void reduce_excess(XColorResult& result) {
        bool moved = true;
        std::vector<std::int32_t> violating;
        while (moved) {
            moved = false;
            violating.clear();
            for (std::size_t r = 0; r < n_; ++r) {
                if (class_of_[r] >= 0 && is_violation(static_cast<std::int32_t>(r))) {
                    violating.push_back(static_cast<std::int32_t>(r));
                }
            }
            for (std::int32_t v : violating) {
                if (is_violation(v) && improve(v, result)) moved = true;
                publish();
            }
        }
    }

    /// Phase 3 (suppression): while a violation remains, leave out the row with the largest
    /// excess D - t (ties: larger D, lower row). A class that falls below k rows is dissolved:
    /// each of its rows moves, in row order, to the first class (outward) it can join without
    /// any row there exceeding its allowance, or is left out too. Each step removes a row or
    /// a class, so it ends.
    void suppress_violations(XColorResult& result) {
        while (true) {
            std::int32_t worst = -1;
            std::int64_t worst_excess = 0;
            for (std::size_t r = 0; r < n_; ++r) {
                const auto row = static_cast<std::int32_t>(r);
                if (class_of_[r] < 0 || !is_violation(row)) continue;
                const std::int64_t excess = own_[r] - allowed_[static_cast<std::size_t>(class_of_[r])];
                if (worst < 0 || excess > worst_excess ||
                    (excess == worst_excess && own_[r] > own_[at(worst)])) {
                    worst = row;
                    worst_excess = excess;
                }
            }
            if (worst < 0) return;
            const auto home = static_cast<std::size_t>(class_of_[at(worst)]);
            leave_out(worst, result);
            if (class_size(home) < params_.k && class_size(home) > 0) dissolve(home, result);
        }
    }
    std::int64_t set_aside_count() const { return set_aside_count_; }
    std::int64_t classes_examined() const { return classes_examined_; }
    bool is_violation(std::int32_t r) const {
        const std::int32_t c = class_of_[at(r)];
        return c >= 0 && own_[at(r)] > allowed_[static_cast<std::size_t>(c)];
    }

private:
    static constexpr std::size_t kLossBuckets = 1024;
    static constexpr std::size_t kDenseValues = 8192;  ///< up to 8 MiB of adjacency bits
    static constexpr std::size_t kExcessWindow = 64;   ///< classes examined per phase-2 step
    static constexpr std::uint8_t kNone = 0, kQueued = 1, kAside = 2;
    static std::size_t at(std::int32_t r) { return static_cast<std::size_t>(r); }

    std::size_t class_size(std::size_t c) const { return members_[c].size(); }
    const std::int32_t* class_begin(std::size_t c) const { return members_[c].data(); }
    const std::int32_t* class_end(std::size_t c) const { return members_[c].data() + members_[c].size(); }
    std::int32_t value_of(std::int32_t r) const { return table_.row_value[at(r)]; }

    /// tally_ := for every value w, the rows of class c (except `skip`) in N[w]. The class's
    /// rows are first counted per distinct value, so the cost is O(|c| + sum over its distinct
    /// values of their degree), not O(sum over its rows): merged classes can be large.
    void tally_class(std::size_t c, std::int32_t skip) {
        tally_.clear();
        distinct_.clear();
        for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
            if (*p == skip) continue;
            auto& k = value_count_[static_cast<std::size_t>(value_of(*p))];
            if (k++ == 0) distinct_.push_back(value_of(*p));
        }
        for (std::int32_t u : distinct_) {
            auto& k = value_count_[static_cast<std::size_t>(u)];
            tally_.add_closed_neighbourhood(graph_, u, k);
            k = 0;
        }
    }

    /// own_ for every member of class c from scratch.
    void count_class(std::size_t c) {
        tally_class(c, -1);
        // tally counts each member in its own closed neighbourhood: subtract it.
        for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
            own_[at(*p)] = tally_[value_of(*p)] - 1;
        }
        tally_.clear();
    }

    /// Queue priority of a violation: how much its departure lowers its class's loss, in
    /// 1/1024 steps of the largest possible drop (one whole column per QI).
    std::size_t priority(std::int32_t r, const GroupExtremes& extremes) const {
        if (!loss_.active()) return 0;
        const double gain = -extremes.departure(loss_, loss_.row(r));
        const double scaled = gain / static_cast<double>(loss_.dimensions()) *
                              static_cast<double>(kLossBuckets - 1);
        return static_cast<std::size_t>(std::clamp(scaled, 0.0, double(kLossBuckets - 1)));
    }

    /// Brings the queue in line with the violations of class c after its members changed.
    void refresh_class(std::size_t c) {
        if (loss_.active()) extremes_of_[c].compute(loss_, class_begin(c), class_size(c));
        for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
            const std::int32_t r = *p;
            auto& state = state_[at(r)];
            if (state == kAside) --aside_now_;
            if (is_violation(r)) {
                const std::size_t key = priority(r, extremes_of_[c]);
                if (state == kQueued) queue_.update(r, key);
                else { queue_.push(r, key); state = kQueued; }
            } else {
                if (state == kQueued) queue_.remove(r);
                state = kNone;
            }
        }
    }

    void set_aside(std::int32_t v) {
        ++set_aside_count_;
        ++aside_now_;
        state_[at(v)] = kAside;
        aside_epoch_[at(v)] = swap_log_classes_.size() / 2;
        if (!in_aside_list_[at(v)]) {
            in_aside_list_[at(v)] = 1;
            aside_.push_back(v);
        }
    }

    /// A set-aside violation can only have gained a partner in a class that changed since it
    /// was set aside (its own class has not, or it would have been re-queued): examine those.
    /// Returns true after the first swap it makes, false when none of them can move.
    bool retry_set_aside(XColorResult& result) {
        std::size_t keep = 0;
        for (std::size_t i = 0; i < aside_.size(); ++i) {
            const std::int32_t v = aside_[i];
            if (state_[at(v)] != kAside) { in_aside_list_[at(v)] = 0; continue; }
            aside_[keep++] = v;
        }
        aside_.resize(keep);
        const std::size_t epoch = swap_log_classes_.size() / 2;
        for (std::size_t i = 0; i < aside_.size(); ++i) {
            const std::int32_t v = aside_[i];
            if (state_[at(v)] != kAside || aside_epoch_[at(v)] == epoch) continue;
            changed_.clear();
            ++seen_gen_;
            for (std::size_t e = aside_epoch_[at(v)] * 2; e < swap_log_classes_.size(); ++e) {
                const auto c = static_cast<std::size_t>(swap_log_classes_[e]);
                if (class_seen_[c] != seen_gen_) { class_seen_[c] = seen_gen_; changed_.push_back(c); }
            }
            std::sort(changed_.begin(), changed_.end());
            aside_epoch_[at(v)] = epoch;
            if (try_exchange(v, &changed_, result)) return true;
        }
        return false;
    }

    /// Steps 2-3 of the loop for violation v: among exchangeable partners v' (v movable to the
    /// class V' of v', Lambda < 0) pick the one minimizing loss(V \ {v} ∪ {v'}) +
    /// loss(V' \ {v'} ∪ {v}) - loss(V) - loss(V'), then Lambda, then the lower row index; swap.
    /// `only` restricts the search to those classes (retries); otherwise classes are examined
    /// outward from v's own class (V+1, V-1, V+2, ...) until `search_limit` were examined and a
    /// partner was seen, so a colouring whose class order follows the QIs is searched near v first.
    bool try_exchange(std::int32_t v, const std::vector<std::size_t>* only, XColorResult& result) {
        const std::int32_t a = value_of(v);
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        mark_a_.set_closed_neighbourhood(graph_, a);
        // tally_[w]: members of V \ {v} in the closed neighbourhood of w, i.e. D_V(v') - [v~v'].
        tally_class(home, v);
        const std::int32_t own_v = own_[at(v)];
        const bool priced = loss_.active();
        double home_loss = 0.0;
        std::vector<double>& rest_lo = rest_lo_;  // per-column range of V \ {v}
        std::vector<double>& rest_hi = rest_hi_;
        if (priced) {
            home_loss = extremes_of_[home].loss();
            const std::size_t d = loss_.dimensions();
            rest_lo.assign(d, std::numeric_limits<double>::infinity());
            rest_hi.assign(d, -std::numeric_limits<double>::infinity());
            for (const std::int32_t* p = class_begin(home); p != class_end(home); ++p) {
                if (*p == v) continue;
                const double* x = loss_.row(*p);
                for (std::size_t i = 0; i < d; ++i) {
                    rest_lo[i] = std::min(rest_lo[i], x[i]);
                    rest_hi[i] = std::max(rest_hi[i], x[i]);
                }
            }
        }

        std::int32_t best = -1;
        double best_loss = 0.0;
        std::int64_t best_lambda = 0;
        std::int32_t best_own_v = 0;
        std::size_t examined = 0;
        const std::size_t total = only ? only->size() : m_ - 1;
        const std::size_t limit = params_.search_limit == 0 ? m_ : params_.search_limit;
        for (std::size_t step = 0; step < total; ++step) {
            if (best >= 0 && examined >= limit) break;
            const std::size_t c = only ? (*only)[step] : outward(home, step);
            if (c == home) continue;
            ++examined;
            std::int32_t d_c = 0;  // D_V'(v)
            for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
                d_c += mark_a_[value_of(*p)];
            }
            if (d_c > allowed_[c]) continue;  // not movable
            for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
                const std::int32_t w = *p;
                const std::int32_t b = value_of(w);
                const std::int32_t adjacent = mark_a_[b];
                const std::int64_t lambda = std::int64_t{d_c} - own_v + tally_[b] - own_[at(w)] - adjacent;
                if (lambda >= 0) continue;
                double loss_change = 0.0;
                if (priced) {
                    const GroupExtremes& away = extremes_of_[c];
                    const double* xv = loss_.row(v);
                    const double* xw = loss_.row(w);
                    double home_after = 0.0;
                    for (std::size_t i = 0; i < rest_lo.size(); ++i) {
                        home_after += loss_.cost(i, std::min(rest_lo[i], xw[i]), std::max(rest_hi[i], xw[i]));
                    }
                    loss_change = home_after + away.exchange(loss_, xw, xv) - home_loss - away.loss();
                }
                const bool better = best < 0 || loss_change < best_loss ||
                    (loss_change == best_loss && (lambda < best_lambda || (lambda == best_lambda && w < best)));
                if (better) {
                    best = w; best_loss = loss_change; best_lambda = lambda;
                    best_own_v = d_c - adjacent;
                }
            }
        }
        classes_examined_ += static_cast<std::int64_t>(examined);
        if (best < 0) return false;
        exchange(v, best, best_lambda, best_own_v, result);
        return true;
    }

    bool adjacent(std::int32_t a, std::int32_t b) const {
        if (!dense_.empty()) {
            const std::size_t bit = static_cast<std::size_t>(a) * graph_.size() + static_cast<std::size_t>(b);
            return (dense_[bit >> 6] >> (bit & 63)) & 1U;
        }
        return graph_.adjacent(a, b);
    }

    /// max(0, D - t): how far a row is over its allowance.
    static std::int64_t over(std::int64_t d, std::int64_t t) { return d > t ? d - t : 0; }

    std::int64_t class_excess(std::size_t c) const {
        std::int64_t total = 0;
        for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
            total += over(own_[at(*p)], allowed_[c]);
        }
        return total;
    }

    /// Takes row v out of its class, updating the counts of the rows left there.
    void detach(std::int32_t v) {
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        const std::int32_t a = value_of(v);
        auto& list = members_[home];
        const std::int32_t last = list.back();
        list[at(pos_[at(v)])] = last;
        pos_[at(last)] = pos_[at(v)];
        list.pop_back();
        for (std::int32_t y : list) {
            if (adjacent(a, value_of(y))) { own_[at(y)] -= 1; potential_ -= 1; }
        }
        class_of_[at(v)] = -1;
        allowed_[home] = allowed_neighbours(list.size(), params_.delta);
        if (loss_.active()) extremes_of_[home].compute(loss_, class_begin(home), class_size(home));
    }

    /// Puts a detached row v into class c, updating every count that changes.
    void attach(std::int32_t v, std::size_t c) {
        const std::int32_t a = value_of(v);
        std::int32_t own = 0;
        for (std::int32_t y : members_[c]) {
            if (adjacent(a, value_of(y))) { own_[at(y)] += 1; ++own; }
        }
        own_[at(v)] = own;
        potential_ += own;
        pos_[at(v)] = static_cast<std::int32_t>(members_[c].size());
        members_[c].push_back(v);
        class_of_[at(v)] = static_cast<std::int32_t>(c);
        allowed_[c] = allowed_neighbours(members_[c].size(), params_.delta);
        if (loss_.active()) extremes_of_[c].compute(loss_, class_begin(c), class_size(c));
    }

    void leave_out(std::int32_t v, XColorResult& result) {
        detach(v);
        result.suppressed_rows.push_back(v);
    }

    /// Moves the rows of an undersized class where they fit, or leaves them out.
    void dissolve(std::size_t c, XColorResult& result) {
        std::vector<std::int32_t> rows(class_begin(c), class_end(c));
        std::sort(rows.begin(), rows.end());
        for (std::int32_t v : rows) {
            detach(v);
            bool placed = false;
            for (std::size_t step = 0; step + 1 < m_ && !placed; ++step) {
                const std::size_t target = outward(c, step);
                if (class_size(target) < params_.k || !fits(v, target)) continue;
                attach(v, target);
                placed = true;
            }
            if (!placed) result.suppressed_rows.push_back(v);
        }
    }

    /// True iff adding v to class c leaves every row of c (and v) within its allowance.
    bool fits(std::int32_t v, std::size_t c) const {
        const std::int32_t a = value_of(v);
        const std::int32_t t = allowed_neighbours(class_size(c) + 1, params_.delta);
        std::int32_t own = 0;
        for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
            const bool near = adjacent(a, value_of(*p));
            own += near;
            if (own_[at(*p)] + near > t) return false;
        }
        return own <= t;
    }

    /// Change of E if v (class V) and w (class W) swap; t(V) and t(W) do not change.
    std::int64_t swap_excess_change(std::int32_t v, std::int32_t w) const {
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        const auto away = static_cast<std::size_t>(class_of_[at(w)]);
        const std::int32_t a = value_of(v), b = value_of(w);
        const std::int64_t th = allowed_[home], ta = allowed_[away];
        std::int64_t change = 0, own_w = 0, own_v = 0;
        for (const std::int32_t* p = class_begin(home); p != class_end(home); ++p) {
            const std::int32_t y = *p;
            if (y == v) continue;
            const std::int64_t nb = adjacent(b, value_of(y));
            own_w += nb;
            change += over(own_[at(y)] - adjacent(a, value_of(y)) + nb, th) - over(own_[at(y)], th);
        }
        for (const std::int32_t* p = class_begin(away); p != class_end(away); ++p) {
            const std::int32_t y = *p;
            if (y == w) continue;
            const std::int64_t na = adjacent(a, value_of(y));
            own_v += na;
            change += over(own_[at(y)] - adjacent(b, value_of(y)) + na, ta) - over(own_[at(y)], ta);
        }
        change += over(own_w, th) - over(own_[at(v)], th);
        change += over(own_v, ta) - over(own_[at(w)], ta);
        return change;
    }

    /// Change of E if v moves alone from its class V to class W (sizes |V|-1 and |W|+1).
    std::int64_t transfer_excess_change(std::int32_t v, std::size_t away) const {
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        const std::int32_t a = value_of(v);
        const std::int64_t th = allowed_neighbours(class_size(home) - 1, params_.delta);
        const std::int64_t ta = allowed_neighbours(class_size(away) + 1, params_.delta);
        std::int64_t change = -class_excess(home) - class_excess(away), own_v = 0;
        for (const std::int32_t* p = class_begin(home); p != class_end(home); ++p) {
            if (*p != v) change += over(own_[at(*p)] - adjacent(a, value_of(*p)), th);
        }
        for (const std::int32_t* p = class_begin(away); p != class_end(away); ++p) {
            const std::int64_t na = adjacent(a, value_of(*p));
            own_v += na;
            change += over(own_[at(*p)] + na, ta);
        }
        return change + over(own_v, ta);
    }

    /// One phase-2 step for violation v; returns true when it made a move.
    bool improve(std::int32_t v, XColorResult& result) {
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        const bool can_leave = class_size(home) > params_.k;
        const std::size_t window = params_.search_limit == 0 ? kExcessWindow
                                                            : std::min(params_.search_limit, kExcessWindow);
        const std::size_t limit = std::min(m_ - 1, window);
        std::int64_t best_change = 0;
        double best_loss = 0.0;
        std::int32_t best_partner = -2;  // -2: none; -1: transfer
        std::size_t best_class = 0;
        const double* xv = loss_.active() ? loss_.row(v) : nullptr;
        for (std::size_t step = 0; step < limit; ++step) {
            const std::size_t c = outward(home, step);
            auto consider = [&](std::int64_t change, double loss_change, std::int32_t partner) {
                if (change >= 0) return;
                const bool better = best_partner == -2 || change < best_change ||
                    (change == best_change && (loss_change < best_loss ||
                     (loss_change == best_loss && partner < best_partner)));
                if (better) {
                    best_change = change; best_loss = loss_change; best_partner = partner; best_class = c;
                }
            };
            if (can_leave) {
                double loss_change = 0.0;
                if (xv) {
                    loss_change = extremes_of_[home].departure(loss_, xv) +
                                  arrival(extremes_of_[c], xv) - extremes_of_[c].loss();
                }
                consider(transfer_excess_change(v, c), loss_change, -1);
            }
            for (const std::int32_t* p = class_begin(c); p != class_end(c); ++p) {
                const std::int32_t w = *p;
                double loss_change = 0.0;
                if (xv) {
                    const double* xw = loss_.row(w);
                    loss_change = extremes_of_[home].exchange(loss_, xv, xw) +
                                  extremes_of_[c].exchange(loss_, xw, xv) -
                                  extremes_of_[home].loss() - extremes_of_[c].loss();
                }
                consider(swap_excess_change(v, w), loss_change, w);
            }
        }
        if (best_partner == -2) return false;
        if (params_.trace) {
            result.move_log.insert(result.move_log.end(),
                                   {v, best_partner, static_cast<std::int64_t>(best_class), best_change});
        }
        ++excess_moves_;
        if (best_partner == -1) {
            ++transfers_;
            detach(v);
            attach(v, best_class);
        } else {
            const std::int32_t w = best_partner;
            detach(v);
            detach(w);
            attach(v, best_class);
            attach(w, home);
        }
        return true;
    }

    /// loss(G ∪ {x}) for a group with the given extremes.
    double arrival(const GroupExtremes& extremes, const double* x) const {
        return extremes.with(loss_, x);
    }

    /// The step-th class other than `home` in the order home+1, home-1, home+2, home-2, ...
    /// (wrapping around), covering every other class once for step < m - 1.
    std::size_t outward(std::size_t home, std::size_t step) const {
        const std::size_t distance = step / 2 + 1;
        const std::size_t half = (m_ - 1) / 2;  // distances 1..half are taken on both sides
        if (distance <= half) {
            return step % 2 == 0 ? (home + distance) % m_ : (home + m_ - distance) % m_;
        }
        // m - 1 even: done; odd: one class remains, diametrically opposite.
        return (home + half + 1) % m_;
    }

    /// Swaps v (class V) and w (class V') and updates exactly what changed: the neighbour
    /// counts of the members of V and V', the potential, and the queue entries of both classes.
    void exchange(std::int32_t v, std::int32_t w, std::int64_t lambda, std::int32_t own_v_after,
                  XColorResult& result) {
        const auto home = static_cast<std::size_t>(class_of_[at(v)]);
        const auto away = static_cast<std::size_t>(class_of_[at(w)]);
        const std::int32_t a = value_of(v);
        const std::int32_t b = value_of(w);
        mark_a_.set_closed_neighbourhood(graph_, a);
        mark_b_.set_closed_neighbourhood(graph_, b);
        std::int32_t own_w_after = 0;
        for (const std::int32_t* p = class_begin(home); p != class_end(home); ++p) {
            if (*p == v) continue;
            const std::int32_t x = value_of(*p);
            own_[at(*p)] += mark_b_[x] - mark_a_[x];
            own_w_after += mark_b_[x];
        }
        for (const std::int32_t* p = class_begin(away); p != class_end(away); ++p) {
            if (*p == w) continue;
            const std::int32_t x = value_of(*p);
            own_[at(*p)] += mark_a_[x] - mark_b_[x];
        }
        own_[at(v)] = own_v_after;
        own_[at(w)] = own_w_after;
        members_[home][at(pos_[at(v)])] = w;
        members_[away][at(pos_[at(w)])] = v;
        std::swap(pos_[at(v)], pos_[at(w)]);
        std::swap(class_of_[at(v)], class_of_[at(w)]);
        potential_ += lambda;
        swap_log_classes_.push_back(static_cast<std::int32_t>(home));
        swap_log_classes_.push_back(static_cast<std::int32_t>(away));
        if (params_.trace) {
            result.swap_log.push_back(v);
            result.swap_log.push_back(w);
            result.swap_log.push_back(lambda);
        }
        refresh_class(home);
        refresh_class(away);
    }

    const ValueTable& table_;
    const NeighbourGraph& graph_;
    const LossModel& loss_;
    const XColorParams& params_;
    std::size_t n_, m_;
    std::vector<std::vector<std::int32_t>> members_;  ///< rows of each class (any order)
    std::vector<std::int32_t> pos_, class_of_, own_, allowed_;
    ValueMark mark_a_, mark_b_;
    NeighbourTally tally_;
    std::vector<std::int32_t> value_count_;  ///< scratch for tally_class, all zero between uses
    std::vector<std::int32_t> distinct_;
    ViolationQueue queue_;
    std::vector<std::uint8_t> state_;
    std::vector<std::size_t> aside_epoch_;
    std::vector<std::uint8_t> in_aside_list_;
    std::vector<std::int32_t> aside_;
    std::vector<std::int32_t> swap_log_classes_;  ///< (V, V') of every swap so far
    std::vector<std::uint32_t> class_seen_;
    std::uint32_t seen_gen_ = 0;
    std::vector<std::size_t> changed_;
    std::vector<GroupExtremes> extremes_of_;  ///< per class, kept current (loss only)
    std::vector<double> rest_lo_, rest_hi_;
    std::int64_t potential_ = 0;
    std::int64_t set_aside_count_ = 0;
    std::int64_t aside_now_ = 0;
    std::int64_t excess_moves_ = 0;
    std::int64_t transfers_ = 0;
    std::vector<std::uint64_t> dense_;  ///< value adjacency bit matrix when the graph is small
    std::int64_t classes_examined_ = 0;
};

}  // namespace

namespace {

/// The group size s >= k (up to 2k) that lets each row have the most neighbours relative to
/// the group, i.e. maximizes (t(s) + 1) / s (ties: the smaller s). t is a floor, so sizes of
/// exactly k often waste allowance: with delta = 0.8, a group of 10 allows 1 neighbour (11%)
/// but a group of 11 allows 2 (20%). A clique of c rows needs c <= sum over groups of
/// (t(G) + 1), which this choice maximizes among equitable partitions with sizes >= k.
std::size_t roomiest_size(std::size_t k, double delta) {
    std::size_t best = k;
    for (std::size_t s = k + 1; s <= 2 * k; ++s) {
        const auto room = [&](std::size_t size) {
            return static_cast<double>(allowed_neighbours(size, delta) + 1) / static_cast<double>(size);
        };
        if (room(s) > room(best) + 1e-12) best = s;
    }
    return best;
}

XColorResult run_once(const ValueTable& table, const NeighbourGraph& graph,
                      const LossModel& loss, const XColorParams& params,
                      const std::vector<std::int32_t>* initial_classes, std::size_t m,
                      bool allow_excess);

}  // namespace

XColorResult run_xcolor(const ValueTable& table, const NeighbourGraph& graph,
                        const LossModel& loss, const XColorParams& params,
                        const std::vector<std::int32_t>* initial_classes) {
    const std::size_t n = table.row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    const bool stronger = params.moves == Moves::Auto;
    if (!stronger || initial_classes != nullptr) {
        return run_once(table, graph, loss, params, initial_classes, n / params.k, stronger);
    }
    XColorParams quiet = params;  // suppression, if asked for, only on the final grouping
    quiet.suppress = false;
    XColorResult first = run_once(table, graph, loss, quiet, nullptr, n / params.k, false);
    if (first.stats.remaining_violations == 0) return first;
    // Swaps stalled: regroup into the roomiest size (fewer, larger groups, still >= k) and
    // repair again; keep whichever leaves fewer violating rows, then reduce its excess.
    const std::size_t size = roomiest_size(params.k, params.delta);
    XColorResult best = std::move(first);
    if (size > params.k && n / size >= 1) {
        XColorResult regrouped = run_once(table, graph, loss, quiet, nullptr, n / size, false);
        regrouped.stats.regrouped_size = static_cast<std::int64_t>(size);
        if (regrouped.stats.remaining_violations < best.stats.remaining_violations) {
            regrouped.stats.seconds_initialize += best.stats.seconds_initialize;
            regrouped.stats.seconds_repair += best.stats.seconds_repair;
            best = std::move(regrouped);
        } else {
            best.stats.seconds_initialize += regrouped.stats.seconds_initialize;
            best.stats.seconds_repair += regrouped.stats.seconds_repair;
        }
    }
    if (best.stats.remaining_violations == 0) return best;
    // Phase 2 (and suppression) on the chosen grouping, which is this run's starting point.
    XColorResult finished = run_once(table, graph, loss, params, &best.groups, 0, true);
    finished.stats.regrouped_size = best.stats.regrouped_size;
    finished.stats.initial_violations = best.stats.initial_violations;
    finished.stats.initial_potential = best.stats.initial_potential;
    finished.stats.swaps += best.stats.swaps;
    finished.stats.stalled_violations = best.stats.remaining_violations;
    finished.stats.seconds_initialize += best.stats.seconds_initialize;
    finished.stats.seconds_repair += best.stats.seconds_repair;
    if (params.trace) {
        finished.initial_groups = std::move(best.initial_groups);
        best.swap_log.insert(best.swap_log.end(), finished.swap_log.begin(), finished.swap_log.end());
        finished.swap_log = std::move(best.swap_log);
    }
    return finished;
}

namespace {

XColorResult run_once(const ValueTable& table, const NeighbourGraph& graph,
                      const LossModel& loss, const XColorParams& params,
                      const std::vector<std::int32_t>* initial_classes, std::size_t m,
                      bool allow_excess) {
    const std::size_t n = table.row_value.size();
    if (graph.size() != table.size()) throw std::invalid_argument("graph and value table differ in size");
    if (initial_classes) {
        if (initial_classes->size() != n) throw std::invalid_argument("initial colouring needs one class per row");
        std::int32_t top = -1;
        for (std::int32_t c : *initial_classes) {
            if (c < 0) throw std::invalid_argument("initial classes must be >= 0");
            top = std::max(top, c);
        }
        m = static_cast<std::size_t>(top) + 1;
        std::vector<std::uint8_t> used(m, 0);
        for (std::int32_t c : *initial_classes) used[static_cast<std::size_t>(c)] = 1;
        if (std::find(used.begin(), used.end(), 0) != used.end()) {
            throw std::invalid_argument("initial classes must use every id 0..m-1");
        }
    }

    XColorResult result;
    XColorStats& stats = result.stats;
    stats.n = static_cast<std::int64_t>(n);
    stats.m = static_cast<std::int64_t>(m);
    const std::vector<std::int64_t> value_degree = row_degrees(table, graph);
    std::vector<std::int64_t> degree(n);
    std::int64_t degree_sum = 0;
    for (std::size_t r = 0; r < n; ++r) {
        degree[r] = value_degree[static_cast<std::size_t>(table.row_value[r])];
        stats.max_degree = std::max(stats.max_degree, degree[r]);
        degree_sum += degree[r];
    }
    stats.row_edges = degree_sum / 2;

    if (params.progress) params.progress->phase.store(Progress::kInitialize, std::memory_order_relaxed);
    auto start = Clock::now();
    std::vector<std::int32_t> initial;
    if (initial_classes) {
        initial = *initial_classes;
    } else if (params.init == Init::Qi) {
        if (!loss.active()) throw std::invalid_argument("the QI-aware start needs QI columns");
        initial = initialize_in_blocks(degree, qi_order(loss, n, params.k), m, params.init_block);
    } else {
        initial = initialize(degree, m);
    }
    if (params.trace) result.initial_groups = initial;
    Engine engine(table, graph, loss, params, initial);
    stats.seconds_initialize = seconds_since(start);
    stats.initial_potential = engine.potential();
    stats.initial_violations = engine.violations();

    if (params.progress) params.progress->phase.store(Progress::kRepair, std::memory_order_relaxed);
    start = Clock::now();
    engine.repair(result);
    stats.stalled_violations = engine.violations();
    if (allow_excess && stats.stalled_violations > 0) engine.reduce_excess(result);
    stats.seconds_repair = seconds_since(start);
    start = Clock::now();
    if (params.suppress) engine.suppress_violations(result);
    stats.seconds_suppress = seconds_since(start);
    std::sort(result.suppressed_rows.begin(), result.suppressed_rows.end());
    stats.suppressed = static_cast<std::int64_t>(result.suppressed_rows.size());
    engine.publish();
    if (params.progress) params.progress->phase.store(Progress::kDone, std::memory_order_relaxed);

    // Classes emptied by suppression are dropped; the others keep their order.
    result.groups = engine.classes();
    std::vector<std::int32_t> renumber(m, -1);
    for (std::int32_t c : result.groups) if (c >= 0) renumber[static_cast<std::size_t>(c)] = 0;
    std::int32_t next = 0;
    for (auto& id : renumber) if (id == 0) id = next++;
    for (auto& c : result.groups) if (c >= 0) c = renumber[static_cast<std::size_t>(c)];
    m = static_cast<std::size_t>(next);
    stats.m = static_cast<std::int64_t>(m);
    stats.final_potential = engine.potential();
    stats.swaps = engine.swaps();
    stats.set_aside = engine.set_aside_count();
    stats.excess_moves = engine.excess_moves();
    stats.transfers = engine.transfers();
    stats.classes_examined = engine.classes_examined();
    std::vector<std::uint8_t> bad_group(m, 0);
    for (std::size_t r = 0; r < n; ++r) {
        const auto row = static_cast<std::int32_t>(r);
        if (result.groups[r] >= 0 && engine.is_violation(row)) {
            result.violating_rows.push_back(row);
            bad_group[static_cast<std::size_t>(result.groups[r])] = 1;
        }
    }
    for (std::size_t c = 0; c < m; ++c) {
        if (bad_group[c]) result.violating_groups.push_back(static_cast<std::int32_t>(c));
    }
    stats.remaining_violations = static_cast<std::int64_t>(result.violating_rows.size());
    return result;
}

}  // namespace

}  // namespace proxanon
