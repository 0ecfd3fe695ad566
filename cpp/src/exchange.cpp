#include "proxanon/exchange.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace proxanon {

namespace {

/// A published tuple: per column (lo, hi) of an interval, or (node, node) of a taxonomy.
using Tuple = std::vector<double>;

struct TupleHash {
    std::size_t operator()(const Tuple& t) const {
        std::uint64_t h = 1469598103934665603ULL;
        for (double x : t) {
            const double v = x + 0.0;  // -0.0 and 0.0 are one value
            std::uint64_t bits = 0;
            std::memcpy(&bits, &v, sizeof bits);
            h = (h ^ bits) * 1099511628211ULL;
            h ^= h >> 29;
        }
        return static_cast<std::size_t>(h);
    }
};

class Exchange {
public:
    Exchange(const double* qi, std::size_t d, const std::vector<std::optional<Taxonomy>>& taxonomies)
        : qi_(qi), d_(d), taxonomies_(taxonomies) {
        for (std::size_t j = 0; j < d; ++j) {
            if (taxonomies_[j] && taxonomies_[j]->height() > 1) deep_.push_back(j);
        }
    }

    /// Per group and column: the smallest and largest value, how many rows hold each, and
    /// the next value inward (infinite when there is none), so that the group's extremes
    /// with one row replaced take O(1) per column.
    struct Bounds {
        double lo, lo_next, hi, hi_next;
        std::int64_t lo_rows, hi_rows;
    };

    /// The bounds of the rows `members`, one entry per column into `out`. O(|members| · d).
    void bounds(const std::vector<std::int64_t>& members, Bounds* out) const {
        constexpr double inf = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < d_; ++j) {
            Bounds b{inf, inf, -inf, -inf, 0, 0};
            for (const std::int64_t r : members) {
                const double x = value(r, j);
                if (x < b.lo) { b.lo_next = b.lo; b.lo = x; b.lo_rows = 1; }
                else if (x == b.lo) ++b.lo_rows;
                else if (x < b.lo_next) b.lo_next = x;
                if (x > b.hi) { b.hi_next = b.hi; b.hi = x; b.hi_rows = 1; }
                else if (x == b.hi) ++b.hi_rows;
                else if (x > b.hi_next) b.hi_next = x;
            }
            out[j] = b;
        }
    }

    /// The tuple of a group with bounds `b` once row `out_row` (a member) is replaced by
    /// `in_row` (out_row < 0: as it is), written into `t`. O(d) plus the LCA walks.
    void tuple(const Bounds* b, std::int64_t out_row, std::int64_t in_row, Tuple& t) const {
        t.resize(2 * d_);
        for (std::size_t j = 0; j < d_; ++j) {
            double lo = b[j].lo;
            double hi = b[j].hi;
            if (out_row >= 0) {
                const double gone = value(out_row, j);
                const double come = value(in_row, j);
                if (gone == lo && b[j].lo_rows == 1) lo = b[j].lo_next;
                if (gone == hi && b[j].hi_rows == 1) hi = b[j].hi_next;
                lo = std::min(lo, come);
                hi = std::max(hi, come);
            }
            if (taxonomies_[j]) {
                const double node = taxonomies_[j]->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
                t[2 * j] = t[2 * j + 1] = node;
            } else {
                t[2 * j] = lo;
                t[2 * j + 1] = hi;
            }
        }
    }

    /// Whether `now` lifts a column of a taxonomy of several levels to a node covering more
    /// leaves than `before`: that costs utility a finer node would not (Adult: GCP 0.32 with
    /// such exchanges, 0.23 without).
    bool coarser(const Tuple& now, const Tuple& before) const {
        for (const std::size_t j : deep_) {
            const Taxonomy& tree = *taxonomies_[j];
            if (tree.share(static_cast<std::int32_t>(now[2 * j])) >
                tree.share(static_cast<std::int32_t>(before[2 * j]))) {
                return true;
            }
        }
        return false;
    }

private:
    double value(std::int64_t row, std::size_t j) const { return qi_[static_cast<std::size_t>(row) * d_ + j]; }

    const double* qi_;
    std::size_t d_;
    const std::vector<std::optional<Taxonomy>>& taxonomies_;
    std::vector<std::size_t> deep_;
};

/// A double's bits mapped so that unsigned order is numeric order (-0.0 taken as 0.0).
std::uint64_t ordered_bits(double x) {
    const double v = x + 0.0;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
}

