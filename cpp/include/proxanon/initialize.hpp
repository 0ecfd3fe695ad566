// INITIALIZE (Algorithm 1, §V-C): a degree-balanced equitable starting colouring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace proxanon {

/// Sizes of the m equitable colour classes of n rows: the first n mod m classes hold
/// ceil(n/m) rows, the others floor(n/m) (SPEC §3). Requires 1 <= m <= n.
std::vector<std::int32_t> equitable_sizes(std::size_t n, std::size_t m);

/// Algorithm 1. Rows are taken in descending order of degree (ties: lower row index first);
/// each goes to the class with the smallest degree sum (ties: lowest class index) among the
/// classes below floor(n/m) rows; once all classes hold floor(n/m), the n mod m remaining rows
/// go one each to the classes with the smallest degree sum. Balancing degree sums minimizes
/// the expected number of monochromatic edges (Lemma 3). Returns the class of each row.
/// Cost O(n log n + n log m).
std::vector<std::int32_t> initialize(const std::vector<std::int64_t>& degree, std::size_t m);

}  // namespace proxanon
