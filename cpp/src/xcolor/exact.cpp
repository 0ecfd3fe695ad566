#include "proxanon/xcolor/exact.hpp"

#include <bit>
#include <limits>
#include <stdexcept>

#include "proxanon/xcolor/colouring.hpp"

namespace proxanon {

namespace {

/// The optimum over partitions of one row set.
struct Best {
    bool feasible = false;
    double loss = 0.0;
    std::int32_t groups = 0;
    std::uint32_t first = 0;  ///< the group holding the set's lowest row
};

bool better(double loss, std::int32_t groups, const Best& than) {
    return !than.feasible || loss < than.loss || (loss == than.loss && groups > than.groups);
}

}  // namespace

ExactPartition exact_partition(const ValueTable& table, const Neighbours& neighbours,
                               const LossModel& loss, std::size_t k, double delta,
                               bool allow_left_out, Interrupt* interrupt) {
    const std::size_t n = table.row_value.size();
    if (n == 0 || n > kExactRows) throw std::invalid_argument("exact search needs 1..16 rows");
    std::vector<std::uint32_t> near(n, 0);  // rows equal or within epsilon, itself included
    for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < n; ++b) {
            if (neighbours.adjacent(table.row_value[a], table.row_value[b])) near[a] |= 1U << b;
        }
    }
    const std::uint32_t all = (1U << n) - 1;
    // The loss of every group that satisfies on its own, +inf for the others.
    const double none = std::numeric_limits<double>::infinity();
    std::vector<double> group_loss(std::size_t{all} + 1, none);
    std::vector<std::int32_t> members;
    GroupExtremes extremes;
    for (std::uint32_t g = 1; g <= all; ++g) {
        const auto size = static_cast<std::size_t>(std::popcount(g));
        if (size < k) continue;
        const std::int32_t t = allowed_neighbours(size, delta);
        bool ok = true;
        members.clear();
        for (std::uint32_t rest = g; rest != 0 && ok; rest &= rest - 1) {
            const auto r = static_cast<std::size_t>(std::countr_zero(rest));
            ok = std::popcount(near[r] & g) - 1 <= t;
            members.push_back(static_cast<std::int32_t>(r));
        }
        if (!ok) continue;
        if (loss.active()) {
            extremes.compute(loss, members.data(), members.size());
            group_loss[g] = extremes.loss();
        } else {
            group_loss[g] = 0.0;
        }
    }
    std::vector<Best> best(std::size_t{all} + 1);
    best[0].feasible = true;
    for (std::uint32_t set = 1; set <= all; ++set) {
        if ((set & 0xFFF) == 0) poll(interrupt);
        const std::uint32_t low = set & (~set + 1);
        const std::uint32_t rest = set ^ low;
        Best& here = best[set];
        for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
            const std::uint32_t g = sub | low;
            const Best& other = best[set ^ g];
            if (group_loss[g] != none && other.feasible) {
                const double total = group_loss[g] + other.loss;
                if (better(total, other.groups + 1, here)) {
                    here = {true, total, other.groups + 1, g};
                }
            }
            if (sub == 0) break;
        }
    }
    std::uint32_t chosen = all;
    if (!best[all].feasible) {
        if (!allow_left_out) return {};
        chosen = 0;
        for (std::uint32_t set = 1; set <= all; ++set) {
            if (!best[set].feasible) continue;
            const int kept = std::popcount(set), so_far = std::popcount(chosen);
            if (kept > so_far || (kept == so_far && better(best[set].loss, best[set].groups, best[chosen]))) {
                chosen = set;
            }
        }
        if (chosen == 0) return {};
    }
    ExactPartition result;
    result.groups.assign(n, -1);
    result.kept = static_cast<std::size_t>(std::popcount(chosen));
    std::int32_t next = 0;
    for (std::uint32_t set = chosen; set != 0; set ^= best[set].first) {
        for (std::uint32_t g = best[set].first; g != 0; g &= g - 1) {
            result.groups[static_cast<std::size_t>(std::countr_zero(g))] = next;
        }
        ++next;
    }
    return result;
}

}  // namespace proxanon
