// Classes by the taxonomy part of their published tuple, and the lookup of the lists whose
// taxonomy part covers a row (absorb.hpp's takers, vacate.hpp's receivers): a row's covering
// tuples are the product of its taxonomy columns' ancestors, so a lookup walks that product
// instead of reading every class.
//
// Invariant: a list holds exactly the classes filed under its taxonomy part, in the order
// the caller set (order()). Cost: add() O(d); for_each_cover() at most kMaxCovers hash
// lookups of O(d) each, plus the walk up each taxonomy (its height).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/publish/published_key.hpp"

namespace proxanon {

/// Covering tuples looked up per row (the product of its taxonomy columns' ancestors, in
/// odometer order from the leaves up), classes read per tuple, and of those, covering ones
/// checked: bound the work of one row.
constexpr std::size_t kMaxCovers = 256;
constexpr std::size_t kRead = 64;
constexpr std::size_t kScan = 16;

/// Fills `out` (C, with fields rows, size, lo, hi) with the classes of `classes` (ids 0 ..
/// C-1): each class's rows, ascending, and its extremes per column. O(n d).
template <typename C>
void gather_classes(const std::vector<std::int32_t>& classes, const LossModel& qi, std::vector<C>& out) {
    std::int32_t count = 0;
    for (const std::int32_t c : classes) count = std::max(count, c + 1);
    out.assign(static_cast<std::size_t>(count), C{});
    for (std::size_t r = 0; r < classes.size(); ++r) {
        out[static_cast<std::size_t>(classes[r])].rows.push_back(static_cast<std::int32_t>(r));
    }
    const std::size_t d = qi.dimensions();
    const double inf = std::numeric_limits<double>::infinity();
    for (C& cls : out) {
        cls.size = cls.rows.size();
        cls.lo.assign(d, inf);
        cls.hi.assign(d, -inf);
        for (const std::int32_t r : cls.rows) {
            const double* x = qi.row(r);
            for (std::size_t i = 0; i < d; ++i) {
                cls.lo[i] = std::min(cls.lo[i], x[i]);
                cls.hi[i] = std::max(cls.hi[i], x[i]);
            }
        }
    }
}

/// Whether each numeric value of QI values x lies within [lo, hi] (a class's extremes).
inline bool within_intervals(const LossModel& qi, const std::vector<double>& lo, const std::vector<double>& hi,
                             const double* x) {
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if (qi.taxonomy(i) == nullptr && (x[i] < lo[i] || x[i] > hi[i])) return false;
    }
    return true;
}

/// Whether the tuple of a class with extremes [lo, hi] covers QI values x: each taxonomy
/// column's leaf lies under the class's LCA node, each numeric value within its interval (so
/// the class's tuple stays as it is with a row of x).
inline bool covers_row(const LossModel& qi, const std::vector<double>& lo, const std::vector<double>& hi,
                       const double* x) {
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if (const Taxonomy* tax = qi.taxonomy(i)) {
            const auto a = static_cast<std::int32_t>(lo[i]), b = static_cast<std::int32_t>(hi[i]);
            const auto leaf = static_cast<std::int32_t>(x[i]);
            if (tax->lca(std::min(a, leaf), std::max(b, leaf)) != tax->lca(a, b)) return false;
        }
    }
    return within_intervals(qi, lo, hi, x);
}

class CoverIndex {
public:
    CoverIndex(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys)
        : qi_(qi), keys_(node_keys) {}

    /// Files class c, whose rows span [lo[i], hi[i]] on each column i.
    void add(std::int32_t c, const std::vector<double>& lo, const std::vector<double>& hi) {
        Key part;
        for (std::size_t i = 0; i < qi_.dimensions(); ++i) {
            if (qi_.taxonomy(i) != nullptr) part.push_back(published_pair(qi_.taxonomy(i), keys_[i], lo[i], hi[i]).first);
        }
        index_[part].push_back(c);
    }

    /// Sorts every list by `less`, a strict order over class ids.
    template <typename Less>
    void order(Less less) {
        for (auto& entry : index_) std::sort(entry.second.begin(), entry.second.end(), less);
    }

    /// Calls f(classes) for each list whose taxonomy part covers QI values x: the product of
    /// each taxonomy column's ancestors of x (distinct label keys), in odometer order from
    /// the leaves up, at most kMaxCovers of them.
    template <typename F>
    void for_each_cover(const double* x, F f) {
        ladders_.clear();
        for (std::size_t i = 0; i < qi_.dimensions(); ++i) {
            const Taxonomy* tax = qi_.taxonomy(i);
            if (tax == nullptr) continue;
            ladders_.emplace_back();
            for (auto node = static_cast<std::int32_t>(x[i]); node >= 0; node = tax->parent(node)) {
                const auto key = static_cast<double>(keys_[i][static_cast<std::size_t>(node)]);
                if (ladders_.back().empty() || ladders_.back().back() != key) ladders_.back().push_back(key);
            }
        }
        std::vector<std::size_t> step(ladders_.size(), 0);
        Key part(ladders_.size());
        for (std::size_t tried = 0; tried < kMaxCovers; ++tried) {
            for (std::size_t j = 0; j < ladders_.size(); ++j) part[j] = ladders_[j][step[j]];
            const auto found = index_.find(part);
            if (found != index_.end()) f(found->second);
            std::size_t j = 0;  // the next combination, odometer order
            while (j < step.size() && ++step[j] == ladders_[j].size()) step[j++] = 0;
            if (j == step.size()) break;
        }
    }

private:
    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& keys_;
    std::unordered_map<Key, std::vector<std::int32_t>, KeyHash> index_;
    std::vector<std::vector<double>> ladders_;  ///< scratch of for_each_cover()
};

}  // namespace proxanon
