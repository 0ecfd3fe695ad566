#include "proxanon/publish/exchange.hpp"

#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/common/ordering.hpp"
#include "proxanon/publish/tuple_counts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>
#include <stdexcept>

namespace proxanon {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

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

    /// The bounds of the rows [first, last), one entry per column into `out`.
    /// O((last - first) · d).
    void bounds(const std::uint32_t* first, const std::uint32_t* last, Bounds* out) const {
        constexpr double inf = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < d_; ++j) {
            Bounds b{inf, inf, -inf, -inf, 0, 0};
            for (const std::uint32_t* r = first; r != last; ++r) {
                const double x = value(*r, j);
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
                std::tie(lo, hi) = without(b[j], out_row, j);
                const double come = value(in_row, j);
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

    /// A key of the group with bounds `b` and of what remains of it without its row
    /// `out_row`: the tuple after an exchange depends only on that and the taken row's cell,
    /// and whether it is coarser on that and the group's own tuple.
    std::uint64_t remainder_key(const Bounds* b, std::int64_t out_row) const {
        std::uint64_t h = 0x84222325cbf29ce4ULL;
        const auto add = [&](double x) {
            h = (h ^ ordered_bits(x)) * 0x100000001b3ULL;
            h ^= h >> 32;
        };
        for (std::size_t j = 0; j < d_; ++j) {
            const auto [lo, hi] = without(b[j], out_row, j);
            add(b[j].lo);
            add(b[j].hi);
            add(lo);
            add(hi);
        }
        return h;
    }

    /// Whether `now` lifts a column of a taxonomy of several levels to a node covering more
    /// leaves than `before`: that costs utility a finer node would not (Adult: GCP 0.32 with
    /// such exchanges, 0.23 without).
    bool coarser(const Tuple& now, const double* before) const {
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
    /// Column j's (lo, hi) of a group with bounds `b` once its row `out_row` is gone.
    std::pair<double, double> without(const Bounds& b, std::int64_t out_row, std::size_t j) const {
        const double gone = value(out_row, j);
        return {gone == b.lo && b.lo_rows == 1 ? b.lo_next : b.lo,
                gone == b.hi && b.hi_rows == 1 ? b.hi_next : b.hi};
    }

    double value(std::int64_t row, std::size_t j) const { return qi_[static_cast<std::size_t>(row) * d_ + j]; }

    const double* qi_;
    std::size_t d_;
    const std::vector<std::optional<Taxonomy>>& taxonomies_;
    std::vector<std::size_t> deep_;
};

/// The rows in QI order (columns compared in turn, rows of one QI combination in their given
/// order): the combinations ranked once by ValueTable::from_rows, then one stable counting
/// pass (at 3M rows, 0.36-0.55 s -> 0.1 s for a counting pass per column, each ranking its
/// column through a node-based hash map). O(n · d) expected plus a sort of the combinations.
std::vector<std::int64_t> qi_row_order(const double* qi, std::size_t n, std::size_t d) {
    const ValueTable combinations = ValueTable::from_rows(qi, n, d);
    std::vector<std::size_t> next(combinations.size() + 1, 0);
    for (std::size_t u = 0; u < combinations.size(); ++u) next[u + 1] = next[u] + static_cast<std::size_t>(combinations.count[u]);
    std::vector<std::int64_t> order(n);
    for (std::size_t r = 0; r < n; ++r) order[next[static_cast<std::size_t>(combinations.row_value[r])]++] = static_cast<std::int64_t>(r);
    return order;
}

/// Rows of one sensitive value in QI order, cut into runs of one QI combination ("cells"):
/// the candidates for an exchange are the first rows of the nearby runs of the same value.
/// Rows here are positions in QI order (the step works on rows so renumbered). A row's
/// nearby runs are read from one stretch of `run` (16 bytes a run): at 3M rows the step
/// waits on memory, not on arithmetic.
struct Line {
    struct Run {
        std::uint32_t cell;         ///< the rank of its QI combination
        std::uint32_t start;        ///< its first position in `rows`
        std::uint32_t value_first;  ///< the first run of its sensitive value
    };
    std::vector<std::uint32_t> rows;        ///< ordered by (sensitive id, cell, row)
    std::vector<Run> run;                   ///< per run, then a sentinel starting at n
    std::vector<std::uint32_t> run_of_row;  ///< per row, its run

    /// `qi`: n x d codes of rows already in QI order (n < 2^32); `ids`: their sensitive ids.
    /// O(n · d).
    Line(const double* qi, std::size_t n, std::size_t d, const std::vector<std::int64_t>& ids) {
        // A cell is a run of equal QI combinations.
        std::vector<std::uint32_t> cell(n);
        std::uint32_t next = 0;
        for (std::size_t r = 0; r < n; ++r) {
            bool same = r > 0;
            for (std::size_t j = 0; j < d && same; ++j) same = ordered_bits(qi[r * d + j]) == ordered_bits(qi[(r - 1) * d + j]);
            if (!same && r > 0) ++next;
            cell[r] = next;
        }
        std::vector<std::uint32_t> id(n);
        std::size_t range = 0;
        std::int64_t top = -1;
        for (const std::int64_t v : ids) {
            if (v < 0) throw std::invalid_argument("sensitive_ids must be >= 0");
            top = std::max(top, v);
        }
        if (static_cast<std::size_t>(top) < n) {  // ids below n: sorted by counting as they are
            for (std::size_t r = 0; r < n; ++r) id[r] = static_cast<std::uint32_t>(ids[r]);
            range = static_cast<std::size_t>(top) + 1;
        } else {
            range = dense_ranks(std::vector<std::uint64_t>(ids.begin(), ids.end()), id);
        }
        // Stably by id (rows ascend in cell already): (id, cell, row), each row's cell carried
        // along so that the runs are then found in one sequential pass.
        std::vector<std::size_t> value_start(range + 1, 0);
        for (const std::uint32_t v : id) ++value_start[v + 1];
        for (std::size_t v = 0; v < range; ++v) value_start[v + 1] += value_start[v];
        std::vector<std::size_t> fill(value_start.begin(), value_start.end() - 1);
        rows.resize(n);
        std::vector<std::uint32_t> cell_at(n);
        for (std::size_t r = 0; r < n; ++r) {
            const std::size_t pos = fill[id[r]]++;
            rows[pos] = static_cast<std::uint32_t>(r);
            cell_at[pos] = cell[r];
        }
        std::vector<std::uint32_t>().swap(cell);
        std::vector<std::uint32_t>().swap(id);
        run_of_row.resize(n);
        run.reserve(n + 1);  // no copies as it grows (at 3M rows: 2.5M runs)
        for (std::size_t v = 0; v < range; ++v) {
            const auto first = static_cast<std::uint32_t>(run.size());
            for (std::size_t i = value_start[v]; i < value_start[v + 1]; ++i) {
                if (i == value_start[v] || cell_at[i] != cell_at[i - 1]) {
                    run.push_back(Run{cell_at[i], static_cast<std::uint32_t>(i), first});
                }
                run_of_row[rows[i]] = static_cast<std::uint32_t>(run.size() - 1);
            }
        }
        run.push_back(Run{0, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(run.size())});
    }

    std::size_t runs() const { return run.size() - 1; }
    /// Whether runs a and b hold the same sensitive value (they are consecutive for a value).
    bool same_value(std::size_t a, std::size_t b) const { return run[a].value_first == run[b].value_first; }
};

}  // namespace

std::vector<std::int64_t> spread_equal_tuples(const std::vector<std::int64_t>& groups,
                                              const double* qi_given, std::size_t d,
                                              const std::vector<std::optional<Taxonomy>>& taxonomies,
                                              const std::vector<std::int64_t>& sensitive_ids,
                                              const ExchangeParams& params) {
    const std::size_t n = groups.size();
    if (sensitive_ids.size() != n) throw std::invalid_argument("sensitive_ids and groups differ in rows");
    if (taxonomies.size() != d) throw std::invalid_argument("one taxonomy entry per QI column is needed");
    if (n == 0 || d == 0) return groups;
    if (n >= std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("spread_equal_tuples takes fewer than 2^32 rows");
    for (std::size_t i = 0; i < n * d; ++i) {
        if (!std::isfinite(qi_given[i])) {
            throw std::invalid_argument("quasi-identifier code at row " + std::to_string(i / d) + ", column " +
                                        std::to_string(i % d) + " is not finite");
        }
    }
    std::int64_t top = -1;
    for (const std::int64_t g : groups) {
        if (g < 0) throw std::invalid_argument("groups must be 0 .. G-1");
        top = std::max(top, g);
    }
    const auto at = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    const std::size_t count_groups = at(top) + 1;
    // The step works on rows renumbered in QI order: a group's rows and the candidates near
    // them then lie close together in memory (at 3M rows, 3.7 s -> 2.3 s); the members of
    // each group stay in the order of their given row numbers, and rows of one QI combination
    // keep their order, so every choice below is the one made on the rows as given. Per-row
    // arrays hold 32-bit numbers and the groups' members and tuples lie in flat arrays, not
    // a heap vector per group (at 3M rows, 40% of the run's page zeroing fell in this step;
    // the step 2.35-2.50 s -> 2.03-2.09 s).
    const std::vector<std::int64_t> order = qi_row_order(qi_given, n, d);
    std::vector<double> codes(n * d);
    std::vector<std::int64_t> ids(n);
    std::vector<std::uint32_t> owner(n), position(n);
    for (std::size_t p = 0; p < n; ++p) {
        const std::size_t r = at(order[p]);
        position[r] = static_cast<std::uint32_t>(p);
        std::copy(qi_given + r * d, qi_given + (r + 1) * d, codes.begin() + static_cast<std::ptrdiff_t>(p * d));
        ids[p] = sensitive_ids[r];
        owner[p] = static_cast<std::uint32_t>(groups[r]);
    }
    const double* qi = codes.data();
    // Group g's members are member[first[g] .. first[g + 1]), in the order of their given rows.
    std::vector<std::size_t> first(count_groups + 1, 0);
    for (const std::int64_t g : groups) ++first[at(g) + 1];
    for (std::size_t g = 0; g < count_groups; ++g) {
        if (first[g + 1] == 0) throw std::invalid_argument("groups must be 0 .. G-1 with none empty");
        first[g + 1] += first[g];
    }
    std::vector<std::uint32_t> member(n), slot(n);  // slot: place of each row in `member`
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (std::size_t r = 0; r < n; ++r) {
            const std::size_t place = fill[at(groups[r])]++;
            member[place] = position[r];
            slot[position[r]] = static_cast<std::uint32_t>(place);
        }
    }
    std::vector<std::uint32_t>().swap(position);  // not needed again (40 MB at 10M rows)
    const Exchange exchange(qi, d, taxonomies);
    const std::size_t width = 2 * d;
    std::vector<double> tuples(count_groups * width);  // group g's tuple at g * width
    const auto tuple_of = [&](std::size_t g) { return tuples.data() + g * width; };
    TupleCounts count(width);
    std::vector<Exchange::Bounds> bounds(count_groups * d);
    const auto bounds_of = [&](std::size_t g) { return bounds.data() + g * d; };
    const auto update_bounds = [&](std::size_t g) {
        exchange.bounds(member.data() + first[g], member.data() + first[g + 1], bounds_of(g));
    };
    Tuple now_g, now_h;
    for (std::size_t g = 0; g < count_groups; ++g) {
        update_bounds(g);
        exchange.tuple(bounds_of(g), -1, -1, now_g);
        std::copy(now_g.begin(), now_g.end(), tuple_of(g));
        count.add(tuple_of(g), 1);
    }
    if (count.keys() == count_groups) return groups;
    // The group of every row, as given.
    const auto given_rows = [&] {
        std::vector<std::int64_t> out(n);
        for (std::size_t p = 0; p < n; ++p) out[at(order[p])] = owner[p];
        return out;
    };

    const Line line(qi, n, d, ids);
    std::vector<std::int64_t>().swap(ids);
    // The runs of the same sensitive value nearest to row x's run, nearest first.
    std::vector<std::size_t> found;
    auto candidates = [&](std::size_t x) {
        found.clear();
        const std::size_t r = line.run_of_row[x];
        for (std::size_t step = 1; step <= params.cells; ++step) {
            for (const bool below : {true, false}) {
                if (below && step > r) continue;
                const std::size_t s = below ? r - step : r + step;
                if (s < line.runs() && line.same_value(r, s)) found.push_back(s);
            }
        }
    };

    const auto used = [&](const Tuple& t) {
        return count.get(t) > 0;
    };
    // Each try prices the two groups with one row replaced, cheapest rejections first, in
    // reused buffers: O(group size · d) and no allocation.
    // A group's new tuple depends only on its extremes without the row it gives and on the
    // QI combination ("cell") of the row it takes; whether it is coarser, also on its own
    // tuple (Exchange::remainder_key). A (remainder, cell) pair found to give a used or
    // coarser tuple is not priced again, for any group: where one QI combination holds far
    // more than k rows, many groups share their extremes and none of them can be told apart
    // twice the same way. A tuple seldom falls out of use again, so the memo is kept for the
    // whole step: a greedy choice, as deterministic as the rest.
    // The memo holds, per remainder, the set of cells found futile with it. A group's rows
    // share one remainder unless a row is a column's only extreme, so a row's pairs are looked
    // up in one small set that stays in cache (at 3M census rows: 15M lookups, each of them a
    // cache miss in one table of every pair).
    std::unordered_map<std::uint64_t, std::size_t> memo_of;  // remainder key -> its set
    std::vector<KeySet> futile;                               // per remainder: cell + 1
    std::uint64_t owner_key = 0;  // remainder_key of the group and the row it would give
    std::size_t owner_memo = kNone;  // futile's set of owner_key, kNone while it has none
    const auto cell_key = [&](std::size_t run_y) {
        return static_cast<std::uint64_t>(line.run[run_y].cell) + 1;  // KeySet's key 0 stands for 1
    };
    const auto is_futile = [&](std::size_t run_y) {
        return owner_memo != kNone && futile[owner_memo].contains(cell_key(run_y));
    };
    const auto set_futile = [&](std::size_t run_y) {
        if (owner_memo == kNone) {
            owner_memo = futile.size();
            futile.emplace_back(16);
            memo_of.emplace(owner_key, owner_memo);
        }
        futile[owner_memo].insert(cell_key(run_y));
    };
    std::size_t tries = params.tries_per_row * n;
    for (std::size_t g = 0; g < count_groups; ++g) {
        if (count.get(tuple_of(g)) == 1) continue;
        bool done = false;
        for (std::size_t i = first[g]; i < first[g + 1] && !done; ++i) {
            const std::size_t x = member[i];
            // The next row's run and its neighbours, fetched while this row is tried: where
            // the groups' tuples fill most of the QI space, a group that finds no exchange
            // reads the runs of all its rows, and each first read of a run waited on memory
            // (3M census rows: the loop 1.3-1.6 s -> 1.1-1.3 s, the same groups).
            if (i + 1 < first[g + 1]) {
                const std::size_t next_run = line.run_of_row[member[i + 1]];
                __builtin_prefetch(&line.run[next_run > 0 ? next_run - 1 : 0]);
                __builtin_prefetch(&line.run[next_run]);
                __builtin_prefetch(&line.run[next_run + 1]);
            }
            candidates(x);
            const std::uint64_t key = exchange.remainder_key(bounds_of(g), static_cast<std::int64_t>(x));
            if (key != owner_key) {  // owner_memo is always owner_key's set (or kNone)
                owner_key = key;
                const auto it = memo_of.find(key);
                owner_memo = it == memo_of.end() ? kNone : it->second;
            }
            for (std::size_t c = 0; c < found.size() && !done; ++c) {
                const std::size_t run = found[c];
                if (is_futile(run)) continue;
                const std::size_t begin = line.run[run].start;
                const std::size_t end = std::min<std::size_t>(line.run[run + 1].start, begin + params.rows_per_cell);
                for (std::size_t pos = begin; pos < end; ++pos) {
                    const std::size_t y = line.rows[pos];
                    if (pos + 1 < end) __builtin_prefetch(&owner[line.rows[pos + 1]]);  // likewise
                    const std::size_t h = owner[y];
                    if (h == g) continue;
                    if (tries == 0) return given_rows();
                    --tries;
                    poll(params.interrupt);
                    exchange.tuple(bounds_of(g), static_cast<std::int64_t>(x), static_cast<std::int64_t>(y), now_g);
                    if (used(now_g) || exchange.coarser(now_g, tuple_of(g))) {
                        set_futile(run);  // so for every row of this run
                        break;
                    }
                    exchange.tuple(bounds_of(h), static_cast<std::int64_t>(y), static_cast<std::int64_t>(x), now_h);
                    const bool h_same = std::equal(now_h.begin(), now_h.end(), tuple_of(h));
                    if (now_g == now_h || (!h_same && used(now_h)) || exchange.coarser(now_h, tuple_of(h))) {
                        continue;
                    }
                    count.add(tuple_of(g), -1);
                    count.add(tuple_of(h), -1);
                    count.add(now_g, 1);
                    count.add(now_h, 1);
                    std::copy(now_g.begin(), now_g.end(), tuple_of(g));
                    std::copy(now_h.begin(), now_h.end(), tuple_of(h));
                    member[i] = static_cast<std::uint32_t>(y);
                    member[slot[y]] = static_cast<std::uint32_t>(x);
                    update_bounds(g);
                    update_bounds(h);
                    std::swap(slot[x], slot[y]);
                    owner[x] = static_cast<std::uint32_t>(h);
                    owner[y] = static_cast<std::uint32_t>(g);
                    done = true;
                    break;
                }
            }
        }
    }
    return given_rows();
}

}  // namespace proxanon
