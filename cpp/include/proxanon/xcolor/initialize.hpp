// INITIALIZE (Wang and Liu, XColor, Algorithm 1, §V-C; docs/design/xcolor.md): a degree-balanced
// equitable starting colouring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"

namespace proxanon {

/// Sizes of the m equitable colour classes of n rows: the first n mod m classes hold
/// ceil(n/m) rows, the others floor(n/m) (docs/design/xcolor.md). Requires 1 <= m <= n.
std::vector<std::int32_t> equitable_sizes(std::size_t n, std::size_t m);

/// Algorithm 1. Rows are taken in descending order of degree (ties: lower row index first);
/// each goes to the class with the smallest degree sum (ties: lowest class index) among the
/// classes below floor(n/m) rows; once all classes hold floor(n/m), the n mod m remaining rows
/// go one each to the classes with the smallest degree sum. Balancing degree sums minimizes
/// the expected number of monochromatic edges (Lemma 3). Returns the class of each row.
/// Cost O(n log n + n log m).
std::vector<std::int32_t> initialize(const std::vector<std::int64_t>& degree, std::size_t m);

/// A row order that keeps QI-close rows close (Mondrian-style): recursively split the rows at
/// the median of the QI column whose spread, priced by the loss model, is widest (ties: lower
/// column, then lower row), until a part has at most `leaf` rows or no spread; parts are
/// emitted left to right. Cost O(n log n · d): per level of splits one sequential pass over
/// the QI values, which are kept permuted with the order (memory O(n d) more). On tables of
/// at least kParallelOrderRows rows, once the top levels give a part per thread, `threads`
/// threads (0: one per hardware thread) split the parts: a part's splits depend only on its
/// rows, so the order is the same for any number of threads.
std::vector<std::int32_t> qi_order(const LossModel& loss, std::size_t n, std::size_t leaf,
                                   std::size_t threads = 1);

/// Rows from which `qi_order` splits on several threads (below, a thread's start costs more
/// than it saves).
inline constexpr std::size_t kParallelOrderRows = std::size_t{1} << 16;

/// The QI-aware start: cut `order` into runs of `block` consecutive equitable classes and,
/// inside each run, assign its rows as Algorithm 1 does (descending degree into the class with
/// the smallest degree sum). Groups stay QI-local (a class's rows come from one run) while
/// each run's neighbours are spread over its classes. Class ids follow `order`, so nearby ids
/// are QI-close. Cost O(n log n).
std::vector<std::int32_t> initialize_in_blocks(const std::vector<std::int64_t>& degree,
                                               const std::vector<std::int32_t>& order,
                                               std::size_t m, std::size_t block);

}  // namespace proxanon
