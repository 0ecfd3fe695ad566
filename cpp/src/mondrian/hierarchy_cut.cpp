#include "proxanon/mondrian/hierarchy_cut.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/mondrian/level_rounds.hpp"
#include "proxanon/mondrian/part_check.hpp"
#include "proxanon/mondrian/units.hpp"

namespace proxanon {

namespace {

/// `count` rows of one unit, from its `first`-th row on.
struct Piece {
    std::int32_t unit;
    std::int64_t first;
    std::int64_t count;
};
using Part = std::vector<Piece>;

/// Checks of a remainder's top-up past which it is given up (each reads the remainder).
constexpr std::size_t kTopUpChecks = 256;

/// Levels of splits below a candidate that its score looks at: one more level lowered the
/// GCP of Adult's 8 QIs by 2-3% for a fifth of the time of the cut (bench/HISTORY.md).
constexpr int kLookahead = 1;

std::int64_t weight_of(const Part& part) {
    std::int64_t w = 0;
    for (const Piece& p : part) w += p.count;
    return w;
}

void append(Part& to, const Part& from) { to.insert(to.end(), from.begin(), from.end()); }

/// One run of the cut: the units, the checks and the scratch they share.
class Cutter {
public:
    Cutter(const LossModel& qi, const Neighbours& nb, const MondrianParams& params,
           std::int64_t max_suppressed)
        : qi_(qi), params_(params), checker_(nb, params), d_(qi.dimensions()), max_suppressed_(max_suppressed),
          n_(nb.table().row_value.size()),
          weighted_(!params.dissimilarity && params.l == 0),
          value_units_(!weighted_ && (!params.dissimilarity || checker_.graph() != nullptr)) {
        if (params.criteria != nullptr && !params.criteria->empty()) criteria_.emplace(*params.criteria);
        std::size_t most = 0;
        for (std::size_t i = 0; i < d_; ++i) {
            if (qi.taxonomy(i) != nullptr) most = std::max(most, qi.taxonomy(i)->nodes());
        }
        slot_.assign(most, -1);
        build_units();
    }

    HierarchyCutResult run();

private:
    struct Split {
        double gain = 0.0;
        double score = 0.0;
        std::vector<Part> parts;
        Part dropped;         ///< a failing remainder suppressed instead (counted in gain)
        double saving = 0.0;  ///< per dropped row, what suppressing saved over the best other way
    };

