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

std::size_t at(std::int64_t v) { return static_cast<std::size_t>(v); }

/// The number of groups of `groups` (ids 0 .. G-1), once the rows are known to number fewer
/// than 2^32, every code of `qi` (n x d) to be finite and no id to be negative. O(n · d).
std::size_t checked_group_count(const std::vector<std::int64_t>& groups, const double* qi, std::size_t d) {
    const std::size_t n = groups.size();
    if (n >= std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("spread_equal_tuples takes fewer than 2^32 rows");
    for (std::size_t i = 0; i < n * d; ++i) {
        if (!std::isfinite(qi[i])) {
            throw std::invalid_argument("quasi-identifier code at row " + std::to_string(i / d) + ", column " +
                                        std::to_string(i % d) + " is not finite");
        }
    }
    std::int64_t top = -1;
    for (const std::int64_t g : groups) {
        if (g < 0) throw std::invalid_argument("groups must be 0 .. G-1");
        top = std::max(top, g);
    }
    return at(top) + 1;
}

/// The rows' codes, sensitive ids and groups with the rows renumbered in QI order (given row
/// order[p] becomes p), and each given row's new number in `position`. O(n · d).
void renumber_rows(const std::vector<std::int64_t>& order, const double* qi_given, std::size_t d,
                   const std::vector<std::int64_t>& sensitive_ids, const std::vector<std::int64_t>& groups,
                   std::vector<double>& codes, std::vector<std::int64_t>& ids,
                   std::vector<std::uint32_t>& owner, std::vector<std::uint32_t>& position) {
    for (std::size_t p = 0; p < order.size(); ++p) {
        const std::size_t r = at(order[p]);
        position[r] = static_cast<std::uint32_t>(p);
        std::copy(qi_given + r * d, qi_given + (r + 1) * d, codes.begin() + static_cast<std::ptrdiff_t>(p * d));
        ids[p] = sensitive_ids[r];
        owner[p] = static_cast<std::uint32_t>(groups[r]);
    }
}

/// The groups of the step on rows renumbered in QI order, in flat arrays rather than a heap
/// vector per group: group g's members are member[first[g] .. first[g + 1]), in the order of
/// their given rows; its tuple lies at tuples[g · width], its bounds at bounds[g · d].
struct Groups {
    std::size_t d, width;
    std::vector<std::uint32_t> owner;      ///< per row, its group
    std::vector<std::size_t> first;
    std::vector<std::uint32_t> member;
    std::vector<std::uint32_t> slot;       ///< per row, its place in `member`
    std::vector<double> tuples;
    std::vector<Exchange::Bounds> bounds;

    double* tuple_of(std::size_t g) { return tuples.data() + g * width; }
    Exchange::Bounds* bounds_of(std::size_t g) { return bounds.data() + g * d; }
    void update_bounds(const Exchange& exchange, std::size_t g) {
        exchange.bounds(member.data() + first[g], member.data() + first[g + 1], bounds_of(g));
    }
};

/// Fills `first`, `member` and `slot` of `out` from the given rows' groups and their new
/// numbers; throws where a group of 0 .. count_groups - 1 is empty. O(n).
void place_members(const std::vector<std::int64_t>& groups, const std::vector<std::uint32_t>& position,
                   std::size_t count_groups, Groups& out) {
    const std::size_t n = groups.size();
    out.first.assign(count_groups + 1, 0);
    for (const std::int64_t g : groups) ++out.first[at(g) + 1];
    for (std::size_t g = 0; g < count_groups; ++g) {
        if (out.first[g + 1] == 0) throw std::invalid_argument("groups must be 0 .. G-1 with none empty");
        out.first[g + 1] += out.first[g];
    }
    out.member.resize(n);
    out.slot.resize(n);
    std::vector<std::size_t> fill(out.first.begin(), out.first.end() - 1);
    for (std::size_t r = 0; r < n; ++r) {
        const std::size_t place = fill[at(groups[r])]++;
        out.member[place] = position[r];
        out.slot[position[r]] = static_cast<std::uint32_t>(place);
    }
}

/// The group of every row, as given.
std::vector<std::int64_t> given_rows(const std::vector<std::int64_t>& order, const std::vector<std::uint32_t>& owner) {
    std::vector<std::int64_t> out(owner.size());
    for (std::size_t p = 0; p < owner.size(); ++p) out[at(order[p])] = owner[p];
    return out;
}

/// The (remainder, cell) pairs found to give a used or coarser tuple. A group's new tuple
/// depends only on its extremes without the row it gives and on the QI combination ("cell")
/// of the row it takes; whether it is coarser, also on its own tuple
/// (Exchange::remainder_key). Such a pair is not priced again, for any group: where one QI
/// combination holds far more than k rows, many groups share their extremes and none of them
/// can be told apart twice the same way. A tuple seldom falls out of use again, so the memo is
/// kept for the whole step: a greedy choice, as deterministic as the rest.
/// The memo holds, per remainder, the set of cells found futile with it. A group's rows share
/// one remainder unless a row is a column's only extreme, so a row's pairs are looked up in
/// one small set that stays in cache (at 3M census rows: 15M lookups, each of them a cache
/// miss in one table of every pair).
class FutileCells {
public:
    /// Makes `key` (the remainder_key of the group and the row it would give) the remainder
    /// that contains() and insert() speak of.
    void select(std::uint64_t key) {
        if (key != owner_key_) {  // owner_memo_ is always owner_key_'s set (or kNone)
            owner_key_ = key;
            const auto it = memo_of_.find(key);
            owner_memo_ = it == memo_of_.end() ? kNone : it->second;
        }
    }
    /// `cell`: the cell's rank + 1 (KeySet's key 0 stands for 1).
    bool contains(std::uint64_t cell) const { return owner_memo_ != kNone && futile_[owner_memo_].contains(cell); }
    void insert(std::uint64_t cell) {
        if (owner_memo_ == kNone) {
            owner_memo_ = futile_.size();
            futile_.emplace_back(16);
            memo_of_.emplace(owner_key_, owner_memo_);
        }
        futile_[owner_memo_].insert(cell);
    }

private:
    std::unordered_map<std::uint64_t, std::size_t> memo_of_;  // remainder key -> its set
    std::vector<KeySet> futile_;                               // per remainder: cell + 1
    std::uint64_t owner_key_ = 0;    // the selected remainder
    std::size_t owner_memo_ = kNone;  // futile_'s set of owner_key_, kNone while it has none
};

/// The search of the step: a group whose tuple another group also publishes tries its rows
/// in member order, each against the first rows of the runs of the same sensitive value
/// nearest to its own run, and stops at its first exchange. Each try prices the two groups
/// with one row replaced, cheapest rejections first, in reused buffers: O(group size · d) and
/// no allocation.
class TupleSpread {
public:
    /// `tries`: the candidate exchanges the step may price; `scratch`: a tuple buffer to reuse.
    TupleSpread(const Line& line, const Exchange& exchange, Groups& groups, TupleCounts& count,
                const ExchangeParams& params, std::size_t tries, Tuple scratch)
        : line_(line), exchange_(exchange), groups_(groups), count_(count), params_(params),
          tries_(tries), now_g_(std::move(scratch)) {}

    /// Tries group g's rows until one is exchanged; false once the step's tries are spent.
    bool spread(std::size_t g) {
        Groups& gs = groups_;
        if (count_.get(gs.tuple_of(g)) == 1) return true;
        for (std::size_t i = gs.first[g]; i < gs.first[g + 1]; ++i) {
            const std::size_t x = gs.member[i];
            // The next row's run and its neighbours, fetched while this row is tried: where
            // the groups' tuples fill most of the QI space, a group that finds no exchange
            // reads the runs of all its rows, and each first read of a run waited on memory
            // (3M census rows: the loop 1.3-1.6 s -> 1.1-1.3 s, the same groups).
            if (i + 1 < gs.first[g + 1]) {
                const std::size_t next_run = line_.run_of_row[gs.member[i + 1]];
                __builtin_prefetch(&line_.run[next_run > 0 ? next_run - 1 : 0]);
                __builtin_prefetch(&line_.run[next_run]);
                __builtin_prefetch(&line_.run[next_run + 1]);
            }
            nearby_runs(x);
            futile_.select(exchange_.remainder_key(gs.bounds_of(g), static_cast<std::int64_t>(x)));
            for (const std::size_t run : found_) {
                if (futile_.contains(cell_key(run))) continue;
                const Tried tried = try_run(g, i, x, run);
                if (tried == Tried::kSpent) return false;
                if (tried == Tried::kExchanged) return true;
            }
        }
        return true;
    }

private:
    enum class Tried { kNoExchange, kExchanged, kSpent };

    std::uint64_t cell_key(std::size_t run) const { return static_cast<std::uint64_t>(line_.run[run].cell) + 1; }
    bool used(const Tuple& t) const { return count_.get(t) > 0; }

    /// The runs of the same sensitive value nearest to row x's run, nearest first, into found_.
    void nearby_runs(std::size_t x) {
        found_.clear();
        const std::size_t r = line_.run_of_row[x];
        for (std::size_t step = 1; step <= params_.cells; ++step) {
            for (const bool below : {true, false}) {
                if (below && step > r) continue;
                const std::size_t s = below ? r - step : r + step;
                if (s < line_.runs() && line_.same_value(r, s)) found_.push_back(s);
            }
        }
    }

    /// Tries row x, member i of group g, against the first rows of run `run` of other groups.
    Tried try_run(std::size_t g, std::size_t i, std::size_t x, std::size_t run) {
        Groups& gs = groups_;
        const std::size_t begin = line_.run[run].start;
        const std::size_t end = std::min<std::size_t>(line_.run[run + 1].start, begin + params_.rows_per_cell);
        for (std::size_t pos = begin; pos < end; ++pos) {
            const std::size_t y = line_.rows[pos];
            if (pos + 1 < end) __builtin_prefetch(&gs.owner[line_.rows[pos + 1]]);  // the next row's group
            const std::size_t h = gs.owner[y];
            if (h == g) continue;
            if (tries_ == 0) return Tried::kSpent;
            --tries_;
            poll(params_.interrupt);
            exchange_.tuple(gs.bounds_of(g), static_cast<std::int64_t>(x), static_cast<std::int64_t>(y), now_g_);
            if (used(now_g_) || exchange_.coarser(now_g_, gs.tuple_of(g))) {
                futile_.insert(cell_key(run));  // so for every row of this run
                return Tried::kNoExchange;
            }
            exchange_.tuple(gs.bounds_of(h), static_cast<std::int64_t>(y), static_cast<std::int64_t>(x), now_h_);
            const bool h_same = std::equal(now_h_.begin(), now_h_.end(), gs.tuple_of(h));
            if (now_g_ == now_h_ || (!h_same && used(now_h_)) || exchange_.coarser(now_h_, gs.tuple_of(h))) {
                continue;
            }
            trade(g, h, i, x, y);
            return Tried::kExchanged;
        }
        return Tried::kNoExchange;
    }

    /// Row x, member i of group g, and row y of group h change groups, to the tuples priced.
    void trade(std::size_t g, std::size_t h, std::size_t i, std::size_t x, std::size_t y) {
        Groups& gs = groups_;
        count_.add(gs.tuple_of(g), -1);
        count_.add(gs.tuple_of(h), -1);
        count_.add(now_g_, 1);
        count_.add(now_h_, 1);
        std::copy(now_g_.begin(), now_g_.end(), gs.tuple_of(g));
        std::copy(now_h_.begin(), now_h_.end(), gs.tuple_of(h));
        gs.member[i] = static_cast<std::uint32_t>(y);
        gs.member[gs.slot[y]] = static_cast<std::uint32_t>(x);
        gs.update_bounds(exchange_, g);
        gs.update_bounds(exchange_, h);
        std::swap(gs.slot[x], gs.slot[y]);
        gs.owner[x] = static_cast<std::uint32_t>(h);
        gs.owner[y] = static_cast<std::uint32_t>(g);
    }

    const Line& line_;
    const Exchange& exchange_;
    Groups& groups_;
    TupleCounts& count_;
    const ExchangeParams& params_;
    std::size_t tries_;
    Tuple now_g_, now_h_;
    std::vector<std::size_t> found_;
    FutileCells futile_;
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
    const std::size_t count_groups = checked_group_count(groups, qi_given, d);
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
    Groups step{d, 2 * d, {}, {}, {}, {}, {}, {}};
    step.owner.resize(n);
    std::vector<std::uint32_t> position(n);
    renumber_rows(order, qi_given, d, sensitive_ids, groups, codes, ids, step.owner, position);
    const double* qi = codes.data();
    place_members(groups, position, count_groups, step);
    std::vector<std::uint32_t>().swap(position);  // not needed again (40 MB at 10M rows)
    const Exchange exchange(qi, d, taxonomies);
    step.tuples.resize(count_groups * step.width);
    TupleCounts count(step.width);
    step.bounds.resize(count_groups * d);
    Tuple now;
    for (std::size_t g = 0; g < count_groups; ++g) {
        step.update_bounds(exchange, g);
        exchange.tuple(step.bounds_of(g), -1, -1, now);
        std::copy(now.begin(), now.end(), step.tuple_of(g));
        count.add(step.tuple_of(g), 1);
    }
    if (count.keys() == count_groups) return groups;

    const Line line(qi, n, d, ids);
    std::vector<std::int64_t>().swap(ids);
    TupleSpread search(line, exchange, step, count, params, params.tries_per_row * n, std::move(now));
    for (std::size_t g = 0; g < count_groups; ++g) {
        if (!search.spread(g)) break;
    }
    return given_rows(order, step.owner);
}

}  // namespace proxanon
