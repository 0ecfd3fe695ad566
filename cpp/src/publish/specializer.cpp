// The Specializer's searches of splits of a passing class (specializer.hpp): the cuts along a
// column, the peeling of pieces until they pass, the feeding of the remainder, and the best
// split over all columns; specializer_failing.cpp has those of a failing class.
#include "proxanon/publish/specializer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/ordering.hpp"

namespace proxanon::specializing {

Part Specializer::describe(const std::vector<std::int32_t>& rows, std::size_t begin, std::size_t end, bool checked) {
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
        std::tie(part.key[2 * i], part.key[2 * i + 1]) = published_pair(qi_.taxonomy(i), keys_[i], lo, hi);
    }
    part.loss = loss * static_cast<double>(end - begin);
    if (checked) {
        part.violations = check_.measure(rows.data() + begin, rows.data() + end);
        part.worst = measured_worst();
    }
    return part;
}

void Specializer::order_by_value(const std::vector<std::int32_t>& rows, std::size_t j) {
    const std::size_t m = rows.size();
    scratch_.resize(m);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool integral = true;
    std::uint32_t row_bits = 0;  // of every row: rows are below 2^row_bits
    for (const std::int32_t r : rows) {
        const double x = qi_.row(r)[j];
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        integral = integral && x == std::floor(x);
        row_bits |= static_cast<std::uint32_t>(r);
    }
    if (m == 0) return;
    if (!integral || hi - lo >= 2147483648.0) {
        by_value_.clear();
        for (const std::int32_t r : rows) by_value_.emplace_back(qi_.row(r)[j], r);
        std::sort(by_value_.begin(), by_value_.end());
        for (std::size_t i = 0; i < m; ++i) scratch_[i] = by_value_[i].second;
        return;
    }
    // The value's offset right above the row's bits: keys use fewer bits, so fewer
    // 11-bit passes (a 15-bit row and a 7-bit offset: 2, where 32 bits for the row made 4).
    unsigned shift = 0;
    while (shift < 32 && (row_bits >> shift) != 0) ++shift;
    const std::uint64_t row_mask = (std::uint64_t{1} << shift) - 1;
    sort_keys_.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
        const auto offset = static_cast<std::uint64_t>(qi_.row(rows[i])[j] - lo);
        sort_keys_[i] = offset << shift | static_cast<std::uint32_t>(rows[i]);
    }
    radix_sort(sort_keys_, sort_spare_);  // passes only over the bits in use
    for (std::size_t i = 0; i < m; ++i) scratch_[i] = static_cast<std::int32_t>(sort_keys_[i] & row_mask);
}