    std::int32_t rep_row(std::int32_t unit) const {
        return unit_rows_[static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(unit)])];
    }
    double code(std::int32_t unit, std::size_t i) const {
        return qi_.row(unit_rows_[static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(unit)])])[i];
    }
    /// NCP of column i over the span [lo, hi]: 0 for one value (a leaf published exactly).
    double ncp(std::size_t i, double lo, double hi) const {
        if (lo == hi) return 0.0;
        const Taxonomy* tax = qi_.taxonomy(i);
        return tax == nullptr ? hi - lo
                              : tax->cost(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
    }
    void extremes(const Part& part, std::vector<double>& lo, std::vector<double>& hi) const;
    /// Rows times the sum of the columns' NCPs of the part's span.
    double cost(const Part& part);
    double total_cost(const std::vector<Part>& parts) {
        double sum = 0.0;
        for (const Part& p : parts) sum += cost(p);
        return sum;
    }
    bool passes(const Part& part);
    void build_units();
    bool split_taxonomy(const Part& part, std::size_t i, double base, Split& out);
    bool split_numeric(const Part& part, std::size_t i, double base, Split& out);
    /// Rows of the passing children closest to `rest` in the columns other than i move into
    /// it until it passes, each child keeping its own pass; false where that fails.
    bool top_up(Part& rest, std::vector<Part>& goods, std::size_t i);
    std::vector<std::int32_t> publish(std::vector<Part>& classes, HierarchyCutResult& result);
    /// The split of `part` of the highest score into `best`: its gain plus, `ahead` levels
    /// down, the best scores of its parts; false where no split lowers the cost.
    bool best_split(const Part& part, int ahead, Split& best);
    /// `classes` (the cut of `whole`) replaced by the bottom-up rounds' classes, or by the
    /// rounds up to some round with the rows left cut, where one of those costs less.
    void compete_with_rounds(const Part& whole, std::vector<Part>& classes);
    /// The classes of the top-down cut of `whole` (depth first, in cut order); counts splits.
    std::vector<Part> cut(Part whole, std::int64_t& cuts, int ahead = kLookahead);
    double score(const Part& part, int ahead) {
        Split s;
        return best_split(part, ahead, s) ? s.score : 0.0;
    }
    /// The cut of `whole` with at most max_suppressed_ rows suppressed (into suppressed_)
    /// where that lowers the cost: one cut with any number, and where that leaves out more,
    /// a second that suppresses only the remainders that saved the most per row in the first;
    /// kept only where it costs less than the cut that suppresses nothing.
    std::vector<Part> cut_suppressing(const Part& whole, std::int64_t& cuts);
    /// The cost of the suppressed rows: each counts as published at every column's root.
    double dropped_cost() const {
        std::int64_t w = 0;
        for (const Part& p : suppressed_) w += weight_of(p);
        return static_cast<double>(w) * static_cast<double>(d_);
    }

    const LossModel& qi_;
    const MondrianParams& params_;
    PartChecker checker_;
    std::optional<CriteriaCheck> criteria_;
    std::size_t d_;
    std::int64_t max_suppressed_;  ///< rows the cut may suppress where that lowers its cost
    std::size_t n_;
    bool weighted_;      ///< k and the counting criteria alone: units of equal codes, monotone checks
    bool value_units_;   ///< the distance check or distinct l over a graph: units of equal codes and value
    std::int64_t budget_ = 0;              ///< rows the cut may still suppress
    double min_saving_ = -1.0;             ///< a suppression must save more than this per row
    std::vector<Part> suppressed_;         ///< remainders suppressed, in cut order
    std::vector<std::pair<double, std::int64_t>> savings_;  ///< per suppression: saving per row, rows
    std::vector<std::int32_t> unit_rows_;   ///< rows grouped by unit
    std::vector<std::int64_t> unit_begin_;  ///< per unit, its first entry in unit_rows_; then n
    std::vector<std::int32_t> slot_;        ///< scratch per taxonomy node: its child bucket
    std::vector<std::int32_t> rows_;        ///< scratch: a part's rows or representatives
    std::vector<std::int64_t> counts_;      ///< scratch: the representatives' counts
    std::vector<double> lo_, hi_, lo2_, hi2_;
};

void Cutter::build_units() {
    RowUnits units = weighted_       ? identical_rows(qi_, params_.criteria, n_)
                     : value_units_ ? identical_rows(qi_, params_.criteria, n_, &checker_.table().row_value)
                                    : single_rows(n_);
    unit_rows_ = std::move(units.rows);
    unit_begin_ = std::move(units.begin);
}

void Cutter::extremes(const Part& part, std::vector<double>& lo, std::vector<double>& hi) const {
    lo.assign(d_, std::numeric_limits<double>::infinity());
    hi.assign(d_, -std::numeric_limits<double>::infinity());
    for (const Piece& p : part) {
        const double* x = qi_.row(unit_rows_[static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(p.unit)])]);
        for (std::size_t i = 0; i < d_; ++i) {
            lo[i] = std::min(lo[i], x[i]);
            hi[i] = std::max(hi[i], x[i]);
        }
    }
}

double Cutter::cost(const Part& part) {
    if (part.empty()) return 0.0;
    extremes(part, lo2_, hi2_);
    double sum = 0.0;
    for (std::size_t i = 0; i < d_; ++i) sum += ncp(i, lo2_[i], hi2_[i]);
    return sum * static_cast<double>(weight_of(part));
}

