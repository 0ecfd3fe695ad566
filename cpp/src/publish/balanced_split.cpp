#include "proxanon/publish/balanced_split.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "proxanon/publish/class_mix.hpp"

namespace proxanon {

namespace {

/// Tries of the whole tree: after a node fails, its parent keeps it another kMarginStep rows
/// below the class's risk (it takes more of its crowded rows), and the tree is built again.
constexpr std::size_t kAttempts = 8;
constexpr double kMarginStep = 16.0;
/// Levels a piece that cannot publish a tuple of its own is cut further within one node.
constexpr std::size_t kExpandDepth = 3;

using Counts = MixCounts;

class Balancer {
public:
    Balancer(const std::vector<std::int32_t>& rows, const LossModel& qi, const Neighbours& nb, std::size_t k,
             double delta, const Publishable& publishable, std::size_t& work, std::size_t work_cap)
        : qi_(qi), k_(static_cast<std::int64_t>(k)), publishable_(publishable), work_(work),
          limit_(std::min(work + kBalancedWorkPerRow * rows.size(), work_cap)),
          mix_(rows, nb, delta, kBalancedValues, work), values_(mix_.values()), size_(mix_.size()),
          worst_(mix_.worst()) {}

    bool usable() const { return mix_.usable(); }
    /// Whether the work allowed (kBalancedWorkPerRow per row of the class) is spent.
    bool spent() const { return work_ > limit_; }

    /// Appends the parts of `rows` to `parts`; false where some node or leaf cannot be brought
    /// within the class's risk.
    bool place(std::vector<std::int32_t> rows, std::size_t leaf_rows, std::vector<std::vector<std::int32_t>>& parts,
               const std::vector<std::int32_t>& path = {}) {
        std::vector<std::vector<std::int32_t>> pieces, paths;
        std::vector<std::int8_t> publishable;  // per piece: 1, 0, or -1 where expand() did not ask
        expand(rows, leaf_rows, path, 0, pieces, paths, publishable);
        if (pieces.size() < 2) {
            if (!fits(counts(rows))) {
                failed_ = path;
                return false;
            }
            parts.push_back(std::move(rows));
            return true;
        }
        std::vector<Counts> left;
        for (const auto& piece : pieces) left.push_back(counts(piece));
        std::vector<std::vector<std::int64_t>> before;  // each piece's counts before its node takes rows
        for (const Counts& piece : left) before.push_back(piece.x);
        // A piece whose tuple another class publishes (and that expand() could not cut into
        // pieces of their own) joins the node's class whole.
        std::vector<std::uint8_t> joins(pieces.size(), 0);
        for (std::size_t c = 0; c < pieces.size(); ++c) {
            joins[c] = publishable[c] < 0 ? !publishable_(pieces[c]) : publishable[c] == 0;
        }
        std::vector<double> margins;
        for (std::size_t c = 0; c < pieces.size(); ++c) {
            const auto it = margin_.find(paths[c]);
            margins.push_back(it == margin_.end() ? 0.0 : it->second);
        }
        Counts hosted;
        hosted.x.assign(values_, 0);
        hosted.near.assign(values_, 0);
        if (!balance(left, margins, joins, hosted)) {
            failed_ = path;
            return false;
        }
        std::vector<std::int32_t> own;
        for (std::size_t c = 0; c < pieces.size(); ++c) {
            std::vector<std::int64_t>& taken = before[c];
            for (std::size_t u = 0; u < values_; ++u) taken[u] -= left[c].x[u];
            std::vector<std::int32_t> rest;
            for (const std::int32_t r : pieces[c]) {
                auto& t = taken[static_cast<std::size_t>(mix_.value_of(r))];
                if (t > 0) {
                    --t;
                    own.push_back(r);
                } else {
                    rest.push_back(r);
                }
            }
            pieces[c] = std::move(rest);
        }
        if (!own.empty()) {
            std::sort(own.begin(), own.end());
            parts.push_back(std::move(own));
        }
        for (std::size_t c = 0; c < pieces.size(); ++c) {
            if (!pieces[c].empty() && !place(std::move(pieces[c]), leaf_rows, parts, paths[c])) return false;
        }
        return true;
    }

