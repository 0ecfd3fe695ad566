#include "proxanon/mondrian/units.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "proxanon/common/ordering.hpp"

namespace proxanon {

RowUnits single_rows(std::size_t n) {
    RowUnits units;
    units.rows.resize(n);
    std::iota(units.rows.begin(), units.rows.end(), 0);
    units.begin.resize(n + 1);
    std::iota(units.begin.begin(), units.begin.end(), std::int64_t{0});
    return units;
}

RowUnits identical_rows(const LossModel& qi, const CriteriaData* criteria, std::size_t n,
                        const std::vector<std::int32_t>* values) {
    // Each column's ranks fold into one key per row (densified before it could overflow),
    // ordered by a radix sort. A column of whole numbers over a short range (taxonomy leaf
    // codes, criterion codes) is its own rank less its minimum; any other is ranked through
    // dense_ranks.
    std::vector<std::uint64_t> key(n, 0), bits;
    std::vector<double> column(n);
    std::vector<std::uint32_t> rank(n);
    std::uint64_t span = 1;
    const auto ranks = [&]() -> std::size_t {
        double lo = column.empty() ? 0.0 : column[0], hi = lo;
        bool whole = true;
        for (const double x : column) {
            whole = whole && x == std::floor(x);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        if (whole && hi - lo < static_cast<double>(4 * n + 1024)) {
            for (std::size_t r = 0; r < n; ++r) rank[r] = static_cast<std::uint32_t>(column[r] - lo);
            return static_cast<std::size_t>(hi - lo) + 1;
        }
        bits.resize(n);
        for (std::size_t r = 0; r < n; ++r) bits[r] = ordered_bits(column[r]);
        return dense_ranks(bits, rank);
    };
    const auto fold = [&]() {
        const std::size_t m = ranks();
        if (span > (std::uint64_t{1} << 62) / std::max<std::size_t>(m, 1)) {
            std::vector<std::uint32_t> dense;
            span = dense_ranks(key, dense);
            for (std::size_t r = 0; r < n; ++r) key[r] = dense[r];
        }
        for (std::size_t r = 0; r < n; ++r) key[r] = key[r] * m + rank[r];
        span *= std::max<std::size_t>(m, 1);
    };
    const std::size_t d = qi.dimensions();
    const double* codes = n == 0 ? nullptr : qi.row(0);
    for (std::size_t i = 0; i < d; ++i) {
        for (std::size_t r = 0; r < n; ++r) column[r] = codes[r * d + i];
        fold();
    }
    if (criteria != nullptr) {
        for (const CriteriaColumn& c : criteria->columns) {
            for (std::size_t r = 0; r < n; ++r) column[r] = static_cast<double>(c.codes[r]);
            fold();
        }
    }
    if (values != nullptr) {
        for (std::size_t r = 0; r < n; ++r) column[r] = static_cast<double>((*values)[r]);
        fold();
    }
    const std::vector<std::int64_t> order = radix_order(key);
    RowUnits units;
    units.rows.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
        units.rows[j] = static_cast<std::int32_t>(order[j]);
        if (j == 0 || key[static_cast<std::size_t>(order[j])] != key[static_cast<std::size_t>(order[j - 1])]) {
            units.begin.push_back(static_cast<std::int64_t>(j));
        }
    }
    units.begin.push_back(static_cast<std::int64_t>(n));
    return units;
}

}  // namespace proxanon