std::vector<std::size_t> Specializer::cut_along(std::size_t j, const std::vector<std::int32_t>& rows) {
    order_by_value(rows, j);
    const std::size_t m = scratch_.size();
    const auto x = [&](std::size_t r) { return qi_.row(scratch_[r])[j]; };
    if (m == 0 || x(0) == x(m - 1)) return {};
    const double lo = x(0), hi = x(m - 1);
    std::vector<std::size_t> cuts{0};
    if (const Taxonomy* tax = qi_.taxonomy(j)) {
        const auto first = static_cast<std::int32_t>(lo), last = static_cast<std::int32_t>(hi);
        for (std::size_t r = 0; r < m;) {
            const std::int32_t child_last = tax->child_range(first, last, static_cast<std::int32_t>(x(r))).second;
            while (r < m && x(r) <= child_last) ++r;
            cuts.push_back(r);
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
        cuts.push_back(boundary);
        cuts.push_back(m);
    }
    return cuts;
}

void Specializer::pieces_of(const std::vector<std::size_t>& cuts, std::vector<std::vector<std::int32_t>>& pieces,
               std::vector<std::int32_t>& rest) const {
    for (std::size_t p = 0; p + 1 < cuts.size(); ++p) {
        const auto b = scratch_.begin() + static_cast<std::ptrdiff_t>(cuts[p]);
        const auto e = scratch_.begin() + static_cast<std::ptrdiff_t>(cuts[p + 1]);
        if (cuts[p + 1] - cuts[p] >= params_.k) pieces.emplace_back(b, e);
        else rest.insert(rest.end(), b, e);
    }
}

Split Specializer::joined(std::vector<Split>& kept) {
    Split split;
    for (Split& own : kept) {
        const std::size_t offset = split.rows.size();
        split.rows.insert(split.rows.end(), own.rows.begin(), own.rows.end());
        for (Part& q : own.parts) {
            q.begin += offset;
            q.end += offset;
            split.violations += q.violations;
            split.parts.push_back(std::move(q));
        }
        split.kept_rows += own.rows.size();
    }
    return split;
}

std::optional<Split> Specializer::along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& whole,
                           std::size_t depth) {
    const std::vector<std::size_t> cuts = cut_along(j, rows);
    if (cuts.empty()) return std::nullopt;
    std::vector<std::vector<std::int32_t>> pieces;  // kept candidates; the rest pooled
    std::vector<std::int32_t> rest;
    pieces_of(cuts, pieces, rest);
    // Per piece, its further split and the size it was found for: pieces only lose rows,
    // so an unchanged size means unchanged rows and the split is not searched again.
    std::vector<std::pair<std::size_t, std::optional<Split>>> further(pieces.size());
    // Per piece peeled: its largest D, and the work of its last measure, charged again
    // where that measure is read instead of repeated (the budget stops where it did).
    std::vector<std::pair<std::int64_t, std::size_t>> peeled(pieces.size());
    const auto dissolve = [&](std::size_t p) {
        rest.insert(rest.end(), pieces[p].begin(), pieces[p].end());
        pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(p));
        further.erase(further.begin() + static_cast<std::ptrdiff_t>(p));
        peeled.erase(peeled.begin() + static_cast<std::ptrdiff_t>(p));
    };
    for (std::size_t round = 0; round < kMaxRounds && !pieces.empty(); ++round) {
        for (std::size_t p = pieces.size(); p-- > 0;) {
            std::size_t measured = 0;
            if (peel(pieces[p], rest, measured)) peeled[p] = {measured_worst(), measured};
            else dissolve(p);
        }
        if (spent()) return std::nullopt;
        // Each kept piece publishes its own tuple, or (when another class publishes that)
        // is split once more into parts that do, up to kMaxDepth levels down. Peeling
        // measured it last, passing: it is not measured again.
        std::vector<Split> kept;
        std::unordered_set<Key, KeyHash> keys;
        for (std::size_t p = 0; p < pieces.size();) {
            Part part = describe(pieces[p], 0, pieces[p].size(), false);
            part.worst = peeled[p].first;
            ledger_.charge(peeled[p].second);
            std::optional<Split> own;
            if (part.size() >= params_.k) {
                if (!ledger_.taken(part.key)) {
                    own = Split{pieces[p], {part}, pieces[p].size(), part.loss};
                } else if (depth < kMaxDepth) {
                    if (further[p].first != pieces[p].size()) {
                        further[p] = {pieces[p].size(), best(pieces[p], part, depth + 1)};
                    }
                    own = further[p].second;
                }
            }
            const bool apart = own && std::none_of(own->parts.begin(), own->parts.end(),
                                                   [&](const Part& q) { return keys.count(q.key) != 0; });
            if (!apart) {
                dissolve(p);
                continue;
            }
            for (const Part& q : own->parts) keys.insert(q.key);
            kept.push_back(std::move(*own));
            ++p;
        }
        if (pieces.empty()) break;
        Split split = joined(kept);
        bool fits = rest.empty();
        bool feedable = false;
        if (!fits) {
            const std::size_t offset = split.rows.size();
            split.rows.insert(split.rows.end(), rest.begin(), rest.end());
            Part remainder = describe(split.rows, offset, split.rows.size());
            const bool owned = ((depth == 0 && remainder.key == whole.key) || !ledger_.taken(remainder.key)) &&
                               keys.count(remainder.key) == 0;
            feedable = owned && rest.size() >= params_.k;
            fits = feedable && remainder.violations <= whole.violations;
            if (fits) split.parts.push_back(std::move(remainder));
        }
        if (fits) {
            for (const Part& part : split.parts) split.loss += part.loss;
            return split;
        }
        if (!feedable || !feed(pieces, rest)) {
            std::size_t smallest = 0;
            for (std::size_t p = 1; p < pieces.size(); ++p) {
                if (pieces[p].size() < pieces[smallest].size()) smallest = p;
            }
            dissolve(smallest);
        }
    }
    return std::nullopt;
}

