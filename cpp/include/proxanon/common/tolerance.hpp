// The float tolerances of the principle (docs/design/privacy-model.md), named once; Python reads
// them from the native module (NEIGHBOUR_SLACK, ALLOWANCE_SLACK) or calls the functions that use
// them.
#pragma once

namespace proxanon {

/// Relative slack of the neighbour test: delta(x, y) <= eps + kNeighbourSlack * max(1, eps).
/// Without it |0.7 - 0.8| = 0.10000000000000009 is not within 0.1 and Table I of Wang and Liu,
/// XColor, fails.
inline constexpr double kNeighbourSlack = 1e-9;

/// Added before the floor in t(V) = floor((1 - delta)(|V| - 1) + kAllowanceSlack), so that
/// (1 - 0.8) * 10 = 1.9999999999999996 allows 2 neighbours, as exact arithmetic does.
inline constexpr double kAllowanceSlack = 1e-9;

/// Relative widening of a grid cell beyond the neighbour box radius, so that rounding in the
/// cell computation never puts two neighbours two cells apart.
inline constexpr double kCellWidening = 1e-9;

}  // namespace proxanon
