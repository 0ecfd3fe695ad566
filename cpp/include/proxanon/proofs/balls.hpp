// Cliques of the epsilon relation found from anchor rows, for advise's clique bound:
//   ball      the rows within a radius r of a centre row; with 2·thr(r) inside thr(epsilon) and
//             the triangle inequality, a clique (the radius is the caller's, about epsilon/2).
//   orthants  the rows y that are epsilon-neighbours of an anchor row a and lie on one side of
//             it in every weighted component (y_i >= a_i in some components, <= in the others):
//             a clique under Linf, and in one dimension under every metric, because a computed
//             difference never exceeds a larger one (rounding is monotone), so two rows on one
//             side of a are no farther apart in any component than the farther of them is from
//             a. Exact, with no use of the triangle inequality.
//   windows   one weighted component: the largest orthant over every row as anchor (the
//             maximum clique of the interval graph), and the largest degree, by two
//             pointers over the sorted values.
// Balls and orthants are searched over the distinct values, each weighing its rows (rows of
// one value fall in the same shapes). The values are ordered once along the component whose
// box radius is the narrowest; a centre's shape lies in the slab of that component within
// the box radius (Distance::box_radius), so only the slab's values are tested, each by
// Distance::within (exact, as everywhere else).
// Cost: O(n + U log U) to group the rows by value (ValueTable::from_rows), O(U) to order the U
// values (radix), then per centre O(log U + 2^s · s · values in its slab), at most
// O(2^s · s · U); windows O(n) after the sort; memory O(n s). Centres are spread
// over threads, the same answer for any number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"

namespace proxanon {

enum class Shape { Ball, Orthants };

struct Balls {
    std::vector<std::int64_t> sizes;  ///< per centre, the rows of its shape (itself included)
    std::vector<std::int64_t> rows;   ///< with `members`, the first centre's shape, ascending
};

/// `data`: n rows of `distance.dimensions()` components, row-major; `distance`'s epsilon is
/// the radius (Ball) or epsilon (Orthants: per centre, the largest orthant). Throws
/// std::invalid_argument for a centre that is not a row, or Orthants on more than
/// kMaxOrthantComponents weighted components.
Balls count_balls(const double* data, std::size_t n, const Distance& distance, Shape shape,
                  const std::vector<std::int64_t>& centres, bool members, std::size_t threads,
                  Interrupt* interrupt);

inline constexpr std::size_t kMaxOrthantComponents = 6;

struct Windows {
    std::int64_t anchor = -1;      ///< the row whose window (orthant upward) is the largest
    std::int64_t size = 0;         ///< its rows, itself included: the largest clique
    std::int64_t degree_row = -1;  ///< the row with the most epsilon-neighbours
    std::int64_t degree = 0;       ///< their number (itself excluded): Theta
};

/// With exactly one component of positive weight: the largest window and the largest degree
/// (ties: the lowest row), by two pointers over the sorted values; -1 rows for no rows.
Windows largest_window(const double* data, std::size_t n, const Distance& distance);

}  // namespace proxanon