bool Specializer::peel(std::vector<std::int32_t>& piece, std::vector<std::int32_t>& rest, std::size_t& measured) {
    // Rows shed in the last round: over a graph, the piece is measured again from what
    // the last measure held (PartChecker::measure_shed), not from its rows.
    std::vector<std::pair<std::int32_t, std::int64_t>> shed;
    for (std::size_t round = 0; round < kMaxPeels && piece.size() >= params_.k && !spent(); ++round) {
        const std::size_t before = check_.work();
        const std::int64_t bad = round > 0 && check_.graph() != nullptr
                                     ? check_.measure_shed(shed, piece.size())
                                     : check_.measure(piece.data(), piece.data() + piece.size());
        if (bad == 0 && round > 0 && check_.fails_criteria(piece.data(), piece.data() + piece.size())) {
            return false;  // shedding rows left the piece failing a criterion
        }
        if (bad == 0) {
            measured = check_.work() - before;
            return true;
        }
        if (check_.present().size() < params_.l || check_.criteria_failed() || !params_.dissimilarity) {
            return false;
        }
        std::vector<std::pair<std::int64_t, std::int32_t>> violating;
        for (std::int32_t u : check_.present()) {
            const std::int64_t e = check_.degree(u) - check_.allowed();
            if (e > 0) violating.emplace_back(-e, u);
        }
        std::sort(violating.begin(), violating.end());
        if (round < kGentlePeels) violating.resize(1);
        shed.clear();
        std::int64_t removed = 0;
        Relief relief_of(check_, violating, kReliefTestsPerRow * piece.size(), shed_rows_);
        for (const auto& [minus, w] : violating) {
            const std::int64_t relief = relief_of.of(w);
            const double left = static_cast<double>(-minus - relief) +
                                std::ceil((1.0 - params_.delta) * static_cast<double>(removed));
            if (left <= 0.0) continue;
            const auto x = std::min(check_.count(w),
                                    static_cast<std::int64_t>(std::ceil(left / std::max(params_.delta, 1e-9))));
            shed.emplace_back(w, x);
            relief_of.shed(w, x);
            removed += x;
        }
        ledger_.charge(relief_of.work());
        // quota_ is all zero between rounds: only the shed values' entries are set (a
        // round on a small piece costs no pass over every value of the table).
        quota_.resize(check_.values(), 0);
        for (const auto& [u, x] : shed) quota_[static_cast<std::size_t>(u)] = x;
        move_rows(piece, rest, [&](std::int32_t row) {
            auto& q = quota_[static_cast<std::size_t>(check_.value_of(row))];
            return q > 0 && q-- > 0;
        });
        for (const auto& [u, x] : shed) quota_[static_cast<std::size_t>(u)] = 0;
    }
    return false;
}

bool Specializer::feed(std::vector<std::vector<std::int32_t>>& pieces, std::vector<std::int32_t>& rest) {
    if (params_.delta >= 1.0 || !params_.dissimilarity) return false;
    std::vector<std::pair<std::int64_t, std::int32_t>> worst;
    for (std::int32_t u : check_.present()) {
        const std::int64_t e = check_.degree(u) - check_.allowed();
        if (e > 0) worst.emplace_back(-e, u);
    }
    if (worst.empty()) return false;
    std::sort(worst.begin(), worst.end());
    if (worst.size() > kFeedValues) worst.resize(kFeedValues);
    std::int64_t top = 0;
    for (const auto& [e, u] : worst) top = std::max(top, check_.degree(u));
    const double wanted = static_cast<double>(top) / (1.0 - params_.delta) + 1.0 - static_cast<double>(rest.size());
    const auto need = static_cast<std::size_t>(std::max(1.0, std::ceil(wanted)));
    std::size_t total = 0;
    for (const auto& piece : pieces) total += piece.size();
    verdict_.resize(check_.values(), -1);  // all -1 between calls, as quota_ is 0
    std::vector<std::int32_t> decided;
    std::size_t moved = 0;
    for (auto& piece : pieces) {
        std::size_t share = std::min((need * piece.size() + total - 1) / total, piece.size() - params_.k);
        move_rows(piece, rest, [&](std::int32_t row) {
            if (share == 0) return false;
            const std::int32_t w = check_.value_of(row);
            auto& far = verdict_[static_cast<std::size_t>(w)];
            if (far < 0) {
                far = 1;
                decided.push_back(w);
                ledger_.charge(worst.size());
                for (const auto& [e, u] : worst) {
                    if (check_.adjacent(u, w)) { far = 0; break; }
                }
            }
            if (!far) return false;
            --share;
            ++moved;
            return true;
        });
    }
    for (const std::int32_t w : decided) verdict_[static_cast<std::size_t>(w)] = -1;
    return moved > 0;
}

std::optional<Split> Specializer::best(const std::vector<std::int32_t>& rows, const Part& whole, std::size_t depth) {
    std::vector<std::optional<Split>> each = along_each(false, rows, whole, depth);
    std::optional<Split> chosen;
    for (std::size_t j = 0; j < qi_.dimensions() && !spent(); ++j) {
        poll(params_.interrupt);
        std::optional<Split> split = each.empty() ? along(j, rows, whole, depth) : std::move(each[j]);
        if (split && (!chosen || split->kept_rows > chosen->kept_rows ||
                      (split->kept_rows == chosen->kept_rows && split->loss < chosen->loss))) {
            chosen = std::move(split);
        }
    }
    return chosen;
}

}  // namespace proxanon::specializing
