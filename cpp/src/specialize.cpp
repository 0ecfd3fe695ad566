#include "proxanon/specialize.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "proxanon/balanced_split.hpp"
#include "proxanon/cover_split.hpp"
#include "proxanon/interrupt.hpp"
#include "proxanon/ordering.hpp"
#include "proxanon/parallel.hpp"
#include "proxanon/part_check.hpp"
#include "proxanon/published_key.hpp"
#include "proxanon/tuple_counts.hpp"

namespace proxanon {

namespace {

/// Rounds of balancing (peel the pieces, feed the remainder, or give a piece up) per split
/// tried, and rounds of peeling per piece: bound the work of a split.
constexpr std::size_t kMaxRounds = 24;
constexpr std::size_t kMaxPeels = 24;
constexpr std::size_t kGentlePeels = 8;
/// The remainder's worst values whose neighbours are kept out of what feeds it.
constexpr std::size_t kFeedValues = 32;
/// Pair tests per row of a piece, at most, that one peeling round spends on the relief of
/// violating values over an implicit structure of several components (Relief; past it, a
/// value's relief counts as none and the round sheds more rows than it needs).
constexpr std::size_t kReliefTestsPerRow = 64;
/// Levels a passing piece whose tuple another class publishes may be split further to find
/// tuples of its own, within one split.
constexpr std::size_t kMaxDepth = 2;
/// Passes over all classes: a split frees a tuple that a class tried earlier may take (a
/// third pass split nothing more on Adult).
constexpr std::size_t kPasses = 2;

/// A set of rows rows[begin, end) of some array, with what a split needs to know of it.
struct Part {
    std::size_t begin = 0, end = 0;
    std::int64_t violations = 0;
    std::int64_t worst = 0;  ///< the largest D of a row, exact where it exceeds t(G) (if checked)
    Key key;
    double loss = 0.0;  ///< rows times loss(part), the paper's per-group loss
    std::size_t size() const { return end - begin; }
    /// Whether its risk (SPEC §2: largest D over size - 1, 1 for one row) is at most
    /// `other`'s; exact where either fails (a passing part's risk is within 1 - delta, below
    /// a failing one's).
    bool no_riskier_than(const Part& other) const {
        const auto risk = [](const Part& p) {
            return p.size() <= 1 ? std::pair<std::int64_t, std::int64_t>{1, 1}
                                 : std::pair<std::int64_t, std::int64_t>{p.worst, static_cast<std::int64_t>(p.size()) - 1};
        };
        const auto [a, b] = risk(*this);
        const auto [c, e] = risk(other);
        return a * e <= c * b;
    }
};

/// A class of a pass: its rows, its record, and whether a split made it (here, not by the
/// caller).
using Entry = std::tuple<std::vector<std::int32_t>, Part, bool>;

/// One way of splitting a class: `rows` holds the kept parts, then the remainder.
struct Split {
    std::vector<std::int32_t> rows;
    std::vector<Part> parts;
    std::size_t kept_rows = 0;
    double loss = 0.0;
    std::int64_t violations = 0;  ///< of all parts (read by the failing split only)
};

/// A class's run (its whole subtree of splits) on the published tuples as a pass began
/// (speculation, see specialize.hpp): what it read there, what it changed, and what it made,
/// to be committed in the classes' order where what it read is still so.
struct Speculation {
    bool recorded = true;  ///< whether the tuples read are recorded (`seen`)
    const TupleCounts* published = nullptr;                   ///< the pass's snapshot
    const std::unordered_set<Key, KeyHash>* balanced = nullptr;  ///< the pass's snapshot
    std::unordered_map<Key, std::int64_t, KeyHash> seen;      ///< per tuple asked: its count there
    std::unordered_map<Key, std::int64_t, KeyHash> own;       ///< per tuple: the run's changes
    std::vector<std::pair<Key, std::int64_t>> changes;        ///< the run's changes, in order
    std::unordered_set<Key, KeyHash> balanced_own;            ///< balanced tuples the run added
    std::vector<Key> balanced_added;                          ///< the same, in order
    std::vector<Key> balanced_unseen;  ///< tuples asked whether balanced, in neither set
    std::size_t allowance = 0;  ///< the largest work allowance of a balanced or covering split
    std::size_t work = 0;       ///< work done by the run
    std::vector<Entry> done;    ///< the classes it leaves, in order
    std::int64_t splits = 0;
};

struct ColumnHelpers;

/// Rows from which a class's columns are searched on several threads (ColumnHelpers; below,
/// a thread's start costs more than the search saves).
constexpr std::size_t kColumnRows = 2048;

class Specializer {
public:
    Specializer(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                const Neighbours& neighbours, const MondrianParams& params, std::size_t budget)
        : qi_(qi), keys_(node_keys), nb_(neighbours), check_(neighbours, params), params_(params),
          published_(2 * qi.dimensions()),
          budget_(budget) {}

    const MondrianParams& params() const { return params_; }

    /// Searches the columns of a large class's splits on `helpers`' threads from here on
    /// (nullptr: one after another).
    void search_columns_on(ColumnHelpers* helpers) { columns_ = helpers; }

    /// The splits of class `rows` (record `whole`) along each column at depth 0 (failing_along
    /// with `failing`, else along), searched at once on the column helpers' threads, each by
    /// a specializer of its own that reads this one's tuples (no search writes any) from the
    /// work done now; their work is then charged here. Empty where they are not used (no
    /// helpers, a speculation, depth > 0, fewer than kColumnRows rows), or where a search
    /// threw or the work allowed could have stopped one (their work on top of the work done
    /// stays below the budget, else the caller searches the columns one after another).
    std::vector<std::optional<Split>> along_each(bool failing, const std::vector<std::int32_t>& rows,
                                                 const Part& whole, std::size_t depth);

    /// Work done: the specializer's own and its checks' (since a speculation began).
    std::size_t work() const { return work_ + check_.work() - check_start_; }

    /// Whether the work allowed is spent, asked between rounds of a split's search: no split
    /// is then searched any further (the splits made stand; the split being searched is
    /// dropped, or kept if its last round completed it).
    bool spent() const { return work() > budget_; }

