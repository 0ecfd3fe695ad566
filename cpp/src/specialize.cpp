#include "proxanon/specialize.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "proxanon/colouring.hpp"
#include "proxanon/interrupt.hpp"

namespace proxanon {

namespace {

/// Kept parts that may join a failing remainder, one re-check each, before the column is
/// given up: bounds the work of a split over a node with many children.
constexpr std::size_t kMaxMoves = 16;

/// Published tuple of a set of rows: per column (lo, hi) of a numeric one, (key, key) of the
/// label of a taxonomy one's lowest common ancestor.
using Key = std::vector<double>;

struct KeyHash {
    std::size_t operator()(const Key& key) const {
        std::uint64_t h = 1469598103934665603ULL;
        for (double x : key) {
            const double y = x + 0.0;  // -0.0 == 0.0, so both must hash alike
            std::uint64_t bits = 0;
            std::memcpy(&bits, &y, sizeof bits);
            h = (h ^ bits) * 1099511628211ULL;
        }
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

/// Violating rows of a set under the checks of `params`: all of them when it has fewer than
/// k rows or fewer than l distinct values, else those with more than t(G) epsilon-neighbours
/// in it. Counts rows per distinct value first, then each value's neighbours among the
/// values present: O(p + sum of their degrees) over a graph; over the sorted structure the
/// neighbours of a value are a run of the present values in ascending order, found by two
/// binary searches, O(p log p).
class PartChecker {
public:
    PartChecker(const Neighbours& neighbours, const MondrianParams& params)
        : nb_(neighbours), graph_(neighbours.graph()), params_(params), count_(neighbours.size(), 0) {
        if (params.dissimilarity && !graph_ && neighbours.structure() != Structure::Sorted) {
            throw std::invalid_argument("specialize needs a Graph or a Sorted neighbour structure");
        }
    }

    std::int64_t violations(const std::int32_t* begin, const std::int32_t* end) {
        const auto size = static_cast<std::size_t>(end - begin);
        if (size < params_.k) return static_cast<std::int64_t>(size);
        if (params_.l == 0 && !params_.dissimilarity) return 0;
        const auto& row_value = nb_.table().row_value;
        present_.clear();
        for (const std::int32_t* p = begin; p != end; ++p) {
            const std::int32_t u = row_value[at(*p)];
            if (count_[at(u)]++ == 0) present_.push_back(u);
        }
        std::int64_t bad = 0;
        if (present_.size() < params_.l) {
            bad = static_cast<std::int64_t>(size);
        } else if (params_.dissimilarity) {
            const std::int64_t t = allowed_neighbours(size, params_.delta);
            bad = graph_ ? graph_violations(t) : sorted_violations(t);
        }
        for (std::int32_t u : present_) count_[at(u)] = 0;
        return bad;
    }

private:
    static std::size_t at(std::int32_t v) { return static_cast<std::size_t>(v); }

    std::int64_t graph_violations(std::int64_t t) const {
        std::int64_t bad = 0;
        for (std::int32_t u : present_) {
            std::int64_t d = count_[at(u)] - 1;
            for (const std::int32_t* p = graph_->begin(at(u)); p != graph_->end(at(u)); ++p) d += count_[at(*p)];
            if (d > t) bad += count_[at(u)];
        }
        return bad;
    }

    std::int64_t sorted_violations(std::int64_t t) {
        std::sort(present_.begin(), present_.end());  // ids ascend with the one component
        const std::size_t values = present_.size();
        before_.assign(values + 1, 0);
        for (std::size_t i = 0; i < values; ++i) before_[i + 1] = before_[i] + count_[at(present_[i])];
        std::int64_t bad = 0;
        for (std::size_t i = 0; i < values; ++i) {
            const std::int32_t u = present_[i];
            std::size_t lo = 0, hi = i;  // first neighbour at or below u
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (nb_.adjacent(u, present_[mid])) hi = mid; else lo = mid + 1;
            }
            const std::size_t first = lo;
            lo = i + 1;
            hi = values;  // one past the last neighbour above u
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (nb_.adjacent(u, present_[mid])) lo = mid + 1; else hi = mid;
            }
            if (before_[lo] - before_[first] - 1 > t) bad += count_[at(u)];
        }
        return bad;
    }

