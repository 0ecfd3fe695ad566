#include "proxanon/xcolor/initialize.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <thread>
#include <utility>

#include "proxanon/common/ordering.hpp"
#include "proxanon/common/parallel.hpp"

namespace proxanon {

std::vector<std::int32_t> equitable_sizes(std::size_t n, std::size_t m) {
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    std::vector<std::int32_t> sizes(m, static_cast<std::int32_t>(n / m));
    for (std::size_t c = 0; c < n % m; ++c) sizes[c] += 1;
    return sizes;
}

namespace {

/// The open classes of initialize as a 4-ary min-heap of (degree sum, class): the pairs are
/// distinct (classes differ), so any heap pops them in one order, std::priority_queue's
/// included. Four children share a cache line and a row's class is found and re-keyed in one
/// sift down (replace_top) rather than a pop and a push: with 100k classes and more, a binary
/// heap misses cache on every level.
class OpenClasses {
public:
    struct Entry {
        std::int64_t sum;
        std::int32_t c;
        std::int32_t size;  ///< rows the class holds
    };

    explicit OpenClasses(std::size_t capacity) : storage_(capacity + kAlign) {
        // Entries are 16 bytes: start the heap so that every four siblings (from index 1)
        // fill one 64-byte cache line.
        std::size_t k = 0;
        while (k + 1 < kAlign && reinterpret_cast<std::uintptr_t>(storage_.data() + k + 1) % 64 != 0) ++k;
        heap_ = storage_.data() + k;
    }

    void push_back(Entry e) { heap_[size_++] = e; }  ///< then make_heap()
    void make_heap() {
        if (size_ < 2) return;
        for (std::size_t i = (size_ - 2) / 4 + 1; i-- > 0;) sift_down(i);
    }
    const Entry& top() const { return heap_[0]; }
    void replace_top(Entry e) {
        heap_[0] = e;
        sift_down(0);
    }
    void pop() {
        heap_[0] = heap_[--size_];
        if (size_ > 0) sift_down(0);
    }

private:
    static constexpr std::size_t kAlign = 4;

    static bool less(const Entry& a, const Entry& b) { return a.sum != b.sum ? a.sum < b.sum : a.c < b.c; }

    void sift_down(std::size_t i) {
        const std::size_t n = size_;
        const Entry e = heap_[i];
        for (;;) {
            const std::size_t first = 4 * i + 1;
            if (first >= n) break;
            const std::size_t last = std::min(first + 4, n);
            std::size_t best = first;
            for (std::size_t j = first + 1; j < last; ++j) if (less(heap_[j], heap_[best])) best = j;
            if (!less(heap_[best], e)) break;
            heap_[i] = heap_[best];
            i = best;
        }
        heap_[i] = e;
    }