    /// The pieces (and their paths of cuts) of node `rows`: its cut, where a piece that cannot
    /// publish a tuple of its own is replaced by its own pieces (kExpandDepth levels at most),
    /// so that the node's class balances them directly. `publishable` gets, per piece, what
    /// was found of it (1 or 0; -1: not asked).
    void expand(const std::vector<std::int32_t>& rows, std::size_t leaf_rows, const std::vector<std::int32_t>& path,
                std::size_t depth, std::vector<std::vector<std::int32_t>>& pieces,
                std::vector<std::vector<std::int32_t>>& paths, std::vector<std::int8_t>& publishable) {
        std::size_t column = 0;
        std::vector<std::vector<std::int32_t>> cut_pieces = cut(rows, depth == 0 ? leaf_rows : 0, column);
        if (depth > 0 && cut_pieces.size() < 2) {  // found unpublishable by the caller, and uncut
            pieces.push_back(rows);
            paths.push_back(path);
            publishable.push_back(0);
            return;
        }
        for (std::size_t c = 0; c < cut_pieces.size(); ++c) {
            std::vector<std::int32_t> piece_path = path;
            piece_path.push_back(static_cast<std::int32_t>(column));  // (column, piece) per cut
            piece_path.push_back(static_cast<std::int32_t>(c));
            std::int8_t known = -1;
            if (depth < kExpandDepth && cut_pieces[c].size() >= 2 * static_cast<std::size_t>(k_)) {
                known = publishable_(cut_pieces[c]) ? 1 : 0;
            }
            if (known == 0) {
                expand(cut_pieces[c], leaf_rows, piece_path, depth + 1, pieces, paths, publishable);
            } else {
                pieces.push_back(std::move(cut_pieces[c]));
                paths.push_back(std::move(piece_path));
                publishable.push_back(known);
            }
        }
    }

    /// The node where place() last failed (its path of cuts from the class), and the margin
    /// its parent then keeps it within: another kMarginStep rows below the class's risk.
    const std::vector<std::int32_t>& failed() const { return failed_; }
    void widen(const std::vector<std::int32_t>& path) { margin_[path] += kMarginStep; }

private:
    Counts counts(const std::vector<std::int32_t>& rows) const { return mix_.counts(rows); }

    void move(Counts& c, std::size_t u, std::int64_t sign) const { mix_.move(c, u, sign); }

    /// How far the set (after one row of value `u` left, sign -1, or came, +1; none: sign 0)
    /// exceeds the class's risk, in rows: the largest over its values of D - risk(class) ·
    /// (size - 1), and for a value calm in the class, D - t(set). At most 0: within it.
    double excess(const Counts& c, std::size_t u = 0, std::int64_t sign = 0) const {
        work_ += values_;
        const std::int64_t size = c.size + sign;
        if (size < 2) return mix_.tiny_excess(size);
        const MixBounds bounds = mix_.bounds_of(size);
        double worst = -std::numeric_limits<double>::infinity();
        for (std::size_t w = 0; w < values_; ++w) {
            const std::int64_t x = c.x[w] + (w == u ? sign : 0);
            if (x <= 0) continue;
            worst = std::max(worst, mix_.value_excess(w, c.near[w] + (mix_.adjacent(u, w) ? sign : 0) - 1, bounds));
        }
        return worst;
    }