/// The dense rank of every key (equal keys, equal ranks, in ascending order); when `order`
/// is given, also the indices sorted by (key, index). O(n log n), one sort of pairs.
std::vector<std::uint64_t> dense_ranks(const std::vector<std::uint64_t>& keys,
                                       std::vector<std::int64_t>* order) {
    const std::size_t n = keys.size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs(n);
    for (std::size_t i = 0; i < n; ++i) pairs[i] = {keys[i], i};
    std::sort(pairs.begin(), pairs.end());
    std::vector<std::uint64_t> rank(n);
    std::uint64_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0 && pairs[i].first != pairs[i - 1].first) ++next;
        rank[pairs[i].second] = next;
    }
    if (order) {
        order->resize(n);
        for (std::size_t i = 0; i < n; ++i) (*order)[i] = static_cast<std::int64_t>(pairs[i].second);
    }
    return rank;
}

/// Rows of one sensitive value in QI order, cut into runs of one QI combination ("cells"):
/// the candidates for an exchange are the first rows of the nearby runs of the same value.
struct Line {
    std::vector<std::int64_t> cell;        ///< per row, the rank of its QI combination
    std::vector<std::int64_t> rows;        ///< ordered by (sensitive id, cell, row)
    std::vector<std::size_t> run_start;    ///< per run, its first position in `rows`
    std::vector<std::size_t> run_of_row;   ///< per row, its run
    std::vector<std::size_t> value_runs;   ///< per run, the first run of its sensitive value

    Line(const double* qi, std::size_t n, std::size_t d, const std::vector<std::int64_t>& ids) {
        // Cells: the rank of each row's QI combination, one column at a time (ranks below n,
        // so rank * n + rank fits in 64 bits for any table that fits in memory).
        std::vector<std::uint64_t> key(n, 0);
        std::vector<std::uint64_t> column(n);
        for (std::size_t j = 0; j < d; ++j) {
            for (std::size_t r = 0; r < n; ++r) column[r] = ordered_bits(qi[r * d + j]);
            const std::vector<std::uint64_t> rank = dense_ranks(column, nullptr);
            for (std::size_t r = 0; r < n; ++r) key[r] = key[r] * n + rank[r];
            key = dense_ranks(key, nullptr);
        }
        cell.assign(key.begin(), key.end());
        for (std::size_t r = 0; r < n; ++r) {
            key[r] = static_cast<std::uint64_t>(ids[r]) * n + static_cast<std::uint64_t>(cell[r]);
        }
        std::vector<std::int64_t> order;
        dense_ranks(key, &order);
        rows = std::move(order);
        auto at = [](std::int64_t r) { return static_cast<std::size_t>(r); };
        run_of_row.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t r = at(rows[i]);
            const bool new_value = i == 0 || ids[r] != ids[at(rows[i - 1])];
            if (new_value || cell[r] != cell[at(rows[i - 1])]) {
                value_runs.push_back(new_value ? run_start.size() : value_runs.back());
                run_start.push_back(i);
            }
            run_of_row[r] = run_start.size() - 1;
        }
        run_start.push_back(n);  // sentinel: the end of the last run
    }

    std::size_t runs() const { return run_start.size() - 1; }
    /// Whether runs a and b hold the same sensitive value (they are consecutive for a value).
    bool same_value(std::size_t a, std::size_t b) const { return value_runs[a] == value_runs[b]; }
};

}  // namespace

