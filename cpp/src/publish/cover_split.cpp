#include "proxanon/publish/cover_split.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "proxanon/common/splitmix.hpp"
#include "proxanon/publish/class_mix.hpp"

namespace proxanon {

namespace {

/// Share of `most` the greedy deal gives a part, leaving the search room to trade rows.
constexpr double kFill = 0.9;
/// Rounds of the search: after each, parts that publish a tuple taken give their rows to T's.
constexpr std::size_t kCoverRounds = 8;
constexpr double kStartHeat = 2.0;
constexpr std::size_t kHeatSteps = 64;
constexpr double kLeastHeat = 0.05;
/// Excess charged per row a part holds beyond `most` or short of k.
constexpr double kSizePenalty = 10.0;

/// The draws of the covering split's annealing (Coverer::search(): which row moves where,
/// and whether a move that raises the excess is taken): a splitmix64 sequence seeded from the
/// class alone, so that a class is dealt alike on every run and thread.
class AnnealingStream {
public:
    explicit AnnealingStream(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() { return splitmix64(state_); }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

/// One column narrowed: rows whose leaf on `column` lies in [lo, hi], the leaves of a node.
struct Narrowed {
    std::size_t column = 0;
    std::int32_t node = 0, lo = 0, hi = 0;
};

/// Whether a part's rows span a taxonomy node on one column (come from two of its children at
/// least), as they must for the part to publish the node: its rows per child and the
/// children holding any.
struct Span {
    std::size_t column = 0;
    std::int32_t node = 0;
    std::vector<std::int32_t> by_child;  ///< indexed by node id
    std::int32_t spread = 0;
};

/// A part: T's own (no column narrowed, covering every row) or a candidate's (one or two
/// columns narrowed); a dissolved candidate covers no row.
struct Cell {
    std::vector<Narrowed> narrowed;
    bool dissolved = false;
    std::vector<std::size_t> covered;  ///< positions in the class's rows (candidates only)
};

class Coverer {
public:
    Coverer(const std::vector<std::int32_t>& rows, const LossModel& qi, const Neighbours& nb, std::size_t k,
            double delta, std::size_t most, std::size_t& work, std::size_t work_cap)
        : rows_(rows), qi_(qi), k_(static_cast<std::int64_t>(k)), most_(static_cast<std::int64_t>(most)),
          work_(work), limit_(std::min(work + kCoverWorkPerRow * rows.size(), work_cap)),
          mix_(rows, nb, delta, kBalancedValues, work),
          random_(0x5EEDC0FFEEULL ^ (static_cast<std::uint64_t>(rows.size()) << 32) ^
                  static_cast<std::uint64_t>(rows.empty() ? 0 : rows.front())) {}

    bool usable() const { return mix_.usable(); }
    bool spent() const { return work_ > limit_; }

    /// (1): the candidates, one taxonomy column narrowed (in (column, node) order), then two
    /// (in (columns, nodes) order).
    std::vector<Cell> candidates(const Key& key, const std::vector<std::vector<std::int32_t>>& node_keys,
                                 const FreeKey& free) const {
        // Per taxonomy column, the nodes below T's that hold some row's leaf, and per row the
        // nodes above its leaf up to T's (excluded).
        std::vector<std::size_t> columns;
        std::vector<std::vector<std::vector<std::int32_t>>> above;  // [column][row] -> nodes
        for (std::size_t j = 0; j < qi_.dimensions(); ++j) {
            const Taxonomy* tax = qi_.taxonomy(j);
            if (tax == nullptr) continue;
            const std::int32_t top = class_node(j);
            columns.push_back(j);
            above.emplace_back(rows_.size());
            for (std::size_t i = 0; i < rows_.size(); ++i) {
                for (std::int32_t v = leaf(rows_[i], j); v != top; v = tax->parent(v)) above.back()[i].push_back(v);
                work_ += above.back()[i].size() + 1;
            }
        }
        std::vector<Cell> found;
        std::set<Key> keys{key};
        const auto add = [&](std::map<std::vector<std::int32_t>, std::vector<std::size_t>>& under,
                             const std::vector<std::size_t>& cols) {
            for (auto& [nodes, covered] : under) {
                if (covered.size() < static_cast<std::size_t>(k_)) continue;
                Key narrowed = key;
                Cell cell;
                bool spans = true;  // its rows span its nodes (else no part of them publishes them)
                for (std::size_t c = 0; c < cols.size(); ++c) {
                    const std::size_t j = columns[cols[c]];
                    const auto node = static_cast<std::size_t>(nodes[c]);
                    std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = -1;
                    for (const std::size_t i : covered) {
                        lo = std::min(lo, leaf(rows_[i], j));
                        hi = std::max(hi, leaf(rows_[i], j));
                    }
                    work_ += covered.size();
                    spans = spans && qi_.taxonomy(j)->lca(lo, hi) == nodes[c];
                    narrowed[2 * j] = narrowed[2 * j + 1] = static_cast<double>(node_keys[j][node]);
                    Narrowed n;
                    n.column = j;
                    n.node = nodes[c];
                    std::tie(n.lo, n.hi) = qi_.taxonomy(j)->leaf_range(nodes[c]);
                    cell.narrowed.push_back(n);
                }
                if (!spans || !keys.insert(narrowed).second || !free(narrowed)) continue;
                cell.covered = std::move(covered);
                found.push_back(std::move(cell));
            }
        };
        for (std::size_t a = 0; a < columns.size(); ++a) {
            std::map<std::vector<std::int32_t>, std::vector<std::size_t>> under;
            for (std::size_t i = 0; i < rows_.size(); ++i) {
                for (const std::int32_t v : above[a][i]) under[{v}].push_back(i);
            }
            add(under, {a});
        }
        for (std::size_t a = 0; a < columns.size(); ++a) {
            for (std::size_t b = a + 1; b < columns.size() && !spent(); ++b) {
                std::map<std::vector<std::int32_t>, std::vector<std::size_t>> under;
                for (std::size_t i = 0; i < rows_.size(); ++i) {
                    for (const std::int32_t v : above[a][i]) {
                        for (const std::int32_t w : above[b][i]) under[{v, w}].push_back(i);
                    }
                    work_ += above[a][i].size() * above[b][i].size() + 1;
                }
                add(under, {a, b});
            }
        }
        return found;
    }

    /// (1): deals the rows to T's part and the candidates chosen greedily; false where no
    /// candidate takes k rows.
    bool deal(std::vector<Cell> candidates) {
        const std::size_t m = rows_.size();
        const auto fill = static_cast<std::size_t>(kFill * static_cast<double>(most_));
        cells_.assign(1, Cell{});
        part_of_.assign(m, 0);
        std::vector<std::uint8_t> dealt(m, 0);
        std::size_t left = m;
        std::vector<std::uint8_t> used(candidates.size(), 0);
        while (left > fill && !spent()) {
            // The candidate narrowing fewest columns (it covers the most rows, so it can trade
            // the most) that takes at least k rows, the most rows among those.
            std::size_t best = candidates.size(), gain = 0;
            for (std::size_t c = 0; c < candidates.size(); ++c) {
                if (used[c]) continue;
                if (best < candidates.size() && candidates[c].narrowed.size() > candidates[best].narrowed.size()) break;
                std::size_t g = 0;
                for (const std::size_t i : candidates[c].covered) g += dealt[i] == 0;
                work_ += candidates[c].covered.size();
                g = std::min(g, fill);
                if (g >= static_cast<std::size_t>(k_) && g > gain) { gain = g; best = c; }
            }
            if (best == candidates.size()) break;
            used[best] = 1;
            std::size_t taken = 0;
            for (const std::size_t i : candidates[best].covered) {
                if (dealt[i] || taken == gain) continue;
                dealt[i] = 1;
                part_of_[i] = cells_.size();
                ++taken;
            }
            left -= taken;
            cells_.push_back(std::move(candidates[best]));
        }
        root_most_ = std::max<std::int64_t>(most_, static_cast<std::int64_t>(left));
        return cells_.size() > 1;
    }

    /// (2) and (3): the parts, or empty where the search does not bring every part within.
    std::vector<std::vector<std::int32_t>> search(const Publishable& publishable) {
        const std::size_t parts = cells_.size();
        members_.assign(parts, {});
        slot_.assign(rows_.size(), 0);
        for (std::size_t i = 0; i < rows_.size(); ++i) {
            slot_[i] = members_[part_of_[i]].size();
            members_[part_of_[i]].push_back(i);
        }
        counts_.clear();
        for (std::size_t p = 0; p < parts; ++p) counts_.push_back(mix_.counts(rows_of(p)));
        // The nodes each part must span: its candidate's, or for T's part T's own (where not
        // a leaf).
        spans_.assign(parts, {});
        for (std::size_t p = 0; p < parts; ++p) {
            std::vector<std::pair<std::size_t, std::int32_t>> nodes;
            if (p == 0) {
                for (std::size_t j = 0; j < qi_.dimensions(); ++j) {
                    const Taxonomy* tax = qi_.taxonomy(j);
                    if (tax == nullptr) continue;
                    const std::int32_t node = class_node(j);
                    if (static_cast<std::size_t>(node) >= tax->leaves()) nodes.emplace_back(j, node);
                }
            } else {
                for (const Narrowed& n : cells_[p].narrowed) {
                    if (n.lo != n.hi) nodes.emplace_back(n.column, n.node);
                }
            }
            for (const auto& [j, node] : nodes) {
                Span span;
                span.column = j;
                span.node = node;
                span.by_child.assign(qi_.taxonomy(j)->nodes(), 0);
                spans_[p].push_back(std::move(span));
            }
            for (const std::size_t i : members_[p]) spread(p, i, +1);
        }
        cost_.assign(parts, 0.0);
        for (std::size_t p = 0; p < parts; ++p) cost_[p] = excess(p);
        for (std::size_t round = 0; round < kCoverRounds; ++round) {
            // A round may spend a third of the work left; the heat falls from kStartHeat to
            // kLeastHeat over the first half of that (the work done is the search's clock).
            const std::size_t start = work_, slice = (limit_ > work_ ? limit_ - work_ : 0) / 3;
            double heat = kStartHeat;
            for (std::size_t step = 0; exceeding() && work_ - start < slice; ++step) {
                if (step % kHeatSteps == 0) {  // the heat is set anew every kHeatSteps steps
                    const double progress = std::min(1.0, 2.0 * static_cast<double>(work_ - start) / static_cast<double>(slice));
                    heat = kStartHeat * std::pow(kLeastHeat / kStartHeat, progress);
                }
                try_step(heat);
            }
            if (exceeding()) {
                // T's part may hold another quarter of `most` rows, and the search goes on.
                const auto size = static_cast<std::int64_t>(rows_.size());
                if (spent() || root_most_ >= size) return {};
                root_most_ = std::min(size, root_most_ + std::max(k_, most_ / 4));
                cost_[0] = excess(0);
                continue;
            }
            bool dissolved = false;
            for (std::size_t p = 1; p < parts; ++p) {
                if (members_[p].empty() || publishable(rows_of(p))) continue;
                while (!members_[p].empty()) relocate(members_[p].back(), 0);
                cost_[0] = excess(0);
                cost_[p] = 0.0;
                cells_[p].dissolved = true;
                dissolved = true;
            }
            root_most_ = std::max(root_most_, static_cast<std::int64_t>(members_[0].size()));
            cost_[0] = excess(0);  // at its new bound
            if (dissolved && members_[0].size() == rows_.size()) return {};  // every candidate dissolved
            if (!dissolved) {
                std::vector<std::vector<std::int32_t>> found;
                for (std::size_t p = 0; p < parts; ++p) {
                    if (members_[p].empty()) continue;
                    found.push_back(rows_of(p));
                    std::sort(found.back().begin(), found.back().end());
                }
                if (found.size() < 2) return {};
                return found;
            }
        }
        return {};
    }

private:
    std::int32_t leaf(std::int32_t r, std::size_t j) const { return static_cast<std::int32_t>(qi_.row(r)[j]); }

    /// The class's node on taxonomy column j (the LCA of its rows' leaves): T's there.
    std::int32_t class_node(std::size_t j) const {
        std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = -1;
        for (const std::int32_t r : rows_) {
            lo = std::min(lo, leaf(r, j));
            hi = std::max(hi, leaf(r, j));
        }
        return qi_.taxonomy(j)->lca(lo, hi);
    }

    bool covers(std::size_t p, std::size_t i) const {
        const Cell& cell = cells_[p];
        if (cell.dissolved) return false;
        for (const Narrowed& n : cell.narrowed) {
            const std::int32_t x = leaf(rows_[i], n.column);
            if (x < n.lo || n.hi < x) return false;
        }
        return true;
    }

    std::vector<std::int32_t> rows_of(std::size_t p) const {
        std::vector<std::int32_t> out;
        out.reserve(members_[p].size());
        for (const std::size_t i : members_[p]) out.push_back(rows_[i]);
        return out;
    }

    /// Part p's rows times their values' excess over its bounds, plus the size penalty.
    double excess(std::size_t p) const {
        const MixCounts& c = counts_[p];
        if (c.size == 0) return 0.0;
        work_ += mix_.values();
        const std::int64_t most = p == 0 ? root_most_ : most_;
        double total = kSizePenalty * static_cast<double>(std::max<std::int64_t>(0, c.size - most) +
                                                          std::max<std::int64_t>(0, k_ - c.size));
        for (const Span& span : spans_[p]) total += span.spread < 2 ? kSizePenalty : 0.0;  // a finer tuple
        if (c.size == 1) total += kSizePenalty * mix_.tiny_excess(1);  // one row's risk is 1 (k = 1)
        const MixBounds bounds = mix_.bounds_of(c.size);
        for (std::size_t w = 0; w < mix_.values(); ++w) {
            if (c.x[w] == 0) continue;
            const double e = mix_.value_excess(w, c.near[w] - 1, bounds);
            if (e > 0.0) total += static_cast<double>(c.x[w]) * e;
        }
        return total;
    }

    bool exceeding() const {
        return std::any_of(cost_.begin(), cost_.end(), [](double c) { return c > 0.0; });
    }

    /// The child of `node` (column j) that holds row position i's leaf.
    std::int32_t child(std::size_t j, std::int32_t node, std::size_t i) const {
        const Taxonomy* tax = qi_.taxonomy(j);
        std::int32_t v = leaf(rows_[i], j);
        while (tax->parent(v) != node) v = tax->parent(v);
        return v;
    }

    /// Row position i leaves part p's spans (sign -1) or comes into them (+1).
    void spread(std::size_t p, std::size_t i, std::int32_t sign) {
        for (Span& span : spans_[p]) {
            std::int32_t& held = span.by_child[static_cast<std::size_t>(child(span.column, span.node, i))];
            span.spread += (held == 0 && sign > 0) - (held == 1 && sign < 0);
            held += sign;
            ++work_;
        }
    }

    /// Moves row position i to part q (counts, spans, members and slots).
    void relocate(std::size_t i, std::size_t q) {
        const std::size_t p = part_of_[i], u = mix_.value_of(rows_[i]);
        spread(p, i, -1);
        spread(q, i, +1);
        mix_.move(counts_[p], u, -1);
        mix_.move(counts_[q], u, +1);
        work_ += 2 * mix_.degree(u);
        std::vector<std::size_t>& from = members_[p];
        from[slot_[i]] = from.back();
        slot_[from.back()] = slot_[i];
        from.pop_back();
        slot_[i] = members_[q].size();
        members_[q].push_back(i);
        part_of_[i] = q;
    }

    /// One step of the search: a move of a random row to a random part covering it, or a
    /// trade with a row of that part that the row's part covers (half of the steps each).
    void try_step(double heat) {
        ++work_;  // every step, even one that moves nothing, so that a round ends
        // Half of the steps move a row of a part that exceeds.
        std::size_t i = random_.below(rows_.size());
        if (random_.next() & 1U) {
            exceeding_.clear();
            for (std::size_t p = 0; p < cost_.size(); ++p) {
                if (cost_[p] > 0.0) exceeding_.push_back(p);
            }
            const std::vector<std::size_t>& from = members_[exceeding_[random_.below(exceeding_.size())]];
            i = from[random_.below(from.size())];
        }
        const std::size_t p = part_of_[i];
        const std::size_t q = random_.below(cells_.size());
        if (q == p || !covers(q, i)) return;
        std::size_t j = rows_.size();
        if (random_.next() & 1U) {
            if (members_[q].empty()) return;
            j = members_[q][random_.below(members_[q].size())];
            if (!covers(p, j) || mix_.value_of(rows_[i]) == mix_.value_of(rows_[j])) return;
        }
        const double before = cost_[p] + cost_[q];
        relocate(i, q);
        if (j != rows_.size()) relocate(j, p);
        const double a = excess(p), b = excess(q);
        const double rise = a + b - before;
        if (rise <= 0.0 || random_.unit() < std::exp(-rise / heat)) {
            cost_[p] = a;
            cost_[q] = b;
            return;
        }
        if (j != rows_.size()) relocate(j, q);
        relocate(i, p);
    }

    const std::vector<std::int32_t>& rows_;
    const LossModel& qi_;
    std::int64_t k_, most_, root_most_ = 0;
    std::size_t& work_;
    std::size_t limit_;
    ClassMix mix_;
    AnnealingStream random_;
    std::vector<Cell> cells_;                    ///< T's part, then the candidates chosen
    std::vector<std::size_t> part_of_;           ///< per row position
    std::vector<std::vector<std::size_t>> members_;
    std::vector<std::size_t> slot_;              ///< per row position, its place in members_
    std::vector<MixCounts> counts_;
    std::vector<double> cost_;
    std::vector<std::size_t> exceeding_;  ///< scratch of try_step()
    std::vector<std::vector<Span>> spans_;  ///< per part, the nodes it must span
};

}  // namespace

std::vector<std::vector<std::int32_t>> covering_parts(const std::vector<std::int32_t>& rows, const Key& key,
                                                      const LossModel& qi,
                                                      const std::vector<std::vector<std::int32_t>>& node_keys,
                                                      const Neighbours& neighbours, std::size_t k, double delta,
                                                      std::size_t most, const FreeKey& free,
                                                      const Publishable& publishable, std::size_t& work,
                                                      std::size_t work_cap) {
    if (k == 0 || most < k || rows.size() <= most) return {};
    Coverer coverer(rows, qi, neighbours, k, delta, most, work, work_cap);
    if (!coverer.usable() || !coverer.deal(coverer.candidates(key, node_keys, free))) return {};
    return coverer.search(publishable);
}

}  // namespace proxanon