    const Neighbours& nb_;
    const NeighbourGraph* graph_;
    const MondrianParams& params_;
    std::vector<std::int64_t> count_;  ///< rows per value of the set being checked, else 0
    std::vector<std::int32_t> present_;
    std::vector<std::int64_t> before_;
};

/// A set of rows rows[begin, end) of some array, with what a split needs to know of it.
struct Part {
    std::size_t begin = 0, end = 0;
    std::int64_t violations = 0;
    Key key;
    double loss = 0.0;  ///< rows times loss(part), the paper's per-group loss
    std::size_t size() const { return end - begin; }
};

/// One way of splitting a class: `rows` holds the kept parts, then the remainder.
struct Split {
    std::vector<std::int32_t> rows;
    std::vector<Part> parts;
    std::size_t kept_rows = 0;
    double loss = 0.0;
};

class Specializer {
public:
    Specializer(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                const Neighbours& neighbours, const MondrianParams& params)
        : qi_(qi), keys_(node_keys), check_(neighbours, params), params_(params) {}

    Part describe(const std::vector<std::int32_t>& rows, std::size_t begin, std::size_t end) {
        Part part;
        part.begin = begin;
        part.end = end;
        const std::size_t d = qi_.dimensions();
        part.key.assign(2 * d, 0.0);
        double loss = 0.0;
        for (std::size_t i = 0; i < d; ++i) {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t r = begin; r < end; ++r) {
                const double x = qi_.row(rows[r])[i];
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            loss += qi_.cost(i, lo, hi);
            if (const Taxonomy* tax = qi_.taxonomy(i)) {
                const std::int32_t node = tax->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
                lo = hi = static_cast<double>(keys_[i][static_cast<std::size_t>(node)]);
            }
            part.key[2 * i] = lo;
            part.key[2 * i + 1] = hi;
        }
        part.loss = loss * static_cast<double>(end - begin);
        part.violations = check_.violations(rows.data() + begin, rows.data() + end);
        return part;
    }

    void publish(const Key& key) { ++published_[key]; }

    bool taken(const Key& key) const { return published_.count(key) != 0; }

    /// Replaces the tuple of a class by those of its parts.
    void replace(const Key& old, const std::vector<Part>& parts) {
        auto it = published_.find(old);
        if (--it->second == 0) published_.erase(it);
        for (const Part& part : parts) publish(part.key);
    }

    /// The split of class `whole` (rows, its part record) along column j, if any part is kept.
    std::optional<Split> along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& whole) {
        scratch_ = rows;
        std::sort(scratch_.begin(), scratch_.end(), [&](std::int32_t a, std::int32_t b) {
            const double xa = qi_.row(a)[j], xb = qi_.row(b)[j];
            return xa != xb ? xa < xb : a < b;
        });
        const std::size_t m = scratch_.size();
        const auto x = [&](std::size_t r) { return qi_.row(scratch_[r])[j]; };
        const double lo = x(0), hi = x(m - 1);
        if (lo == hi) return std::nullopt;
        std::vector<std::pair<std::size_t, std::size_t>> pieces;
        if (const Taxonomy* tax = qi_.taxonomy(j)) {
            const auto first = static_cast<std::int32_t>(lo), last = static_cast<std::int32_t>(hi);
            for (std::size_t r = 0; r < m;) {
                const std::int32_t child_last = tax->child_range(first, last, static_cast<std::int32_t>(x(r))).second;
                std::size_t stop = r;
                while (stop < m && x(stop) <= child_last) ++stop;
                pieces.emplace_back(r, stop);
                r = stop;
            }
        } else {
            // The median value goes left; if that leaves the right empty, cut before it.
            const std::size_t middle = (m + 1) / 2 - 1;
            std::size_t boundary = middle + 1;
            while (boundary < m && x(boundary) == x(middle)) ++boundary;
            if (boundary == m) {
                boundary = middle;
                while (boundary > 0 && x(boundary - 1) == x(middle)) --boundary;
            }
            pieces = {{0, boundary}, {boundary, m}};
        }
        std::vector<Part> described;
        std::vector<char> kept;
        std::unordered_set<Key, KeyHash> kept_keys;
        for (const auto& [b, e] : pieces) {
            described.push_back(describe(scratch_, b, e));
            const Part& part = described.back();
            const bool keep = part.violations == 0 && !taken(part.key) && kept_keys.insert(part.key).second;
            kept.push_back(keep ? 1 : 0);
        }
        for (std::size_t moves = 0;; ++moves) {
            Split split;
            for (std::size_t p = 0; p < pieces.size(); ++p) {
                if (!kept[p]) continue;
                Part part = described[p];
                part.begin = split.rows.size();
                split.rows.insert(split.rows.end(), scratch_.begin() + static_cast<std::ptrdiff_t>(pieces[p].first),
                                  scratch_.begin() + static_cast<std::ptrdiff_t>(pieces[p].second));
                part.end = split.rows.size();
                split.kept_rows += part.size();
                split.parts.push_back(std::move(part));
            }
            if (split.kept_rows == 0) return std::nullopt;
            const std::size_t rest = split.rows.size();
            for (std::size_t p = 0; p < pieces.size(); ++p) {
                if (kept[p]) continue;
                split.rows.insert(split.rows.end(), scratch_.begin() + static_cast<std::ptrdiff_t>(pieces[p].first),
                                  scratch_.begin() + static_cast<std::ptrdiff_t>(pieces[p].second));
            }
            bool fits = rest == m;
            if (!fits) {
                Part remainder = describe(split.rows, rest, m);
                fits = remainder.size() >= params_.k && remainder.violations <= whole.violations &&
                       (remainder.key == whole.key || !taken(remainder.key)) &&
                       kept_keys.count(remainder.key) == 0;
                if (fits) split.parts.push_back(std::move(remainder));
            }
            if (fits) {
                for (const Part& part : split.parts) split.loss += part.loss;
                return split;
            }
            if (moves == kMaxMoves) return std::nullopt;
            std::size_t smallest = pieces.size();
            for (std::size_t p = 0; p < pieces.size(); ++p) {
                if (kept[p] && (smallest == pieces.size() || described[p].size() < described[smallest].size())) smallest = p;
            }
            kept[smallest] = 0;
            kept_keys.erase(described[smallest].key);
        }
    }