    std::vector<Entry> storage_;
    Entry* heap_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace

std::vector<std::int32_t> initialize(const std::vector<std::int64_t>& degree, std::size_t m) {
    const std::size_t n = degree.size();
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    // Sort key (max_degree - degree) << 32 | row: descending degree, then ascending row.
    std::int64_t top = 0;
    for (std::int64_t d : degree) {
        if (d < 0 || d >= (std::int64_t{1} << 31)) throw std::invalid_argument("degrees must lie in [0, 2^31)");
        top = std::max(top, d);
    }
    std::vector<std::uint64_t> keys(n);
    for (std::size_t r = 0; r < n; ++r) {
        keys[r] = (static_cast<std::uint64_t>(top - degree[r]) << 32) | r;
    }
    std::vector<std::uint64_t> spare;
    radix_sort(keys, spare);  // O(n) per 11 bits in use (the keys are distinct: rows differ)

    // Each row in turn (its degree read from its key, not from `degree` at a random place)
    // joins the open class of least degree sum (ties: the lower id). Every class first takes
    // floor(n/m) rows and closes; then each may take one more.
    OpenClasses open(m);
    std::vector<std::int64_t> sum(m, 0);  // a closed class's sum
    std::vector<std::int32_t> assigned(n, -1);
    const auto base = static_cast<std::int32_t>(n / m);
    for (std::size_t c = 0; c < m; ++c) open.push_back({0, static_cast<std::int32_t>(c), 0});  // a heap already

    const std::size_t filled = static_cast<std::size_t>(base) * m;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == filled) {  // every class holds floor(n/m): each may take one more row
            for (std::size_t c = 0; c < m; ++c) open.push_back({sum[c], static_cast<std::int32_t>(c), base});
            open.make_heap();
        }
        OpenClasses::Entry e = open.top();
        const std::int64_t d = top - static_cast<std::int64_t>(keys[i] >> 32);
        assigned[keys[i] & 0xffffffffULL] = e.c;
        e.sum += d;
        e.size += 1;
        if (i < filled && e.size < base) {
            open.replace_top(e);
        } else {
            sum[static_cast<std::size_t>(e.c)] = e.sum;
            open.pop();
        }
    }
    return assigned;
}

namespace {

/// The splits of `qi_order` over [begin, end) ranges of its order, with the buffers one
/// thread needs. A range's splits read and write only that range of `order` and `values`, so
/// ranges are split on any thread with the same result.
class OrderSplitter {
public:
    OrderSplitter(const LossModel& loss, std::size_t leaf, std::vector<std::int32_t>& order,
                  std::vector<double>& values)
        : loss_(loss), d_(loss.dimensions()), leaf_(leaf), order_(order), values_(values),
          lo_(d_), hi_(d_) {}

    /// Splits [begin, end) once; returns the middle (`end` when the range is a leaf: at most
    /// `leaf` rows, or no spread). O(m d) plus a sort (taxonomy) or selection of m rows.
    std::size_t split(std::size_t begin, std::size_t end) {
        if (end - begin <= leaf_) return end;
        const std::size_t d = d_;
        // Every column's extremes in one pass.
        const double* part = values_.data() + begin * d;
        std::copy(part, part + d, lo_.begin());
        std::copy(part, part + d, hi_.begin());
        for (std::size_t j = 1; j < end - begin; ++j) {
            const double* x = part + j * d;
            for (std::size_t i = 0; i < d; ++i) {
                lo_[i] = std::min(lo_[i], x[i]);
                hi_[i] = std::max(hi_[i], x[i]);
            }
        }
        std::size_t best_dim = d;
        double best_spread = 0.0;
        for (std::size_t i = 0; i < d; ++i) {
            const double spread = lo_[i] < hi_[i] ? loss_.cost(i, lo_[i], hi_[i]) : 0.0;
            if (spread > best_spread) { best_spread = spread; best_dim = i; }
        }
        if (best_dim == d) return end;  // all rows share their QI values
        std::size_t middle = begin + (end - begin) / 2;
        keyed_.clear();
        for (std::size_t j = begin; j < end; ++j) {
            keyed_.push_back({part[(j - begin) * d + best_dim], order_[j], static_cast<std::uint32_t>(j - begin)});
        }
        if (const Taxonomy* tax = loss_.taxonomy(best_dim)) {
            // Split where a subtree of the part's LCA ends, as near the median as possible,
            // so that parts (and the groups cut from them) generalize below the LCA.
            sort_keyed();
            auto leaf_at = [&](std::size_t j) { return static_cast<std::int32_t>(keyed_[j - begin].value); };
            const std::int32_t lo_leaf = leaf_at(begin), hi_leaf = leaf_at(end - 1);
            const auto [child_first, child_last] = tax->child_range(lo_leaf, hi_leaf, leaf_at(middle));
            auto position = [&](std::int32_t boundary) {  // rows with leaf < boundary
                std::size_t a = begin, b = end;
                while (a < b) {
                    const std::size_t mid = a + (b - a) / 2;
                    if (leaf_at(mid) < boundary) a = mid + 1; else b = mid;
                }
                return a;
            };
            const std::size_t before = position(child_first);
            const std::size_t after = position(child_last + 1);
            const auto gap = [&](std::size_t p) { return p > middle ? p - middle : middle - p; };
            std::size_t chosen = end;
            for (std::size_t candidate : {before, after}) {
                if (candidate > begin && candidate < end && (chosen == end || gap(candidate) < gap(chosen))) {
                    chosen = candidate;
                }
            }
            if (chosen != end) middle = chosen;
        } else {
            std::nth_element(keyed_.begin(), keyed_.begin() + static_cast<std::ptrdiff_t>(middle - begin), keyed_.end());
        }
        // A row's d values moved by a plain loop: std::copy of a runtime length calls memmove
        // per row (a fifth of the time at 3M rows).
        moved_.resize((end - begin) * d);
        double* to = moved_.data();
        for (std::size_t j = 0; j < end - begin; ++j, to += d) {
            order_[begin + j] = keyed_[j].row;
            const double* from = part + keyed_[j].at * d;
            for (std::size_t i = 0; i < d; ++i) to[i] = from[i];
        }
        std::copy(moved_.begin(), moved_.end(), values_.begin() + static_cast<std::ptrdiff_t>(begin * d));
        return middle;
    }

