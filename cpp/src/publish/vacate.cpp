#include "proxanon/publish/vacate.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "proxanon/publish/absorb.hpp"
#include "proxanon/publish/cover_index.hpp"
#include "proxanon/publish/held_values.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/publish/published_key.hpp"

namespace proxanon {

namespace {

/// One class as vacating sees it: its rows at the start, its extremes then and its tuple
/// (which never changes: a row moves only into a class whose tuple covers it), and its
/// values, counted on first use and kept exact as rows join.
struct Class {
    std::vector<std::int32_t> rows;
    std::size_t size = 0;
    std::vector<double> lo, hi;
    Key key;
    bool counted = false;  ///< whether `held` is built
    bool emptied = false;
    bool took = false;  ///< whether rows joined it (it is then never emptied: `rows` would miss them)
    HeldValues held;
};

class Vacater {
public:
    Vacater(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
            const Neighbours& neighbours, const MondrianParams& params, std::size_t most)
        : qi_(qi), keys_(node_keys), nb_(neighbours), params_(params), most_(most), counter_(neighbours),
          index_(qi, node_keys) {}

    std::int64_t run(std::vector<std::int32_t>& classes, std::size_t& failing_large) {
        gather(classes);
        std::vector<std::size_t> large;
        for (std::size_t c = 0; c < classes_.size(); ++c) {
            if (classes_[c].size > most_ && !passes(c)) large.push_back(c);
        }
        std::sort(large.begin(), large.end(), [&](std::size_t a, std::size_t b) {
            return std::tie(classes_[b].size, a) < std::tie(classes_[a].size, b);
        });
        failing_large = large.size();
        std::int64_t emptied = 0;
        for (const std::size_t f : large) {
            if (classes_[f].emptied) continue;  // emptied as another's owner: nothing left to deal
            for (const Key& wanted : candidates(f)) {
                const auto found = owner_.find(wanted);
                if (found == owner_.end()) continue;
                const auto o = static_cast<std::size_t>(found->second);
                if (o == f || classes_[o].took || classes_[o].size > kOwnerRows * params_.k) continue;
                poll(params_.interrupt);
                if (!empty(o, f, classes)) continue;
                owner_.erase(found);
                ++emptied;
            }
        }
        if (emptied > 0) renumber(classes);
        return emptied;
    }

private:
    /// Members, extremes, tuples, the owner of each tuple and the covering index. O(n d).
    void gather(const std::vector<std::int32_t>& classes) {
        gather_classes(classes, qi_, classes_);
        const std::size_t d = qi_.dimensions();
        for (std::size_t c = 0; c < classes_.size(); ++c) {
            Class& cls = classes_[c];
            cls.key.resize(2 * d);
            for (std::size_t i = 0; i < d; ++i) {
                std::tie(cls.key[2 * i], cls.key[2 * i + 1]) = published_pair(qi_.taxonomy(i), keys_[i], cls.lo[i], cls.hi[i]);
            }
            owner_.emplace(cls.key, static_cast<std::int32_t>(c));
            index_.add(static_cast<std::int32_t>(c), cls.lo, cls.hi);
        }
    }

    /// Whether class c passes as its counts now stand (counted on first use). O(m log m +
    /// the counts) once, then O(1).
    bool passes(std::size_t c) {
        Class& cls = classes_[c];
        if (!cls.counted) {
            count_rows(cls.held, cls.rows, nb_, counter_);
            cls.counted = true;
        }
        return passes_checks(cls.held, cls.size, params_);
    }

    /// The tuples of failing class f with one taxonomy column narrowed to a node below f's
    /// that covers at least k of its rows, most rows first (ties: the lower column, then the
    /// lower node). O(m h + the taxonomies' nodes).
    std::vector<Key> candidates(std::size_t f) const {
        const Class& cls = classes_[f];
        std::vector<std::tuple<std::size_t, std::size_t, std::int32_t>> order;  // (-rows, column, node)
        std::vector<std::size_t> covered;
        for (std::size_t i = 0; i < qi_.dimensions(); ++i) {
            const Taxonomy* tax = qi_.taxonomy(i);
            if (tax == nullptr) continue;
            const std::int32_t top = tax->lca(static_cast<std::int32_t>(cls.lo[i]), static_cast<std::int32_t>(cls.hi[i]));
            covered.assign(tax->nodes(), 0);
            for (const std::int32_t r : cls.rows) {
                for (auto v = static_cast<std::int32_t>(qi_.row(r)[i]); v != top; v = tax->parent(v)) ++covered[static_cast<std::size_t>(v)];
            }
            for (std::size_t v = 0; v < covered.size(); ++v) {
                if (covered[v] >= params_.k) order.emplace_back(std::numeric_limits<std::size_t>::max() - covered[v], i, static_cast<std::int32_t>(v));
            }
        }
        std::sort(order.begin(), order.end());
        std::vector<Key> found;
        for (const auto& [rank, i, node] : order) {
            Key key = cls.key;
            key[2 * i] = key[2 * i + 1] = static_cast<double>(keys_[i][static_cast<std::size_t>(node)]);
            found.push_back(std::move(key));
        }
        return found;
    }

