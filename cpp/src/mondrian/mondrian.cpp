#include "proxanon/mondrian/mondrian.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "proxanon/mondrian/part_check.hpp"

namespace proxanon {

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
    // The rows' QI codes, row-major in the order of `order` and permuted with it: a part's
    // extremes and values are read in one sequential stretch (read through `order`, every
    // level of the cut read the whole table scattered: 3M census rows, 96 MB of codes).
    std::vector<double> codes(qi.row(0), qi.row(0) + n * d);
    const auto swap_rows = [&](std::size_t a, std::size_t b) {
        std::swap(order[a], order[b]);
        std::swap_ranges(codes.begin() + static_cast<std::ptrdiff_t>(a * d), codes.begin() + static_cast<std::ptrdiff_t>((a + 1) * d),
                         codes.begin() + static_cast<std::ptrdiff_t>(b * d));
    };
    std::int32_t next_group = 0;
    // Depth first, left half on top, so groups are numbered left to right in QI order.
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, n}};
    std::vector<std::pair<double, std::size_t>> spreads;
    std::vector<double> lo(d), hi(d);
    std::vector<double> column;  // the part's values in one column
    while (!stack.empty()) {
        const auto [begin, end] = stack.back();
        stack.pop_back();
        poll(params.interrupt);
        spreads.clear();
        // Every column's extremes in one pass.
        std::copy(codes.begin() + static_cast<std::ptrdiff_t>(begin * d), codes.begin() + static_cast<std::ptrdiff_t>((begin + 1) * d), lo.begin());
        std::copy(lo.begin(), lo.end(), hi.begin());
        for (std::size_t j = begin + 1; j < end; ++j) {
            const double* x = codes.data() + j * d;
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
            // The median value of the part in this column and its run of equal values: the
            // halves are sets (the checks and the parts below do not depend on the order
            // within them), so a selection and a three-way partition replace a sort, O(m)
            // per column.
            column.clear();
            for (std::size_t j = begin; j < end; ++j) column.push_back(codes[j * d + dim]);
            const std::size_t middle = (end - begin + 1) / 2 - 1;  // offset in the part
            std::nth_element(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(middle), column.end());
            const double median = column[middle];
            std::size_t less = 0, equal = 0;
            for (const double x : column) {
                less += x < median;
                equal += x == median;
            }
            // The median value goes left; if that leaves the right empty, cut before it.
            std::size_t boundary = begin + less + equal;
            if (boundary == end) boundary = begin + less;
            if (boundary == begin || boundary == end) continue;
            // Below the median, at it, above it (in place, the codes moving with the rows).
            std::size_t below = begin, j = begin, above = end;
            while (j < above) {
                const double x = codes[j * d + dim];
                if (x < median) swap_rows(below++, j++);
                else if (x > median) swap_rows(j, --above);
                else ++j;
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
    if (!result.satisfied) result.violating_rows = whole_table_violating_rows(checker, params, n);
    return result;
}

}  // namespace proxanon
