// The value table (docs/design/xcolor.md): rows grouped by their exact sensitive value.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "proxanon/neighbours/neighbour_graph.hpp"

#include "proxanon/common/ordering.hpp"

namespace proxanon {

namespace {

/// Hash of one row's bytes (FNV-1a over the 8-byte words, then a final mix).
std::uint64_t hash_row(const double* x, std::size_t s) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < s; ++i) {
        double v = x[i] == 0.0 ? 0.0 : x[i];  // -0.0 and 0.0 are the same value
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 1099511628211ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

/// Past this many distinct values of one component, the hash of from_rows misses cache at
/// almost every row (1M continuous values: 1.2 s, 23x its time at 100k); the values are then
/// ranked by a radix order of their bits instead, O(n) with sequential passes only.
constexpr std::size_t kHashedValues = std::size_t{1} << 16;

/// from_rows for one component by a stable radix order of ordered_bits (numeric order, -0.0
/// as 0.0): the same table, ids ascending with the value.
ValueTable ranked_values(const double* sensitive, std::size_t n) {
    // The keys travel with their rows: the pass below reads both in sequence and decodes
    // each value from its key, writing only a row's value id out of order.
    std::vector<std::pair<std::uint64_t, std::int64_t>> items(n), spare;
    for (std::size_t r = 0; r < n; ++r) items[r] = {ordered_bits(sensitive[r]), static_cast<std::int64_t>(r)};
    radix_sort_pairs(items, spare);
    ValueTable table;
    table.s = 1;
    table.row_value.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || items[i].first != items[i - 1].first) {
            table.values.push_back(from_ordered_bits(items[i].first));
            table.count.push_back(0);
        }
        table.count.back() += 1;
        table.row_value[static_cast<std::size_t>(items[i].second)] = static_cast<std::int32_t>(table.count.size() - 1);
    }
    return table;
}

/// Refuses more than 2^31 - 1 rows and values that are not finite, naming the first.
void check_rows(const double* sensitive, std::size_t n, std::size_t s) {
    if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::length_error("proxanon supports at most 2^31 - 1 rows");
    }
    for (std::size_t i = 0; i < n * s; ++i) {
        if (!std::isfinite(sensitive[i])) {
            throw std::invalid_argument("sensitive value at row " + std::to_string(i / s) +
                                        ", component " + std::to_string(i % s) + " is not finite");
        }
    }
}

}  // namespace

ValueTable ValueTable::each_row(const double* sensitive, std::size_t n, std::size_t s) {
    check_rows(sensitive, n, s);
    ValueTable table;
    table.s = s;
    table.values.assign(sensitive, sensitive + n * s);
    table.count.assign(n, 1);
    table.row_value.resize(n);
    for (std::size_t r = 0; r < n; ++r) table.row_value[r] = static_cast<std::int32_t>(r);
    return table;
}

ValueTable ValueTable::from_rows(const double* sensitive, std::size_t n, std::size_t s) {
    check_rows(sensitive, n, s);
    auto row = [&](std::int32_t r) { return sensitive + static_cast<std::size_t>(r) * s; };
    auto same = [&](std::int32_t a, std::int32_t b) {
        const double* x = row(a);
        const double* y = row(b);
        for (std::size_t i = 0; i < s; ++i) if (!(x[i] == y[i])) return false;
        return true;
    };
    // Open addressing over the distinct values seen so far (slot -> value in first-seen
    // order), doubled at half load: the table stays about as small as the distinct values,
    // in cache where values repeat (a table of 2n slots missed cache at every row: 3M census
    // rows, 8k values). O(n) expected.
    std::vector<std::int32_t> representatives;  // first row of each value, first-seen order
    std::vector<std::int32_t> seen(n);          // per row: its value's first-seen number
    std::size_t capacity = 1024;
    std::vector<std::int32_t> slot_value(capacity, -1);
    const auto insert = [&](std::int32_t id, std::int32_t r) {
        std::size_t slot = static_cast<std::size_t>(hash_row(row(r), s)) & (capacity - 1);
        while (slot_value[slot] >= 0) slot = (slot + 1) & (capacity - 1);
        slot_value[slot] = id;
    };
    for (std::size_t r = 0; r < n; ++r) {
        const auto ri = static_cast<std::int32_t>(r);
        std::size_t slot = static_cast<std::size_t>(hash_row(row(ri), s)) & (capacity - 1);
        while (slot_value[slot] >= 0 && !same(representatives[static_cast<std::size_t>(slot_value[slot])], ri)) {
            slot = (slot + 1) & (capacity - 1);
        }
        if (slot_value[slot] >= 0) {
            seen[r] = slot_value[slot];
            continue;
        }
        const auto id = static_cast<std::int32_t>(representatives.size());
        if (s == 1 && representatives.size() == kHashedValues) return ranked_values(sensitive, n);
        representatives.push_back(ri);
        seen[r] = id;
        slot_value[slot] = id;
        if (2 * representatives.size() > capacity) {
            capacity *= 2;
            slot_value.assign(capacity, -1);
            for (std::size_t u = 0; u < representatives.size(); ++u) {
                insert(static_cast<std::int32_t>(u), representatives[u]);
            }
        }
    }
    // Value ids follow the lexicographic order of the values, whatever the row order.
    std::vector<std::int32_t> order(representatives.size());
    for (std::size_t u = 0; u < order.size(); ++u) order[u] = static_cast<std::int32_t>(u);
    std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        const double* x = row(representatives[static_cast<std::size_t>(a)]);
        const double* y = row(representatives[static_cast<std::size_t>(b)]);
        for (std::size_t i = 0; i < s; ++i) {
            if (x[i] < y[i]) return true;
            if (y[i] < x[i]) return false;
        }
        return false;
    });
    std::vector<std::int32_t> id_of(order.size());
    ValueTable table;
    table.s = s;
    table.values.reserve(order.size() * s);
    for (std::size_t u = 0; u < order.size(); ++u) {
        const double* x = row(representatives[static_cast<std::size_t>(order[u])]);
        for (std::size_t i = 0; i < s; ++i) table.values.push_back(x[i] == 0.0 ? 0.0 : x[i]);
        id_of[static_cast<std::size_t>(order[u])] = static_cast<std::int32_t>(u);
    }
    table.count.assign(order.size(), 0);
    table.row_value.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
        const std::int32_t u = id_of[static_cast<std::size_t>(seen[r])];
        table.row_value[r] = u;
        table.count[static_cast<std::size_t>(u)] += 1;
    }
    return table;
}

ValueTable ValueTable::from_labels(std::vector<std::int32_t> row_value, std::size_t values) {
    ValueTable table;
    table.s = 0;
    table.count.assign(values, 0);
    for (std::int32_t u : row_value) {
        if (u < 0 || static_cast<std::size_t>(u) >= values) {
            throw std::invalid_argument("value ids must lie in 0..values-1");
        }
        table.count[static_cast<std::size_t>(u)] += 1;
    }
    for (std::size_t u = 0; u < values; ++u) {
        if (table.count[u] == 0) throw std::invalid_argument("every value id must be used by a row");
    }
    table.row_value = std::move(row_value);
    return table;
}

}  // namespace proxanon
