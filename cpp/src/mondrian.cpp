#include "proxanon/mondrian.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "proxanon/part_check.hpp"

namespace proxanon {

namespace {

/// The violating rows of a table that fails as one group, ascending: all of them when it
/// lacks l distinct values (no row alone can fix that), else those with more than t(G)
/// neighbours in it. One measure of the whole table.
std::vector<std::int32_t> violating_rows(PartChecker& checker, const MondrianParams& params,
                                         std::size_t n) {
    std::vector<std::int32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    checker.measure(all.data(), all.data() + n);
    const bool diverse = checker.present().size() >= params.l;
    std::vector<std::int32_t> rows;
    for (std::int32_t r : all) {
        if (!diverse || (params.dissimilarity && checker.degree(checker.value_of(r)) > checker.allowed())) {
            rows.push_back(r);
        }
    }
    return rows;
}

}  // namespace

MondrianResult mondrian(const LossModel& qi, const Neighbours& neighbours,
                        const MondrianParams& params) {
    const std::size_t n = neighbours.table().row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (!qi.active()) throw std::invalid_argument("Mondrian needs quasi-identifier columns");
    const std::size_t d = qi.dimensions();
    std::vector<std::int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    PartChecker checker(neighbours, params);

    MondrianResult result;
    result.groups.assign(n, -1);
    const bool whole_table_passes = checker.passes(order.data(), order.data() + n);
    std::int32_t next_group = 0;
    // Depth first, left half on top, so groups are numbered left to right in QI order.
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, n}};
    std::vector<std::pair<double, std::size_t>> spreads;
    while (!stack.empty()) {
        const auto [begin, end] = stack.back();
        stack.pop_back();
        poll(params.interrupt);
        spreads.clear();
        for (std::size_t i = 0; i < d; ++i) {
            double lo = qi.row(order[begin])[i], hi = lo;
            for (std::size_t j = begin + 1; j < end; ++j) {
                const double x = qi.row(order[j])[i];
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            if (lo < hi) spreads.emplace_back(qi.cost(i, lo, hi), i);
        }
        std::sort(spreads.begin(), spreads.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        bool cut = false;
        for (const auto& [spread, dim] : spreads) {
            poll(params.interrupt);
            const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
            const auto last = order.begin() + static_cast<std::ptrdiff_t>(end);
            std::sort(first, last, [&, dim = dim](std::int32_t a, std::int32_t b) {
                const double xa = qi.row(a)[dim], xb = qi.row(b)[dim];
                return xa != xb ? xa < xb : a < b;
            });
            // The median value goes left; if that leaves the right empty, cut before it.
            const std::size_t middle = begin + (end - begin + 1) / 2 - 1;
            const double median = qi.row(order[middle])[dim];
            std::size_t boundary = middle + 1;
            while (boundary < end && qi.row(order[boundary])[dim] == median) ++boundary;
            if (boundary == end) {
                boundary = middle;
                while (boundary > begin && qi.row(order[boundary - 1])[dim] == median) --boundary;
            }
            if (boundary == begin || boundary == end) continue;
            const std::int32_t* base = order.data();
            if (checker.passes(base + begin, base + boundary) &&
                checker.passes(base + boundary, base + end)) {
                stack.emplace_back(boundary, end);
                stack.emplace_back(begin, boundary);
                ++result.cuts;
                cut = true;
                break;
            }
        }
        if (!cut) {
            for (std::size_t j = begin; j < end; ++j) result.groups[static_cast<std::size_t>(order[j])] = next_group;
            ++next_group;
        }
    }
    // Every part cut off passed the checks, so only an uncut whole table can fail them (the
    // dissimilarity check is not monotone: halves can pass where the whole table fails).
    result.satisfied = whole_table_passes || result.cuts > 0;
    if (!result.satisfied) result.violating_rows = violating_rows(checker, params, n);
    return result;
}

}  // namespace proxanon