    /// Splits [begin, end) down to its leaves, depth first with the left half on top, so
    /// finished parts are in left-to-right order already (in place).
    void split_all(std::size_t begin, std::size_t end) {
        std::vector<std::pair<std::size_t, std::size_t>> stack{{begin, end}};
        while (!stack.empty()) {
            const auto [b, e] = stack.back();
            stack.pop_back();
            const std::size_t middle = split(b, e);
            if (middle == e) continue;
            stack.emplace_back(middle, e);
            stack.emplace_back(b, middle);
        }
    }

private:
    /// keyed_ sorted by (value, row): a leaf index and a row are distinct for distinct rows,
    /// so any sort gives this one order; past kRadixRows rows, one radix ordering by the
    /// packed (leaf, row) (3 passes at 3M rows, a third of std::sort's time).
    void sort_keyed() {
        if (keyed_.size() < kRadixRows) {
            std::sort(keyed_.begin(), keyed_.end());
            return;
        }
        packed_.resize(keyed_.size());
        for (std::size_t j = 0; j < keyed_.size(); ++j) {
            packed_[j] = (static_cast<std::uint64_t>(keyed_[j].value) << 32) | static_cast<std::uint32_t>(keyed_[j].row);
        }
        const std::vector<std::int64_t> by_key = radix_order(packed_);
        sorted_.resize(keyed_.size());
        for (std::size_t j = 0; j < keyed_.size(); ++j) sorted_[j] = keyed_[static_cast<std::size_t>(by_key[j])];
        keyed_.swap(sorted_);
    }

    static constexpr std::size_t kRadixRows = 4096;

    // A part's rows as (value in the split column, row, position in the part): the median
    // search and the sort compare (value, row) only, as comparing rows by value then index.
    struct Keyed {
        double value;
        std::int32_t row;
        std::uint32_t at;
        bool operator<(const Keyed& other) const {
            return value != other.value ? value < other.value : row < other.row;
        }
    };