bool Cutter::passes(const Part& part) {
    if (part.empty()) return false;
    if (weighted_) {
        if (weight_of(part) < static_cast<std::int64_t>(params_.k)) return false;
        if (!criteria_) return true;
        rows_.clear();
        counts_.clear();
        for (const Piece& p : part) {
            rows_.push_back(unit_rows_[static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(p.unit)])]);
            counts_.push_back(p.count);
        }
        return criteria_->holds(rows_.data(), counts_.data(), rows_.size());
    }
    if (value_units_) {
        rows_.clear();
        counts_.clear();
        for (const Piece& p : part) {
            rows_.push_back(rep_row(p.unit));
            counts_.push_back(p.count);
        }
        return checker_.passes_weighted(rows_.data(), counts_.data(), rows_.size());
    }
    rows_.clear();
    for (const Piece& p : part) {
        const auto at = static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(p.unit)] + p.first);
        rows_.insert(rows_.end(), unit_rows_.begin() + static_cast<std::ptrdiff_t>(at),
                     unit_rows_.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(p.count)));
    }
    return checker_.passes(rows_.data(), rows_.data() + rows_.size());
}

bool Cutter::top_up(Part& rest, std::vector<Part>& goods, std::size_t i) {
    extremes(rest, lo_, hi_);
    // Each piece of a passing child, by what it adds to the remainder's NCPs in the other
    // columns (its column i is the parent node in the remainder whatever it was).
    struct Candidate {
        double added;
        std::size_t good, piece;
    };
    std::vector<Candidate> order;
    for (std::size_t g = 0; g < goods.size(); ++g) {
        for (std::size_t p = 0; p < goods[g].size(); ++p) {
            double added = 0.0;
            for (std::size_t j = 0; j < d_; ++j) {
                if (j == i) continue;
                const double c = code(goods[g][p].unit, j);
                added += ncp(j, std::min(lo_[j], c), std::max(hi_[j], c)) - ncp(j, lo_[j], hi_[j]);
            }
            order.push_back({added, g, p});
        }
    }
    std::sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
        if (a.added != b.added) return a.added < b.added;
        return a.good != b.good ? a.good < b.good : a.piece < b.piece;
    });
    std::vector<std::int64_t> left(goods.size());
    for (std::size_t g = 0; g < goods.size(); ++g) left[g] = weight_of(goods[g]);
    std::vector<bool> gave(goods.size(), false);
    const auto k = static_cast<std::int64_t>(params_.k);
    std::int64_t have = weight_of(rest);
    std::size_t checks = 0;
    bool done = false;
    // Without the distance check the remainder's criterion counts are kept as pieces come
    // in, so each check costs O(values present), not a pass over the remainder.
    const bool running = weighted_ && criteria_;
    if (running) {
        criteria_->start();
        for (const Piece& p : rest) criteria_->add(rep_row(p.unit), p.count);
    }
    for (const Candidate& c : order) {
        Piece& from = goods[c.good][c.piece];
        const std::int64_t spare = left[c.good] - k;
        if (spare <= 0) continue;
        const std::int64_t need = k - have;
        const std::int64_t take = std::min({from.count, spare, need > 0 ? need : from.count});
        from.count -= take;
        rest.push_back({from.unit, from.first + from.count, take});
        if (running) criteria_->add(rep_row(from.unit), take);
        left[c.good] -= take;
        gave[c.good] = true;
        have += take;
        if (have < k) continue;
        if (running ? criteria_->holds_running() : weighted_ || passes(rest)) {
            done = true;
            break;
        }
        if (++checks >= kTopUpChecks) break;
    }
    if (!done) return false;
    for (std::size_t g = 0; g < goods.size(); ++g) {
        Part& part = goods[g];
        part.erase(std::remove_if(part.begin(), part.end(), [](const Piece& p) { return p.count == 0; }),
                   part.end());
        if (gave[g] && !passes(part)) return false;
    }
    return true;
}

