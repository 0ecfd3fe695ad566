#include "proxanon/initialize.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <utility>

#include "proxanon/ordering.hpp"

namespace proxanon {

std::vector<std::int32_t> equitable_sizes(std::size_t n, std::size_t m) {
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    std::vector<std::int32_t> sizes(m, static_cast<std::int32_t>(n / m));
    for (std::size_t c = 0; c < n % m; ++c) sizes[c] += 1;
    return sizes;
}

std::vector<std::int32_t> initialize(const std::vector<std::int64_t>& degree, std::size_t m) {
    const std::size_t n = degree.size();
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    // Sort key (max_degree - degree) << 32 | row: descending degree, then ascending row.
    std::int64_t top = 0;
    for (std::int64_t d : degree) {
        if (d < 0 || d >= (std::int64_t{1} << 31)) throw std::invalid_argument("degrees must lie in [0, 2^31)");
        top = std::max(top, d);
    }
    std::vector<std::uint64_t> keys(n);
    for (std::size_t r = 0; r < n; ++r) {
        keys[r] = (static_cast<std::uint64_t>(top - degree[r]) << 32) | r;
    }
    std::vector<std::uint64_t> spare;
    radix_sort(keys, spare);  // O(n) per 11 bits in use (the keys are distinct: rows differ)
    std::vector<std::int32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::int32_t>(keys[i] & 0xffffffffULL);

    using Entry = std::pair<std::int64_t, std::int32_t>;  // (degree sum, class)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
    std::vector<std::int64_t> sum(m, 0);
    std::vector<std::int32_t> size(m, 0);
    std::vector<std::int32_t> assigned(n, -1);
    const auto base = static_cast<std::int32_t>(n / m);
    for (std::size_t c = 0; c < m; ++c) open.emplace(0, static_cast<std::int32_t>(c));

    const std::size_t filled = static_cast<std::size_t>(base) * m;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == filled) {  // every class holds floor(n/m): each may take one more row
            for (std::size_t c = 0; c < m; ++c) open.emplace(sum[c], static_cast<std::int32_t>(c));
        }
        const auto [s, c] = open.top();
        open.pop();
        const auto uc = static_cast<std::size_t>(c);
        const auto row = static_cast<std::size_t>(order[i]);
        assigned[row] = c;
        sum[uc] = s + degree[row];
        size[uc] += 1;
        if (i < filled && size[uc] < base) open.emplace(sum[uc], c);
    }
    return assigned;
}

