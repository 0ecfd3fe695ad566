#include "proxanon/global/lattice.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/mondrian/part_check.hpp"

namespace proxanon {

namespace {

/// Nodes the search enumerates at most (their bounds and order are kept in memory).
constexpr std::int64_t kMaxNodes = std::int64_t{1} << 24;
/// Two-column projections checked before they must have pruned as many nodes to go on.
constexpr std::size_t kPairTrials = 48;

class Search {
public:
    Search(const std::vector<LatticeColumn>& columns, const LatticeUnits& units, const Neighbours& nb,
           const MondrianParams& params, std::int64_t budget, bool monotone)
        : columns_(columns), units_(units), params_(params), checker_(nb, params), d_(columns.size()),
          budget_(budget), monotone_(monotone), weighted_(!params.dissimilarity && params.l == 0) {
        if (params.criteria != nullptr && !params.criteria->empty()) criteria_.emplace(*params.criteria);
        n_rows_ = units.offsets.empty() ? 0 : units.offsets.back();
        for (const LatticeColumn& c : columns) {
            if (c.node.empty()) throw std::invalid_argument("a lattice column needs at least level 0");
            radix_.push_back(static_cast<std::int64_t>(c.node.size()));
        }
    }

    LatticeResult run();

private:
    /// The levels of node index `i` (mixed radix, the first column most significant).
    std::vector<std::int32_t> levels_of(std::int64_t i) const {
        std::vector<std::int32_t> levels(d_);
        for (std::size_t j = d_; j-- > 0;) {
            levels[j] = static_cast<std::int32_t>(i % radix_[j]);
            i /= radix_[j];
        }
        return levels;
    }
    /// Checks a node's classes: each unit's class in `groups` (-1 suppressed); returns the
    /// rows suppressed, stopping once past the budget where `stop` (`groups` is then partial).
    std::int64_t check(const std::vector<std::int32_t>& levels, std::vector<std::int32_t>& groups, bool stop);
    bool passes(const std::vector<std::size_t>& members, std::int64_t weight);
    /// With k alone over weighted units: the rows in classes under k rows, from the classes'
    /// weights (a hash of each unit's tuple key, O(U)); -1 where the keys would overflow.
    std::int64_t small_rows(const std::vector<std::int32_t>& levels);
    double cost_of(const std::vector<std::int32_t>& levels, std::int64_t suppressed,
                   const std::vector<std::int32_t>& groups) const;
    /// Monotone checks: whether some node above `levels` with every column but two at its
    /// root fails (then `levels` fails too); each such node is checked once, when first
    /// asked, O(d^2) lookups per node after that.
    bool pair_fails(const std::vector<std::int32_t>& levels);
    std::int64_t index_of(const std::vector<std::int32_t>& levels) const {
        std::int64_t i = 0;
        for (std::size_t j = 0; j < d_; ++j) i = i * radix_[j] + levels[j];
        return i;
    }