    /// From here on, runs on `record`'s snapshot as though `work` had been done, recording
    /// into it (nullptr: on its own tuples again). The checks' work so far is not counted.
    void speculate(Speculation* record, std::size_t work) {
        spec_ = record;
        work_ = work;
        check_start_ = check_.work();
    }

    /// Whether `record`'s run (on a snapshot of this specializer's tuples, from the work done
    /// then) would run alike from here: every tuple it asked about has the count it saw, no
    /// tuple it asked whether balanced became so, and the work allowed could not stop it
    /// (its work and its largest split allowance on top of the work done now stay below the
    /// budget: no spent() nor any cap of balanced_parts and covering_parts then differs).
    bool holds(const Speculation& record) const {
        for (const auto& [key, count] : record.seen) {
            if (published_.get(key) != count) return false;
        }
        for (const Key& key : record.balanced_unseen) {
            if (balanced_.count(key) != 0) return false;
        }
        const std::size_t now = work();
        return now < budget_ && record.work < budget_ - now && record.allowance < budget_ - now - record.work;
    }

    /// Applies what `record`'s run changed, as that run would have (holds() first).
    void commit(const Speculation& record) {
        for (const auto& [key, delta] : record.changes) published_.add(key, delta);
        for (const Key& key : record.balanced_added) balanced_.insert(key);
        work_ += record.work;
    }

    const TupleCounts& published() const { return published_; }
    const std::unordered_set<Key, KeyHash>& balanced_tuples() const { return balanced_; }

    /// Whether a balanced split made a part publishing `key`.
    bool balanced_tuple(const Key& key) const {
        if (spec_ == nullptr) return balanced_.count(key) != 0;
        if (spec_->balanced_own.count(key) != 0 || spec_->balanced->count(key) != 0) return true;
        spec_->balanced_unseen.push_back(key);
        return false;
    }

    void add_balanced(const Key& key) {
        if (spec_ == nullptr) {
            balanced_.insert(key);
        } else if (spec_->balanced_own.insert(key).second) {
            spec_->balanced_added.push_back(key);
        }
    }

    /// The part rows[begin, end): its tuple, loss and, with `checked`, its violating rows
    /// (a class too small to split is never checked: its count stays 0, unread).
    Part describe(const std::vector<std::int32_t>& rows, std::size_t begin, std::size_t end, bool checked = true) {
        Part part;
        part.begin = begin;
        part.end = end;
        const std::size_t d = qi_.dimensions();
        part.key.assign(2 * d, 0.0);
        double loss = 0.0;
        for (std::size_t i = 0; i < d; ++i) {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t r = begin; r < end; ++r) {
                const double x = qi_.row(rows[r])[i];
                lo = std::min(lo, x);
                hi = std::max(hi, x);
            }
            loss += qi_.cost(i, lo, hi);
            std::tie(part.key[2 * i], part.key[2 * i + 1]) = published_pair(qi_.taxonomy(i), keys_[i], lo, hi);
        }
        part.loss = loss * static_cast<double>(end - begin);
        if (checked) {
            part.violations = check_.measure(rows.data() + begin, rows.data() + end);
            part.worst = measured_worst();
        }
        return part;
    }

    /// The largest D of a row in the set last measured (exact where it exceeds t(G)).
    std::int64_t measured_worst() const {
        std::int64_t worst = 0;
        for (const std::int32_t u : check_.present()) worst = std::max(worst, check_.degree(u));
        return worst;
    }

    void publish(const Key& key) { change(key, 1); }

    bool taken(const Key& key) const {
        if (spec_ == nullptr) return published_.get(key) > 0;
        const std::int64_t count = spec_->published->get(key);
        if (spec_->recorded) spec_->seen.try_emplace(key, count);
        const auto own = spec_->own.find(key);
        return count + (own == spec_->own.end() ? 0 : own->second) > 0;
    }

    /// Replaces the tuple of a class by those of its parts.
    void replace(const Key& old, const std::vector<Part>& parts) {
        change(old, -1);
        for (const Part& part : parts) publish(part.key);
    }

    /// `rows` ordered by (value in column j, row) into scratch_. Codes that are integers in a
    /// range below 2^31 (taxonomy leaves, ages, any integer column) are packed above the row
    /// (in as many bits as the largest row needs) into one 64-bit key and radix sorted, O(m)
    /// per 11 bits of key; other values are sorted as (value, row) pairs, O(m log m).
    void order_by_value(const std::vector<std::int32_t>& rows, std::size_t j) {
        const std::size_t m = rows.size();
        scratch_.resize(m);
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        bool integral = true;
        std::uint32_t row_bits = 0;  // of every row: rows are below 2^row_bits
        for (const std::int32_t r : rows) {
            const double x = qi_.row(r)[j];
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            integral = integral && x == std::floor(x);
            row_bits |= static_cast<std::uint32_t>(r);
        }
        if (m == 0) return;
        if (!integral || hi - lo >= 2147483648.0) {
            by_value_.clear();
            for (const std::int32_t r : rows) by_value_.emplace_back(qi_.row(r)[j], r);
            std::sort(by_value_.begin(), by_value_.end());
            for (std::size_t i = 0; i < m; ++i) scratch_[i] = by_value_[i].second;
            return;
        }
        // The value's offset right above the row's bits: keys use fewer bits, so fewer
        // 11-bit passes (a 15-bit row and a 7-bit offset: 2, where 32 bits for the row made 4).
        unsigned shift = 0;
        while (shift < 32 && (row_bits >> shift) != 0) ++shift;
        const std::uint64_t row_mask = (std::uint64_t{1} << shift) - 1;
        sort_keys_.resize(m);
        for (std::size_t i = 0; i < m; ++i) {
            const auto offset = static_cast<std::uint64_t>(qi_.row(rows[i])[j] - lo);
            sort_keys_[i] = offset << shift | static_cast<std::uint32_t>(rows[i]);
        }
        radix_sort(sort_keys_, sort_spare_);  // passes only over the bits in use
        for (std::size_t i = 0; i < m; ++i) scratch_[i] = static_cast<std::int32_t>(sort_keys_[i] & row_mask);
    }