    /// The class, other than `owner` and `failing`, that takes row r: its tuple covers the
    /// row, it passes and still passes with it, and it holds at most `most` rows after; the
    /// fewest rows first, then the lower id; -1 where none does.
    std::int32_t receiver(std::int32_t r, std::size_t owner, std::size_t failing) {
        const double* x = qi_.row(r);
        const std::int32_t v = nb_.table().row_value[static_cast<std::size_t>(r)];
        std::int32_t best = -1;
        index_.for_each_cover(x, [&](const std::vector<std::int32_t>& list) {
            std::size_t read = 0, scanned = 0;
            for (const std::int32_t id : list) {
                if (++read > kRead || scanned >= kScan) break;
                const auto c = static_cast<std::size_t>(id);
                Class& cls = classes_[c];
                if (c == owner || c == failing || cls.emptied || cls.size + 1 > most_ || !covers_row(qi_, cls.lo, cls.hi, x)) continue;
                ++scanned;
                if (best >= 0 && std::tie(classes_[static_cast<std::size_t>(best)].size, best) < std::tie(cls.size, id)) continue;
                if (passes(c) && (!params_.dissimilarity || passes_with(cls.held, cls.size, v, nb_, params_.delta))) best = id;
            }
        });
        return best;
    }

    /// Moves every row of class o into a receiver(), or none (the moves made undone); true
    /// where o was emptied (`classes` then updated).
    bool empty(std::size_t o, std::size_t failing, std::vector<std::int32_t>& classes) {
        Class& owner = classes_[o];
        std::vector<std::pair<std::int32_t, std::int32_t>> moved;  // (row, class)
        for (const std::int32_t r : owner.rows) {
            const std::int32_t to = receiver(r, o, failing);
            if (to < 0) break;
            join(classes_[static_cast<std::size_t>(to)], r, +1);
            moved.emplace_back(r, to);
        }
        if (moved.size() < owner.rows.size()) {
            for (const auto& [r, to] : moved) join(classes_[static_cast<std::size_t>(to)], r, -1);
            return false;
        }
        for (const auto& [r, to] : moved) {
            classes[static_cast<std::size_t>(r)] = to;
            classes_[static_cast<std::size_t>(to)].took = true;
        }
        owner.emptied = true;
        owner.size = 0;
        return true;
    }

    /// Row r joins class cls (sign +1) or leaves it again (-1); its counts kept exact.
    void join(Class& cls, std::int32_t r, int sign) {
        cls.size = static_cast<std::size_t>(static_cast<std::int64_t>(cls.size) + sign);
        cls.held.change(nb_, nb_.table().row_value[static_cast<std::size_t>(r)], sign, nullptr);
    }

    /// Class ids 0 .. C-1 again, every one used, in the order of the old ids.
    void renumber(std::vector<std::int32_t>& classes) const {
        std::vector<std::int32_t> id(classes_.size(), -1);
        std::int32_t next = 0;
        for (std::size_t c = 0; c < classes_.size(); ++c) {
            if (!classes_[c].emptied) id[c] = next++;
        }
        for (std::int32_t& c : classes) c = id[static_cast<std::size_t>(c)];
    }

    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& keys_;
    const Neighbours& nb_;
    const MondrianParams& params_;
    std::size_t most_;
    NeighbourCount counter_;
    CoverIndex index_;
    std::vector<Class> classes_;
    std::unordered_map<Key, std::int32_t, KeyHash> owner_;  ///< tuple -> the class publishing it
};

}  // namespace

std::int64_t vacate(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                    const Neighbours& neighbours, std::vector<std::int32_t>& classes,
                    const MondrianParams& params, std::size_t most, std::size_t& failing_large) {
    failing_large = 0;
    if (classes.empty() || most < params.k) return 0;  // no class of k rows or more fits
    Vacater vacater(qi, node_keys, neighbours, params, most);
    return vacater.run(classes, failing_large);
}

SpecializeResult cover_failing(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                               const Neighbours& neighbours, std::vector<std::int32_t> classes,
                               const MondrianParams& params, std::size_t threads) {
    const std::size_t n = classes.size(), most = largest_class_rows(n);
    // specialize()'s checks, before vacate() reads the classes (it takes their ids as given).
    checked_classes(qi, node_keys, neighbours, classes, params, SpecializeTarget::Covering);
    SpecializeResult result;
    std::vector<std::size_t> sizes;
    for (std::size_t round = 0; round < kVacateRounds && most >= params.k; ++round) {
        sizes.clear();
        for (const std::int32_t c : classes) {
            if (static_cast<std::size_t>(c) >= sizes.size()) sizes.resize(static_cast<std::size_t>(c) + 1, 0);
            ++sizes[static_cast<std::size_t>(c)];
        }
        if (sizes.empty() || *std::max_element(sizes.begin(), sizes.end()) <= most) break;
        std::size_t failing_large = 0;
        const std::int64_t emptied = vacate(qi, node_keys, neighbours, classes, params, most, failing_large);
        std::int64_t splits = 0;
        if (failing_large > 0) {  // where every class above 2% passes, the covering split deals none
            SpecializeResult covered = specialize(qi, node_keys, neighbours, classes, params, SpecializeTarget::Covering,
                                                   kSpecializeWorkPerRow, threads);
            classes = std::move(covered.classes);
            splits = covered.splits;
            result.stopped = result.stopped || covered.stopped;
        }
        const std::int64_t absorbed = absorb(qi, node_keys, neighbours, classes, params, absorb_cap(n, params.k), true);
        const std::int64_t changes = emptied + splits + absorbed;
        result.splits += changes;
        if (changes == 0) break;
    }
    result.classes = std::move(classes);
    return result;
}

}  // namespace proxanon
