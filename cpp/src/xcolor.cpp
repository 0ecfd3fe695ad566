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
/// Invariants between swaps: members_[class_start_[c] .. class_start_[c+1]) are the rows of
/// class c and pos_[r] is r's index there; own_[r] = D_V(r) for r's class V;
/// potential_ = sum(own_) / 2; every row with own_[r] > t(V) is queued or set aside.
class Engine {
public:
    Engine(const ValueTable& table, const NeighbourGraph& graph, const LossModel& loss,
           const XColorParams& params, const std::vector<std::int32_t>& initial)
        : table_(table), graph_(graph), loss_(loss), params_(params),
          n_(table.row_value.size()), m_(0), mark_a_(table.size()), mark_b_(table.size()),
          tally_(table.size()), value_count_(table.size(), 0), queue_(n_, loss.active() ? kLossBuckets : 1),
          state_(n_, kNone), aside_epoch_(n_, 0), in_aside_list_(n_, 0) {
        for (std::int32_t c : initial) m_ = std::max(m_, static_cast<std::size_t>(c) + 1);
        class_start_.assign(m_ + 1, 0);
        for (std::int32_t c : initial) class_start_[static_cast<std::size_t>(c) + 1] += 1;
        for (std::size_t c = 0; c < m_; ++c) class_start_[c + 1] += class_start_[c];
        members_.resize(n_);
        pos_.resize(n_);
        class_of_ = initial;
        std::vector<std::int64_t> fill(class_start_.begin(), class_start_.end() - 1);
        for (std::size_t r = 0; r < n_; ++r) {
            const auto c = static_cast<std::size_t>(initial[r]);
            pos_[r] = static_cast<std::int32_t>(fill[c]);
            members_[static_cast<std::size_t>(fill[c]++)] = static_cast<std::int32_t>(r);
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
    std::int64_t set_aside_count() const { return set_aside_count_; }
    std::int64_t swaps() const { return static_cast<std::int64_t>(swap_log_classes_.size() / 2); }
    std::int64_t classes_examined() const { return classes_examined_; }
    bool is_violation(std::int32_t r) const {
        return own_[at(r)] > allowed_[static_cast<std::size_t>(class_of_[at(r)])];
    }

private:
    static constexpr std::size_t kLossBuckets = 1024;
    static constexpr std::uint8_t kNone = 0, kQueued = 1, kAside = 2;
    static std::size_t at(std::int32_t r) { return static_cast<std::size_t>(r); }

    std::size_t class_size(std::size_t c) const {
        return static_cast<std::size_t>(class_start_[c + 1] - class_start_[c]);
    }
    const std::int32_t* class_begin(std::size_t c) const { return members_.data() + class_start_[c]; }
    const std::int32_t* class_end(std::size_t c) const { return members_.data() + class_start_[c + 1]; }
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
        std::swap(members_[at(pos_[at(v)])], members_[at(pos_[at(w)])]);
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
    std::vector<std::int64_t> class_start_;
    std::vector<std::int32_t> members_, pos_, class_of_, own_, allowed_;
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
    std::int64_t classes_examined_ = 0;
};

}  // namespace

XColorResult run_xcolor(const ValueTable& table, const NeighbourGraph& graph,
                        const LossModel& loss, const XColorParams& params,
                        const std::vector<std::int32_t>* initial_classes) {
    const std::size_t n = table.row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (graph.size() != table.size()) throw std::invalid_argument("graph and value table differ in size");
    std::size_t m = n / params.k;
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
    stats.seconds_repair = seconds_since(start);
    engine.publish();
    if (params.progress) params.progress->phase.store(Progress::kDone, std::memory_order_relaxed);

    result.groups = engine.classes();
    stats.final_potential = engine.potential();
    stats.swaps = engine.swaps();
    stats.set_aside = engine.set_aside_count();
    stats.classes_examined = engine.classes_examined();
    std::vector<std::uint8_t> bad_group(m, 0);
    for (std::size_t r = 0; r < n; ++r) {
        const auto row = static_cast<std::int32_t>(r);
        if (engine.is_violation(row)) {
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

}  // namespace proxanon
