// Linear-time orderings of rows by integer keys, shared by specialization and the exchange step.
//
// radix_sort: LSD radix sort of 64-bit keys, 11 bits a pass, skipping every pass whose bits
// are the same in all keys: O(n) per pass, at most 6 passes, usually 2-4 (keys that pack a
// small value above a row index). radix_order: the same over (key, index) pairs, or one
// stable counting pass where the keys span fewer than 4n values (group ids).
// dense_ranks: the rank of every key among the distinct keys (equal keys, equal ranks,
// ascending): O(n) expected through a hash of the distinct keys when they are few, else a
// radix sort of the keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace proxanon {

/// A double's bits mapped so that unsigned order is numeric order (-0.0 taken as 0.0; NaN
/// not expected).
inline std::uint64_t ordered_bits(double x) {
    const double v = x + 0.0;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
}

/// Sorts `keys` ascending; `spare` is scratch (resized as needed).
void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& spare);

/// The indices 0 .. n-1 ordered by (keys[i], i).
std::vector<std::int64_t> radix_order(const std::vector<std::uint64_t>& keys);

/// Sorts (key, index) pairs by key, stably (pairs given in index order end up ordered by
/// (key, index)); `spare` is scratch. The keys travel with their indices, so a pass over the
/// result reads both in sequence.
void radix_sort_pairs(std::vector<std::pair<std::uint64_t, std::int64_t>>& items,
                      std::vector<std::pair<std::uint64_t, std::int64_t>>& spare);

/// The double whose ordered_bits are `key` (0.0 for the key of -0.0).
inline double from_ordered_bits(std::uint64_t key) {
    const std::uint64_t bits = (key >> 63) ? key & ~(std::uint64_t{1} << 63) : ~key;
    double x = 0.0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

/// Dense ranks of `keys` into `rank` (resized to keys.size()); returns how many distinct keys.
std::size_t dense_ranks(const std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& rank);

}  // namespace proxanon
