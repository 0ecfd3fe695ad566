#include "proxanon/class_counts.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "proxanon/parallel.hpp"

namespace proxanon {

void count_in_class(const ValueTable& table, const Distance& distance, const std::int32_t* rows,
                    std::size_t m, std::int64_t* out) {
    // (value, position in the class), sorted: runs of one value give its multiplicity.
    std::vector<std::pair<std::int32_t, std::size_t>> by_value(m);
    for (std::size_t i = 0; i < m; ++i) by_value[i] = {table.row_value[static_cast<std::size_t>(rows[i])], i};
    std::sort(by_value.begin(), by_value.end());
    std::vector<std::int32_t> value;      // distinct values of the class
    std::vector<std::int64_t> times;      // their multiplicities
    std::vector<std::size_t> index_of(m); // per position: its value's index in `value`
    for (std::size_t i = 0; i < m; ++i) {
        if (i == 0 || by_value[i].first != by_value[i - 1].first) {
            value.push_back(by_value[i].first);
            times.push_back(0);
        }
        times.back() += 1;
        index_of[by_value[i].second] = value.size() - 1;
    }
    const std::size_t u = value.size();
    std::vector<std::int64_t> count(u);
    if (u <= kPairwiseValues) {
        for (std::size_t a = 0; a < u; ++a) {
            std::int64_t c = times[a] - 1;
            const double* x = table.value(static_cast<std::size_t>(value[a]));
            for (std::size_t b = 0; b < u; ++b) {
                if (b != a && distance.within(x, table.value(static_cast<std::size_t>(value[b])))) c += times[b];
            }
            count[a] = c;
        }
    } else if (table.s == 1) {
        // One component: value ids ascend with the value (ValueTable::from_rows), and the
        // distance to u grows monotonically away from u on either side, so u's neighbours
        // among the class's values are a run around it, found by two binary searches.
        std::vector<std::int64_t> before(u + 1, 0);
        for (std::size_t i = 0; i < u; ++i) before[i + 1] = before[i] + times[i];
        const auto near = [&](std::size_t a, std::size_t b) {
            return distance.within(table.value(static_cast<std::size_t>(value[a])),
                                   table.value(static_cast<std::size_t>(value[b])));
        };
        for (std::size_t i = 0; i < u; ++i) {
            std::size_t lo = 0, hi = i;  // the first neighbour at or below i
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (near(i, mid)) hi = mid; else lo = mid + 1;
            }
            const std::size_t first = lo;
            lo = i + 1;
            hi = u;  // one past the last neighbour above i
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (near(i, mid)) lo = mid + 1; else hi = mid;
            }
            count[i] = before[lo] - before[first] - 1;
        }
    } else {
        // The class's values as a table of their own, multiplicities as counts: the row
        // degree of a value there is D_V of every member holding it.
        ValueTable own;
        own.s = table.s;
        own.values.reserve(u * table.s);
        for (const std::int32_t v : value) {
            const double* x = table.value(static_cast<std::size_t>(v));
            own.values.insert(own.values.end(), x, x + table.s);
        }
        own.count = std::move(times);
        count = implicit_row_degrees(own, distance, 1, nullptr);
    }
    for (std::size_t i = 0; i < m; ++i) out[i] = count[index_of[i]];
}

std::vector<std::int64_t> class_neighbour_counts(const ValueTable& table, const Distance& distance,
                                                 const std::vector<std::int64_t>& labels,
                                                 std::size_t threads, Interrupt* interrupt) {
    const std::size_t n = labels.size();
    if (table.row_value.size() != n) throw std::invalid_argument("labels and sensitive values differ in rows");
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    // Rows grouped by class (classes in ascending id, rows ascending inside).
    std::vector<std::pair<std::int64_t, std::int32_t>> order;
    order.reserve(n);
    for (std::size_t r = 0; r < n; ++r) {
        if (labels[r] >= 0) order.emplace_back(labels[r], static_cast<std::int32_t>(r));
    }
    std::sort(order.begin(), order.end());
    std::vector<std::int32_t> rows(order.size());
    std::vector<std::size_t> start;
    for (std::size_t i = 0; i < order.size(); ++i) {
        rows[i] = order[i].second;
        if (i == 0 || order[i].first != order[i - 1].first) start.push_back(i);
    }
    start.push_back(order.size());
    std::vector<std::int64_t> sorted_counts(rows.size());
    parallel_for(start.size() - 1, threads, interrupt, [&](std::size_t c) {
        count_in_class(table, distance, rows.data() + start[c], start[c + 1] - start[c],
                       sorted_counts.data() + start[c]);
    });
    std::vector<std::int64_t> counts(n, -1);
    for (std::size_t i = 0; i < rows.size(); ++i) counts[static_cast<std::size_t>(rows[i])] = sorted_counts[i];
    return counts;
}

}  // namespace proxanon
