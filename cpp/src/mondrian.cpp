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
    std::vector<double> lo(d), hi(d);
    std::vector<std::pair<double, std::int32_t>> keyed;  // the part's (value in dim, row)
    while (!stack.empty()) {
        const auto [begin, end] = stack.back();
        stack.pop_back();
        poll(params.interrupt);
        spreads.clear();
        // Every column's extremes in one pass, one read of each row.
        const double* first_row = qi.row(order[begin]);
        std::copy(first_row, first_row + d, lo.begin());
        std::copy(first_row, first_row + d, hi.begin());
        for (std::size_t j = begin + 1; j < end; ++j) {
            const double* x = qi.row(order[j]);
            for (std::size_t i = 0; i < d; ++i) {
                lo[i] = std::min(lo[i], x[i]);
                hi[i] = std::max(hi[i], x[i]);
            }
        }
        for (std::size_t i = 0; i < d; ++i) {
            if (lo[i] < hi[i]) spreads.emplace_back(qi.cost(i, lo[i], hi[i]), i);
        }
        std::sort(spreads.begin(), spreads.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        bool cut = false;
        for (const auto& [spread, dim] : spreads) {
            poll(params.interrupt);
            // The median of the part by (value, row) and its run of equal values: the halves
            // are sets (the checks and the parts below do not depend on the order within
            // them), so a selection and a three-way split replace a sort, O(m) per column.
            keyed.clear();
            for (std::size_t j = begin; j < end; ++j) keyed.emplace_back(qi.row(order[j])[dim], order[j]);
            const std::size_t middle = (end - begin + 1) / 2 - 1;  // offset in the part
            std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(middle), keyed.end());
            const double median = keyed[middle].first;
            std::size_t less = 0, equal = 0;
            for (const auto& [x, row] : keyed) {
                less += x < median;
                equal += x == median;
            }
            // The median value goes left; if that leaves the right empty, cut before it.
            std::size_t boundary = begin + less + equal;
            if (boundary == end) boundary = begin + less;
            if (boundary == begin || boundary == end) continue;
            std::size_t below = begin, at = begin + less, above = begin + less + equal;
            for (const auto& [x, row] : keyed) {
                if (x < median) order[below++] = row;
                else if (x == median) order[at++] = row;
                else order[above++] = row;
            }
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