bool Cutter::split_taxonomy(const Part& part, std::size_t i, double base, Split& out) {
    const Taxonomy& tax = *qi_.taxonomy(i);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const Piece& p : part) {
        lo = std::min(lo, code(p.unit, i));
        hi = std::max(hi, code(p.unit, i));
    }
    out.dropped.clear();
    if (lo == hi) return false;
    const std::int32_t node = tax.lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
    // The part's pieces by the child of its node that holds their leaf.
    std::vector<Part> buckets;
    std::vector<std::int32_t> children;
    for (const Piece& p : part) {
        std::int32_t v = static_cast<std::int32_t>(code(p.unit, i));
        while (tax.parent(v) != node) v = tax.parent(v);
        std::int32_t& slot = slot_[static_cast<std::size_t>(v)];
        if (slot < 0) {
            slot = static_cast<std::int32_t>(buckets.size());
            buckets.emplace_back();
            children.push_back(v);
        }
        buckets[static_cast<std::size_t>(slot)].push_back(p);
    }
    for (const std::int32_t v : children) slot_[static_cast<std::size_t>(v)] = -1;
    std::vector<Part> goods;
    Part rest;
    for (Part& b : buckets) {
        if (passes(b)) goods.push_back(std::move(b)); else append(rest, b);
    }
    if (!rest.empty() && !passes(rest)) {
        // Two ways to a passing remainder: rows of the passing children topped up, or the
        // smallest passing child joining it; the cheaper is kept.
        std::vector<Part> topped = goods;
        Part grown = rest;
        const bool up = !goods.empty() && top_up(grown, topped, i);
        std::vector<Part> joined;
        if (goods.size() >= 2) {
            joined = goods;
            const auto smallest = std::min_element(joined.begin(), joined.end(), [](const Part& a, const Part& b) {
                return weight_of(a) < weight_of(b);
            });
            Part with = rest;
            append(with, *smallest);
            joined.erase(smallest);
            if (passes(with)) joined.push_back(std::move(with)); else joined.clear();
        }
        if (up) topped.push_back(std::move(grown));
        const double inf = std::numeric_limits<double>::infinity();
        const double cost_up = up ? total_cost(topped) : inf;
        const double cost_join = joined.empty() ? inf : total_cost(joined);
        // Or, within the suppression budget, the remainder left out: each of its rows costs
        // a row at every column's root, against the cheaper other way (or no split at all).
        const std::int64_t left_out = weight_of(rest);
        if (!goods.empty() && left_out <= budget_) {
            const double alone = total_cost(goods) + static_cast<double>(left_out) * static_cast<double>(d_);
            const double saving = (std::min({base, cost_up, cost_join}) - alone) / static_cast<double>(left_out);
            if (saving > 1e-12 && saving > min_saving_) {
                out.dropped = std::move(rest);
                out.saving = saving;
                rest.clear();
            }
        }
        if (out.dropped.empty()) {
            if (!up && joined.empty()) return false;
            goods = cost_join < cost_up ? std::move(joined) : std::move(topped);
            rest.clear();
        }
    }
    if (!rest.empty()) goods.push_back(std::move(rest));
    if (goods.size() < (out.dropped.empty() ? 2U : 1U)) return false;
    const double after = total_cost(goods) + static_cast<double>(weight_of(out.dropped)) * static_cast<double>(d_);
    out.gain = base - after;
    out.parts = std::move(goods);
    return true;
}