    /// The best split of a class over all columns, if any keeps rows.
    std::optional<Split> best(const std::vector<std::int32_t>& rows, const Part& whole) {
        std::optional<Split> chosen;
        for (std::size_t j = 0; j < qi_.dimensions(); ++j) {
            poll(params_.interrupt);
            std::optional<Split> split = along(j, rows, whole);
            if (split && (!chosen || split->kept_rows > chosen->kept_rows ||
                          (split->kept_rows == chosen->kept_rows && split->loss < chosen->loss))) {
                chosen = std::move(split);
            }
        }
        return chosen;
    }

private:
    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& keys_;
    PartChecker check_;
    const MondrianParams& params_;
    std::unordered_map<Key, std::int64_t, KeyHash> published_;  ///< tuple -> classes publishing it
    std::vector<std::int32_t> scratch_;
};

}  // namespace

SpecializeResult specialize(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params) {
    const std::size_t n = classes.size();
    if (neighbours.table().row_value.size() != n) throw std::invalid_argument("classes and sensitive values differ in rows");
    if (node_keys.size() != qi.dimensions()) throw std::invalid_argument("node_keys needs one entry per quasi-identifier");
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if ((qi.taxonomy(i) != nullptr) == node_keys[i].empty()) {
            throw std::invalid_argument("node_keys must name the nodes of exactly the taxonomy columns");
        }
    }
    std::int32_t count = 0;
    for (std::int32_t c : classes) {
        if (c < 0) throw std::invalid_argument("class ids must be >= 0");
        count = std::max(count, c + 1);
    }
    std::vector<std::vector<std::int32_t>> members(static_cast<std::size_t>(count));
    for (std::size_t r = 0; r < n; ++r) members[static_cast<std::size_t>(classes[r])].push_back(static_cast<std::int32_t>(r));
    Specializer specializer(qi, node_keys, neighbours, params);
    std::vector<Part> wholes;
    for (const auto& rows : members) {
        if (rows.empty()) throw std::invalid_argument("class ids must be 0 .. classes-1, every one used");
        wholes.push_back(specializer.describe(rows, 0, rows.size()));
        specializer.publish(wholes.back().key);
    }

    SpecializeResult result;
    result.classes.assign(n, -1);
    std::int32_t next = 0;
    std::vector<std::pair<std::vector<std::int32_t>, Part>> stack;
    for (std::size_t c = 0; c < members.size(); ++c) {
        stack.emplace_back(std::move(members[c]), std::move(wholes[c]));
        while (!stack.empty()) {
            auto [rows, whole] = std::move(stack.back());
            stack.pop_back();
            poll(params.interrupt);
            std::optional<Split> split;
            if (rows.size() >= 2 * params.k) split = specializer.best(rows, whole);
            if (!split) {
                for (std::int32_t r : rows) result.classes[static_cast<std::size_t>(r)] = next;
                ++next;
                continue;
            }
            ++result.splits;
            specializer.replace(whole.key, split->parts);
            for (auto it = split->parts.rbegin(); it != split->parts.rend(); ++it) {
                std::vector<std::int32_t> part_rows(split->rows.begin() + static_cast<std::ptrdiff_t>(it->begin),
                                                    split->rows.begin() + static_cast<std::ptrdiff_t>(it->end));
                Part part = *it;
                part.begin = 0;
                part.end = part_rows.size();
                stack.emplace_back(std::move(part_rows), std::move(part));
            }
        }
    }
    return result;
}

}  // namespace proxanon