    /// excess(c, u, sign) for every value u (of those c holds, where sign is -1), into `out`,
    /// the same up to rounding ((d - cap) + 1 rather than (d + 1) - cap): O(v + s log s + v s)
    /// where s values are within one row of the second largest excess, all of it charged to
    /// the work. After one row leaves or comes, every value's D moves by its adjacency to u,
    /// so with each value's excess at the new size taken first ("base"), the new excess is
    /// the largest base plus sign times adjacency: only values within one of the second
    /// largest (the largest may be the value leaving) can change which one it is.
    void excess_each(const Counts& c, std::int64_t sign, std::vector<double>& out) const {
        out.assign(values_, std::numeric_limits<double>::infinity());
        base_.resize(values_);
        const std::int64_t size = c.size + sign;
        work_ += values_;
        if (size < 2) {
            out.assign(values_, mix_.tiny_excess(size));
            return;
        }
        const MixBounds bounds = mix_.bounds_of(size);
        ranked_.clear();
        // Only values within one of the second largest base can decide (the largest may be
        // the value leaving): rank those.
        double first = -std::numeric_limits<double>::infinity(), second = first;
        for (std::size_t w = 0; w < values_; ++w) {
            if (c.x[w] == 0) continue;
            base_[w] = mix_.value_excess(w, c.near[w] - 1, bounds);
            if (base_[w] > first) { second = first; first = base_[w]; }
            else if (base_[w] > second) second = base_[w];
        }
        for (std::size_t w = 0; w < values_; ++w) {
            if (c.x[w] > 0 && base_[w] >= second - 1.0) ranked_.emplace_back(base_[w], w);
        }
        work_ += ranked_.size() * (1 + static_cast<std::size_t>(std::log2(static_cast<double>(ranked_.size()) + 1.0)));
        std::sort(ranked_.begin(), ranked_.end(), [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        for (std::size_t u = 0; u < values_; ++u) {
            if (sign < 0 && c.x[u] == 0) continue;
            double e = -std::numeric_limits<double>::infinity();
            for (const auto& [b, w] : ranked_) {
                ++work_;
                if (b + 1.0 < e) break;  // no value below can reach e
                if (sign < 0 && w == u && c.x[u] == 1) continue;  // u leaves the set
                e = std::max(e, b + static_cast<double>(sign) * (mix_.adjacent(u, w) ? 1.0 : 0.0));
            }
            if (sign > 0 && c.x[u] == 0) e = std::max(e, mix_.value_excess(u, c.near[u], bounds));  // u arrives
            out[u] = e;
        }
    }

    bool fits(const Counts& c) const { return mix_.fits(c, k_); }

    /// The node's own class `hosted`, taken from its pieces `left` (which keep the rest).
    bool balance(std::vector<Counts>& left, const std::vector<double>& margins, const std::vector<std::uint8_t>& joins,
                 Counts& hosted) const {
        // Per piece, excess_each(piece, -1) while the piece is unchanged (the dilution reads
        // every piece's at every row it moves, and moves one piece's row at a time).
        std::vector<std::vector<double>> spare(left.size());
        std::vector<std::uint8_t> fresh(left.size(), 0);
        for (std::int64_t step = 0; step <= size_ && !spent(); ++step) {
            bool moved = false;
            for (std::size_t c = 0; c < left.size(); ++c) {  // pieces below k rows join the node's class
                Counts& piece = left[c];
                if (piece.size > 0 && (piece.size < k_ || joins[c])) {
                    fresh[c] = 0;
                    for (std::size_t u = 0; u < values_; ++u) {
                        while (piece.x[u] > 0) { move(piece, u, -1); move(hosted, u, +1); }
                    }
                    moved = true;
                }
            }
            if (moved) continue;
            for (std::size_t c = 0; c < left.size(); ++c) {  // a piece beyond its margin sheds a row
                Counts& piece = left[c];
                if (piece.size == 0 || excess(piece) <= -margins[c]) continue;
                // The row whose departure lowers the piece's excess most, then the node's
                // class's least, then the lower value.
                excess_each(piece, -1, off_);
                excess_each(hosted, +1, on_);
                std::size_t best = values_;
                for (std::size_t u = 0; u < values_; ++u) {
                    if (piece.x[u] == 0) continue;
                    if (best == values_ || off_[u] < off_[best] || (off_[u] == off_[best] && on_[u] < on_[best])) best = u;
                }
                fresh[c] = 0;
                move(piece, best, -1);
                move(hosted, best, +1);
                moved = true;
                break;
            }
            if (moved) continue;
            if (hosted.size == 0 || fits(hosted)) return true;
            // Bring the node's class within the class's risk with a row that a piece can spare
            // without exceeding that risk (a piece then within 0 but not its margin sheds again
            // at the next step): the row lowering the class's excess most (then the lower piece
            // and value).
            excess_each(hosted, +1, on_);
            std::size_t from = left.size(), best = values_;
            for (std::size_t c = 0; c < left.size(); ++c) {
                if (left[c].size <= k_) continue;
                if (!fresh[c]) {
                    excess_each(left[c], -1, spare[c]);
                    fresh[c] = 1;
                }
                for (std::size_t u = 0; u < values_; ++u) {
                    if (left[c].x[u] == 0 || spare[c][u] > 0.0) continue;
                    if (from == left.size() || on_[u] < on_[best]) { from = c; best = u; }
                }
            }
            if (from == left.size()) return false;
            fresh[from] = 0;
            move(left[from], best, -1);
            move(hosted, best, +1);
        }
        return false;
    }

    /// The pieces of `rows` along the column whose pieces exceed the class's risk least (ties:
    /// the smaller largest piece, then the lower column); `rows` alone where it holds at most
    /// `leaf_rows` rows or no column cuts it.
    std::vector<std::vector<std::int32_t>> cut(const std::vector<std::int32_t>& rows, std::size_t leaf_rows,
                                               std::size_t& column) const {
        std::vector<std::vector<std::int32_t>> chosen;
        if (rows.size() <= leaf_rows) return chosen;
        std::pair<double, std::size_t> chosen_key{0.0, 0};
        for (std::size_t j = 0; j < qi_.dimensions(); ++j) {
            std::vector<std::vector<std::int32_t>> pieces = pieces_along(rows, j);
            if (pieces.size() < 2) continue;
            double over = 0.0;
            std::size_t largest = 0;
            for (const auto& piece : pieces) {
                over += std::max(0.0, excess(counts(piece)));
                largest = std::max(largest, piece.size());
            }
            const std::pair<double, std::size_t> key{over, largest};
            if (chosen.empty() || key < chosen_key) { chosen = std::move(pieces); chosen_key = key; column = j; }
        }
        return chosen;
    }

    /// `rows` cut along column j: by the child of the rows' common taxonomy node, or at the
    /// median of a numeric column; rows keep their order.
    std::vector<std::vector<std::int32_t>> pieces_along(const std::vector<std::int32_t>& rows, std::size_t j) const {
        std::vector<std::vector<std::int32_t>> pieces;
        const Taxonomy* tax = qi_.taxonomy(j);
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const std::int32_t r : rows) {
            lo = std::min(lo, qi_.row(r)[j]);
            hi = std::max(hi, qi_.row(r)[j]);
        }
        if (lo == hi) return pieces;
        if (tax != nullptr) {
            const std::int32_t node = tax->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
            std::map<std::int32_t, std::size_t> child_piece;
            for (const std::int32_t r : rows) {
                std::int32_t child = static_cast<std::int32_t>(qi_.row(r)[j]);
                while (tax->parent(child) != node) child = tax->parent(child);
                const auto [it, fresh] = child_piece.emplace(child, pieces.size());
                if (fresh) pieces.emplace_back();
                pieces[it->second].push_back(r);
            }
            return pieces;
        }
        std::vector<double> x;
        for (const std::int32_t r : rows) x.push_back(qi_.row(r)[j]);
        const auto mid = x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2);
        std::nth_element(x.begin(), mid, x.end());
        const double median = *mid;
        const bool below_all = median == hi;  // cut below the median, else at it
        pieces.resize(2);
        for (const std::int32_t r : rows) {
            const double v = qi_.row(r)[j];
            pieces[(below_all ? v < median : v <= median) ? 0 : 1].push_back(r);
        }
        if (pieces[0].empty() || pieces[1].empty()) pieces.clear();
        return pieces;
    }