bool Cutter::split_numeric(const Part& part, std::size_t i, double base, Split& out) {
    std::vector<std::pair<double, std::size_t>> values;
    values.reserve(part.size());
    std::int64_t total = 0;
    for (std::size_t p = 0; p < part.size(); ++p) {
        values.emplace_back(code(part[p].unit, i), p);
        total += part[p].count;
    }
    out.dropped.clear();
    std::sort(values.begin(), values.end());
    if (values.front().first == values.back().first) return false;
    // The weighted median value goes left; if that leaves the right empty, cut before it.
    std::int64_t running = 0;
    double median = values.back().first;
    for (const auto& [v, p] : values) {
        running += part[p].count;
        if (2 * running >= total) {
            median = v;
            break;
        }
    }
    const bool before = median == values.back().first;
    Part left, right;
    for (const auto& [v, p] : values) {
        const bool goes_left = before ? v < median : v <= median;
        (goes_left ? left : right).push_back(part[p]);
    }
    if (left.empty() || right.empty() || !passes(left) || !passes(right)) return false;
    out.gain = base - cost(left) - cost(right);
    out.parts = {std::move(left), std::move(right)};
    return true;
}

std::vector<std::int32_t> Cutter::publish(std::vector<Part>& classes, HierarchyCutResult& result) {
    // Each class's tuple: per column the span of its values (a taxonomy's LCA node is fixed
    // by the span's ends). Classes with equal tuples are one class to an attacker: merged.
    std::vector<std::vector<double>> keys(classes.size());
    for (std::size_t c = 0; c < classes.size(); ++c) {
        extremes(classes[c], lo_, hi_);
        std::vector<double>& key = keys[c];
        for (std::size_t i = 0; i < d_; ++i) {
            const Taxonomy* tax = qi_.taxonomy(i);
            if (tax != nullptr) {
                const double node = tax->lca(static_cast<std::int32_t>(lo_[i]), static_cast<std::int32_t>(hi_[i]));
                key.push_back(node);
                key.push_back(node);
            } else {
                key.push_back(lo_[i]);
                key.push_back(hi_[i]);
            }
        }
    }
    std::vector<std::size_t> order(classes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    std::vector<std::int32_t> owner(classes.size());
    std::iota(owner.begin(), owner.end(), 0);
    for (std::size_t j = 0; j < order.size();) {
        std::size_t e = j + 1;
        while (e < order.size() && keys[order[e]] == keys[order[j]]) ++e;
        if (e - j > 1) {
            // The first class in cut order keeps the union.
            const std::size_t first = *std::min_element(order.begin() + static_cast<std::ptrdiff_t>(j),
                                                        order.begin() + static_cast<std::ptrdiff_t>(e));
            for (std::size_t x = j; x < e; ++x) {
                if (order[x] == first) continue;
                append(classes[first], classes[order[x]]);
                classes[order[x]].clear();
                owner[order[x]] = static_cast<std::int32_t>(first);
                ++result.merged;
            }
            if (!passes(classes[first])) result.satisfied = false;
        }
        j = e;
    }
    std::vector<std::int32_t> groups(n_, -1);
    std::int32_t next = 0;
    for (std::size_t c = 0; c < classes.size(); ++c) {
        if (classes[c].empty()) continue;
        for (const Piece& p : classes[c]) {
            const auto at = static_cast<std::size_t>(unit_begin_[static_cast<std::size_t>(p.unit)] + p.first);
            for (std::size_t r = at; r < at + static_cast<std::size_t>(p.count); ++r) {
                groups[static_cast<std::size_t>(unit_rows_[r])] = next;
            }
        }
        ++next;
    }
    return groups;
}

bool Cutter::best_split(const Part& part, int ahead, Split& best) {
    const double base = cost(part);
    bool found = false;
    Split trial;
    for (std::size_t i = 0; i < d_; ++i) {
        const bool made = qi_.taxonomy(i) != nullptr ? split_taxonomy(part, i, base, trial)
                                                     : split_numeric(part, i, base, trial);
        if (!made || !(trial.gain > 1e-12 * std::max(base, 1.0))) continue;
        trial.score = trial.gain;
        if (ahead > 0) {
            for (const Part& p : trial.parts) trial.score += score(p, ahead - 1);
        }
        if (!found || trial.score > best.score) {
            std::swap(best, trial);
            found = true;
        }
    }
    return found;
}

std::vector<Part> Cutter::cut(Part whole, std::int64_t& cuts, int ahead) {
    // Depth first, the first part on top, so classes are numbered in cut order.
    std::vector<Part> stack;
    stack.push_back(std::move(whole));
    std::vector<Part> classes;
    Split best;
    while (!stack.empty()) {
        Part part = std::move(stack.back());
        stack.pop_back();
        poll(params_.interrupt);
        const bool found = best_split(part, ahead, best);
        if (!found) {
            classes.push_back(std::move(part));
            continue;
        }
        ++cuts;
        if (!best.dropped.empty()) {
            const std::int64_t w = weight_of(best.dropped);
            budget_ -= w;
            savings_.emplace_back(best.saving, w);
            suppressed_.push_back(std::move(best.dropped));
            best.dropped.clear();
        }
        for (auto it = best.parts.rbegin(); it != best.parts.rend(); ++it) stack.push_back(std::move(*it));
        best.parts.clear();
    }
    return classes;
}

void Cutter::compete_with_rounds(const Part& whole, std::vector<Part>& classes) {
    // Bottom-up rounds of one-level lifts (level_rounds.hpp), kept where they cost less;
    // their first round alone (the tuples that pass published exactly) included.
    const std::size_t units = whole.size();
    std::vector<std::int32_t> rep(units);
    std::vector<std::int64_t> weight(units);
    for (std::size_t u = 0; u < units; ++u) {
        rep[u] = unit_rows_[static_cast<std::size_t>(unit_begin_[u])];
        weight[u] = unit_begin_[u + 1] - unit_begin_[u];
    }
    Part scratch;
    const UnitsCheck check = [&](const std::vector<std::int32_t>& ids) {
        scratch.clear();
        for (const std::int32_t u : ids) scratch.push_back(whole[static_cast<std::size_t>(u)]);
        return passes(scratch);
    };
    const RoundsResult rounds = level_rounds(qi_, rep, weight, check, params_.interrupt);
    std::vector<Part> published;
    for (const auto& ids : rounds.classes) {
        Part part;
        for (const std::int32_t u : ids) part.push_back(whole[static_cast<std::size_t>(u)]);
        published.push_back(std::move(part));
    }
    // prefix[j]: the cost of the rounds' first j classes.
    std::vector<double> prefix(published.size() + 1, 0.0);
    for (std::size_t j = 0; j < published.size(); ++j) prefix[j + 1] = prefix[j] + cost(published[j]);
    // The rounds suppress nothing: where one of them is kept, neither does the table.
    double best = total_cost(classes) + dropped_cost();
    budget_ = 0;
    if (rounds.complete && prefix.back() < best) {
        best = prefix.back();
        classes = published;
        suppressed_.clear();
    }
    // The rounds up to some point, the rows left then cut top-down: each point priced
    // with a cut that looks no level ahead, the cheapest cut again with the lookahead.
    const auto rest_at = [&](std::size_t point) {
        Part rest;
        for (const std::int32_t u : rounds.after[point].second) rest.push_back(whole[static_cast<std::size_t>(u)]);
        return rest;
    };
    const auto at = [&](std::size_t point, int ahead) {
        std::vector<Part> other(published.begin(),
                                published.begin() + static_cast<std::ptrdiff_t>(rounds.after[point].first));
        std::int64_t cuts = 0;
        for (Part& c : cut(rest_at(point), cuts, ahead)) other.push_back(std::move(c));
        return other;
    };
    std::optional<std::size_t> point;
    double screened = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < rounds.after.size(); ++j) {
        if (rounds.after[j].second.empty()) continue;
        Part rest = rest_at(j);
        if (!passes(rest)) continue;
        std::int64_t cuts = 0;
        const double c = prefix[rounds.after[j].first] + total_cost(cut(std::move(rest), cuts, 0));
        if (c < screened) {
            screened = c;
            point = j;
        }
    }
    if (point) {
        // The rows left there are cut with the suppression budget too (kept where cheaper).
        std::vector<Part> kept_suppressed = std::move(suppressed_);
        suppressed_.clear();
        std::vector<Part> other = at(*point, kLookahead);
        if (max_suppressed_ > 0) {
            budget_ = max_suppressed_;
            min_saving_ = -1.0;
            std::vector<Part> suppressing = at(*point, kLookahead);
            if (total_cost(suppressing) + dropped_cost() < total_cost(other)) {
                other = std::move(suppressing);
            } else {
                suppressed_.clear();
            }
            budget_ = 0;
        }
        if (total_cost(other) + dropped_cost() < best) {
            classes = std::move(other);
        } else {
            suppressed_ = std::move(kept_suppressed);
        }
    }
}

