// The Specializer's searches for a failing class (specializer.hpp; the failing target of
// specialize.hpp, for a table published as best effort): cuts along each column into parts
// no riskier than the class, the balanced and the covering splits, and the check that a
// split of a failing class keeps the target's invariants (kept()).
#include "proxanon/publish/specializer.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "proxanon/common/interrupt.hpp"

namespace proxanon::specializing {

std::optional<Split> Specializer::failing_along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& top,
                                   std::size_t depth) {
    const std::vector<std::size_t> cuts = cut_along(j, rows);
    if (cuts.empty()) return std::nullopt;
    std::vector<std::vector<std::int32_t>> pieces;
    std::vector<std::int32_t> rest;
    pieces_of(cuts, pieces, rest);
    // Each piece as the parts it publishes (itself, or its own failing split).
    std::vector<Split> kept;
    std::unordered_set<Key, KeyHash> keys;
    for (auto& piece : pieces) {
        Part part = describe(piece, 0, piece.size());
        std::optional<Split> own;
        if (!ledger_.taken(part.key) && part.no_riskier_than(top)) {
            own = Split{piece, {part}, piece.size(), part.loss, part.violations};
        } else if (depth < kMaxDepth && piece.size() >= 2 * params_.k) {
            own = best_failing(piece, top, depth + 1);
        }
        if (own && std::none_of(own->parts.begin(), own->parts.end(),
                                [&](const Part& q) { return keys.count(q.key) != 0; })) {
            for (const Part& q : own->parts) keys.insert(q.key);
            kept.push_back(std::move(*own));
        } else {
            rest.insert(rest.end(), piece.begin(), piece.end());
        }
    }
    while (!rest.empty() && rest.size() < params_.k && !kept.empty()) {
        const auto smallest = std::min_element(kept.begin(), kept.end(), [](const Split& a, const Split& b) {
            return a.rows.size() < b.rows.size();
        });
        rest.insert(rest.end(), smallest->rows.begin(), smallest->rows.end());
        for (const Part& q : smallest->parts) keys.erase(q.key);
        kept.erase(smallest);
    }
    if (kept.empty() || (!rest.empty() && rest.size() < params_.k) ||
        (depth == 0 && rest.empty() && kept.size() == 1 && kept[0].parts.size() == 1)) {
        return std::nullopt;
    }
    Split split = joined(kept);
    if (!rest.empty()) {
        const std::size_t offset = split.rows.size();
        split.rows.insert(split.rows.end(), rest.begin(), rest.end());
        Part remainder = describe(split.rows, offset, split.rows.size());
        const bool owned = (depth == 0 && remainder.key == top.key) || !ledger_.taken(remainder.key);
        if (!owned || keys.count(remainder.key) != 0 || !remainder.no_riskier_than(top)) return std::nullopt;
        split.violations += remainder.violations;
        split.parts.push_back(std::move(remainder));
    }
    if (depth == 0 && split.violations > top.violations) return std::nullopt;
    for (const Part& part : split.parts) split.loss += part.loss;
    return split;
}

std::optional<Split> Specializer::best_failing(const std::vector<std::int32_t>& rows, const Part& top, std::size_t depth) {
    std::vector<std::optional<Split>> each = along_each(true, rows, top, depth);
    std::optional<Split> chosen;
    for (std::size_t j = 0; j < qi_.dimensions() && !spent(); ++j) {
        poll(params_.interrupt);
        std::optional<Split> split = each.empty() ? failing_along(j, rows, top, depth) : std::move(each[j]);
        if (split && (!chosen || split->violations < chosen->violations ||
                      (split->violations == chosen->violations && split->loss < chosen->loss))) {
            chosen = std::move(split);
        }
    }
    return chosen;
}

std::optional<Split> Specializer::balanced(const std::vector<std::int32_t>& rows, const Part& top) {
    const std::size_t checks = ledger_.checks_work(check_.work());
    const std::size_t budget = ledger_.budget();
    const std::size_t cap = budget > checks ? budget - checks : 0;  // the ledger's counter may reach it
    ledger_.allow(kBalancedWorkPerRow * rows.size());
    return kept(rows, top, balanced_parts(rows, qi_, nb_, params_.k, params_.delta, publishable(top), ledger_.counter(), cap));
}

std::optional<Split> Specializer::covering(const std::vector<std::int32_t>& rows, const Part& top, std::size_t most) {
    const std::size_t checks = ledger_.checks_work(check_.work());
    const std::size_t budget = ledger_.budget();
    const std::size_t cap = budget > checks ? budget - checks : 0;  // the ledger's counter may reach it
    ledger_.allow(kCoverWorkPerRow * rows.size());
    const FreeKey free = [&](const Key& key) { return !ledger_.taken(key); };
    return kept(rows, top, covering_parts(rows, top.key, qi_, keys_, nb_, params_.k, params_.delta, most, free,
                                          publishable(top), ledger_.counter(), cap));
}

Publishable Specializer::publishable(const Part& top) {
    return [this, &top](const std::vector<std::int32_t>& set) {
        const Part part = describe(set, 0, set.size(), false);
        return part.key == top.key || !ledger_.taken(part.key);
    };
}

std::optional<Split> Specializer::kept(const std::vector<std::int32_t>& rows, const Part& top,
                          const std::vector<std::vector<std::int32_t>>& parts) {
    if (parts.empty()) return std::nullopt;
    // The parts are the class's rows, each once.
    std::unordered_set<std::int32_t> members(rows.begin(), rows.end()), seen;
    std::size_t total = 0;
    for (const auto& part : parts) {
        total += part.size();
        for (const std::int32_t r : part) {
            if (members.count(r) == 0 || !seen.insert(r).second) return std::nullopt;
        }
    }
    if (total != rows.size()) return std::nullopt;
    Split split;
    std::unordered_set<Key, KeyHash> keys;
    for (const auto& rows_of_part : parts) {
        const std::size_t begin = split.rows.size();
        split.rows.insert(split.rows.end(), rows_of_part.begin(), rows_of_part.end());
        Part part = describe(split.rows, begin, split.rows.size());
        const bool owned = part.key == top.key || !ledger_.taken(part.key);
        if (part.size() < params_.k || !owned || !keys.insert(part.key).second || !part.no_riskier_than(top)) {
            return std::nullopt;
        }
        split.violations += part.violations;
        split.loss += part.loss;
        split.parts.push_back(std::move(part));
    }
    if (split.violations > top.violations) return std::nullopt;
    split.kept_rows = split.rows.size();
    return split;
}

}  // namespace proxanon::specializing