    const LossModel& loss_;
    std::size_t d_, leaf_;
    std::vector<std::int32_t>& order_;
    std::vector<double>& values_;
    std::vector<double> lo_, hi_, moved_;
    std::vector<Keyed> keyed_, sorted_;
    std::vector<std::uint64_t> packed_;
};

}  // namespace

std::vector<std::int32_t> qi_order(const LossModel& loss, std::size_t n, std::size_t leaf, std::size_t threads) {
    std::vector<std::int32_t> order(n);
    for (std::size_t r = 0; r < n; ++r) order[r] = static_cast<std::int32_t>(r);
    const std::size_t d = loss.dimensions();
    if (d == 0) return order;
    leaf = std::max<std::size_t>(leaf, 1);
    // The QI values kept in the order of `order` (row j of `values` is row order[j]), so that
    // every pass over a part reads it front to back rather than rows scattered over the table.
    std::vector<double> values(n * d);
    for (std::size_t r = 0; r < n; ++r) {
        const double* x = loss.row(static_cast<std::int32_t>(r));
        std::copy(x, x + d, values.begin() + static_cast<std::ptrdiff_t>(r * d));
    }
    threads = n < kParallelOrderRows ? 1 : thread_count(threads);
    // The top levels split here, breadth first, until there is a part per thread; then each
    // thread splits its parts to the leaves (median splits keep the parts near equal).
    std::vector<std::pair<std::size_t, std::size_t>> parts{{0, n}};
    OrderSplitter here(loss, leaf, order, values);
    while (parts.size() < threads) {
        std::vector<std::pair<std::size_t, std::size_t>> next;
        for (const auto& [begin, end] : parts) {
            const std::size_t middle = here.split(begin, end);
            next.emplace_back(begin, middle);
            if (middle != end) next.emplace_back(middle, end);
        }
        if (next.size() == parts.size()) break;  // only leaves left
        parts = std::move(next);
    }
    const auto split_share = [&](OrderSplitter& splitter, std::size_t first) {
        for (std::size_t p = first; p < parts.size(); p += threads) splitter.split_all(parts[p].first, parts[p].second);
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < std::min(threads, parts.size()); ++t) {
        pool.emplace_back([&, t] {
            OrderSplitter own(loss, leaf, order, values);
            split_share(own, t);
        });
    }
    split_share(here, 0);
    for (auto& worker : pool) worker.join();
    return order;
}

std::vector<std::int32_t> initialize_in_blocks(const std::vector<std::int64_t>& degree,
                                               const std::vector<std::int32_t>& order,
                                               std::size_t m, std::size_t block) {
    const std::size_t n = degree.size();
    if (order.size() != n) throw std::invalid_argument("order must list every row once");
    const std::vector<std::int32_t> sizes = equitable_sizes(n, m);
    block = std::max<std::size_t>(block, 1);
    std::vector<std::int32_t> assigned(n, -1);
    using Entry = std::pair<std::int64_t, std::int32_t>;  // (degree sum, class)
    std::size_t row_start = 0;
    for (std::size_t first = 0; first < m; first += block) {
        const std::size_t last = std::min(first + block, m);
        std::size_t rows = 0;
        for (std::size_t c = first; c < last; ++c) rows += static_cast<std::size_t>(sizes[c]);
        if (last - first == 1) {  // one class takes the whole run, in any order
            for (std::size_t i = row_start; i < row_start + rows; ++i) {
                assigned[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(first);
            }
            row_start += rows;
            continue;
        }
        std::vector<std::int32_t> members(order.begin() + static_cast<std::ptrdiff_t>(row_start),
                                          order.begin() + static_cast<std::ptrdiff_t>(row_start + rows));
        std::sort(members.begin(), members.end(), [&](std::int32_t a, std::int32_t b) {
            const auto da = degree[static_cast<std::size_t>(a)];
            const auto db = degree[static_cast<std::size_t>(b)];
            return da != db ? da > db : a < b;
        });
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
        std::vector<std::int32_t> room(sizes.begin() + static_cast<std::ptrdiff_t>(first),
                                       sizes.begin() + static_cast<std::ptrdiff_t>(last));
        for (std::size_t c = first; c < last; ++c) open.emplace(0, static_cast<std::int32_t>(c));
        for (std::int32_t row : members) {
            const auto [sum, c] = open.top();
            open.pop();
            assigned[static_cast<std::size_t>(row)] = c;
            if (--room[static_cast<std::size_t>(c) - first] > 0) {
                open.emplace(sum + degree[static_cast<std::size_t>(row)], c);
            }
        }
        row_start += rows;
    }
    return assigned;
}

}  // namespace proxanon