    /// `rows` ordered by column j into scratch_, and the bounds of its pieces there: a
    /// taxonomy column by the child of the rows' common node that holds each row's leaf, a
    /// numeric one at its median value (between distinct values). 0, the piece ends, m; empty
    /// when every row has one value. O(m log m) at most (order_by_value).
    std::vector<std::size_t> cut_along(std::size_t j, const std::vector<std::int32_t>& rows) {
        order_by_value(rows, j);
        const std::size_t m = scratch_.size();
        const auto x = [&](std::size_t r) { return qi_.row(scratch_[r])[j]; };
        if (m == 0 || x(0) == x(m - 1)) return {};
        const double lo = x(0), hi = x(m - 1);
        std::vector<std::size_t> cuts{0};
        if (const Taxonomy* tax = qi_.taxonomy(j)) {
            const auto first = static_cast<std::int32_t>(lo), last = static_cast<std::int32_t>(hi);
            for (std::size_t r = 0; r < m;) {
                const std::int32_t child_last = tax->child_range(first, last, static_cast<std::int32_t>(x(r))).second;
                while (r < m && x(r) <= child_last) ++r;
                cuts.push_back(r);
            }
        } else {
            // The median value goes left; if that leaves the right empty, cut before it.
            const std::size_t middle = (m + 1) / 2 - 1;
            std::size_t boundary = middle + 1;
            while (boundary < m && x(boundary) == x(middle)) ++boundary;
            if (boundary == m) {
                boundary = middle;
                while (boundary > 0 && x(boundary - 1) == x(middle)) --boundary;
            }
            cuts.push_back(boundary);
            cuts.push_back(m);
        }
        return cuts;
    }

    /// The rows cut_along ordered into scratch_, between `cuts`: pieces of at least k rows
    /// into `pieces`, the others pooled into `rest`. O(m).
    void pieces_of(const std::vector<std::size_t>& cuts, std::vector<std::vector<std::int32_t>>& pieces,
                   std::vector<std::int32_t>& rest) const {
        for (std::size_t p = 0; p + 1 < cuts.size(); ++p) {
            const auto b = scratch_.begin() + static_cast<std::ptrdiff_t>(cuts[p]);
            const auto e = scratch_.begin() + static_cast<std::ptrdiff_t>(cuts[p + 1]);
            if (cuts[p + 1] - cuts[p] >= params_.k) pieces.emplace_back(b, e);
            else rest.insert(rest.end(), b, e);
        }
    }

    /// The kept pieces' own splits as one: their rows in order, their parts (bounds shifted),
    /// kept rows and violating rows summed. The splits' parts are moved out.
    static Split joined(std::vector<Split>& kept) {
        Split split;
        for (Split& own : kept) {
            const std::size_t offset = split.rows.size();
            split.rows.insert(split.rows.end(), own.rows.begin(), own.rows.end());
            for (Part& q : own.parts) {
                q.begin += offset;
                q.end += offset;
                split.violations += q.violations;
                split.parts.push_back(std::move(q));
            }
            split.kept_rows += own.rows.size();
        }
        return split;
    }

