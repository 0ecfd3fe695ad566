// splitmix64 (Steele, Lea and Flood; Vigna's constants): one step of a 64-bit sequence that
// depends on its seed only, the same on every platform. The covering split draws its
// annealing moves from it (cover_split.cpp's AnnealingStream), and the substitution seeds
// each segment's xoshiro256** from it (substitution.cpp's SegmentStream).
// Invariant: advances `state` by a fixed odd constant and returns a bijective mix of it.
// Cost: O(1).
#pragma once

#include <cstdint>

namespace proxanon {

inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

}  // namespace proxanon