std::vector<Part> Cutter::cut_suppressing(const Part& whole, std::int64_t& cuts) {
    budget_ = 0;
    std::vector<Part> plain = cut(whole, cuts);
    if (max_suppressed_ == 0) return plain;
    std::int64_t suppressing_cuts = 0;
    budget_ = static_cast<std::int64_t>(n_);
    std::vector<Part> classes = cut(whole, suppressing_cuts);
    std::int64_t left_out = 0;
    for (const auto& s : savings_) left_out += s.second;
    if (left_out > max_suppressed_) {
        // Too many: the remainders that saved the most per row fit the budget; a second cut
        // suppresses only those that save more per row than the first that does not fit.
        std::vector<std::pair<double, std::int64_t>> ranked = savings_;
        std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::int64_t fits = 0;
        for (const auto& [saving, w] : ranked) {
            if (fits + w > max_suppressed_) {
                min_saving_ = saving;
                break;
            }
            fits += w;
        }
        savings_.clear();
        suppressed_.clear();
        budget_ = max_suppressed_;
        suppressing_cuts = 0;
        classes = cut(whole, suppressing_cuts);
    }
    // The cut that suppresses is kept only where it costs less than the one that does not.
    if (total_cost(classes) + dropped_cost() < total_cost(plain)) {
        cuts = suppressing_cuts;
        return classes;
    }
    suppressed_.clear();
    return plain;
}

