#include "proxanon/exchange.hpp"

#include <algorithm>
#include <cstring>
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

    /// The tuple that the rows `members` publish.
    Tuple tuple(const std::vector<std::int64_t>& members) const {
        Tuple t(2 * d_);
        for (std::size_t j = 0; j < d_; ++j) {
            double lo = qi_[static_cast<std::size_t>(members.front()) * d_ + j];
            double hi = lo;
            for (const std::int64_t r : members) {
                const double x = qi_[static_cast<std::size_t>(r) * d_ + j];
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            if (taxonomies_[j]) {
                const double node = taxonomies_[j]->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
                t[2 * j] = t[2 * j + 1] = node;
            } else {
                t[2 * j] = lo;
                t[2 * j + 1] = hi;
            }
        }
        return t;
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
    const double* qi_;
    std::size_t d_;
    const std::vector<std::optional<Taxonomy>>& taxonomies_;
    std::vector<std::size_t> deep_;
};

/// Rows of one sensitive value in QI order, cut into runs of one QI combination ("cells"):
/// the candidates for an exchange are the first rows of the nearby runs of the same value.
struct Line {
    std::vector<std::int64_t> rows;        ///< ordered by (sensitive id, cell, row)
    std::vector<std::size_t> run_start;    ///< per run, its first position in `rows`
    std::vector<std::size_t> run_of_row;   ///< per row, its run

    Line(const double* qi, std::size_t n, std::size_t d, const std::vector<std::int64_t>& ids) {
        std::vector<std::int64_t> by_qi(n);
        std::iota(by_qi.begin(), by_qi.end(), 0);
        auto less = [&](std::int64_t a, std::int64_t b) {
            const double* x = qi + static_cast<std::size_t>(a) * d;
            const double* y = qi + static_cast<std::size_t>(b) * d;
            for (std::size_t j = 0; j < d; ++j) {
                if (x[j] != y[j]) return x[j] < y[j];
            }
            return a < b;
        };
        std::sort(by_qi.begin(), by_qi.end(), less);
        std::vector<std::int64_t> cell(n, 0);
        for (std::size_t i = 1; i < n; ++i) {
            const double* x = qi + static_cast<std::size_t>(by_qi[i - 1]) * d;
            const double* y = qi + static_cast<std::size_t>(by_qi[i]) * d;
            const bool same = std::equal(x, x + d, y);
            cell[static_cast<std::size_t>(by_qi[i])] = cell[static_cast<std::size_t>(by_qi[i - 1])] + (same ? 0 : 1);
        }
        rows.resize(n);
        std::iota(rows.begin(), rows.end(), 0);
        auto at = [](std::int64_t r) { return static_cast<std::size_t>(r); };
        std::sort(rows.begin(), rows.end(), [&](std::int64_t a, std::int64_t b) {
            if (ids[at(a)] != ids[at(b)]) return ids[at(a)] < ids[at(b)];
            if (cell[at(a)] != cell[at(b)]) return cell[at(a)] < cell[at(b)];
            return a < b;
        });
        run_of_row.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t r = at(rows[i]);
            if (i == 0 || ids[r] != ids[at(rows[i - 1])] || cell[r] != cell[at(rows[i - 1])]) {
                run_start.push_back(i);
            }
            run_of_row[r] = run_start.size() - 1;
        }
        run_start.push_back(n);  // sentinel: the end of the last run
    }

    std::size_t runs() const { return run_start.size() - 1; }
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
    for (const auto& m : members) {
        tuples.push_back(exchange.tuple(m));
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
                if (s >= line.runs()) continue;
                const std::size_t first = line.run_start[s];
                if (sensitive_ids[at(line.rows[first])] != sensitive_ids[at(x)]) continue;
                const std::size_t last = std::min(line.run_start[s + 1], first + params.rows_per_cell);
                found.insert(found.end(), line.rows.begin() + static_cast<std::ptrdiff_t>(first),
                             line.rows.begin() + static_cast<std::ptrdiff_t>(last));
            }
        }
    };

    std::size_t tries = params.tries_per_row * n;
    for (std::size_t g = 0; g < members.size(); ++g) {
        if (count[tuples[g]] == 1) continue;
        bool done = false;
        for (std::size_t i = 0; i < members[g].size() && !done; ++i) {
            const std::int64_t x = members[g][i];
            candidates(x);
            for (const std::int64_t y : found) {
                const std::size_t h = at(owner[at(y)]);
                if (h == g) continue;
                if (tries == 0) return owner;
                --tries;
                poll(params.interrupt);
                std::vector<std::int64_t> mine = members[g];
                mine[i] = y;
                std::vector<std::int64_t> theirs = members[h];
                theirs[slot[at(y)]] = x;
                Tuple now_g = exchange.tuple(mine);
                Tuple now_h = exchange.tuple(theirs);
                const auto used = [&](const Tuple& t) {
                    const auto it = count.find(t);
                    return it != count.end() && it->second > 0;
                };
                if (now_g == now_h || used(now_g) || (now_h != tuples[h] && used(now_h)) ||
                    exchange.coarser(now_g, tuples[g]) || exchange.coarser(now_h, tuples[h])) {
                    continue;
                }
                count[tuples[g]] -= 1;
                count[tuples[h]] -= 1;
                count[now_g] += 1;
                count[now_h] += 1;
                tuples[g] = std::move(now_g);
                tuples[h] = std::move(now_h);
                std::swap(slot[at(x)], slot[at(y)]);
                members[g] = std::move(mine);
                members[h] = std::move(theirs);
                owner[at(x)] = static_cast<std::int64_t>(h);
                owner[at(y)] = static_cast<std::int64_t>(g);
                done = true;
                break;
            }
        }
    }
    return owner;
}

}  // namespace proxanon