    /// The split of class `whole` (rows, its part record) along column j, if any part is kept.
    /// At `depth` > 0 the class's own tuple is published by another class: no part may keep it.
    std::optional<Split> along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& whole,
                               std::size_t depth) {
        const std::vector<std::size_t> cuts = cut_along(j, rows);
        if (cuts.empty()) return std::nullopt;
        std::vector<std::vector<std::int32_t>> pieces;  // kept candidates; the rest pooled
        std::vector<std::int32_t> rest;
        pieces_of(cuts, pieces, rest);
        // Per piece, its further split and the size it was found for: pieces only lose rows,
        // so an unchanged size means unchanged rows and the split is not searched again.
        std::vector<std::pair<std::size_t, std::optional<Split>>> further(pieces.size());
        // Per piece peeled: its largest D, and the work of its last measure, charged again
        // where that measure is read instead of repeated (the budget stops where it did).
        std::vector<std::pair<std::int64_t, std::size_t>> peeled(pieces.size());
        const auto dissolve = [&](std::size_t p) {
            rest.insert(rest.end(), pieces[p].begin(), pieces[p].end());
            pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(p));
            further.erase(further.begin() + static_cast<std::ptrdiff_t>(p));
            peeled.erase(peeled.begin() + static_cast<std::ptrdiff_t>(p));
        };
        for (std::size_t round = 0; round < kMaxRounds && !pieces.empty(); ++round) {
            for (std::size_t p = pieces.size(); p-- > 0;) {
                std::size_t measured = 0;
                if (peel(pieces[p], rest, measured)) peeled[p] = {measured_worst(), measured};
                else dissolve(p);
            }
            if (spent()) return std::nullopt;
            // Each kept piece publishes its own tuple, or (when another class publishes that)
            // is split once more into parts that do, up to kMaxDepth levels down. Peeling
            // measured it last, passing: it is not measured again.
            std::vector<Split> kept;
            std::unordered_set<Key, KeyHash> keys;
            for (std::size_t p = 0; p < pieces.size();) {
                Part part = describe(pieces[p], 0, pieces[p].size(), false);
                part.worst = peeled[p].first;
                work_ += peeled[p].second;
                std::optional<Split> own;
                if (part.size() >= params_.k) {
                    if (!taken(part.key)) {
                        own = Split{pieces[p], {part}, pieces[p].size(), part.loss};
                    } else if (depth < kMaxDepth) {
                        if (further[p].first != pieces[p].size()) {
                            further[p] = {pieces[p].size(), best(pieces[p], part, depth + 1)};
                        }
                        own = further[p].second;
                    }
                }
                const bool apart = own && std::none_of(own->parts.begin(), own->parts.end(),
                                                       [&](const Part& q) { return keys.count(q.key) != 0; });
                if (!apart) {
                    dissolve(p);
                    continue;
                }
                for (const Part& q : own->parts) keys.insert(q.key);
                kept.push_back(std::move(*own));
                ++p;
            }
            if (pieces.empty()) break;
            Split split = joined(kept);
            bool fits = rest.empty();
            bool feedable = false;
            if (!fits) {
                const std::size_t offset = split.rows.size();
                split.rows.insert(split.rows.end(), rest.begin(), rest.end());
                Part remainder = describe(split.rows, offset, split.rows.size());
                const bool owned = ((depth == 0 && remainder.key == whole.key) || !taken(remainder.key)) &&
                                   keys.count(remainder.key) == 0;
                feedable = owned && rest.size() >= params_.k;
                fits = feedable && remainder.violations <= whole.violations;
                if (fits) split.parts.push_back(std::move(remainder));
            }
            if (fits) {
                for (const Part& part : split.parts) split.loss += part.loss;
                return split;
            }
            if (!feedable || !feed(pieces, rest)) {
                std::size_t smallest = 0;
                for (std::size_t p = 1; p < pieces.size(); ++p) {
                    if (pieces[p].size() < pieces[smallest].size()) smallest = p;
                }
                dissolve(smallest);
            }
        }
        return std::nullopt;
    }

    /// Moves rows of `piece` to `rest` until the piece passes. Each round sheds, for the
    /// violating values in decreasing excess D - t, as many rows of the value as its excess
    /// needs once the rows shed before it in the round (its neighbours) are counted; the
    /// first kGentlePeels rounds shed the worst value only (a piece that nearly passes
    /// should lose few rows). False when the piece cannot pass (too small, too few distinct
    /// values, or kMaxPeels rounds). True: the passing piece was measured last (its measure
    /// stays readable), at the cost `measured` of the checks' work.
    bool peel(std::vector<std::int32_t>& piece, std::vector<std::int32_t>& rest, std::size_t& measured) {
        // Rows shed in the last round: over a graph, the piece is measured again from what
        // the last measure held (PartChecker::measure_shed), not from its rows.
        std::vector<std::pair<std::int32_t, std::int64_t>> shed;
        for (std::size_t round = 0; round < kMaxPeels && piece.size() >= params_.k && !spent(); ++round) {
            const std::size_t before = check_.work();
            const std::int64_t bad = round > 0 && check_.graph() != nullptr
                                         ? check_.measure_shed(shed, piece.size())
                                         : check_.measure(piece.data(), piece.data() + piece.size());
            if (bad == 0) {
                measured = check_.work() - before;
                return true;
            }
            if (check_.present().size() < params_.l || !params_.dissimilarity) return false;
            std::vector<std::pair<std::int64_t, std::int32_t>> violating;
            for (std::int32_t u : check_.present()) {
                const std::int64_t e = check_.degree(u) - check_.allowed();
                if (e > 0) violating.emplace_back(-e, u);
            }
            std::sort(violating.begin(), violating.end());
            if (round < kGentlePeels) violating.resize(1);
            shed.clear();
            std::int64_t removed = 0;
            Relief relief_of(check_, violating, kReliefTestsPerRow * piece.size(), shed_rows_);
            for (const auto& [minus, w] : violating) {
                const std::int64_t relief = relief_of.of(w);
                const double left = static_cast<double>(-minus - relief) +
                                    std::ceil((1.0 - params_.delta) * static_cast<double>(removed));
                if (left <= 0.0) continue;
                const auto x = std::min(check_.count(w),
                                        static_cast<std::int64_t>(std::ceil(left / std::max(params_.delta, 1e-9))));
                shed.emplace_back(w, x);
                relief_of.shed(w, x);
                removed += x;
            }
            work_ += relief_of.work();
            // quota_ is all zero between rounds: only the shed values' entries are set (a
            // round on a small piece costs no pass over every value of the table).
            quota_.resize(check_.values(), 0);
            for (const auto& [u, x] : shed) quota_[static_cast<std::size_t>(u)] = x;
            move_rows(piece, rest, [&](std::int32_t row) {
                auto& q = quota_[static_cast<std::size_t>(check_.value_of(row))];
                return q > 0 && q-- > 0;
            });
            for (const auto& [u, x] : shed) quota_[static_cast<std::size_t>(u)] = 0;
        }
        return false;
    }

    /// Moves the rows of `from` that `take` accepts (asked from the last row backwards) to the
    /// end of `to`, keeping the order of the rest. O(|from|).
    template <typename Take>
    static void move_rows(std::vector<std::int32_t>& from, std::vector<std::int32_t>& to, Take take) {
        std::vector<char> moving(from.size(), 0);
        for (std::size_t r = from.size(); r-- > 0;) moving[r] = take(from[r]) ? 1 : 0;
        std::size_t kept = 0;
        for (std::size_t r = 0; r < from.size(); ++r) {
            if (moving[r]) to.push_back(from[r]); else from[kept++] = from[r];
        }
        from.resize(kept);
    }

    /// Moves rows of the kept pieces that are no neighbours of the remainder's worst values
    /// into the remainder (last measured), enough to raise its t(G) to their D, each piece in
    /// proportion to its size and keeping k rows. False when none could move.
    bool feed(std::vector<std::vector<std::int32_t>>& pieces, std::vector<std::int32_t>& rest) {
        if (params_.delta >= 1.0 || !params_.dissimilarity) return false;
        std::vector<std::pair<std::int64_t, std::int32_t>> worst;
        for (std::int32_t u : check_.present()) {
            const std::int64_t e = check_.degree(u) - check_.allowed();
            if (e > 0) worst.emplace_back(-e, u);
        }
        if (worst.empty()) return false;
        std::sort(worst.begin(), worst.end());
        if (worst.size() > kFeedValues) worst.resize(kFeedValues);
        std::int64_t top = 0;
        for (const auto& [e, u] : worst) top = std::max(top, check_.degree(u));
        const double wanted = static_cast<double>(top) / (1.0 - params_.delta) + 1.0 - static_cast<double>(rest.size());
        const auto need = static_cast<std::size_t>(std::max(1.0, std::ceil(wanted)));
        std::size_t total = 0;
        for (const auto& piece : pieces) total += piece.size();
        verdict_.resize(check_.values(), -1);  // all -1 between calls, as quota_ is 0
        std::vector<std::int32_t> decided;
        std::size_t moved = 0;
        for (auto& piece : pieces) {
            std::size_t share = std::min((need * piece.size() + total - 1) / total, piece.size() - params_.k);
            move_rows(piece, rest, [&](std::int32_t row) {
                if (share == 0) return false;
                const std::int32_t w = check_.value_of(row);
                auto& far = verdict_[static_cast<std::size_t>(w)];
                if (far < 0) {
                    far = 1;
                    decided.push_back(w);
                    work_ += worst.size();
                    for (const auto& [e, u] : worst) {
                        if (check_.adjacent(u, w)) { far = 0; break; }
                    }
                }
                if (!far) return false;
                --share;
                ++moved;
                return true;
            });
        }
        for (const std::int32_t w : decided) verdict_[static_cast<std::size_t>(w)] = -1;
        return moved > 0;
    }

    /// The best split of a class over all columns, if any keeps rows.
    std::optional<Split> best(const std::vector<std::int32_t>& rows, const Part& whole, std::size_t depth) {
        std::vector<std::optional<Split>> each = along_each(false, rows, whole, depth);
        std::optional<Split> chosen;
        for (std::size_t j = 0; j < qi_.dimensions() && !spent(); ++j) {
            poll(params_.interrupt);
            std::optional<Split> split = each.empty() ? along(j, rows, whole, depth) : std::move(each[j]);
            if (split && (!chosen || split->kept_rows > chosen->kept_rows ||
                          (split->kept_rows == chosen->kept_rows && split->loss < chosen->loss))) {
                chosen = std::move(split);
            }
        }
        return chosen;
    }

    /// A failing class split along column j into parts that need not pass (best effort):
    /// the pieces of cut_along of at least k rows, each publishing its own tuple, or (where
    /// another class publishes it, or it is riskier than `top`, the class being split, up to
    /// kMaxDepth levels down) split again the same way; the other rows pooled into one
    /// remainder (the smallest pieces join it while it has fewer than k rows) that publishes
    /// a tuple no class publishes, or at depth 0 the class's own. Every part is no riskier
    /// than `top`, and at depth 0 the parts' violating rows together are no more than the
    /// class's. O(d^depth m log m + checks of the parts) for m rows.
    std::optional<Split> failing_along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& top,
                                       std::size_t depth) {
        const std::vector<std::size_t> cuts = cut_along(j, rows);
        if (cuts.empty()) return std::nullopt;
        std::vector<std::vector<std::int32_t>> pieces;
        std::vector<std::int32_t> rest;
        pieces_of(cuts, pieces, rest);
        // Each piece as the parts it publishes (itself, or its own failing split).
        std::vector<Split> kept;
        std::unordered_set<Key, KeyHash> keys;
        for (auto& piece : pieces) {
            Part part = describe(piece, 0, piece.size());
            std::optional<Split> own;
            if (!taken(part.key) && part.no_riskier_than(top)) {
                own = Split{piece, {part}, piece.size(), part.loss, part.violations};
            } else if (depth < kMaxDepth && piece.size() >= 2 * params_.k) {
                own = best_failing(piece, top, depth + 1);
            }
            if (own && std::none_of(own->parts.begin(), own->parts.end(),
                                    [&](const Part& q) { return keys.count(q.key) != 0; })) {
                for (const Part& q : own->parts) keys.insert(q.key);
                kept.push_back(std::move(*own));
            } else {
                rest.insert(rest.end(), piece.begin(), piece.end());
            }
        }
        while (!rest.empty() && rest.size() < params_.k && !kept.empty()) {
            const auto smallest = std::min_element(kept.begin(), kept.end(), [](const Split& a, const Split& b) {
                return a.rows.size() < b.rows.size();
            });
            rest.insert(rest.end(), smallest->rows.begin(), smallest->rows.end());
            for (const Part& q : smallest->parts) keys.erase(q.key);
            kept.erase(smallest);
        }
        if (kept.empty() || (!rest.empty() && rest.size() < params_.k) ||
            (depth == 0 && rest.empty() && kept.size() == 1 && kept[0].parts.size() == 1)) {
            return std::nullopt;
        }
        Split split = joined(kept);
        if (!rest.empty()) {
            const std::size_t offset = split.rows.size();
            split.rows.insert(split.rows.end(), rest.begin(), rest.end());
            Part remainder = describe(split.rows, offset, split.rows.size());
            const bool owned = (depth == 0 && remainder.key == top.key) || !taken(remainder.key);
            if (!owned || keys.count(remainder.key) != 0 || !remainder.no_riskier_than(top)) return std::nullopt;
            split.violations += remainder.violations;
            split.parts.push_back(std::move(remainder));
        }
        if (depth == 0 && split.violations > top.violations) return std::nullopt;
        for (const Part& part : split.parts) split.loss += part.loss;
        return split;
    }

    /// The failing split (see failing_along) of `rows`, `top` or a piece of it, over all
    /// columns with the fewest violating rows (ties: the least loss, then the lower column).
    std::optional<Split> best_failing(const std::vector<std::int32_t>& rows, const Part& top, std::size_t depth) {
        std::vector<std::optional<Split>> each = along_each(true, rows, top, depth);
        std::optional<Split> chosen;
        for (std::size_t j = 0; j < qi_.dimensions() && !spent(); ++j) {
            poll(params_.interrupt);
            std::optional<Split> split = each.empty() ? failing_along(j, rows, top, depth) : std::move(each[j]);
            if (split && (!chosen || split->violations < chosen->violations ||
                          (split->violations == chosen->violations && split->loss < chosen->loss))) {
                chosen = std::move(split);
            }
        }
        return chosen;
    }

    /// The balanced split (balanced_split.hpp) of failing class `rows` (record `top`), kept
    /// where the failing target's invariants hold (kept()).
    std::optional<Split> balanced(const std::vector<std::int32_t>& rows, const Part& top) {
        const std::size_t checks = check_.work() - check_start_;
        const std::size_t cap = budget_ > checks ? budget_ - checks : 0;  // work_ may reach it
        if (spec_ != nullptr) spec_->allowance = std::max(spec_->allowance, kBalancedWorkPerRow * rows.size());
        return kept(rows, top, balanced_parts(rows, qi_, nb_, params_.k, params_.delta, publishable(top), work_, cap));
    }

    /// The covering split (cover_split.hpp) of failing class `rows` (record `top`) into parts
    /// of at most `most` rows (but the one keeping its tuple), kept where the failing target's invariants hold (kept()).
    std::optional<Split> covering(const std::vector<std::int32_t>& rows, const Part& top, std::size_t most) {
        const std::size_t checks = check_.work() - check_start_;
        const std::size_t cap = budget_ > checks ? budget_ - checks : 0;  // work_ may reach it
        if (spec_ != nullptr) spec_->allowance = std::max(spec_->allowance, kCoverWorkPerRow * rows.size());
        const FreeKey free = [&](const Key& key) { return !taken(key); };
        return kept(rows, top, covering_parts(rows, top.key, qi_, keys_, nb_, params_.k, params_.delta, most, free,
                                              publishable(top), work_, cap));
    }

