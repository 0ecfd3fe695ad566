#include "proxanon/publish/absorb.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/publish/cover_index.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/publish/published_key.hpp"

namespace proxanon {

namespace {

/// Rows that move together at most (a row with many neighbours and its companions), and the
/// covering classes tried for one such row.
constexpr std::size_t kBundle = 32;
constexpr std::size_t kBundleTargets = 16;
/// A taking class may reach this many times the cap (Absorber::take_cap_).
constexpr std::size_t kTakeFactor = 2;
/// Rows of a giving class in a row that found no bundle, after which its bundles stop.
constexpr std::size_t kBundleMisses = 64;
/// Passes of bundles over a giving class's rows, while one moves rows.
constexpr std::size_t kBundlePasses = 4;
/// QI combinations of the giving class read for companions per bundle.
constexpr std::size_t kCompanionCombos = 256;
/// Bundles tried per pass, at most, per row of the giving class.
constexpr std::size_t kBundleTriesPerRow = 2;
/// Bundles a covering class may fail to take from one giver before it is not tried again.
constexpr std::size_t kReceiverMisses = 4;
/// No list yet (give_rows).
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
/// Passes of a failing giver over its rows, while one moves rows.
constexpr std::size_t kFailingPasses = 4;

/// One class as absorption sees it. Its distinct values, with per value the rows holding it
/// and the rows in its closed epsilon-neighbourhood (so D of a row of value u is closed - 1),
/// are built on first use and kept exact under every move.
struct Class {
    std::vector<std::int32_t> rows;      ///< members at the start
    std::size_t size = 0;
    std::vector<double> lo, hi;          ///< per column extremes at the start
    std::vector<std::int64_t> at_lo, at_hi;  ///< members holding them now
    double loss = 0.0;                   ///< loss of the published tuple (per row)
    int passing = -1;                    ///< -1 not yet measured, 0 fails, 1 passes
    HeldValues held;                     ///< built by passes(), then kept exact
    /// Its risk as passes() found it: a failing class, giving or taking rows (absorb()'s
    /// failing_givers), never exceeds it.
    Risk bound;
    std::uint64_t version = 0;  ///< rows that joined or left it so far
};

/// A giving class's rows by QI combination, each combination's rows fewest neighbours first
/// and the combinations in the order of their calmest row: a bundle's companions come from
/// the combinations its receiver covers. Rows that left are skipped (each combination's
/// cursor only moves forward).
struct Calm {
    struct Combo {
        std::vector<std::int32_t> rows;
        std::size_t next = 0;                ///< rows before it have left the class
        bool looked_up = false;              ///< whether `coverers` is known
        std::vector<std::int32_t> coverers;  ///< classes a bundle from it may go to, best first
    };
    std::vector<Combo> combos;
    std::vector<std::size_t> combo_at;  ///< per place in the giver's order, its row's combination
};

class Absorber {
public:
    Absorber(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
             const Neighbours& neighbours, const MondrianParams& params, std::size_t cap,
             bool failing_givers, std::size_t failing_tests_per_row)
        : qi_(qi), nb_(neighbours), params_(params), cap_(cap),
          failing_givers_(failing_givers), failing_tests_per_row_(failing_tests_per_row),
          failing_checks_(neighbours, params.delta, params.l),
          counter_(neighbours), index_(qi, node_keys) {}

