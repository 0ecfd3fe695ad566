#include "proxanon/publish/held_values.hpp"

#include <algorithm>

#include "proxanon/xcolor/colouring.hpp"

namespace proxanon {

void HeldValues::build(const std::vector<std::int32_t>& sorted, NeighbourCount& counter) {
    counter.clear();
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
        values_.push_back(sorted[i]);
        count_.push_back(static_cast<std::int64_t>(j - i));
        counter.add(sorted[i], static_cast<std::int32_t>(j - i));
        i = j;
    }
    for (const std::int32_t u : values_) {
        closed_.push_back(counter.count(u));
        hold(closed_.back(), +1);
    }
    settle();
}

void HeldValues::change(const Neighbours& nb, std::int32_t v, int sign, std::vector<std::int64_t>* slot) {
    const std::size_t p = values_.size();
    std::int64_t near = 0;
    std::size_t at = p;
    const auto vi = static_cast<std::size_t>(v);
    for_each_near(nb, v, slot, [&](std::size_t i) {  // a value adjacent to v (v itself included)
        if (values_[i] == v) at = i;
        near += count_[i];
        hold(closed_[i], -1);
        closed_[i] += sign;
        hold(closed_[i], +1);
    });
    if (at == p) {  // a value new to the class
        values_.push_back(v);
        count_.push_back(1);
        closed_.push_back(near + 1);
        hold(near + 1, +1);
        if (slot != nullptr) (*slot)[vi] = static_cast<std::int64_t>(at);
    } else if ((count_[at] += sign) == 0) {  // the value leaves: the last takes its place
        hold(closed_[at], -1);
        const std::size_t last = p - 1;
        if (slot != nullptr) {
            (*slot)[vi] = -1;
            if (at != last) (*slot)[static_cast<std::size_t>(values_[last])] = static_cast<std::int64_t>(at);
        }
        values_[at] = values_[last];
        count_[at] = count_[last];
        closed_[at] = closed_[last];
        values_.pop_back();
        count_.pop_back();
        closed_.pop_back();
    }
    settle();
}

void HeldValues::hold(std::int64_t closed, int sign) {
    const auto i = static_cast<std::size_t>(closed);
    if (i >= at_closed_.size()) at_closed_.resize(2 * i + 2, 0);
    at_closed_[i] += sign;
    if (sign > 0) top_ = std::max(top_, closed);
}

void HeldValues::settle() {
    while (top_ > 0 && at_closed_[static_cast<std::size_t>(top_)] == 0) --top_;
    worst_ = std::max<std::int64_t>(0, top_ - 1);
}

void count_rows(HeldValues& held, const std::vector<std::int32_t>& rows, const Neighbours& nb,
                NeighbourCount& counter) {
    std::vector<std::int32_t> values;
    values.reserve(rows.size());
    for (const std::int32_t r : rows) values.push_back(nb.table().row_value[static_cast<std::size_t>(r)]);
    std::sort(values.begin(), values.end());
    held.build(values, counter);
}

bool passes_checks(const HeldValues& held, std::size_t size, const MondrianParams& params) {
    return size >= params.k && held.values().size() >= params.l &&
           (!params.dissimilarity || held.worst() <= allowed_neighbours(size, params.delta));
}

bool passes_with(const HeldValues& held, std::size_t size, std::int32_t v, const Neighbours& nb, double delta) {
    const std::int64_t allowed = allowed_neighbours(size + 1, delta);
    std::int64_t near = 0;  // D of the new row
    const AdjacentTo near_v(nb, v);
    for (std::size_t i = 0; i < held.values().size(); ++i) {
        if (!near_v(held.values()[i])) continue;
        if (held.closed(i) > allowed) return false;  // its D grows by one
        near += held.count(i);
    }
    return near <= allowed;
}

bool FailingChecks::spend(std::size_t tests) {
    if (left_ < tests) {
        left_ = 0;  // spent: no later check runs either
        return false;
    }
    left_ -= tests;
    return true;
}