private:
    /// Adds `delta` to the classes publishing `key` (on a speculation: to its own changes).
    void change(const Key& key, std::int64_t delta) {
        if (spec_ == nullptr) {
            published_.add(key, delta);
            return;
        }
        spec_->own[key] += delta;
        spec_->changes.emplace_back(key, delta);
    }

    /// Whether a set of rows of class `top` would publish a tuple of its own (or `top`'s).
    Publishable publishable(const Part& top) {
        return [this, &top](const std::vector<std::int32_t>& set) {
            const Part part = describe(set, 0, set.size(), false);
            return part.key == top.key || !taken(part.key);
        };
    }

    /// The split of failing class `rows` (record `top`) into `parts`, kept where the failing
    /// target's invariants hold by this file's own check: the parts are the class's rows, each
    /// once; every part has at least k rows and is no riskier than `top`; their violating rows
    /// together are no more than its; and their tuples are pairwise distinct and published by
    /// no other class (one part may keep the class's own).
    std::optional<Split> kept(const std::vector<std::int32_t>& rows, const Part& top,
                              const std::vector<std::vector<std::int32_t>>& parts) {
        if (parts.empty()) return std::nullopt;
        // The parts are the class's rows, each once.
        std::unordered_set<std::int32_t> members(rows.begin(), rows.end()), seen;
        std::size_t total = 0;
        for (const auto& part : parts) {
            total += part.size();
            for (const std::int32_t r : part) {
                if (members.count(r) == 0 || !seen.insert(r).second) return std::nullopt;
            }
        }
        if (total != rows.size()) return std::nullopt;
        Split split;
        std::unordered_set<Key, KeyHash> keys;
        for (const auto& rows_of_part : parts) {
            const std::size_t begin = split.rows.size();
            split.rows.insert(split.rows.end(), rows_of_part.begin(), rows_of_part.end());
            Part part = describe(split.rows, begin, split.rows.size());
            const bool owned = part.key == top.key || !taken(part.key);
            if (part.size() < params_.k || !owned || !keys.insert(part.key).second || !part.no_riskier_than(top)) {
                return std::nullopt;
            }
            split.violations += part.violations;
            split.loss += part.loss;
            split.parts.push_back(std::move(part));
        }
        if (split.violations > top.violations) return std::nullopt;
        split.kept_rows = split.rows.size();
        return split;
    }

    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& keys_;
    const Neighbours& nb_;
    PartChecker check_;
    const MondrianParams& params_;
    TupleCounts published_;  ///< tuple -> classes publishing it
    std::unordered_set<Key, KeyHash> balanced_;  ///< tuples of the parts balanced splits made
    Speculation* spec_ = nullptr;  ///< where a speculation reads and records, if one runs
    ColumnHelpers* columns_ = nullptr;  ///< where large classes' columns are searched at once
    std::vector<std::int32_t> scratch_;
    std::vector<std::pair<double, std::int32_t>> by_value_;  ///< scratch of order_by_value()
    std::vector<std::uint64_t> sort_keys_, sort_spare_;      ///< scratch of order_by_value()
    std::vector<std::int8_t> verdict_;  ///< per value: -1 unknown, 1 far from the worst, 0 not
    std::vector<std::int64_t> quota_;   ///< per value: rows still to shed in a peeling round
    std::vector<std::int64_t> shed_rows_;  ///< per value: rows shed so far in a round (Relief)
    std::size_t budget_;                ///< work allowed (checks' and the specializer's own)
    std::size_t work_ = 0;              ///< adjacency tests made here, outside the checks
    std::size_t check_start_ = 0;       ///< the checks' work when the speculation began
};

