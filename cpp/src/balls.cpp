#include "proxanon/balls.hpp"

#include <algorithm>
#include <stdexcept>

#include "proxanon/ordering.hpp"
#include "proxanon/parallel.hpp"

namespace proxanon {

Balls count_balls(const double* data, std::size_t n, const Distance& distance,
                  const std::vector<std::int64_t>& centres, bool members, std::size_t threads,
                  Interrupt* interrupt) {
    const std::size_t s = distance.dimensions();
    for (const std::int64_t c : centres) {
        if (c < 0 || static_cast<std::size_t>(c) >= n) throw std::invalid_argument("centre is not a row");
    }
    const auto row = [&](std::size_t r) { return data + r * s; };
    // The narrowest slab; none (every row a candidate) when no component bounds a ball.
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
    // With a slab: the rows' components copied in order along `axis`, so that a slab is
    // scanned in sequence.
    std::vector<std::int64_t> order;
    std::vector<double> key, ordered;
    if (axis < s && centres.size() > 1) {
        std::vector<std::uint64_t> bits(n);
        for (std::size_t r = 0; r < n; ++r) bits[r] = ordered_bits(row(r)[axis]);
        order = radix_order(bits);
        key.resize(n);
        ordered.resize(n * s);
        for (std::size_t i = 0; i < n; ++i) {
            const double* from = row(static_cast<std::size_t>(order[i]));
            key[i] = from[axis];
            std::copy(from, from + s, ordered.begin() + static_cast<std::ptrdiff_t>(i * s));
        }
    }
    // The rows of the ball around row c, in slab order (or row order without a slab).
    const auto ball = [&](std::int64_t c, auto&& visit) {
        const double* x = row(static_cast<std::size_t>(c));
        if (order.empty()) {
            for (std::size_t r = 0; r < n; ++r) {
                if (distance.within(x, row(r))) visit(static_cast<std::int64_t>(r));
            }
            return;
        }
        // A little wider than the box: the slab must hold every row within() accepts.
        const double reach = half * (1.0 + 1e-9) + 1e-300;
        const std::size_t lo = static_cast<std::size_t>(
            std::lower_bound(key.begin(), key.end(), x[axis] - reach) - key.begin());
        for (std::size_t i = lo; i < n && key[i] <= x[axis] + reach; ++i) {
            if (distance.within(x, ordered.data() + i * s)) visit(order[i]);
        }
    };
    Balls out;
    out.sizes.assign(centres.size(), 0);
    parallel_for(centres.size(), threads, interrupt, [&](std::size_t i) {
        std::int64_t inside = 0;
        ball(centres[i], [&](std::int64_t) { ++inside; });
        out.sizes[i] = inside;
    });
    if (members && !centres.empty()) {
        ball(centres.front(), [&](std::int64_t r) { out.rows.push_back(r); });
        std::sort(out.rows.begin(), out.rows.end());
    }
    return out;
}

}  // namespace proxanon
