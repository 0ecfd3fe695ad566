// Property-preserving value substitution, after the property-preserving anonymization paper
// (its Algorithm 1 for the localities, §4 for the random walk, §4.2 for segments).
//
// One numeric column is cut into segments of consecutive rows. In a segment, rows with equal
// values share one variable (so ties stay ties), and the distinct values u_0 < ... < u_{m-1}
// give the localities |u_i - u_j| <= |u_j - u_k| or >= (i < j < k, Algorithm 1). A fraction of
// them (the properties of interest, PoIs) is kept, made linear by the order constraints
// x_i <= x_j <= x_k they need, and a random walk moves the variables inside the polytope the
// kept constraints and the bounds [lo, hi] define, starting from the original values.
//
// Invariant: every kept locality holds strictly in the original data (an equidistant triple,
// |u_i - u_j| = |u_j - u_k|, is never kept: its constraint would pin the walk to a face), and
// every constraint returned, evaluated exactly as written (|x_i - x_j| <= |x_j - x_k| in
// float64), holds in the substituted values, as do the bounds: a step whose end point fails
// any of them by rounding is rejected.
//
// Cost per segment of s rows: O(s log s) to sort, O(s^2) for Algorithm 1 (one pointer per j),
// O(s^2 / 64) words for the transitive reduction of the order constraints, and
// O(s + C) per walk iteration for C kept constraints. Memory: linear in the rows plus the
// kept constraints. Deterministic: each segment draws from its own xoshiro256** stream
// seeded from (seed, stream, segment), normal samples come from a polar method with a
// portable logarithm, so the output does not depend on the platform's libm or thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace proxanon {

/// What a constraint says about rows i, j, k (k = -1 for two-row constraints).
enum class Relation : std::int8_t {
    Closer = 0,   ///< |x_i - x_j| <= |x_j - x_k| (the paper's "<=" locality)
    Farther = 1,  ///< |x_i - x_j| >= |x_j - x_k| (the paper's ">=" locality)
    Order = 2,    ///< x_i <= x_j, added so that a locality stays linear
    Equal = 3,    ///< x_i == x_j: tied rows of one segment share one variable
};

/// A locality among the distinct sorted values of a segment, by index into them.
struct Locality {
    std::int32_t i;
    std::int32_t j;
    std::int32_t k;
    Relation relation;  ///< Closer or Farther
};

struct SubstitutionParams {
    std::size_t segment_size = 100;  ///< rows per segment (the last one takes the remainder)
    double poi_fraction = 1.0;       ///< probability that a locality is kept, in (0, 1]
    std::size_t iterations = 4000;   ///< random-walk steps per segment
    std::uint64_t seed = 0;
    std::uint64_t stream = 0;        ///< tells columns apart under one seed
    std::size_t n_threads = 1;       ///< segments run in parallel; output does not depend on it
};

struct SubstitutionResult {
    std::vector<double> values;          ///< substituted value of every row
    std::vector<std::int64_t> i, j, k;   ///< constraints by row position (k = -1: two rows)
    std::vector<std::int8_t> relation;   ///< a Relation per constraint
    std::size_t localities = 0;          ///< localities Algorithm 1 found (before sampling)
    std::size_t steps_moved = 0;         ///< walk steps with a positive length, accepted
    std::size_t steps_rejected = 0;      ///< steps undone because rounding broke a constraint
};

/// Algorithm 1 over strictly increasing values: for every pair i < j, the last k > j with
/// u_k - u_j < u_j - u_i ("Farther") and the first k > j with u_k - u_j > u_j - u_i
/// ("Closer"), when they exist. Every other strict locality (i, j, k) follows from these by the
/// paper's pruning rules. O(m^2) for m values.
std::vector<Locality> extract_localities(const std::vector<double>& sorted_values);

/// Substitutes one column of n values with bounds lo <= hi that contain every value.
/// Throws std::invalid_argument on a NaN, bad bounds or bad parameters.
SubstitutionResult substitute_column(const double* values, std::size_t n, double lo, double hi,
                                     const SubstitutionParams& params);

}  // namespace proxanon
