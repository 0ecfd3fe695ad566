// The rows within a radius of a few centre rows: advise's sampled cliques (a ball of radius
// about epsilon/2 under a metric is a clique of the epsilon relation).
//
// Rows are ordered once along the component whose box radius is the narrowest; a centre's ball
// lies in the slab of that component within the box radius (Distance::box_radius), so only the
// slab's rows are tested, each by Distance::within (exact, as everywhere else).
// Cost: O(n log n) to order the rows, then per centre O(log n + s · rows in its slab), at most
// O(n s); memory O(n). Centres are spread over threads, the same answer for any number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/distance.hpp"
#include "proxanon/interrupt.hpp"

namespace proxanon {

struct Balls {
    std::vector<std::int64_t> sizes;  ///< per centre, the rows in its ball (itself included)
    std::vector<std::int64_t> rows;   ///< with `members`, the first centre's ball, ascending
};

/// `data`: n rows of `distance.dimensions()` components, row-major; `distance`'s epsilon is
/// the radius. Throws std::invalid_argument for a centre that is not a row.
Balls count_balls(const double* data, std::size_t n, const Distance& distance,
                  const std::vector<std::int64_t>& centres, bool members, std::size_t threads,
                  Interrupt* interrupt);

}  // namespace proxanon
