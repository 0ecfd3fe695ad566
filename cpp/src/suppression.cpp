#include "proxanon/suppression.hpp"

#include <algorithm>
#include <vector>

namespace proxanon {

namespace {

/// True iff adding v to class c leaves every row of c (and v) within its allowance.
bool fits(const Colouring& col, std::int32_t v, std::size_t c) {
    const std::int32_t a = col.value_of(v);
    const std::int32_t t = allowed_neighbours(col.size(c) + 1, col.delta());
    std::int32_t own = 0;
    for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) {
        const bool near = col.adjacent(a, col.value_of(*p));
        own += near;
        if (col.own(*p) + near > t) return false;
    }
    return own <= t;
}

/// Moves the rows of an undersized class where they fit, or leaves them out.
void dissolve(Colouring& col, std::size_t c, std::size_t k, XColorResult& result) {
    std::vector<std::int32_t> rows(col.begin(c), col.end(c));
    std::sort(rows.begin(), rows.end());
    for (std::int32_t v : rows) {
        col.detach(v);
        bool placed = false;
        for (std::size_t step = 0; step + 1 < col.classes() && !placed; ++step) {
            const std::size_t target = col.outward(c, step);
            if (col.size(target) < k || !fits(col, v, target)) continue;
            col.attach(v, target);
            placed = true;
        }
        if (!placed) result.suppressed_rows.push_back(v);
    }
}

}  // namespace

void suppress_violations(Colouring& col, std::size_t k, XColorResult& result,
                         Interrupt* interrupt) {
    while (true) {
        poll(interrupt);
        std::int32_t worst = -1;
        std::int64_t worst_excess = 0;
        for (std::size_t r = 0; r < col.rows(); ++r) {
            const auto row = static_cast<std::int32_t>(r);
            if (!col.is_violation(row)) continue;
            const std::int64_t excess = col.own(row) - col.allowed(static_cast<std::size_t>(col.class_of(row)));
            if (worst < 0 || excess > worst_excess ||
                (excess == worst_excess && col.own(row) > col.own(worst))) {
                worst = row;
                worst_excess = excess;
            }
        }
        if (worst < 0) return;
        const auto home = static_cast<std::size_t>(col.class_of(worst));
        col.detach(worst);
        result.suppressed_rows.push_back(worst);
        if (col.size(home) < k && col.size(home) > 0) dissolve(col, home, k, result);
    }
}

}  // namespace proxanon
