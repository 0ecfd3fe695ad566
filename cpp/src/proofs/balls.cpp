#include "proxanon/proofs/balls.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/common/ordering.hpp"
#include "proxanon/common/parallel.hpp"

namespace proxanon {

namespace {

/// The components of positive weight.
std::vector<std::size_t> weighted(const Distance& distance) {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < distance.dimensions(); ++j) {
        if (distance.weights()[j] > 0.0) out.push_back(j);
    }
    return out;
}

/// Rows ordered by one component, with their components copied in that order so that a
/// slab is scanned in sequence.
struct Slab {
    std::size_t axis = 0;
    double half = 0.0;                 ///< the box radius along `axis`
    std::vector<std::int64_t> order;   ///< rows by (component `axis`, row)
    std::vector<double> key, ordered;  ///< component `axis` and all components, in that order

    Slab(const double* data, std::size_t n, std::size_t s, std::size_t axis_, double half_)
        : axis(axis_), half(half_) {
        std::vector<std::uint64_t> bits(n);
        for (std::size_t r = 0; r < n; ++r) bits[r] = ordered_bits(data[r * s + axis]);
        order = radix_order(bits);
        key.resize(n);
        ordered.resize(n * s);
        for (std::size_t i = 0; i < n; ++i) {
            const double* from = data + static_cast<std::size_t>(order[i]) * s;
            key[i] = from[axis];
            std::copy(from, from + s, ordered.begin() + static_cast<std::ptrdiff_t>(i * s));
        }
    }

    /// Calls visit(row, components) for every row whose component `axis` lies within a
    /// little more than the box radius of x's (a superset of x's neighbours).
    template <typename Visit>
    void scan(const double* x, std::size_t s, Visit&& visit) const {
        const double reach = half * (1.0 + 1e-9) + 1e-300;
        const std::size_t n = order.size();
        std::size_t i = static_cast<std::size_t>(
            std::lower_bound(key.begin(), key.end(), x[axis] - reach) - key.begin());
        for (; i < n && key[i] <= x[axis] + reach; ++i) visit(order[i], ordered.data() + i * s);
    }
};

}  // namespace

Balls count_balls(const double* data, std::size_t n, const Distance& distance, Shape shape,
                  const std::vector<std::int64_t>& centres, bool members, std::size_t threads,
                  Interrupt* interrupt) {
    const std::size_t s = distance.dimensions();
    for (const std::int64_t c : centres) {
        if (c < 0 || static_cast<std::size_t>(c) >= n) throw std::invalid_argument("centre is not a row");
    }
    const std::vector<std::size_t> sides = weighted(distance);  // orthants: a sign per component
    if (shape == Shape::Orthants && sides.size() > kMaxOrthantComponents) {
        throw std::invalid_argument("orthant cliques need at most 6 weighted components");
    }
    const std::size_t orthants = shape == Shape::Orthants ? std::size_t{1} << sides.size() : 1;
    const auto row = [&](std::size_t r) { return data + r * s; };
    // Rows of one value fall in the same shapes: the shapes are searched over the distinct
    // values, each weighing its rows (a census's coded attributes: thousands of values for
    // millions of rows).
    // With one centre every value is scanned once anyway: the rows are then scanned as they
    // are (each its own value), with no table of distinct values to build first.
    const ValueTable table = centres.size() > 1 ? ValueTable::from_rows(data, n, s) : ValueTable::each_row(data, n, s);
    const std::size_t values = table.size();
    // The narrowest slab; none (every row a candidate) when no component bounds a neighbourhood.
    std::size_t axis = s;
    double half = 0.0;
    if (distance.metric() != Metric::MinComponent) {
        for (std::size_t j = 0; j < s; ++j) {
            const double r = distance.box_radius(j);
            if (std::isfinite(r) && (axis == s || r < half)) {
                axis = j;
                half = r;
            }
        }
    }
    const bool sliced = axis < s && centres.size() > 1;
    const Slab slab = sliced ? Slab(table.values.data(), values, s, axis, half) : Slab(data, 0, s, 0, 0.0);
    // Per orthant o (bit b set: component sides[b] at or above the centre's), the values of
    // the shape around row c: visit(o, value).
    const auto shapes = [&](std::int64_t c, auto&& visit) {
        const double* x = row(static_cast<std::size_t>(c));
        const auto consider = [&](std::int64_t r, const double* y) {
            if (!distance.within(x, y)) return;
            for (std::size_t o = 0; o < orthants; ++o) {
                bool inside = true;
                for (std::size_t b = 0; b < sides.size() && inside && shape == Shape::Orthants; ++b) {
                    const std::size_t j = sides[b];
                    inside = (o >> b & 1) ? y[j] >= x[j] : y[j] <= x[j];
                }
                if (inside) visit(o, r);
            }
        };
        if (sliced) {
            slab.scan(x, s, consider);
        } else {
            for (std::size_t u = 0; u < values; ++u) consider(static_cast<std::int64_t>(u), table.value(u));
        }
    };
    const auto rows_of = [&](std::int64_t u) { return table.count[static_cast<std::size_t>(u)]; };
    Balls out;
    out.sizes.assign(centres.size(), 0);
    parallel_for(centres.size(), threads, interrupt, [&](std::size_t i) {
        std::vector<std::int64_t> inside(orthants, 0);
        shapes(centres[i], [&](std::size_t o, std::int64_t u) { inside[o] += rows_of(u); });
        out.sizes[i] = *std::max_element(inside.begin(), inside.end());
    });
    if (members && !centres.empty()) {
        std::vector<std::int64_t> inside(orthants, 0);
        shapes(centres.front(), [&](std::size_t o, std::int64_t u) { inside[o] += rows_of(u); });
        const std::size_t best = static_cast<std::size_t>(std::max_element(inside.begin(), inside.end()) - inside.begin());
        std::vector<std::uint8_t> in_shape(values, 0);
        shapes(centres.front(), [&](std::size_t o, std::int64_t u) {
            if (o == best) in_shape[static_cast<std::size_t>(u)] = 1;
        });
        for (std::size_t r = 0; r < n; ++r) {
            if (in_shape[static_cast<std::size_t>(table.row_value[r])]) out.rows.push_back(static_cast<std::int64_t>(r));
        }
    }
    return out;
}