/// What a pass tells every class it tries.
struct Round {
    SpecializeTarget target;
    std::size_t pass;
    std::size_t n;  ///< rows of the table
};

/// Whether split_class() tries to split class `entry` as a pass begins (but for the work
/// allowed): which classes' rows count in choosing how the pass uses its threads.
bool tries(const Entry& entry, const Round& round, std::size_t k) {
    const auto& [rows, whole, made] = entry;
    if (rows.size() < 2 * k) return false;
    switch (round.target) {
        case SpecializeTarget::Passing: return true;
        case SpecializeTarget::Failing: return whole.violations > 0 || made;
        case SpecializeTarget::Covering:
            return round.pass == 0 && !made && whole.violations > 0 && rows.size() > largest_class_rows(round.n);
    }
    return false;
}

/// Class `entry` of a pass tried, and the parts its splits make tried in turn, depth first
/// (a split's parts in order): the classes left appended to `done`, the splits counted.
void split_class(Specializer& specializer, Entry entry, const Round& round, std::vector<Entry>& done,
                 std::int64_t& splits) {
    const MondrianParams& params = specializer.params();
    const SpecializeTarget target = round.target;
    const std::size_t n = round.n;
    std::vector<Entry> stack;
    stack.push_back(std::move(entry));
    while (!stack.empty()) {
        auto [rows, whole, made] = std::move(stack.back());
        const bool from_balanced = specializer.balanced_tuple(whole.key) && made;
        bool balanced = false;
        stack.pop_back();
        poll(params.interrupt);
        std::optional<Split> split;
        if (rows.size() >= 2 * params.k && !specializer.spent()) {
            if (target == SpecializeTarget::Failing && whole.violations > 0) {
                split = specializer.best_failing(rows, whole, 0);
                // The balanced split is tried in the first pass, and on its own parts
                // only while they hold more than 2% of the table's rows (issue 11's
                // bound; they are no riskier than their class already).
                if (!split && round.pass == 0 && (!from_balanced || rows.size() > largest_class_rows(n)) && !specializer.spent()) {
                    split = specializer.balanced(rows, whole);
                    balanced = split.has_value();
                }
            } else if (target == SpecializeTarget::Covering) {
                // A class of the table, failing, above 2% of its rows (issue 11's
                // bound): the covering split, into parts of at most 2% (but the
                // one keeping the class's tuple).
                if (round.pass == 0 && !made && whole.violations > 0 && rows.size() > largest_class_rows(n)) {
                    split = specializer.covering(rows, whole, largest_class_rows(n));
                }
            } else if (target == SpecializeTarget::Passing || made) {
                split = specializer.best(rows, whole, 0);
            }
        }
        if (!split) {
            done.emplace_back(std::move(rows), std::move(whole), made);
            continue;
        }
        ++splits;
        specializer.replace(whole.key, split->parts);
        if (balanced) {
            for (const Part& part : split->parts) specializer.add_balanced(part.key);
        }
        for (auto it = split->parts.rbegin(); it != split->parts.rend(); ++it) {
            std::vector<std::int32_t> part_rows(split->rows.begin() + static_cast<std::ptrdiff_t>(it->begin),
                                                split->rows.begin() + static_cast<std::ptrdiff_t>(it->end));
            Part part = *it;
            part.begin = 0;
            part.end = part_rows.size();
            stack.emplace_back(std::move(part_rows), std::move(part), true);
        }
    }
}

