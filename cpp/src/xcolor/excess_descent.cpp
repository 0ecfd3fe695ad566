#include "proxanon/xcolor/excess_descent.hpp"

#include <algorithm>
#include <vector>

#include "proxanon/xcolor/progress_cap.hpp"

namespace proxanon {

namespace {

constexpr std::size_t kExcessWindow = 64;  ///< classes examined per step
/// Steps that find no move before the descent stops: one per kRowsPerFruitless rows, and at
/// least kFruitlessFloor, so that small tables descend to the end. Each pass retries every
/// violating row at O(64 k^2) adjacency tests a step; on a table where few of them can move,
/// passes of a few moves each added up to a minute at 50k rows.
constexpr std::size_t kRowsPerFruitless = 8;
constexpr std::size_t kFruitlessFloor = std::size_t{1} << 12;
/// The cap's window of steps (ProgressCap): one per kRowsPerCapWindow rows, at least
/// kFruitlessFloor. A step costs up to 64 classes read: at 1M rows, a window is ~8 s.
constexpr std::size_t kRowsPerCapWindow = 32;

/// max(0, D - t): how far a row is over its allowance.
std::int64_t over(std::int64_t d, std::int64_t t) { return d > t ? d - t : 0; }

}  // namespace

void ExcessDescent::run(XColorResult& result) {
    std::size_t fruitless_left = std::max(col_.rows() / kRowsPerFruitless, kFruitlessFloor);
    work_left_ = std::max(col_.rows(), kFruitlessFloor) * work_per_row_;
    bool moved = true;
    std::vector<std::int32_t> violating;
    std::size_t steps = 0;
    ProgressCap cap(std::max(col_.rows() / kRowsPerCapWindow, kFruitlessFloor), col_.violations(), col_.rows());
    while (moved) {
        moved = false;
        violating.clear();
        for (std::size_t r = 0; r < col_.rows(); ++r) {
            if (col_.is_violation(static_cast<std::int32_t>(r))) violating.push_back(static_cast<std::int32_t>(r));
        }
        for (std::int32_t v : violating) {
            poll(options_.interrupt);
            if (work_left_ == 0) return;
            if (!col_.is_violation(v)) continue;
            // O(n) a check, once per window of at least n / 32 steps.
            if (++steps % cap.window() == 0 && cap.stop(steps, col_.violations())) {
                capped_ = cap.capped();
                return;
            }
            if (improve(v, result)) {
                moved = true;
            } else if (--fruitless_left == 0) {
                return;
            }
        }
    }
}

void ExcessDescent::read_home(std::int32_t v) {
    const std::int32_t* own = col_.own_counts();
    const std::int32_t* value = col_.row_values();
    const auto home = static_cast<std::size_t>(col_.class_of(v));
    const AdjacentTo near_a(col_.neighbours(), value[v]);
    const std::int64_t th = col_.allowed(home);
    const std::int64_t th_less = allowed_neighbours(col_.size(home) - 1, col_.delta());
    home_values_.clear();
    std::int64_t over_now = 0;  // sum over V \ {v} of max(0, D_V(y) - t(V))
    for (const std::int32_t* p = col_.begin(home); p != col_.end(home); ++p) {
        const std::int32_t y = *p;
        if (y == v) continue;
        const auto u = static_cast<std::size_t>(value[y]);
        if (value_slot_[u] < 0) {
            value_slot_[u] = static_cast<std::int32_t>(home_values_.size());
            // D_V(y) less [y ~ v]: the same for every row of value u (rows of one value in one
            // class have the same D).
            home_values_.push_back({value[y], 0, own[y] - near_a(value[y])});
        }
        ++home_values_[static_cast<std::size_t>(value_slot_[u])].rows;
        over_now += over(own[y], th);
    }
    home_base_ = -over_now;
    leaving_ = -over_now - over(own[v], th);  // less E(V), plus E(V \ {v}) below
    for (const HomeValue& entry : home_values_) {
        value_slot_[static_cast<std::size_t>(entry.value)] = -1;
        if (entry.base >= th) home_base_ += entry.rows * (entry.base - th);
        leaving_ += entry.rows * over(entry.base, th_less);
    }
    // On the sorted structure a value's neighbours are an interval of value ids: V's values
    // in order with running sums answer home_change by two binary searches.
    if (!sorted_) return;
    std::sort(home_values_.begin(), home_values_.end(),
              [](const HomeValue& x, const HomeValue& y) { return x.value < y.value; });
    home_rows_before_.assign(home_values_.size() + 1, 0);
    home_pressed_before_.assign(home_values_.size() + 1, 0);
    for (std::size_t i = 0; i < home_values_.size(); ++i) {
        const HomeValue& entry = home_values_[i];
        home_rows_before_[i + 1] = home_rows_before_[i] + entry.rows;
        home_pressed_before_[i + 1] = home_pressed_before_[i] + (entry.base >= th ? entry.rows : 0);
    }
}

/// Change of E over V \ {v} if v (value a, class V, read by read_home) is replaced by a row
/// of value b, and the number of such rows' neighbours in V \ {v}; t(V) does not change.
/// A row y of V \ {v} with base D_V(y) - [y ~ v] below t(V) is over t(V) neither with
/// [y ~ b] added nor now unless D_V(y) > t(V), which home_base_ counts; one at t(V) or above
/// is over by base - t(V) + [y ~ b]. So the change is home_base_ plus the pressed rows that
/// are b's neighbours: one adjacency test per distinct value of V, not per row.
std::pair<std::int64_t, std::int64_t> ExcessDescent::home_change(std::int32_t b, std::int64_t th) const {
    if (sorted_) {  // th is t(V), by which read_home marked the pressed values
        const auto [first, last] = col_.neighbours().in_interval(home_values_.begin(), home_values_.end(), b,
                                                                 [](const HomeValue& x) { return x.value; });
        const auto lo = static_cast<std::size_t>(first - home_values_.begin());
        const auto hi = static_cast<std::size_t>(last - home_values_.begin());
        return {home_base_ + home_pressed_before_[hi] - home_pressed_before_[lo],
                home_rows_before_[hi] - home_rows_before_[lo]};
    }
    const AdjacentTo near_b(col_.neighbours(), b);
    std::int64_t change = home_base_, own_w = 0;
    for (const HomeValue& entry : home_values_) {
        if (!near_b(entry.value)) continue;
        own_w += entry.rows;
        if (entry.base >= th) change += entry.rows;
    }
    return {change, own_w};
}

void ExcessDescent::read_away(std::int32_t a, std::size_t away) {
    const std::int32_t* own = col_.own_counts();
    const std::int32_t* value = col_.row_values();
    const std::int64_t ta = col_.allowed(away);
    const std::int64_t ta_more = allowed_neighbours(col_.size(away) + 1, col_.delta());
    pressed_.clear();
    pressed_rows_ = 0;
    v_in_away_ = 0;
    joining_ = 0;
    const AdjacentTo near_a(col_.neighbours(), a);
    for (const std::int32_t* p = col_.begin(away); p != col_.end(away); ++p) {
        const std::int32_t y = *p;
        const bool near = near_a(value[y]);
        v_in_away_ += near;
        joining_ += over(own[y] + near, ta_more) - over(own[y], ta);
        if (own[y] + near <= ta) continue;
        // Pressed: the same for every row of its value (their D and [y ~ v] are equal).
        const auto u = static_cast<std::size_t>(value[y]);
        if (value_slot_[u] < 0) {
            value_slot_[u] = static_cast<std::int32_t>(pressed_.size());
            pressed_.push_back({value[y], 0, own[y] + near, over(own[y], ta)});
        }
        ++pressed_[static_cast<std::size_t>(value_slot_[u])].rows;
        ++pressed_rows_;
    }
    joining_ += over(v_in_away_, ta_more);
    for (const Pressed& entry : pressed_) value_slot_[static_cast<std::size_t>(entry.value)] = -1;
    // On the sorted structure: W's pressed values in order, with
    // the change of E over them if no row near b left, and running sums of what being b's
    // neighbour subtracts from it (away_change by two binary searches).
    if (!sorted_) return;
    std::sort(pressed_.begin(), pressed_.end(),
              [](const Pressed& x, const Pressed& y) { return x.value < y.value; });
    away_far_ = 0;
    away_near_before_.assign(pressed_.size() + 1, 0);
    for (std::size_t i = 0; i < pressed_.size(); ++i) {
        const Pressed& y = pressed_[i];
        away_far_ += y.rows * (over(y.with_v, ta) - y.over_now);
        away_near_before_[i + 1] = away_near_before_[i] + y.rows * (over(y.with_v - 1, ta) - over(y.with_v, ta));
    }
}

/// Change of E over W \ {w} if w (value b, class W) is replaced by v, and v's neighbours in
/// W \ {w}; the same for every row of w's value in W (their D are equal). A row y of W not
/// pressed has D_W(y) + [y ~ v] <= t(W), so it is over t(W) neither now nor after: it adds
/// nothing. The pressed rows are read by value: w itself is one of b's rows when b is pressed.
std::pair<std::int64_t, std::int64_t> ExcessDescent::away_change(std::int32_t a, std::int32_t b,
                                                                 std::size_t away) const {
    const std::int64_t ta = col_.allowed(away);
    if (sorted_) {
        // Every pressed row as if far from b, plus what nearness changes over b's interval,
        // less the departing row itself when b is pressed (b is its own neighbour).
        const auto value_of = [](const Pressed& x) { return x.value; };
        const auto [lo, hi] = col_.neighbours().in_interval(pressed_.begin(), pressed_.end(), b, value_of);
        std::int64_t change = away_far_ + away_near_before_[static_cast<std::size_t>(hi - pressed_.begin())] -
                              away_near_before_[static_cast<std::size_t>(lo - pressed_.begin())];
        const auto self = std::lower_bound(lo, hi, b, [](const Pressed& x, std::int32_t id) { return x.value < id; });
        if (self != hi && self->value == b) change -= over(self->with_v - 1, ta) - self->over_now;
        return {change, v_in_away_ - col_.adjacent(a, b)};
    }
    const AdjacentTo near_b(col_.neighbours(), b);
    std::int64_t change = 0;
    for (const Pressed& y : pressed_) {
        const std::int64_t rows = y.rows - (y.value == b);
        change += rows * (over(y.with_v - near_b(y.value), ta) - y.over_now);
    }
    return {change, v_in_away_ - col_.adjacent(a, b)};
}

/// One step for violation v; returns true when it made a move.
bool ExcessDescent::improve(std::int32_t v, XColorResult& result) {
    const LossModel& loss = col_.loss();
    const auto home = static_cast<std::size_t>(col_.class_of(v));
    const bool can_leave = col_.size(home) > options_.k;
    const std::size_t window = options_.search_limit == 0
        ? kExcessWindow : std::min(options_.search_limit, kExcessWindow);
    const std::size_t limit = std::min(col_.classes() - 1, window);
    std::int64_t best_change = 0;
    double best_loss = 0.0;
    std::int32_t best_partner = -2;  // -2: none; -1: transfer
    std::size_t best_class = 0;
    const double* xv = loss.active() ? loss.row(v) : nullptr;
    const std::int32_t* own = col_.own_counts();
    const std::int32_t* value = col_.row_values();
    const std::int64_t th = col_.allowed(home);
    if (home_stamp_.empty()) {
        std::int32_t values = 0;
        for (std::size_t r = 0; r < col_.rows(); ++r) values = std::max(values, value[r] + 1);
        home_stamp_.assign(static_cast<std::size_t>(values), 0);
        away_stamp_.assign(static_cast<std::size_t>(values), 0);
        home_.resize(static_cast<std::size_t>(values));
        away_.resize(static_cast<std::size_t>(values));
        value_slot_.assign(static_cast<std::size_t>(values), -1);
    }
    const std::uint64_t step_stamp = ++stamp_;
    if (!charge(col_.size(home))) return false;  // read_home's reads
    read_home(v);
    for (std::size_t step = 0; step < limit; ++step) {
        const std::size_t c = col_.outward(home, step);
        if (!charge(2 * col_.size(c))) return false;  // read_away's and the loop's reads
        const std::uint64_t class_stamp = ++stamp_;
        read_away(value[v], c);
        const std::int64_t ta = col_.allowed(c);
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
                loss_change = col_.extremes(home).departure(loss, xv) +
                              col_.extremes(c).with(loss, xv) - col_.extremes(c).loss();
            }
            consider(leaving_ + joining_, loss_change, -1);
        }
        for (const std::int32_t* p = col_.begin(c); p != col_.end(c); ++p) {
            const std::int32_t w = *p;
            const auto b = static_cast<std::size_t>(value[w]);
            if (home_stamp_[b] != step_stamp) {
                if (!charge(col_.size(home))) return false;
                home_stamp_[b] = step_stamp;
                home_[b] = home_change(value[w], th);
            }
            if (away_stamp_[b] != class_stamp) {
                if (!charge(pressed_rows_)) return false;
                away_stamp_[b] = class_stamp;
                away_[b] = away_change(value[v], value[w], c);
            }
            const auto [in_home, own_w] = home_[b];
            const auto [in_away, own_v] = away_[b];
            const std::int64_t change = in_home + in_away + over(own_w, th) - over(own[v], th) +
                                        over(own_v, ta) - over(own[w], ta);
            // The loss change only decides among moves of the best change of E: not priced
            // for a move that cannot be chosen (the same choice, at a fraction of the cost
            // where classes hold thousands of rows).
            if (change >= 0 || (best_partner != -2 && change > best_change)) continue;
            double loss_change = 0.0;
            if (xv) {
                const double* xw = loss.row(w);
                loss_change = col_.extremes(home).exchange(loss, xv, xw) +
                              col_.extremes(c).exchange(loss, xw, xv) -
                              col_.extremes(home).loss() - col_.extremes(c).loss();
            }
            consider(change, loss_change, w);
        }
    }
    if (best_partner == -2) return false;
    if (options_.trace) {
        result.move_log.insert(result.move_log.end(),
                               {v, best_partner, static_cast<std::int64_t>(best_class), best_change});
    }
    ++moves_;
    if (best_partner == -1) {
        ++transfers_;
        col_.detach(v);
        col_.attach(v, best_class);
    } else {
        col_.detach(v);
        col_.detach(best_partner);
        col_.attach(v, best_class);
        col_.attach(best_partner, home);
    }
    return true;
}

}  // namespace proxanon
