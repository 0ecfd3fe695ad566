// The mix of sensitive values of one failing class, against which the splits of a best-effort
// table's failing classes (balanced_split.hpp, cover_split.hpp) weigh their parts: a part may
// not be riskier than the class, nor make a row violate that does not violate in it.
//
// A set of the class's rows is held as counts per local value (the class's distinct values,
// numbered in ascending order of their ids) with D + 1 per value (its rows' neighbours in the
// set, itself included). A set "exceeds the class's risk" where a value in it has D above
// risk(class) * (size - 1), or a value that does not violate in the class ("calm") has D above
// t(set) (docs/design/privacy-model.md); a set within both is no riskier than the class and
// violates only where the class did, so the table's violating rows do not grow.
//
// Invariant: for counts built by counts() and changed only by move(), near[w] = sum over the
// values u adjacent to w (w itself included) of x[u]. Cost: building, O(v^2) adjacency tests
// for v distinct values (charged to `work`); counts(), O(rows + the degrees of its values);
// move(), O(the degree of the value).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Counts of a set of rows per local value, with D + 1 per value.
struct MixCounts {
    std::vector<std::int64_t> x, near;
    std::int64_t size = 0;
};

/// What a set of `size` rows allows a value: D up to risk(class) * (size - 1) (`cap`), and for
/// a value calm in the class up to t(set).
struct MixBounds {
    double cap, t;
};

class ClassMix {
public:
    /// The mix of class `rows`; unusable where it holds more than `max_values` distinct values.
    ClassMix(const std::vector<std::int32_t>& rows, const Neighbours& nb, double delta, std::size_t max_values,
             std::size_t& work)
        : delta_(delta), work_(work) {
        const auto& row_value = nb.table().row_value;
        std::map<std::int32_t, std::int32_t> local;
        for (const std::int32_t r : rows) local.emplace(row_value[static_cast<std::size_t>(r)], 0);
        values_ = local.size();
        if (values_ > max_values) return;
        std::vector<std::int32_t> ids;
        for (auto& [id, l] : local) {
            l = static_cast<std::int32_t>(ids.size());
            ids.push_back(id);
        }
        for (const std::int32_t r : rows) value_of_.emplace(r, local[row_value[static_cast<std::size_t>(r)]]);
        adjacent_.assign(values_ * values_, 0);
        near_.resize(values_);
        for (std::size_t a = 0; a < values_; ++a) {
            for (std::size_t b = 0; b < values_; ++b) {
                adjacent_[a * values_ + b] = a == b || nb.adjacent(ids[a], ids[b]);
                if (adjacent_[a * values_ + b]) near_[a].push_back(static_cast<std::int32_t>(b));
            }
        }
        work_ += values_ * values_;
        const MixCounts whole = counts(rows);
        size_ = whole.size;
        for (std::size_t u = 0; u < values_; ++u) {
            if (whole.x[u] > 0) worst_ = std::max(worst_, whole.near[u] - 1);
        }
        const std::int64_t t = allowed_neighbours(static_cast<std::size_t>(size_), delta_);
        calm_.assign(values_, 0);
        for (std::size_t u = 0; u < values_; ++u) calm_[u] = whole.x[u] > 0 && whole.near[u] - 1 <= t;
        usable_ = true;
    }

    bool usable() const { return usable_; }
    std::size_t values() const { return values_; }
    /// The class's rows and its largest D.
    std::int64_t size() const { return size_; }
    std::int64_t worst() const { return worst_; }
    /// The local value of a row of the class.
    std::size_t value_of(std::int32_t row) const { return static_cast<std::size_t>(value_of_.at(row)); }
    bool adjacent(std::size_t a, std::size_t b) const { return adjacent_[a * values_ + b] != 0; }
    std::size_t degree(std::size_t u) const { return near_[u].size(); }

    MixCounts counts(const std::vector<std::int32_t>& rows) const {
        MixCounts c;
        c.x.assign(values_, 0);
        c.near.assign(values_, 0);
        for (const std::int32_t r : rows) ++c.x[value_of(r)];
        c.size = static_cast<std::int64_t>(rows.size());
        for (std::size_t u = 0; u < values_; ++u) {
            if (c.x[u] == 0) continue;
            for (const std::int32_t w : near_[u]) c.near[static_cast<std::size_t>(w)] += c.x[u];
            work_ += near_[u].size();
        }
        return c;
    }

    /// One row of value u leaves the set (sign -1) or comes into it (+1).
    void move(MixCounts& c, std::size_t u, std::int64_t sign) const {
        c.x[u] += sign;
        c.size += sign;
        for (const std::int32_t w : near_[u]) c.near[static_cast<std::size_t>(w)] += sign;
    }

    MixBounds bounds_of(std::int64_t size) const {
        return {static_cast<double>(worst_) * static_cast<double>(size - 1) / static_cast<double>(size_ - 1),
                static_cast<double>(allowed_neighbours(static_cast<std::size_t>(size), delta_))};
    }
    /// How far value w with D = d exceeds what the set allows (at most 0: within).
    double value_excess(std::size_t w, std::int64_t d, const MixBounds& bounds) const {
        const double x = static_cast<double>(d);
        return std::max(x - bounds.cap, calm_[w] ? x - bounds.t : -std::numeric_limits<double>::infinity());
    }
    /// The excess of a set of fewer than two rows: one row's risk is 1
    /// (docs/design/privacy-model.md).
    double tiny_excess(std::int64_t size) const { return size == 1 && worst_ < size_ - 1 ? 1.0 : 0.0; }

    /// Exactly: at least k rows, no value's D above risk(class) · (size - 1), no calm value's
    /// above t(set).
    bool fits(const MixCounts& c, std::int64_t k) const {
        if (c.size < k || (c.size == 1 && worst_ < size_ - 1)) return false;  // one row's risk is 1
        const std::int64_t t = allowed_neighbours(static_cast<std::size_t>(c.size), delta_);
        for (std::size_t w = 0; w < values_; ++w) {
            if (c.x[w] == 0) continue;
            const std::int64_t d = c.near[w] - 1;
            if (d * (size_ - 1) > worst_ * (c.size - 1) || (calm_[w] && d > t)) return false;
        }
        return true;
    }

private:
    double delta_;
    std::size_t& work_;
    std::size_t values_ = 0;
    std::unordered_map<std::int32_t, std::int32_t> value_of_;  ///< row -> local value
    std::vector<std::uint8_t> adjacent_;                       ///< values x values, diagonal set
    std::vector<std::vector<std::int32_t>> near_;              ///< per value, its neighbours (itself too)
    std::int64_t size_ = 0, worst_ = 0;
    std::vector<std::uint8_t> calm_;  ///< values that do not violate in the class
    bool usable_ = false;
};

}  // namespace proxanon