HierarchyCutResult Cutter::run() {
    HierarchyCutResult result;
    const std::size_t units = unit_begin_.size() - 1;
    result.units = static_cast<std::int64_t>(units);
    Part whole;
    whole.reserve(units);
    for (std::size_t u = 0; u < units; ++u) {
        whole.push_back({static_cast<std::int32_t>(u), 0, unit_begin_[u + 1] - unit_begin_[u]});
    }
    // The distance check is not monotone: parts can pass where the whole table fails, so
    // only k and the counting checks (which every part would fail too) stop the cut here.
    const bool whole_passes = passes(whole);
    if (!whole_passes && weighted_) {
        result.satisfied = false;
        result.groups.assign(n_, 0);
        result.violating_rows = whole_table_violating_rows(checker_, params_, n_);
        return result;
    }
    std::vector<Part> classes = cut_suppressing(whole, result.cuts);
    if (!whole_passes && result.cuts == 0) {
        result.satisfied = false;
        result.groups.assign(n_, 0);
        result.violating_rows = whole_table_violating_rows(checker_, params_, n_);
        return result;
    }
    if (weighted_) compete_with_rounds(whole, classes);
    for (const Part& p : suppressed_) result.suppressed += weight_of(p);
    result.groups = publish(classes, result);
    return result;
}

}  // namespace

HierarchyCutResult hierarchy_cut(const LossModel& qi, const Neighbours& neighbours,
                                 const MondrianParams& params, std::int64_t max_suppressed) {
    const std::size_t n = neighbours.table().row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (!qi.active()) throw std::invalid_argument("the hierarchy cut needs quasi-identifier columns");
    if (max_suppressed < 0) throw std::invalid_argument("max_suppressed must be >= 0");
    Cutter cutter(qi, neighbours, params, max_suppressed);
    return cutter.run();
}

}  // namespace proxanon