namespace {

/// Two pointers over `items` in ascending order along the weighted component (rows, or
/// distinct values): `near(a, b)` tests items a and b, `rows_before(j)` counts the rows of
/// the items below j, `lowest(i)` is item i's lowest row. Item i's neighbours are the items
/// [begin, end): a neighbour above it stays one of item i + 1, and one below that is not a
/// neighbour of item i is none of item i + 1 (differences only shrink or grow), so neither
/// pointer moves back.
template <typename Near, typename RowsBefore, typename Lowest>
Windows sweep_windows(std::size_t items, Near near, RowsBefore rows_before, Lowest lowest) {
    Windows out;
    std::size_t begin = 0, end = 0;
    for (std::size_t i = 0; i < items; ++i) {
        end = std::max(end, i + 1);
        while (end < items && near(i, end)) ++end;
        while (!near(begin, i)) ++begin;  // stops at i at the latest
        const std::int64_t size = rows_before(end) - rows_before(i);
        const std::int64_t degree = rows_before(end) - rows_before(begin) - 1;
        const std::int64_t row = lowest(i);
        if (size > out.size || (size == out.size && row < out.anchor)) {
            out.size = size;
            out.anchor = row;
        }
        if (degree > out.degree || out.degree_row < 0 || (degree == out.degree && row < out.degree_row)) {
            out.degree = degree;
            out.degree_row = row;
        }
    }
    return out;
}

/// largest_window on one component, over its distinct values: the rows of a value share
/// their neighbours, so a value's first row (its lowest) has its largest window, all of them
/// its degree, and ties go to the lowest row of the values tied. Where values repeat (coded
/// or Zipf-like data: 1,000 values for 1M rows) this passes over the rows once and over the
/// values twice, with no ordering of the rows.
Windows value_windows(const double* data, std::size_t n, const Distance& distance) {
    const ValueTable table = ValueTable::from_rows(data, n, 1);
    const std::size_t values = table.size();
    std::vector<std::int64_t> before(values + 1, 0);  // rows of the values below each id
    for (std::size_t u = 0; u < values; ++u) before[u + 1] = before[u] + table.count[u];
    std::vector<std::int64_t> lowest(values, -1);  // each value's lowest row
    for (std::size_t r = 0; r < n; ++r) {
        auto& low = lowest[static_cast<std::size_t>(table.row_value[r])];
        if (low < 0) low = static_cast<std::int64_t>(r);
    }
    return sweep_windows(
        values, [&](std::size_t a, std::size_t b) { return distance.within(table.value(a), table.value(b)); },
        [&](std::size_t j) { return before[j]; }, [&](std::size_t u) { return lowest[u]; });
}

}  // namespace

Windows largest_window(const double* data, std::size_t n, const Distance& distance) {
    const std::size_t s = distance.dimensions();
    const std::vector<std::size_t> sides = weighted(distance);
    if (sides.size() != 1) throw std::invalid_argument("windows need exactly one weighted component");
    if (s == 1) return value_windows(data, n, distance);
    const std::size_t axis = sides.front();
    std::vector<std::uint64_t> bits(n);
    for (std::size_t r = 0; r < n; ++r) bits[r] = ordered_bits(data[r * s + axis]);
    const std::vector<std::int64_t> order = radix_order(bits);
    // The rows copied in that order once: the pointers then read memory in sequence
    // (reading rows through `order` missed cache at every step on a million rows).
    std::vector<double> sorted(n * s);
    for (std::size_t i = 0; i < n; ++i) {
        const double* from = data + static_cast<std::size_t>(order[i]) * s;
        std::copy(from, from + s, sorted.begin() + static_cast<std::ptrdiff_t>(i * s));
    }
    const auto row = [&](std::size_t i) { return sorted.data() + i * s; };
    return sweep_windows(
        n, [&](std::size_t a, std::size_t b) { return distance.within(row(a), row(b)); },
        [](std::size_t j) { return static_cast<std::int64_t>(j); }, [&](std::size_t i) { return order[i]; });
}

}  // namespace proxanon