    const std::vector<LatticeColumn>& columns_;
    const LatticeUnits& units_;
    const MondrianParams& params_;
    PartChecker checker_;
    std::optional<CriteriaCheck> criteria_;
    std::size_t d_;
    std::int64_t budget_;
    bool monotone_, weighted_;
    std::int64_t n_rows_ = 0;
    std::vector<std::int64_t> radix_;
    std::vector<std::int32_t> rows_;
    std::vector<std::int64_t> counts_;
    std::unordered_map<std::uint64_t, std::int64_t> weights_;
    std::unordered_map<std::int64_t, bool> pair_failed_;  ///< projections to two columns checked
    std::size_t pairs_pruned_ = 0;    ///< nodes they kept from being checked
    bool pairs_ = true;               ///< still worth asking (see pair_fails)
    std::vector<std::uint64_t> keys_;
};

bool Search::passes(const std::vector<std::size_t>& members, std::int64_t weight) {
    if (weight < static_cast<std::int64_t>(params_.k)) return false;
    if (weighted_) {
        if (!criteria_) return true;
        rows_.clear();
        counts_.clear();
        for (const std::size_t u : members) {
            rows_.push_back(units_.rows[static_cast<std::size_t>(units_.offsets[u])]);
            counts_.push_back(units_.weight(u));
        }
        return criteria_->holds(rows_.data(), counts_.data(), rows_.size());
    }
    rows_.clear();
    for (const std::size_t u : members) {
        rows_.insert(rows_.end(), units_.rows.begin() + units_.offsets[u], units_.rows.begin() + units_.offsets[u + 1]);
    }
    return checker_.passes(rows_.data(), rows_.data() + rows_.size());
}

std::int64_t Search::small_rows(const std::vector<std::int32_t>& levels) {
    std::uint64_t span = 1;
    for (const LatticeColumn& c : columns_) {
        const auto nodes = static_cast<std::uint64_t>(c.ncp.size());
        if (span > std::numeric_limits<std::uint64_t>::max() / nodes) return -1;
        span *= nodes;
    }
    const std::size_t m = units_.size();
    weights_.clear();
    weights_.reserve(m);
    keys_.resize(m);
    for (std::size_t u = 0; u < m; ++u) {
        std::uint64_t key = 0;
        for (std::size_t j = 0; j < d_; ++j) {
            const auto leaf = static_cast<std::size_t>(units_.leaf[u * d_ + j]);
            key = key * static_cast<std::uint64_t>(columns_[j].ncp.size()) +
                  static_cast<std::uint64_t>(columns_[j].node[static_cast<std::size_t>(levels[j])][leaf]);
        }
        keys_[u] = key;
        weights_[key] += units_.weight(u);
    }
    std::int64_t small = 0;
    for (const auto& [key, w] : weights_) {
        if (w < static_cast<std::int64_t>(params_.k)) small += w;
    }
    return small;
}

std::int64_t Search::check(const std::vector<std::int32_t>& levels, std::vector<std::int32_t>& groups, bool stop) {
    // k alone: whether the node is within the budget needs only the classes' weights.
    if (stop && weighted_ && !criteria_) {
        const std::int64_t small = small_rows(levels);
        if (small > budget_) return small;
    }
    // Units sorted by their tuple at the node: each run of equal tuples is a class.
    const std::size_t m = units_.size();
    std::vector<std::int32_t> tuple(m * d_);
    for (std::size_t u = 0; u < m; ++u) {
        for (std::size_t j = 0; j < d_; ++j) {
            const auto leaf = static_cast<std::size_t>(units_.leaf[u * d_ + j]);
            tuple[u * d_ + j] = columns_[j].node[static_cast<std::size_t>(levels[j])][leaf];
        }
    }
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto* x = &tuple[a * d_];
        const auto* y = &tuple[b * d_];
        for (std::size_t j = 0; j < d_; ++j) {
            if (x[j] != y[j]) return x[j] < y[j];
        }
        return a < b;
    });
    groups.assign(m, -1);
    std::int64_t suppressed = 0, next = 0;
    std::vector<std::size_t> members;
    for (std::size_t s = 0; s < m;) {
        std::size_t e = s + 1;
        while (e < m && std::equal(&tuple[order[e] * d_], &tuple[order[e] * d_] + d_, &tuple[order[s] * d_])) ++e;
        members.assign(order.begin() + static_cast<std::ptrdiff_t>(s), order.begin() + static_cast<std::ptrdiff_t>(e));
        std::sort(members.begin(), members.end());
        std::int64_t weight = 0;
        for (const std::size_t u : members) weight += units_.weight(u);
        if (passes(members, weight)) {
            for (const std::size_t u : members) groups[u] = static_cast<std::int32_t>(next);
            ++next;
        } else {
            suppressed += weight;
            if (stop && suppressed > budget_) return suppressed;
        }
        s = e;
    }
    return suppressed;
}

bool Search::pair_fails(const std::vector<std::int32_t>& levels) {
    // Each projection costs a check: past kPairTrials of them, they are asked only while
    // they have kept at least as many nodes from being checked (the answer is the same
    // either way).
    if (!pairs_ || (pair_failed_.size() >= kPairTrials && pairs_pruned_ < pair_failed_.size())) {
        pairs_ = false;
        return false;
    }
    std::vector<std::int32_t> projected(d_), groups;
    for (std::size_t a = 0; a < d_; ++a) {
        for (std::size_t b = a + 1; b < d_; ++b) {
            for (std::size_t j = 0; j < d_; ++j) projected[j] = static_cast<std::int32_t>(radix_[j] - 1);
            projected[a] = levels[a];
            projected[b] = levels[b];
            const auto [at, fresh] = pair_failed_.try_emplace(index_of(projected), false);
            if (fresh) at->second = check(projected, groups, true) > budget_;
            if (at->second) {
                ++pairs_pruned_;
                return true;
            }
        }
    }
    return false;
}

double Search::cost_of(const std::vector<std::int32_t>& levels, std::int64_t suppressed,
                       const std::vector<std::int32_t>& groups) const {
    double cost = static_cast<double>(suppressed) * static_cast<double>(d_);
    for (std::size_t u = 0; u < units_.size(); ++u) {
        if (groups[u] < 0) continue;
        double row = 0.0;
        for (std::size_t j = 0; j < d_; ++j) {
            const auto leaf = static_cast<std::size_t>(units_.leaf[u * d_ + j]);
            row += columns_[j].ncp[static_cast<std::size_t>(columns_[j].node[static_cast<std::size_t>(levels[j])][leaf])];
        }
        cost += row * static_cast<double>(units_.weight(u));
    }
    return cost;
}