/// A specializer for one thread's speculations: its own checks, scratch and polls, which
/// throw once `stopping`; the calling thread's (`caller` given) polls the caller's interrupt
/// too, which no other thread may.
struct Speculator {
    Speculator(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
               const Neighbours& neighbours, const MondrianParams& checks, std::size_t budget,
               const std::atomic<bool>& stopping, Interrupt* caller)
        : interrupt([caller] { poll(caller); return false; },
                    [&stopping] { return stopping.load(std::memory_order_relaxed); }),
          params(polled_by(checks, &interrupt)), specializer(qi, node_keys, neighbours, params, budget) {}

    static MondrianParams polled_by(MondrianParams checks, Interrupt* polled) {
        checks.interrupt = polled;
        return checks;
    }

    Interrupt interrupt;
    MondrianParams params;
    Specializer specializer;
};

/// Per column, a speculator that searches a large class's splits along it (along_each()),
/// on `threads` threads (parallel_for; its polls throw once `stopping`, set by a search that
/// threw).
struct ColumnHelpers {
    ColumnHelpers(const LossModel& qi_, const std::vector<std::vector<std::int32_t>>& node_keys_,
                  const Neighbours& neighbours_, const MondrianParams& params_, std::size_t budget_,
                  std::size_t threads_)
        : qi(qi_), node_keys(node_keys_), neighbours(neighbours_), params(params_), budget(budget_),
          threads(threads_), each(qi_.dimensions()) {}

    const LossModel& qi;
    const std::vector<std::vector<std::int32_t>>& node_keys;
    const Neighbours& neighbours;
    const MondrianParams& params;
    std::size_t budget, threads;
    std::atomic<bool> stopping{false};
    std::vector<std::unique_ptr<Speculator>> each;  ///< made on first use
};

std::vector<std::optional<Split>> Specializer::along_each(bool failing, const std::vector<std::int32_t>& rows,
                                                          const Part& whole, std::size_t depth) {
    const std::size_t d = qi_.dimensions();
    if (columns_ == nullptr || spec_ != nullptr || depth != 0 || rows.size() < kColumnRows || d < 2 || spent()) return {};
    ColumnHelpers& helpers = *columns_;
    std::vector<std::optional<Split>> splits(d);
    std::vector<Speculation> records(d);
    std::vector<char> threw(d, 0);
    const std::size_t start = work();
    helpers.stopping = false;
    parallel_for(d, std::min(helpers.threads, d), nullptr, [&](std::size_t j) {
        try {
            if (!helpers.each[j]) {
                helpers.each[j] = std::make_unique<Speculator>(helpers.qi, helpers.node_keys, helpers.neighbours,
                                                               helpers.params, helpers.budget, helpers.stopping, nullptr);
            }
            Specializer& own = helpers.each[j]->specializer;
            records[j].recorded = false;
            records[j].published = &published_;
            records[j].balanced = &balanced_;
            own.speculate(&records[j], start);
            splits[j] = failing ? own.failing_along(j, rows, whole, 0) : own.along(j, rows, whole, 0);
            records[j].work = own.work() - start;
            own.speculate(nullptr, 0);
        } catch (...) {
            threw[j] = 1;
            helpers.stopping = true;
            helpers.each[j].reset();  // its scratch may be left mid-use
        }
    });
    std::size_t total = 0;
    for (std::size_t j = 0; j < d; ++j) {
        if (threw[j] || records[j].work >= budget_ - start - total) return {};  // start < budget_: not spent()
        total += records[j].work;
    }
    work_ += total;
    return splits;
}

}  // namespace