bool FailingChecks::spares(const HeldValues& held, std::size_t size, const Risk& bound, std::int32_t v,
                           const std::vector<std::int64_t>& slot) {
    const std::vector<std::int32_t>& values = held.values();
    const auto vi = static_cast<std::size_t>(v);
    const auto at = static_cast<std::size_t>(slot[vi]);
    const std::int64_t count_v = held.count(at), closed_v = held.closed(at);
    if (values.size() - (count_v == 1 ? 1 : 0) < l_) return false;
    const std::int64_t allowed = allowed_neighbours(size, delta_);
    const std::int64_t allowed_after = allowed_neighbours(size - 1, delta_);
    if (giver_at_ != size) {  // the class moved a row: count it again
        if (!spend(values.size())) return false;
        giver_at_ = size;
        violating_ = over_after_ = 0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            violating_ += held.closed(i) - 1 > allowed ? held.count(i) : 0;
            over_after_ += held.closed(i) - 1 > allowed_after ? held.count(i) : 0;
        }
    }
    // Values adjacent to v (v's own included) lose a neighbour, and v a row: the rows over
    // t(size - 1) afterwards, and how many of the values at the top closed count are v's
    // neighbours (HeldValues::for_each_near).
    const std::int64_t top = held.top();
    std::int64_t adjacent_at_top = 0, over_after = over_after_;
    const auto adjacent = [&](std::size_t i) {
        const std::int64_t closed = held.closed(i), count = held.count(i);
        const std::int64_t stay = count - (i == at ? 1 : 0);
        adjacent_at_top += closed == top ? 1 : 0;
        over_after -= (closed - 1 > allowed_after ? count : 0) - (closed - 2 > allowed_after ? stay : 0);
    };
    if (!spend(values.size())) return false;
    held.for_each_near(nb_, v, &slot, adjacent);
    // The largest D afterwards: a value at the top that is not v's neighbour keeps it
    // (top - 1); else those that stay lose one (top - 2), unless v alone was there and
    // leaves: then the values are read again.
    std::int64_t worst_after = adjacent_at_top < held.values_at(top) ? top - 1 : top - 2;
    if (count_v == 1 && closed_v == top && held.values_at(top) == 1) {
        if (!spend(values.size())) return false;
        const AdjacentTo near_v(nb_, v);
        worst_after = 0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i != at) worst_after = std::max(worst_after, held.closed(i) - (near_v(values[i]) ? 1 : 0) - 1);
        }
    }
    offered_violating_ = closed_v - 1 > allowed;
    return bound.admits(worst_after, static_cast<std::int64_t>(size) - 2) &&
           over_after <= violating_ - (offered_violating_ ? 1 : 0);
}

bool FailingChecks::takes(const HeldValues& held, std::size_t size, const Risk& bound, std::int32_t v) {
    const std::vector<std::int32_t>& values = held.values();
    if (!spend(values.size())) return false;
    const std::int64_t allowed = allowed_neighbours(size, delta_);
    const std::int64_t allowed_after = allowed_neighbours(size + 1, delta_);
    std::int64_t near = 0, worst_after = 0, violating_now = 0, violating_after = 0;
    const AdjacentTo near_v(nb_, v);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::int64_t count = held.count(i);
        const std::int64_t closed = held.closed(i);
        const bool adjacent = near_v(values[i]);
        if (closed - 1 > allowed) violating_now += count;
        const std::int64_t closed_after = closed + (adjacent ? 1 : 0);
        worst_after = std::max(worst_after, closed_after - 1);
        if (closed_after - 1 > allowed_after) violating_after += count;
        if (adjacent) near += count;
    }
    worst_after = std::max(worst_after, near);  // the row's own D
    if (near > allowed_after) ++violating_after;
    return bound.admits(worst_after, static_cast<std::int64_t>(size)) &&
           violating_after <= violating_now + (offered_violating_ ? 1 : 0);
}

}  // namespace proxanon