std::vector<std::int64_t> spread_equal_tuples(const std::vector<std::int64_t>& groups,
                                              const double* qi, std::size_t d,
                                              const std::vector<std::optional<Taxonomy>>& taxonomies,
                                              const std::vector<std::int64_t>& sensitive_ids,
                                              const ExchangeParams& params) {
    const std::size_t n = groups.size();
    if (sensitive_ids.size() != n) throw std::invalid_argument("sensitive_ids and groups differ in rows");
    if (taxonomies.size() != d) throw std::invalid_argument("one taxonomy entry per QI column is needed");
    if (n == 0 || d == 0) return groups;
    std::int64_t top = -1;
    for (const std::int64_t g : groups) {
        if (g < 0) throw std::invalid_argument("groups must be 0 .. G-1");
        top = std::max(top, g);
    }
    const auto at = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    std::vector<std::vector<std::int64_t>> members(at(top) + 1);
    std::vector<std::size_t> slot(n);  // position of each row in its group's member list
    for (std::size_t r = 0; r < n; ++r) {
        slot[r] = members[at(groups[r])].size();
        members[at(groups[r])].push_back(static_cast<std::int64_t>(r));
    }
    for (const auto& m : members) {
        if (m.empty()) throw std::invalid_argument("groups must be 0 .. G-1 with none empty");
    }
    const Exchange exchange(qi, d, taxonomies);
    std::vector<Tuple> tuples;
    tuples.reserve(members.size());
    std::unordered_map<Tuple, std::int64_t, TupleHash> count;
    std::vector<Exchange::Bounds> bounds(members.size() * d);
    const auto bounds_of = [&](std::size_t g) { return bounds.data() + g * d; };
    for (std::size_t g = 0; g < members.size(); ++g) {
        exchange.bounds(members[g], bounds_of(g));
        tuples.emplace_back();
        exchange.tuple(bounds_of(g), -1, -1, tuples.back());
        count[tuples.back()] += 1;
    }
    std::vector<std::int64_t> owner = groups;
    if (count.size() == members.size()) return owner;

    const Line line(qi, n, d, sensitive_ids);
    std::vector<std::int64_t> found;
    auto candidates = [&](std::int64_t x) {
        found.clear();
        const std::size_t r = line.run_of_row[at(x)];
        for (std::size_t step = 1; step <= params.cells; ++step) {
            for (const bool below : {true, false}) {
                if (below && step > r) continue;
                const std::size_t s = below ? r - step : r + step;
                if (s >= line.runs() || !line.same_value(r, s)) continue;
                const std::size_t first = line.run_start[s];
                const std::size_t last = std::min(line.run_start[s + 1], first + params.rows_per_cell);
                found.insert(found.end(), line.rows.begin() + static_cast<std::ptrdiff_t>(first),
                             line.rows.begin() + static_cast<std::ptrdiff_t>(last));
            }
        }
    };

    const auto used = [&](const Tuple& t) {
        const auto it = count.find(t);
        return it != count.end() && it->second > 0;
    };
    // Each try prices the two groups with one row replaced, cheapest rejections first, in
    // reused buffers: O(group size · d) and no allocation.
    // A group's new tuple depends only on the QI combinations ("cells") of the row it gives
    // and the row it takes; when all its rows share one cell, only on that cell and the
    // taken row's, whichever group it is. A pair found to give a used or coarser tuple is
    // not priced again until an exchange changes the counts (`generation`): per group, or
    // per cell for such single-cell groups (many of them where one QI combination holds
    // far more than k rows, and none of them can be told apart twice the same way).
    std::unordered_map<std::uint64_t, std::size_t> futile;  // pair key -> generation found
    std::size_t generation = 0;
    const auto mix = [](std::uint64_t h, std::uint64_t v) {
        h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= h >> 31;
        return h * 0xbf58476d1ce4e5b9ULL;
    };
    std::uint64_t owner_key = 0;
    const auto pair_key = [&](std::int64_t x, std::int64_t y) {
        return mix(mix(owner_key, static_cast<std::uint64_t>(line.cell[at(x)])),
                   static_cast<std::uint64_t>(line.cell[at(y)]));
    };
    const auto is_futile = [&](std::uint64_t key) {
        const auto it = futile.find(key);
        return it != futile.end() && it->second == generation;
    };
    Tuple now_g, now_h;
    std::size_t tries = params.tries_per_row * n;
    for (std::size_t g = 0; g < members.size(); ++g) {
        if (count[tuples[g]] == 1) continue;
        const std::int64_t first_cell = line.cell[at(members[g].front())];
        const bool one_cell = std::all_of(members[g].begin(), members[g].end(), [&](std::int64_t r) {
            return line.cell[at(r)] == first_cell;
        });
        owner_key = one_cell ? mix(1, static_cast<std::uint64_t>(first_cell)) : mix(2, g);
        bool done = false;
        for (std::size_t i = 0; i < members[g].size() && !done; ++i) {
            const std::int64_t x = members[g][i];
            candidates(x);
            for (const std::int64_t y : found) {
                const std::size_t h = at(owner[at(y)]);
                if (h == g || is_futile(pair_key(x, y))) continue;
                if (tries == 0) return owner;
                --tries;
                poll(params.interrupt);
                exchange.tuple(bounds_of(g), x, y, now_g);
                if (used(now_g) || exchange.coarser(now_g, tuples[g])) {
                    futile[pair_key(x, y)] = generation;
                    continue;
                }
                exchange.tuple(bounds_of(h), y, x, now_h);
                if (now_g == now_h || (now_h != tuples[h] && used(now_h)) ||
                    exchange.coarser(now_h, tuples[h])) {
                    continue;
                }
                count[tuples[g]] -= 1;
                count[tuples[h]] -= 1;
                count[now_g] += 1;
                count[now_h] += 1;
                tuples[g] = now_g;
                tuples[h] = now_h;
                members[g][i] = y;
                members[h][slot[at(y)]] = x;
                exchange.bounds(members[g], bounds_of(g));
                exchange.bounds(members[h], bounds_of(h));
                std::swap(slot[at(x)], slot[at(y)]);
                owner[at(x)] = static_cast<std::int64_t>(h);
                owner[at(y)] = static_cast<std::int64_t>(g);
                if (++generation, futile.size() > (std::size_t{1} << 16)) futile.clear();
                done = true;
                break;
            }
        }
    }
    return owner;
}

}  // namespace proxanon