    std::int64_t run(std::vector<std::int32_t>& classes) {
        gather(classes);
        failing_checks_.budget(failing_tests_per_row_ * classes.size());
        std::vector<std::size_t> giving;
        for (std::size_t c = 0; c < classes_.size(); ++c) {
            if (classes_[c].size > cap_) giving.push_back(c);
        }
        std::sort(giving.begin(), giving.end(), [&](std::size_t a, std::size_t b) {
            return std::tie(classes_[b].size, a) < std::tie(classes_[a].size, b);
        });
        std::int64_t moved = 0;
        for (const std::size_t c : giving) {
            poll(params_.interrupt);
            moved += give(c, classes);
        }
        return moved;
    }

private:
    /// Members, extremes, loss and the covering index (classes by the taxonomy part of their
    /// tuple, each list in ascending loss, then id). O(n d + C log C).
    void gather(const std::vector<std::int32_t>& classes) {
        gather_classes(classes, qi_, classes_);
        const std::size_t d = qi_.dimensions();
        for (std::size_t c = 0; c < classes_.size(); ++c) {
            Class& cls = classes_[c];
            cls.at_lo.assign(d, 0);
            cls.at_hi.assign(d, 0);
            for (std::size_t i = 0; i < d; ++i) {
                for (const std::int32_t r : cls.rows) {
                    cls.at_lo[i] += qi_.row(r)[i] == cls.lo[i];
                    cls.at_hi[i] += qi_.row(r)[i] == cls.hi[i];
                }
                cls.loss += qi_.cost(i, cls.lo[i], cls.hi[i]);
            }
            index_.add(static_cast<std::int32_t>(c), cls.lo, cls.hi);
        }
        index_.order([&](std::int32_t a, std::int32_t b) {
            return std::tie(classes_[static_cast<std::size_t>(a)].loss, a) <
                   std::tie(classes_[static_cast<std::size_t>(b)].loss, b);
        });
    }

    /// Builds a class's values and whether it passes, once. O(m log m + the counts).
    bool passes(std::size_t c) {
        Class& cls = classes_[c];
        if (cls.passing >= 0) return cls.passing == 1;
        count_rows(cls.held, cls.rows, nb_, counter_);
        const bool ok = passes_checks(cls.held, cls.size, params_);
        cls.passing = ok ? 1 : 0;
        cls.bound = Risk{cls.held.worst(), std::max<std::int64_t>(1, static_cast<std::int64_t>(cls.size) - 1)};
        return ok;
    }

    /// Whether class d still passes with one more row of value v, and stays within the
    /// takers' limit and below the giving class `from` as that is after the move. O(p)
    /// adjacency tests.
    bool takes(const Class& cls, std::int32_t v, const Class& from) const {
        if (cls.size + 1 > std::min(take_cap_, from.size - 1)) return false;
        return !params_.dissimilarity || passes_with(cls.held, cls.size, v, nb_, params_.delta);
    }

    /// Whether class c can give one row of value v: a passing class still passes without it
    /// (O(1) where no member's D exceeds t(G) once the row has left, since no D grows when a
    /// row leaves, else O(p) adjacency tests: a giving class is tried row by row, and its p
    /// distinct values may be as many as its rows; continuous values: a class of 44k rows
    /// took 6 s); a failing class by FailingChecks::spares.
    bool spares(const Class& cls, std::int32_t v) {
        if (cls.size - 1 < params_.k) return false;
        if (failing_) return failing_checks_.spares(cls.held, cls.size, cls.bound, v, slot_);
        const HeldValues& held = cls.held;
        const std::vector<std::int32_t>& values = held.values();
        if (values.size() <= params_.l) {  // only then can losing v's value matter
            std::size_t distinct = values.size();
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (values[i] == v && held.count(i) == 1) --distinct;
            }
            if (distinct < params_.l) return false;
        }
        if (!params_.dissimilarity) return true;
        const std::int64_t allowed = allowed_neighbours(cls.size - 1, params_.delta);
        if (held.worst() <= allowed) return true;
        const AdjacentTo near_v(nb_, v);
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (values[i] == v && held.count(i) == 1) continue;
            const std::int64_t after = held.closed(i) - 1 - (near_v(values[i]) ? 1 : 0);
            if (after > allowed) return false;
        }
        return true;
    }

    /// For a failing class cls: whether it takes a row of value v from the failing giver
    /// `from` (within the takers' limit, and FailingChecks::takes).
    bool takes_failing(const Class& cls, std::int32_t v, const Class& from) {
        return cls.size + 1 <= std::min(take_cap_, from.size - 1) && failing_checks_.takes(cls.held, cls.size, cls.bound, v);
    }

    /// Whether a class passes as its counts now stand. O(1).
    bool holds(const Class& cls) const { return passes_checks(cls.held, cls.size, params_); }

