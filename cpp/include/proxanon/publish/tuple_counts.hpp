// Open-addressing tables for the exchange step (exchange.hpp) and the session's merging of
// groups by published tuple (session.cpp): how many groups publish each tuple (and a dense
// number per tuple), and a set of 64-bit keys. A lookup usually reads one slot (and, for a tuple, the
// tuple itself where the hashes agree), where a node-based hash map follows two or three
// pointers; at 3M rows that made the exchange step's tries twice as slow.
// Invariant: exact counts per tuple (tuples compare by value; -0.0 equals 0.0). Cost: O(1)
// expected per operation at load at most one half; memory O(tuples · width).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "proxanon/common/ordering.hpp"

namespace proxanon {

/// A published tuple: per column (lo, hi) of an interval, or (node, node) of a taxonomy.
using Tuple = std::vector<double>;

/// The hash of the tuple of `width` values at `t`.
inline std::uint64_t tuple_hash(const double* t, std::size_t width) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < width; ++i) {
        h = (h ^ ordered_bits(t[i])) * 1099511628211ULL;  // -0.0 and 0.0 are one value
        h ^= h >> 29;
    }
    return h;
}

inline std::uint64_t tuple_hash(const Tuple& t) { return tuple_hash(t.data(), t.size()); }

/// How many groups publish each tuple: open addressing over the tuples' 64-bit hashes, the
/// tuples themselves in one array, compared only where the hashes agree (so a lookup
/// usually reads one slot and one tuple). A slot is 8 bytes (the hash's high half and the
/// tuple's place) and the counts lie apart by place, so the slots of 300k tuples take 8 MB
/// and stay in cache (3M census rows: with 24-byte slots holding hash and count, the table
/// was 24 MB and a lookup missed cache twice). Grows at half load; tuples are never removed.
class TupleCounts {
public:
    explicit TupleCounts(std::size_t width) : width_(width), slots_(std::size_t{1} << 10) {}

    /// A tuple is `width` values, given as a Tuple or by its first value.
    std::int64_t get(const double* t) const {
        const Slot& slot = slots_[find(t, tuple_hash(t, width_))];
        return slot.index == kEmpty ? 0 : counts_[slot.index];
    }
    std::int64_t get(const Tuple& t) const { return get(t.data()); }

    void add(const double* t, std::int64_t delta) { counts_[slots_[slot(t)].index] += delta; }
    void add(const Tuple& t, std::int64_t delta) { add(t.data(), delta); }

    /// The place of t among the distinct tuples in the order they were first added (t is
    /// added with count 0 when new): a dense numbering of tuples by first appearance.
    std::size_t index(const Tuple& t) { return slots_[slot(t.data())].index; }

    /// Distinct tuples ever added.
    std::size_t keys() const { return counts_.size(); }

private:
    static constexpr std::uint32_t kEmpty = 0xffffffffU;
    struct Slot {
        std::uint32_t tag = 0;         ///< the hash's high 32 bits (the low bits place the slot)
        std::uint32_t index = kEmpty;  ///< the tuple's place in pool_ and counts_
    };

    static std::uint32_t tag_of(std::uint64_t h) { return static_cast<std::uint32_t>(h >> 32); }

    /// The slot holding t, which is added (count 0) when absent.
    std::size_t slot(const double* t) {
        const std::uint64_t h = tuple_hash(t, width_);
        std::size_t i = find(t, h);
        if (slots_[i].index == kEmpty) {
            if (2 * (keys() + 1) > slots_.size()) {
                grow();
                i = find(t, h);
            }
            if (keys() >= kEmpty) throw std::length_error("TupleCounts holds fewer than 2^32 - 1 tuples");
            slots_[i] = {tag_of(h), static_cast<std::uint32_t>(keys())};
            pool_.insert(pool_.end(), t, t + width_);
            counts_.push_back(0);
        }
        return i;
    }

    /// The slot holding t, or the empty slot where it would go.
    std::size_t find(const double* t, std::uint64_t h) const {
        const std::size_t mask = slots_.size() - 1;
        const std::uint32_t tag = tag_of(h);
        for (std::size_t i = h & mask;; i = (i + 1) & mask) {
            const Slot& slot = slots_[i];
            if (slot.index == kEmpty) return i;
            if (slot.tag == tag && std::equal(t, t + width_, tuple(slot.index))) return i;
        }
    }

    const double* tuple(std::uint32_t index) const { return pool_.data() + static_cast<std::size_t>(index) * width_; }

    /// Twice the slots, each tuple placed again by its hash (recomputed from the pool).
    void grow() {
        std::vector<Slot> old(slots_.size() * 2);
        old.swap(slots_);
        const std::size_t mask = slots_.size() - 1;
        for (const Slot& slot : old) {
            if (slot.index == kEmpty) continue;
            std::size_t i = tuple_hash(tuple(slot.index), width_) & mask;
            while (slots_[i].index != kEmpty) i = (i + 1) & mask;
            slots_[i] = slot;
        }
    }

    std::size_t width_;
    std::vector<Slot> slots_;
    std::vector<double> pool_;
    std::vector<std::int64_t> counts_;  ///< per tuple, by its place
};

/// A set of 64-bit keys by open addressing (0 stands for 1: a key only skips a candidate).
class KeySet {
public:
    /// `slots`: the initial capacity, a power of two (it doubles at load one half).
    explicit KeySet(std::size_t slots = std::size_t{1} << 10) : slots_(slots, 0) {
        if (slots < 2 || (slots & (slots - 1)) != 0) throw std::invalid_argument("KeySet: slots must be a power of two, at least 2");
    }

    bool contains(std::uint64_t key) const { return slots_[find(key | (key == 0))] != 0; }

    void insert(std::uint64_t key) {
        key |= (key == 0);
        std::size_t i = find(key);
        if (slots_[i] != 0) return;
        if (2 * (size_ + 1) > slots_.size()) {
            std::vector<std::uint64_t> old(slots_.size() * 2, 0);
            old.swap(slots_);
            for (const std::uint64_t k : old) {
                if (k != 0) slots_[find(k)] = k;
            }
            i = find(key);
        }
        slots_[i] = key;
        ++size_;
    }

private:
    std::size_t find(std::uint64_t key) const {
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = (key * 0x9e3779b97f4a7c15ULL) >> 20 & mask;
        while (slots_[i] != 0 && slots_[i] != key) i = (i + 1) & mask;
        return i;
    }

    std::vector<std::uint64_t> slots_;
    std::size_t size_ = 0;
};

}  // namespace proxanon
