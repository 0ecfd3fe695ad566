// The bucketed queue of violations that Algorithm 2 drains (line 5: the set of violations).
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace proxanon {

/// Priority queue of rows with small integer priorities 0 .. buckets-1: an intrusive doubly
/// linked FIFO list per bucket and a pointer to the highest bucket that may be non-empty.
/// Invariant: a row is in at most one bucket; every bucket above `top_` is empty.
/// Cost: push, remove and update O(1); pop amortized O(1) (the pointer only walks down over
/// buckets that a push raised it past, plus at most `buckets` once).
/// `pop` returns the row with the highest priority; among equal priorities the one pushed
/// first, so rows pushed in index order leave in index order.
class ViolationQueue {
public:
    ViolationQueue(std::size_t rows, std::size_t buckets)
        : next_(rows, kNone), prev_(rows, kNone), bucket_of_(rows, kNone),
          head_(buckets, kNone), tail_(buckets, kNone) {
        assert(buckets >= 1);
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::size_t buckets() const { return head_.size(); }
    std::size_t rows() const { return bucket_of_.size(); }
    bool contains(std::int32_t row) const { return bucket_of_[at(row)] != kNone; }
    std::int32_t priority(std::int32_t row) const { return bucket_of_[at(row)]; }

    /// Adds a row that is not queued, at the back of its bucket.
    void push(std::int32_t row, std::size_t bucket) {
        assert(!contains(row) && bucket < head_.size());
        const auto b = static_cast<std::int32_t>(bucket);
        bucket_of_[at(row)] = b;
        prev_[at(row)] = tail_[bucket];
        next_[at(row)] = kNone;
        if (tail_[bucket] == kNone) head_[bucket] = row; else next_[at(tail_[bucket])] = row;
        tail_[bucket] = row;
        if (size_ == 0 || bucket > top_) top_ = bucket;
        ++size_;
    }

    /// Takes a queued row out.
    void remove(std::int32_t row) {
        assert(contains(row));
        const auto bucket = static_cast<std::size_t>(bucket_of_[at(row)]);
        const std::int32_t p = prev_[at(row)];
        const std::int32_t n = next_[at(row)];
        if (p == kNone) head_[bucket] = n; else next_[at(p)] = n;
        if (n == kNone) tail_[bucket] = p; else prev_[at(n)] = p;
        bucket_of_[at(row)] = kNone;
        --size_;
    }

    /// Moves a queued row to another bucket; a row already in that bucket keeps its place.
    void update(std::int32_t row, std::size_t bucket) {
        if (bucket_of_[at(row)] == static_cast<std::int32_t>(bucket)) return;
        remove(row);
        push(row, bucket);
    }

    /// Removes and returns the first row of the highest non-empty bucket. Queue must not be empty.
    std::int32_t pop() {
        assert(size_ > 0);
        while (head_[top_] == kNone) --top_;
        const std::int32_t row = head_[top_];
        remove(row);
        return row;
    }

private:
    static constexpr std::int32_t kNone = -1;
    static std::size_t at(std::int32_t row) { return static_cast<std::size_t>(row); }

    std::vector<std::int32_t> next_, prev_, bucket_of_;
    std::vector<std::int32_t> head_, tail_;
    std::size_t top_ = 0;
    std::size_t size_ = 0;
};

}  // namespace proxanon