    /// Whether row r (QI values x) holds one of class cls's extremes alone.
    bool holds_extreme(const Class& cls, const double* x) const {
        for (std::size_t i = 0; i < qi_.dimensions(); ++i) {
            if ((x[i] == cls.lo[i] && cls.at_lo[i] == 1) || (x[i] == cls.hi[i] && cls.at_hi[i] == 1)) return true;
        }
        return false;
    }

    /// Row r leaves class cls (sign -1) or comes back (+1): its values, counts and extremes'
    /// holders kept exact.
    void leave(Class& cls, std::int32_t r, int sign) {
        const double* x = qi_.row(r);
        for (std::size_t i = 0; i < qi_.dimensions(); ++i) {
            cls.at_lo[i] += sign * (x[i] == cls.lo[i]);
            cls.at_hi[i] += sign * (x[i] == cls.hi[i]);
        }
        change(cls, nb_.table().row_value[static_cast<std::size_t>(r)], sign);
    }

    /// One row of value v leaves (sign -1) or joins (+1) a class; its counts kept exact (the
    /// giving class's by its values' adjacency lists, slot_).
    void change(Class& cls, std::int32_t v, int sign) {
        cls.size = static_cast<std::size_t>(static_cast<std::int64_t>(cls.size) + sign);
        ++cls.version;
        cls.held.change(nb_, v, sign, &cls == giver_ ? &slot_ : nullptr);
    }

    /// The classes receiver() reads for a row of QI values x of class `from`: those of the
    /// covering index's lists whose taxonomy part covers x, below `from`'s loss and within
    /// x's numeric intervals, at most kScan of kRead read per list, in the order read. They
    /// depend on x only (tuples and losses do not change), so they are listed once per QI
    /// combination of a giving class. O(kMaxCovers lookups + kRead per list).
    std::vector<std::int32_t> takers_for(std::size_t from, const double* x) {
        const Class& source = classes_[from];
        std::vector<std::int32_t> found;
        index_.for_each_cover(x, [&](const std::vector<std::int32_t>& list) {
            std::size_t read = 0, scanned = 0;
            for (const std::int32_t id : list) {
                if (++read > kRead || scanned >= kScan) break;
                const Class& cls = classes_[static_cast<std::size_t>(id)];
                if (cls.loss >= source.loss) break;  // the list is in ascending loss
                if (!within_intervals(cls, x)) continue;
                ++scanned;
                found.push_back(id);
            }
        });
        return found;
    }