std::size_t checked_classes(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params, SpecializeTarget target) {
    const std::size_t n = classes.size();
    if (neighbours.table().row_value.size() != n) throw std::invalid_argument("classes and sensitive values differ in rows");
    if (node_keys.size() != qi.dimensions()) throw std::invalid_argument("node_keys needs one entry per quasi-identifier");
    // A part's largest D is exact only where it exceeds t(G) (PartChecker): where a class fails
    // by k and (epsilon, delta) alone, that bounds its risk; a class failing by l would not.
    if (target != SpecializeTarget::Passing && (!params.dissimilarity || params.l > 1)) {
        throw std::invalid_argument("the failing target compares (epsilon, delta) risks: it needs epsilon and no l");
    }
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if ((qi.taxonomy(i) != nullptr) == node_keys[i].empty()) {
            throw std::invalid_argument("node_keys must name the nodes of exactly the taxonomy columns");
        }
    }
    std::vector<std::uint8_t> used;
    for (const std::int32_t c : classes) {
        if (c < 0) throw std::invalid_argument("class ids must be >= 0");
        if (static_cast<std::size_t>(c) >= used.size()) used.resize(static_cast<std::size_t>(c) + 1, 0);
        used[static_cast<std::size_t>(c)] = 1;
    }
    if (std::find(used.begin(), used.end(), 0) != used.end()) {
        throw std::invalid_argument("class ids must be 0 .. classes-1, every one used");
    }
    return used.size();
}

SpecializeResult specialize(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params, SpecializeTarget target, std::size_t work_per_row,
                            std::size_t threads) {
    const std::size_t n = classes.size();
    const std::size_t count = checked_classes(qi, node_keys, neighbours, classes, params, target);
    std::vector<std::vector<std::int32_t>> members(count);
    for (std::size_t r = 0; r < n; ++r) members[static_cast<std::size_t>(classes[r])].push_back(static_cast<std::int32_t>(r));
    const std::size_t counted = std::max<std::size_t>(n, 1 << 12);
    const std::size_t budget = work_per_row > std::numeric_limits<std::size_t>::max() / counted
                                   ? std::numeric_limits<std::size_t>::max() : work_per_row * counted;
    Specializer specializer(qi, node_keys, neighbours, params, budget);
    std::vector<Part> wholes;
    for (const auto& rows : members) {
        // Covering reads the violations of the classes above 2% of the rows only.
        const bool checked = target == SpecializeTarget::Covering ? rows.size() > largest_class_rows(n) : rows.size() >= 2 * params.k;
        wholes.push_back(specializer.describe(rows, 0, rows.size(), checked));
        specializer.publish(wholes.back().key);
    }

    // A split frees its class's tuple for classes tried later, so passes repeat while any
    // class splits (at most kPasses).
    SpecializeResult result;
    std::vector<Entry> open, done;
    for (std::size_t c = 0; c < members.size(); ++c) open.emplace_back(std::move(members[c]), std::move(wholes[c]), false);
    // Per thread beyond the caller's: a specializer of its own for speculations, stopped
    // (its polls throw) once the pass's in_order() returns.
    std::atomic<bool> stopping{false};
    std::vector<std::unique_ptr<Speculator>> speculators;
    ColumnHelpers helpers(qi, node_keys, neighbours, params, budget, thread_count(threads));
    for (std::size_t pass = 0; pass < kPasses && !open.empty(); ++pass) {
        const std::int64_t before = result.splits;
        const Round round{target, pass, n};
        const std::size_t workers = std::min(thread_count(threads), open.size());
        // Where one class holds half the rows of the classes tried or more, its columns are
        // searched at once and the classes run one after another; else they are speculated on.
        std::size_t largest = 0, tried = 0;
        for (const Entry& entry : open) {
            if (!tries(entry, round, params.k)) continue;
            tried += std::get<0>(entry).size();
            largest = std::max(largest, std::get<0>(entry).size());
        }
        if (workers <= 1 || 2 * largest >= tried) {
            specializer.search_columns_on(helpers.threads > 1 ? &helpers : nullptr);
            for (auto& entry : open) split_class(specializer, std::move(entry), round, done, result.splits);
            specializer.search_columns_on(nullptr);
        } else {
            // Speculate in parallel on the pass's snapshot, commit in the classes' order, and
            // run again on what is committed a class whose speculation no longer holds.
            const TupleCounts snapshot = specializer.published();
            const std::unordered_set<Key, KeyHash> balanced = specializer.balanced_tuples();
            const std::size_t work = specializer.work();
            if (speculators.size() < workers) speculators.resize(workers);  // made on first use
            std::vector<Speculation> records(open.size());
            stopping = false;
            in_order(
                open.size(), workers, params.interrupt, stopping,
                [&](std::size_t slot, std::size_t i) {
                    Speculation& record = records[i];
                    record.published = &snapshot;
                    record.balanced = &balanced;
                    if (!speculators[slot]) {
                        speculators[slot] = std::make_unique<Speculator>(qi, node_keys, neighbours, params, budget,
                                                                         stopping, slot == 0 ? params.interrupt : nullptr);
                    }
                    Specializer& own = speculators[slot]->specializer;
                    own.speculate(&record, work);
                    try {
                        split_class(own, Entry(open[i]), round, record.done, record.splits);
                    } catch (...) {
                        speculators[slot].reset();  // its scratch may be left mid-use: a new one next time
                        throw;
                    }
                    record.work = own.work() - work;
                    own.speculate(nullptr, 0);
                },
                [&](std::size_t i) {
                    Speculation& record = records[i];
                    if (!specializer.holds(record)) return false;
                    specializer.commit(record);
                    result.splits += record.splits;
                    for (Entry& entry : record.done) done.push_back(std::move(entry));
                    record = Speculation{};
                    return true;
                },
                [&](std::size_t i) {
                    records[i] = Speculation{};
                    split_class(specializer, std::move(open[i]), round, done, result.splits);
                });
        }
        open = std::move(done);
        done.clear();
        if (result.splits == before) break;
    }
    result.stopped = specializer.spent();
    result.classes.assign(n, -1);
    for (std::size_t c = 0; c < open.size(); ++c) {
        for (std::int32_t r : std::get<0>(open[c])) result.classes[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(c);
    }
    return result;
}

}  // namespace proxanon
