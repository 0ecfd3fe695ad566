#include "proxanon/mondrian.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "proxanon/xcolor.hpp"

namespace proxanon {

namespace {

/// Per-value counts of a set of rows, emptied in O(touched).
class ValueCounts {
public:
    explicit ValueCounts(std::size_t values) : count_(values, 0) {}
    void fill(const ValueTable& table, const std::int32_t* begin, const std::int32_t* end) {
        clear();
        for (const std::int32_t* p = begin; p != end; ++p) {
            const auto u = table.row_value[static_cast<std::size_t>(*p)];
            if (count_[static_cast<std::size_t>(u)]++ == 0) present_.push_back(u);
        }
    }
    void clear() {
        for (std::int32_t u : present_) count_[static_cast<std::size_t>(u)] = 0;
        present_.clear();
    }
    const std::vector<std::int32_t>& present() const { return present_; }
    std::int64_t operator[](std::int32_t u) const { return count_[static_cast<std::size_t>(u)]; }

private:
    std::vector<std::int64_t> count_;
    std::vector<std::int32_t> present_;
};

/// D(v) of a row v of value u in the part whose values `counts` holds: the part's other rows
/// of value u and its rows of u's neighbour values. O(degree of u).
std::int64_t part_degree(std::int32_t u, const NeighbourGraph& graph, const ValueCounts& counts) {
    std::int64_t d = counts[u] - 1;
    const auto uu = static_cast<std::size_t>(u);
    for (const std::int32_t* p = graph.begin(uu); p != graph.end(uu); ++p) d += counts[*p];
    return d;
}

bool passes(const std::int32_t* begin, const std::int32_t* end, const ValueTable& table,
            const NeighbourGraph& graph, const MondrianParams& params, ValueCounts& counts) {
    const auto size = static_cast<std::size_t>(end - begin);
    if (size < params.k) return false;
    if (params.l == 0 && !params.dissimilarity) return true;
    counts.fill(table, begin, end);
    if (counts.present().size() < params.l) return false;
    if (params.dissimilarity) {
        const std::int64_t t = allowed_neighbours(size, params.delta);
        for (std::int32_t u : counts.present()) {
            poll(params.interrupt);
            if (part_degree(u, graph, counts) > t) return false;
        }
    }
    return true;
}

/// The violating rows of a table that fails as one group, ascending: all of them when it
/// lacks l distinct values (no row alone can fix that), else those with more than t(G)
/// neighbours in it. O(n + sum of the degrees of its values).
std::vector<std::int32_t> violating_rows(const ValueTable& table, const NeighbourGraph& graph,
                                         const MondrianParams& params, ValueCounts& counts) {
    const std::size_t n = table.row_value.size();
    std::vector<std::int32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    counts.fill(table, all.data(), all.data() + n);
    const bool diverse = counts.present().size() >= params.l;
    std::vector<char> excess(table.size(), diverse ? 0 : 1);
    if (diverse && params.dissimilarity) {
        const std::int64_t t = allowed_neighbours(n, params.delta);
        for (std::int32_t u : counts.present()) {
            excess[static_cast<std::size_t>(u)] = part_degree(u, graph, counts) > t;
        }
    }
    std::vector<std::int32_t> rows;
    for (std::int32_t r : all) {
        if (excess[static_cast<std::size_t>(table.row_value[static_cast<std::size_t>(r)])]) rows.push_back(r);
    }
    return rows;
}

}  // namespace

bool mondrian_check(const std::vector<std::int32_t>& rows, const ValueTable& table,
                    const NeighbourGraph& graph, const MondrianParams& params) {
    ValueCounts counts(table.size());
    return passes(rows.data(), rows.data() + rows.size(), table, graph, params, counts);
}

MondrianResult mondrian(const LossModel& qi, const ValueTable& table, const NeighbourGraph& graph,
                        const MondrianParams& params) {
    const std::size_t n = table.row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (!qi.active()) throw std::invalid_argument("Mondrian needs quasi-identifier columns");
    const std::size_t d = qi.dimensions();
    std::vector<std::int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    ValueCounts counts(table.size());

    MondrianResult result;
    result.groups.assign(n, -1);
    const bool whole_table_passes = passes(order.data(), order.data() + n, table, graph, params, counts);
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
            if (passes(base + begin, base + boundary, table, graph, params, counts) &&
                passes(base + boundary, base + end, table, graph, params, counts)) {
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
    if (!result.satisfied) result.violating_rows = violating_rows(table, graph, params, counts);
    return result;
}

}  // namespace proxanon