    /// Of `takers` (takers_for() of row r's QI values), the class with the least loss, then
    /// fewest rows, then lowest id that takes a row of value v from class `from`, or -1. A
    /// class that refused such a row (and, from a failing giver, one as violating there) and
    /// has not changed since refuses again: the giver only shrinks and the checks' budget
    /// only falls, which never makes a class take what it refused.
    std::int32_t receiver(std::size_t from, std::int32_t v, const std::vector<std::int32_t>& takers) {
        const Class& source = classes_[from];
        std::int32_t best = -1;
        for (const std::int32_t id : takers) {
            const auto c = static_cast<std::size_t>(id);
            Class& cls = classes_[c];
            if (best >= 0) {
                const Class& incumbent = classes_[static_cast<std::size_t>(best)];
                if (std::tie(incumbent.loss, incumbent.size, best) < std::tie(cls.loss, cls.size, id)) continue;
            }
            const std::uint64_t key = (static_cast<std::uint64_t>(id) << 33) |
                                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)) << 1) |
                                      (failing_ && failing_checks_.offered_violating() ? 1U : 0U);
            const auto known = refused_.find(key);
            if (known != refused_.end() && known->second == cls.version) continue;
            if (passes(c) ? takes(cls, v, source) : failing_ && takes_failing(cls, v, source)) {
                best = id;
            } else {
                refused_[key] = cls.version;
            }
        }
        return best;
    }

    /// Up to kBundleTargets passing classes below class `from`'s loss that cover row r, best
    /// first (least loss, then fewest rows, then lowest id), from the lookups receiver() makes.
    std::vector<std::int32_t> coverers(std::size_t from, std::int32_t r) {
        const double* x = qi_.row(r);
        std::vector<std::int32_t> found;
        index_.for_each_cover(x, [&](const std::vector<std::int32_t>& list) {
            std::size_t read = 0, scanned = 0;
            for (const std::int32_t id : list) {
                if (++read > kRead || scanned >= kScan) break;
                const auto c = static_cast<std::size_t>(id);
                if (classes_[c].loss >= classes_[from].loss) break;
                if (!covers(classes_[c], x)) continue;
                ++scanned;
                if (passes(c)) found.push_back(id);
            }
        });
        std::sort(found.begin(), found.end(), [&](std::int32_t a, std::int32_t b) {
            const Class& p = classes_[static_cast<std::size_t>(a)];
            const Class& q = classes_[static_cast<std::size_t>(b)];
            return std::tie(p.loss, p.size, a) < std::tie(q.loss, q.size, b);
        });
        if (found.size() > kBundleTargets) found.resize(kBundleTargets);
        return found;
    }

    /// Whether class cls's tuple covers QI values x (covers_row()).
    bool covers(const Class& cls, const double* x) const { return covers_row(qi_, cls.lo, cls.hi, x); }

    /// Whether each numeric value of x lies within class cls's interval (the covering
    /// index's lists already match the taxonomy columns by label).
    bool within_intervals(const Class& cls, const double* x) const {
        return proxanon::within_intervals(qi_, cls.lo, cls.hi, x);
    }

    /// Moves row r of class c (which c can spare) to class `to` with companions: rows of c
    /// that `to` covers, from at most kCompanionCombos QI combinations, fewest neighbours
    /// first (`calm`), added until `to` passes (at most kBundle rows in all). Kept only if
    /// both classes pass after it, `to` stays within the takers' limit and no larger than c,
    /// and no row holding one of c's extremes alone moves; else undone. Returns the rows moved.
    /// O(kCompanionCombos · d + kBundle · (kBundle + p)) plus skipped rows that left (each
    /// skipped once).
    std::int64_t bundle(std::size_t c, std::size_t to, std::int32_t r, Calm& calm,
                        std::vector<std::int32_t>& classes) {
        Class& from = classes_[c];
        Class& into = classes_[to];
        const auto& row_value = nb_.table().row_value;
        const auto in_c = [&](std::int32_t q) { return classes[static_cast<std::size_t>(q)] == static_cast<std::int32_t>(c); };
        std::vector<std::int32_t> moving{r};
        leave(from, r, -1);
        change(into, row_value[static_cast<std::size_t>(r)], +1);
        const auto take_from = [&](Calm::Combo& combo) {
            while (combo.next < combo.rows.size() && !in_c(combo.rows[combo.next])) ++combo.next;
            if (combo.next == combo.rows.size() || !covers(into, qi_.row(combo.rows[combo.next]))) return;
            for (std::size_t i = combo.next; i < combo.rows.size(); ++i) {
                if (holds(into) || moving.size() >= kBundle) return;
                const std::int32_t q = combo.rows[i];
                if (!in_c(q) || std::find(moving.begin(), moving.end(), q) != moving.end()) continue;
                if (holds_extreme(from, qi_.row(q))) continue;
                leave(from, q, -1);
                change(into, row_value[static_cast<std::size_t>(q)], +1);
                moving.push_back(q);
            }
        };
        // The calmest combinations first, at most kCompanionCombos of them.
        for (std::size_t k = 0; k < calm.combos.size() && k < kCompanionCombos; ++k) {
            if (holds(into) || moving.size() >= kBundle) break;
            take_from(calm.combos[k]);
        }
        if (holds(into) && holds(from) && into.size <= std::min(take_cap_, from.size)) {
            for (const std::int32_t m : moving) classes[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(to);
            return static_cast<std::int64_t>(moving.size());
        }
        for (auto it = moving.rbegin(); it != moving.rend(); ++it) {
            change(into, row_value[static_cast<std::size_t>(*it)], -1);
            leave(from, *it, +1);
        }
        return 0;
    }

    /// One pass of bundles over class c's rows, most neighbours first, until c is within the
    /// cap. Bounded work: the covering classes of a QI combination are looked up once (in
    /// `calm`), a class that failed to take kReceiverMisses bundles is not tried again in
    /// the pass, and the pass ends after kBundleMisses rows in a row found no bundle or
    /// kBundleTriesPerRow bundles per row were tried. Returns the rows moved.
    std::int64_t bundle_pass(std::size_t c, const std::vector<std::pair<std::int64_t, std::int32_t>>& order,
                             Calm& calm, std::vector<std::int32_t>& classes) {
        Class& cls = classes_[c];
        const auto& row_value = nb_.table().row_value;
        std::vector<std::uint8_t> spent(classes_.size(), 0);  // bundles each class failed to take
        std::int64_t moved = 0;
        std::size_t misses = 0;
        std::size_t tries = kBundleTriesPerRow * order.size();  // bundles tried in the pass, at most
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (cls.size <= cap_ || misses >= kBundleMisses || tries == 0) break;
            const std::int32_t r = order[i].second;
            if (classes[static_cast<std::size_t>(r)] != static_cast<std::int32_t>(c)) continue;
            poll(params_.interrupt);
            if (holds_extreme(cls, qi_.row(r)) || !spares(cls, row_value[static_cast<std::size_t>(r)])) continue;
            Calm::Combo& combo = calm.combos[calm.combo_at[i]];
            if (!combo.looked_up) {
                combo.coverers = coverers(c, r);
                combo.looked_up = true;
            }
            std::int64_t n = 0;
            for (const std::int32_t to : combo.coverers) {
                if (spent[static_cast<std::size_t>(to)] >= kReceiverMisses || tries == 0) continue;
                --tries;
                n = bundle(c, static_cast<std::size_t>(to), r, calm, classes);
                if (n > 0) break;
                ++spent[static_cast<std::size_t>(to)];
            }
            moved += n;
            misses = n > 0 ? 0 : misses + 1;
        }
        return moved;
    }

    /// Moves rows of class c (its rows with the most neighbours first) until it is within the
    /// cap or no row can move, one at a time and then in bundles. Returns the rows moved.
    std::int64_t give(std::size_t c, std::vector<std::int32_t>& classes) {
        failing_ = !passes(c);
        if (failing_ && !failing_givers_) return 0;
        giver_ = &classes_[c];
        failing_checks_.new_giver();
        refused_.clear();
        slot_.resize(nb_.size(), -1);  // all -1 between givers
        const std::vector<std::int32_t>& values = giver_->held.values();
        for (std::size_t i = 0; i < values.size(); ++i) slot_[static_cast<std::size_t>(values[i])] = static_cast<std::int64_t>(i);
        const std::int64_t moved = give_rows(c, classes);
        for (const std::int32_t u : giver_->held.values()) slot_[static_cast<std::size_t>(u)] = -1;
        giver_ = nullptr;
        return moved;
    }

    /// give() for class c, whose values slot_ indexes.
    std::int64_t give_rows(std::size_t c, std::vector<std::int32_t>& classes) {
        Class& cls = classes_[c];
        const auto& row_value = nb_.table().row_value;
        // A class that took rows before it gives lists its new values last (out of order).
        closed_of_.resize(nb_.size());
        for (std::size_t i = 0; i < cls.held.values().size(); ++i) {
            closed_of_[static_cast<std::size_t>(cls.held.values()[i])] = cls.held.closed(i);
        }
        std::vector<std::pair<std::int64_t, std::int32_t>> order;
        for (const std::int32_t r : cls.rows) {
            order.emplace_back(-closed_of_[static_cast<std::size_t>(row_value[static_cast<std::size_t>(r)])], r);
        }
        std::sort(order.begin(), order.end());
        std::int64_t moved = 0;
        const std::size_t d = qi_.dimensions();
        // Per row of `order`, the list of takers_for() its QI combination (kNone: not yet).
        std::vector<std::size_t> listed(order.size(), kNone);
        std::unordered_map<Key, std::size_t, KeyHash> list_of;
        std::vector<std::vector<std::int32_t>> takers;
        const std::size_t passes = failing_ ? kFailingPasses : 1;
        for (std::size_t pass = 0; pass < passes; ++pass) {
            const std::int64_t before = moved;
            for (std::size_t i = 0; i < order.size(); ++i) {
                if (cls.size <= cap_) break;
                const std::int32_t r = order[i].second;
                if (classes[static_cast<std::size_t>(r)] != static_cast<std::int32_t>(c)) continue;
                const std::int32_t v = row_value[static_cast<std::size_t>(r)];
                const double* x = qi_.row(r);
                if (holds_extreme(cls, x) || !spares(cls, v)) continue;
                if (listed[i] == kNone) {
                    const auto [at, added] = list_of.emplace(Key(x, x + d), takers.size());
                    if (added) takers.push_back(takers_for(c, x));
                    listed[i] = at->second;
                }
                const std::int32_t to = receiver(c, v, takers[listed[i]]);
                if (to < 0) continue;
                leave(cls, r, -1);
                change(classes_[static_cast<std::size_t>(to)], v, +1);
                classes[static_cast<std::size_t>(r)] = to;
                ++moved;
            }
            if (moved == before) break;
        }
        if (failing_) return moved;  // bundles bring calm companions: they would raise its risk
        // Where a row with many neighbours can leave but no covering class can take it alone,
        // while c cannot spare its other rows one at a time (each lowers t(c)): the row moves
        // with companions, rows of c that the same class covers, enough for that class to pass.
        Calm calm;
        calm.combo_at.assign(order.size(), 0);
        std::unordered_map<Key, std::size_t, KeyHash> combo_of;
        for (std::size_t i = order.size(); i-- > 0;) {
            const std::int32_t r = order[i].second;
            if (classes[static_cast<std::size_t>(r)] != static_cast<std::int32_t>(c)) continue;
            const double* x = qi_.row(r);
            const auto [at, added] = combo_of.emplace(Key(x, x + d), calm.combos.size());
            if (added) calm.combos.emplace_back();
            calm.combos[at->second].rows.push_back(r);
            calm.combo_at[i] = at->second;
        }
        for (std::size_t pass = 0; pass < kBundlePasses && cls.size > cap_; ++pass) {
            const std::int64_t found = bundle_pass(c, order, calm, classes);
            if (found == 0) break;
            moved += found;
        }
        return moved;
    }

    const LossModel& qi_;
    const Neighbours& nb_;
    const MondrianParams& params_;
    const std::size_t cap_;
    const bool failing_givers_;
    const std::size_t failing_tests_per_row_;
    /// Whether the class giving now fails, and then the checks that decide its moves.
    bool failing_ = false;
    FailingChecks failing_checks_;
    /// (taker, value, violating) pairs a taker refused from the giver now, with the taker's
    /// version then (receiver()).
    std::unordered_map<std::uint64_t, std::uint64_t> refused_;
    /// Rows a taking class may reach, and never more than the class it takes from has after
    /// the move, so the largest class never grows (Adult, ARX taxonomies, epsilon 0.05: the
    /// largest class 626 -> 456 rows against takers up to the cap, loss lower on every
    /// table tried).
    const std::size_t take_cap_ = kTakeFactor * cap_;
    NeighbourCount counter_;
    std::vector<Class> classes_;
    CoverIndex index_;
    /// The class giving rows now, and per value its place in that class's values (-1: not
    /// held, and for every value between givers).
    const Class* giver_ = nullptr;
    std::vector<std::int64_t> slot_;
    std::vector<std::int64_t> closed_of_;       ///< scratch of give(): closed count per value
};

}  // namespace

std::int64_t absorb(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                    const Neighbours& neighbours, std::vector<std::int32_t>& classes,
                    const MondrianParams& params, std::size_t cap, bool failing_givers,
                    std::size_t failing_tests_per_row) {
    if (classes.empty()) return 0;
    Absorber absorber(qi, node_keys, neighbours, params, cap, failing_givers, failing_tests_per_row);
    return absorber.run(classes);
}

}  // namespace proxanon