LatticeResult Search::run() {
    LatticeResult result;
    std::int64_t nodes = 1;
    for (const std::int64_t r : radix_) {
        if (nodes > kMaxNodes / r) throw std::invalid_argument("the generalization lattice has more than 2^24 nodes");
        nodes *= r;
    }
    result.nodes = nodes;
    // Per column and level, every row's NCP summed: a node's bound is the sum over columns.
    std::vector<std::vector<double>> column_cost(d_);
    for (std::size_t j = 0; j < d_; ++j) {
        for (std::size_t l = 0; l < columns_[j].node.size(); ++l) {
            double sum = 0.0;
            for (std::size_t u = 0; u < units_.size(); ++u) {
                const auto leaf = static_cast<std::size_t>(units_.leaf[u * d_ + j]);
                sum += columns_[j].ncp[static_cast<std::size_t>(columns_[j].node[l][leaf])] *
                       static_cast<double>(units_.weight(u));
            }
            column_cost[j].push_back(sum);
        }
    }
    std::vector<double> bound(static_cast<std::size_t>(nodes));
    for (std::int64_t i = 0; i < nodes; ++i) {
        const std::vector<std::int32_t> levels = levels_of(i);
        double b = 0.0;
        for (std::size_t j = 0; j < d_; ++j) b += column_cost[j][static_cast<std::size_t>(levels[j])];
        bound[static_cast<std::size_t>(i)] = b;
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(nodes));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return bound[static_cast<std::size_t>(a)] < bound[static_cast<std::size_t>(b)];
    });
    std::vector<std::int32_t> top(d_);
    for (std::size_t j = 0; j < d_; ++j) top[j] = static_cast<std::int32_t>(radix_[j] - 1);
    std::vector<std::int32_t> groups;
    result.top_suppressed = check(top, groups, false);
    // Where the checks are monotone, nothing below the top holds if the top does not.
    if (monotone_ && result.top_suppressed > budget_) return result;
    std::vector<std::vector<std::int32_t>> failed;  // nodes that failed (monotone: all below fail)
    double best = std::numeric_limits<double>::infinity();
    const double slack = 1e-9 * std::max(1.0, static_cast<double>(n_rows_) * static_cast<double>(d_));
    for (const std::int64_t i : order) {
        if (bound[static_cast<std::size_t>(i)] >= best - slack) break;
        poll(params_.interrupt);
        const std::vector<std::int32_t> levels = levels_of(i);
        if (monotone_) {
            const bool below = std::any_of(failed.begin(), failed.end(), [&](const std::vector<std::int32_t>& f) {
                for (std::size_t j = 0; j < d_; ++j) {
                    if (levels[j] > f[j]) return false;
                }
                return true;
            });
            if (below || (d_ > 2 && pair_fails(levels))) continue;
        }
        ++result.checked;
        const std::int64_t suppressed = check(levels, groups, true);
        if (suppressed > budget_) {
            if (monotone_) failed.push_back(levels);
            continue;
        }
        const double cost = cost_of(levels, suppressed, groups);
        if (cost < best - slack) {
            best = cost;
            result.found = true;
            result.levels = levels;
            result.suppressed = suppressed;
            result.cost = cost;
            result.groups.assign(static_cast<std::size_t>(n_rows_), -1);
            for (std::size_t u = 0; u < units_.size(); ++u) {
                for (std::int64_t r = units_.offsets[u]; r < units_.offsets[u + 1]; ++r) {
                    result.groups[static_cast<std::size_t>(units_.rows[static_cast<std::size_t>(r)])] = groups[u];
                }
            }
        }
    }
    return result;
}

}  // namespace

LatticeResult search_lattice(const std::vector<LatticeColumn>& columns, const LatticeUnits& units,
                             const Neighbours& neighbours, const MondrianParams& params,
                             std::int64_t max_suppressed, bool monotone) {
    if (columns.empty()) throw std::invalid_argument("full-domain recoding needs quasi-identifier columns");
    if (units.leaf.size() != units.size() * columns.size()) throw std::invalid_argument("units' leaf codes do not match the columns");
    for (std::size_t j = 0; j < columns.size(); ++j) {
        for (const auto& level : columns[j].node) {
            for (const std::int32_t v : level) {
                if (v < 0 || static_cast<std::size_t>(v) >= columns[j].ncp.size()) throw std::invalid_argument("a level's node is out of range");
            }
        }
    }
    for (std::size_t u = 0; u < units.size(); ++u) {
        for (std::size_t j = 0; j < columns.size(); ++j) {
            const std::int32_t leaf = units.leaf[u * columns.size() + j];
            if (leaf < 0 || static_cast<std::size_t>(leaf) >= columns[j].node[0].size()) throw std::invalid_argument("a unit's leaf code is out of range");
        }
    }
    Search search(columns, units, neighbours, params, max_suppressed, monotone);
    return search.run();
}

}  // namespace proxanon