    const LossModel& qi_;
    std::int64_t k_;
    const Publishable& publishable_;
    std::size_t& work_;
    std::size_t limit_;
    ClassMix mix_;
    std::size_t values_;
    std::int64_t size_, worst_;  ///< the class's rows and largest D
    mutable std::vector<double> off_, on_;            ///< scratch of balance(): excess_each's
    mutable std::vector<double> base_;                ///< scratch of excess_each
    mutable std::vector<std::pair<double, std::size_t>> ranked_;  ///< scratch of excess_each
    std::map<std::vector<std::int32_t>, double> margin_;  ///< per node (path of cuts)
    std::vector<std::int32_t> failed_;
};

}  // namespace

std::vector<std::vector<std::int32_t>> balanced_parts(const std::vector<std::int32_t>& rows,
                                                      const LossModel& qi, const Neighbours& neighbours,
                                                      std::size_t k, double delta, const Publishable& publishable,
                                                      std::size_t& work, std::size_t work_cap) {
    std::vector<std::vector<std::int32_t>> parts;
    const std::size_t leaf_rows = kBalancedLeafK * k;
    if (rows.size() < 2 * leaf_rows || k == 0) return parts;
    Balancer balancer(rows, qi, neighbours, k, delta, publishable, work, work_cap);
    if (!balancer.usable()) return parts;
    for (std::size_t attempt = 0; attempt < kAttempts; ++attempt) {
        parts.clear();
        if (balancer.place(rows, leaf_rows, parts)) break;
        parts.clear();
        if (balancer.failed().empty() || balancer.spent()) break;  // no parent to take more, or no work left
        balancer.widen(balancer.failed());
    }
    if (parts.size() < 2) parts.clear();
    return parts;
}

}  // namespace proxanon