std::vector<std::int32_t> qi_order(const LossModel& loss, std::size_t n, std::size_t leaf) {
    std::vector<std::int32_t> order(n);
    for (std::size_t r = 0; r < n; ++r) order[r] = static_cast<std::int32_t>(r);
    const std::size_t d = loss.dimensions();
    if (d == 0) return order;
    leaf = std::max<std::size_t>(leaf, 1);
    // Parts still to split, as [begin, end) ranges of `order`; processed depth first with the
    // left half on top, so finished parts are in left-to-right order already (in place).
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, n}};
    std::vector<double> lo(d), hi(d);
    // The QI values kept in the order of `order` (row j of `values` is row order[j]), so that
    // every pass over a part reads it front to back rather than rows scattered over the table.
    std::vector<double> values(n * d), moved;
    for (std::size_t r = 0; r < n; ++r) {
        const double* x = loss.row(static_cast<std::int32_t>(r));
        std::copy(x, x + d, values.begin() + static_cast<std::ptrdiff_t>(r * d));
    }
    // A part's rows as (value in the split column, row, position in the part): the median
    // search and the sort compare (value, row) only, as comparing rows by value then index.
    struct Keyed {
        double value;
        std::int32_t row;
        std::uint32_t at;
        bool operator<(const Keyed& other) const {
            return value != other.value ? value < other.value : row < other.row;
        }
    };
    std::vector<Keyed> keyed;
    while (!stack.empty()) {
        const auto [begin, end] = stack.back();
        stack.pop_back();
        if (end - begin <= leaf) continue;
        // Every column's extremes in one pass.
        const double* part = values.data() + begin * d;
        std::copy(part, part + d, lo.begin());
        std::copy(part, part + d, hi.begin());
        for (std::size_t j = 1; j < end - begin; ++j) {
            const double* x = part + j * d;
            for (std::size_t i = 0; i < d; ++i) {
                lo[i] = std::min(lo[i], x[i]);
                hi[i] = std::max(hi[i], x[i]);
            }
        }
        std::size_t best_dim = d;
        double best_spread = 0.0;
        for (std::size_t i = 0; i < d; ++i) {
            const double spread = lo[i] < hi[i] ? loss.cost(i, lo[i], hi[i]) : 0.0;
            if (spread > best_spread) { best_spread = spread; best_dim = i; }
        }
        if (best_dim == d) continue;  // all rows share their QI values
        std::size_t middle = begin + (end - begin) / 2;
        keyed.clear();
        for (std::size_t j = begin; j < end; ++j) {
            keyed.push_back({part[(j - begin) * d + best_dim], order[j], static_cast<std::uint32_t>(j - begin)});
        }
        if (const Taxonomy* tax = loss.taxonomy(best_dim)) {
            // Split where a subtree of the part's LCA ends, as near the median as possible,
            // so that parts (and the groups cut from them) generalize below the LCA.
            std::sort(keyed.begin(), keyed.end());
            auto leaf_at = [&](std::size_t j) { return static_cast<std::int32_t>(keyed[j - begin].value); };
            const std::int32_t lo_leaf = leaf_at(begin), hi_leaf = leaf_at(end - 1);
            const auto [child_first, child_last] = tax->child_range(lo_leaf, hi_leaf, leaf_at(middle));
            auto position = [&](std::int32_t boundary) {  // rows with leaf < boundary
                std::size_t a = begin, b = end;
                while (a < b) {
                    const std::size_t mid = a + (b - a) / 2;
                    if (leaf_at(mid) < boundary) a = mid + 1; else b = mid;
                }
                return a;
            };
            const std::size_t before = position(child_first);
            const std::size_t after = position(child_last + 1);
            const auto gap = [&](std::size_t p) { return p > middle ? p - middle : middle - p; };
            std::size_t chosen = end;
            for (std::size_t candidate : {before, after}) {
                if (candidate > begin && candidate < end && (chosen == end || gap(candidate) < gap(chosen))) {
                    chosen = candidate;
                }
            }
            if (chosen != end) middle = chosen;
        } else {
            std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(middle - begin), keyed.end());
        }
        moved.resize((end - begin) * d);
        for (std::size_t j = 0; j < end - begin; ++j) {
            order[begin + j] = keyed[j].row;
            std::copy(part + keyed[j].at * d, part + keyed[j].at * d + d, moved.begin() + static_cast<std::ptrdiff_t>(j * d));
        }
        std::copy(moved.begin(), moved.end(), values.begin() + static_cast<std::ptrdiff_t>(begin * d));
        stack.emplace_back(middle, end);
        stack.emplace_back(begin, middle);
    }
    return order;
}

std::vector<std::int32_t> initialize_in_blocks(const std::vector<std::int64_t>& degree,
                                               const std::vector<std::int32_t>& order,
                                               std::size_t m, std::size_t block) {
    const std::size_t n = degree.size();
    if (order.size() != n) throw std::invalid_argument("order must list every row once");
    const std::vector<std::int32_t> sizes = equitable_sizes(n, m);
    block = std::max<std::size_t>(block, 1);
    std::vector<std::int32_t> assigned(n, -1);
    using Entry = std::pair<std::int64_t, std::int32_t>;  // (degree sum, class)
    std::size_t row_start = 0;
    for (std::size_t first = 0; first < m; first += block) {
        const std::size_t last = std::min(first + block, m);
        std::size_t rows = 0;
        for (std::size_t c = first; c < last; ++c) rows += static_cast<std::size_t>(sizes[c]);
        if (last - first == 1) {  // one class takes the whole run, in any order
            for (std::size_t i = row_start; i < row_start + rows; ++i) {
                assigned[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(first);
            }
            row_start += rows;
            continue;
        }
        std::vector<std::int32_t> members(order.begin() + static_cast<std::ptrdiff_t>(row_start),
                                          order.begin() + static_cast<std::ptrdiff_t>(row_start + rows));
        std::sort(members.begin(), members.end(), [&](std::int32_t a, std::int32_t b) {
            const auto da = degree[static_cast<std::size_t>(a)];
            const auto db = degree[static_cast<std::size_t>(b)];
            return da != db ? da > db : a < b;
        });
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
        std::vector<std::int32_t> room(sizes.begin() + static_cast<std::ptrdiff_t>(first),
                                       sizes.begin() + static_cast<std::ptrdiff_t>(last));
        for (std::size_t c = first; c < last; ++c) open.emplace(0, static_cast<std::int32_t>(c));
        for (std::int32_t row : members) {
            const auto [sum, c] = open.top();
            open.pop();
            assigned[static_cast<std::size_t>(row)] = c;
            if (--room[static_cast<std::size_t>(c) - first] > 0) {
                open.emplace(sum + degree[static_cast<std::size_t>(row)], c);
            }
        }
        row_start += rows;
    }
    return assigned;
}

}  // namespace proxanon
