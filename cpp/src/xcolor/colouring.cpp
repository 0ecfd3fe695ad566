#include "proxanon/xcolor/colouring.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/common/tolerance.hpp"

namespace proxanon {

std::int32_t allowed_neighbours(std::size_t size, double delta) {
    if (size == 0) return 0;
    return static_cast<std::int32_t>(
        std::floor((1.0 - delta) * static_cast<double>(size - 1) + kAllowanceSlack));
}

Colouring::Colouring(const ValueTable& table, const Neighbours& neighbours, const LossModel& loss,
                     double delta, const std::vector<std::int32_t>& initial, std::size_t threads,
                     Interrupt* interrupt)
    : table_(table), nb_(neighbours), loss_(loss), delta_(delta), tally_(neighbours),
      value_count_(table.size(), 0) {
    if (neighbours.size() != table.size()) throw std::invalid_argument("neighbours and value table differ in size");
    if (!tally_.stored()) {
        kept_stamp_.assign(table.size(), 0);
        kept_count_.assign(table.size(), 0);
    }
    const std::size_t n = initial.size();
    std::size_t m = 0;
    for (std::int32_t c : initial) if (c >= 0) m = std::max(m, static_cast<std::size_t>(c) + 1);
    members_.resize(m);
    pos_.resize(n);
    class_of_ = initial;
    {  // each list allocated once at its size (100k classes: 500k reallocations otherwise)
        std::vector<std::int32_t> sizes(m, 0);
        for (std::int32_t c : initial) if (c >= 0) ++sizes[static_cast<std::size_t>(c)];
        for (std::size_t c = 0; c < m; ++c) members_[c].reserve(static_cast<std::size_t>(sizes[c]));
    }
    for (std::size_t r = 0; r < n; ++r) {
        if (initial[r] < 0) continue;  // left out
        auto& list = members_[static_cast<std::size_t>(initial[r])];
        pos_[r] = static_cast<std::int32_t>(list.size());
        list.push_back(static_cast<std::int32_t>(r));
    }
    if (loss_.active()) extremes_of_.resize(m);
    stale_.assign(m, 0);
    extremes_moved_.assign(m, 0);
    index_slot_.assign(m, -1);
    allowed_.resize(m);
    version_.assign(m, 0);
    own_.assign(n, 0);
    // Each class's allowance, extremes and counts are its own: on `threads` threads, the same
    // for any number (at 10M rows the members of a class lie far apart in memory, and two
    // cores wait for twice as many reads at once).
    for_each_class_count(
        table_, nb_.graph(), nb_.distance(), m,
        [&](std::size_t c) { return std::pair<const std::int32_t*, std::size_t>(begin(c), size(c)); },
        [&](std::size_t c, const std::int64_t* counts) {
            class_changed(c);
            if (loss_.active()) extremes(c);  // on this class's thread
            for (std::size_t i = 0; i < size(c); ++i) own_[at(members_[c][i])] = static_cast<std::int32_t>(counts[i]);
        },
        threads, interrupt);
    potential_ = 0;
    for (std::int32_t d : own_) potential_ += d;
    potential_ /= 2;
}

std::int64_t Colouring::violations() const {
    std::int64_t count = 0;
    for (std::size_t r = 0; r < rows(); ++r) count += is_violation(static_cast<std::int32_t>(r));
    return count;
}

void Colouring::tally_class(std::size_t c, std::int32_t skip) {
    const std::int32_t skipped = skip >= 0 && class_of(skip) == static_cast<std::int32_t>(c) ? value_of(skip) : -1;
    if (c == tallied_ && version_[c] == tallied_version_) {
        if (skipped == tallied_skip_) return;
        if (tally_.stored()) {  // the class less one row of another value: two adds
            if (tallied_skip_ >= 0) tally_.add(tallied_skip_, 1);
            if (skipped >= 0) tally_.add(skipped, -1);
        }
        tallied_skip_ = skipped;  // implicit: the whole class, the row off in tally_count
        return;
    }
    tallied_ = c;
    tallied_version_ = version_[c];
    tallied_skip_ = skipped;
    if (!tally_.stored() && ++tally_epoch_ == 0) {  // wrapped: no stamp may match
        std::fill(kept_stamp_.begin(), kept_stamp_.end(), 0);
        tally_epoch_ = 1;
    }
    // On an index of the class's values (counts_by_index): tally_count reads it, nothing to
    // count or sort here.
    tally_indexed_ = !tally_.stored() && counts_by_index(c);
    if (tally_indexed_) {
        index_class(c);
        return;
    }
    tally_.clear();
    distinct_.clear();
    const bool leave_out = tally_.stored();  // implicit: the whole class
    for (const std::int32_t* p = begin(c); p != end(c); ++p) {
        if (leave_out && *p == skip) continue;
        auto& k = value_count_[static_cast<std::size_t>(value_of(*p))];
        if (k++ == 0) distinct_.push_back(value_of(*p));
    }
    for (std::int32_t u : distinct_) {
        auto& k = value_count_[static_cast<std::size_t>(u)];
        tally_.add(u, k);
        k = 0;
    }
}

std::int32_t Colouring::count_near(std::size_t c, std::int32_t a) {
    if (!counts_by_index(c)) {
        const AdjacentTo near_a(nb_, a);
        std::int32_t count = 0;
        for (const std::int32_t* p = begin(c); p != end(c); ++p) count += near_a(value_of(*p));
        return count;
    }
    index_class(c);
    return indexed_count(c, a);
}

void Colouring::index_class(std::size_t c) {
    if (index_slot_[c] >= 0) return;
    index_slot_[c] = static_cast<std::int32_t>(indexes_.size());
    auto& entries = indexes_.emplace_back(size(c));
    for (std::size_t i = 0; i < size(c); ++i) entries[i] = {value_of(members_[c][i]), members_[c][i]};
    std::sort(entries.begin(), entries.end());
}

std::pair<const Colouring::Entry*, const Colouring::Entry*> Colouring::near(std::size_t c, std::int32_t a) const {
    const auto& entries = *index_of(c);
    return nb_.in_interval(entries.data(), entries.data() + entries.size(), a,
                           [](const Entry& e) { return e.first; });
}

std::int32_t Colouring::indexed_count(std::size_t c, std::int32_t a) const {
    const auto [lo, hi] = near(c, a);
    return static_cast<std::int32_t>(hi - lo);
}

void Colouring::reindex(std::size_t c, std::int32_t out, std::int32_t in) {
    if (index_slot_[c] < 0) return;
    auto& entries = indexes_[static_cast<std::size_t>(index_slot_[c])];
    if (out < 0 && in < 0) {  // made anew
        std::vector<Entry>().swap(entries);
        index_slot_[c] = -1;
        return;
    }
    const Entry came{in >= 0 ? value_of(in) : 0, in};
    if (out < 0) {
        entries.insert(std::lower_bound(entries.begin(), entries.end(), came), came);
        return;
    }
    const Entry left{value_of(out), out};
    const auto gone = std::lower_bound(entries.begin(), entries.end(), left);
    if (gone == entries.end() || *gone != left) throw std::logic_error("Colouring: a row left a class whose index does not hold it");
    if (in < 0) {
        entries.erase(gone);
        return;
    }
    // A swap: the entries between the two places move by one, in one pass.
    const auto place = std::lower_bound(entries.begin(), entries.end(), came);
    if (place <= gone) {
        std::move_backward(place, gone, gone + 1);
        *place = came;
    } else {
        std::move(gone + 1, place, gone);
        *(place - 1) = came;
    }
}

std::int32_t Colouring::add_near(std::size_t c, std::int32_t a, std::int32_t skip, std::int32_t by,
                                 std::vector<std::int32_t>* crossed) {
    const std::int32_t allowed = allowed_[c];
    std::int32_t count = 0;
    const auto add = [&](std::int32_t y) {
        std::int32_t& own = own_[at(y)];
        const bool was = own > allowed;
        own += by;
        if (crossed != nullptr && was != (own > allowed)) crossed->push_back(y);
        ++count;
    };
    if (index_slot_[c] >= 0) {
        const auto [lo, hi] = near(c, a);
        for (const Entry* e = lo; e != hi; ++e) {
            if (e->second != skip) add(e->second);
        }
        return count;
    }
    const AdjacentTo near_a(nb_, a);
    for (const std::int32_t* p = begin(c); p != end(c); ++p) {
        if (*p != skip && near_a(value_of(*p))) add(*p);
    }
    return count;
}

void Colouring::class_changed(std::size_t c, std::int32_t out, std::int32_t in) {
    ++version_[c];  // sized by the constructor: its threads call this for distinct classes
    reindex(c, out, in);
    allowed_[c] = allowed_neighbours(size(c), delta_);
    if (!loss_.active() || stale_[c]) return;
    // The extremes follow the member that left and the one that came where they can (a
    // class of thousands of rows rarely loses an extreme it holds once or twice); else
    // they are computed when next read (extremes).
    if ((out < 0 && in < 0) || (out >= 0 && !extremes_of_[c].remove(loss_.row(out)))) {
        stale_[c] = 1;
        ++extremes_moved_[c];
        return;
    }
    if (in >= 0 && extremes_of_[c].add(loss_, loss_.row(in))) ++extremes_moved_[c];
}

std::int32_t Colouring::trade_counts(std::size_t c, std::int32_t skip, std::int32_t comes, std::int32_t goes) {
    const std::int32_t near_comes = add_near(c, comes, skip, 1, &crossed_);
    add_near(c, goes, skip, -1, &crossed_);
    return near_comes;
}

void Colouring::swap(std::int32_t v, std::int32_t w, std::int64_t lambda, std::int32_t own_v_after) {
    const auto home = static_cast<std::size_t>(class_of_[at(v)]);
    const auto away = static_cast<std::size_t>(class_of_[at(w)]);
    crossed_.clear();
    const std::int32_t own_w_after = trade_counts(home, v, value_of(w), value_of(v));
    trade_counts(away, w, value_of(v), value_of(w));
    own_[at(v)] = own_v_after;
    own_[at(w)] = own_w_after;
    members_[home][at(pos_[at(v)])] = w;
    members_[away][at(pos_[at(w)])] = v;
    std::swap(pos_[at(v)], pos_[at(w)]);
    std::swap(class_of_[at(v)], class_of_[at(w)]);
    potential_ += lambda;
    class_changed(home, v, w);
    class_changed(away, w, v);
}

void Colouring::detach(std::int32_t v) {
    const auto home = static_cast<std::size_t>(class_of_[at(v)]);
    const std::int32_t a = value_of(v);
    auto& list = members_[home];
    const std::int32_t last = list.back();
    list[at(pos_[at(v)])] = last;
    pos_[at(last)] = pos_[at(v)];
    list.pop_back();
    potential_ -= add_near(home, a, v, -1);
    class_of_[at(v)] = -1;
    class_changed(home, v, -1);
}

void Colouring::attach(std::int32_t v, std::size_t c) {
    const std::int32_t count = add_near(c, value_of(v), v, 1);
    own_[at(v)] = count;
    potential_ += count;
    pos_[at(v)] = static_cast<std::int32_t>(members_[c].size());
    members_[c].push_back(v);
    class_of_[at(v)] = static_cast<std::int32_t>(c);
    class_changed(c, -1, v);
}

std::size_t Colouring::outward(std::size_t home, std::size_t step) const {
    const std::size_t m = classes();
    const std::size_t distance = step / 2 + 1;
    const std::size_t half = (m - 1) / 2;  // distances 1..half are taken on both sides
    if (distance <= half) {
        return step % 2 == 0 ? (home + distance) % m : (home + m - distance) % m;
    }
    // m - 1 even: done; odd: one class remains, diametrically opposite.
    return (home + half + 1) % m;
}

}  // namespace proxanon
