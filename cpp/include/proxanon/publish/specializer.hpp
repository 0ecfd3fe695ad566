// The search of one class's splits behind specialize() (specialize.hpp, which explains the
// algorithm, its invariant and its cost): Specializer holds the scratch of the searches and
// its checks, and a ledger (specializer_ledger.hpp) of the published tuples and the work done;
// split_class() tries one class of a pass with every split of its parts. The searches of a
// passing class are in specializer.cpp, those of a failing one in specializer_failing.cpp. A
// Specializer may run as a speculation (specialize_parallel.hpp): its ledger then reads the
// tuples of a snapshot and records what it read and changed, for its run to be committed
// later where it still holds.
// Invariant: a Specializer's answers depend only on its ledger's tuples and work and its
// arguments (never on what it searched before: its scratch is left as it was found).
// Cost: as specialize.hpp says; a speculation adds a hash lookup or two per tuple read or
// changed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "proxanon/publish/balanced_split.hpp"
#include "proxanon/publish/cover_split.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/mondrian/part_check.hpp"
#include "proxanon/publish/published_key.hpp"
#include "proxanon/publish/specialize.hpp"
#include "proxanon/publish/specializer_ledger.hpp"

namespace proxanon::specializing {

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

/// One way of splitting a class: `rows` holds the kept parts, then the remainder.
struct Split {
    std::vector<std::int32_t> rows;
    std::vector<Part> parts;
    std::size_t kept_rows = 0;
    double loss = 0.0;
    std::int64_t violations = 0;  ///< of all parts (read by the failing split only)
};

class SpeculatorPool;

/// Rows from which a class's columns are searched on several threads (along_each(); below,
/// a thread's start costs more than the search saves; on Adult 256 to 2048 did about alike).
constexpr std::size_t kColumnRows = 1024;

class Specializer {
public:
    Specializer(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                const Neighbours& neighbours, const MondrianParams& params, std::size_t budget)
        : qi_(qi), keys_(node_keys), nb_(neighbours), check_(neighbours, params), params_(params),
          ledger_(2 * qi.dimensions(), budget) {}

    const MondrianParams& params() const { return params_; }

    /// Searches the columns of a large class's splits on `pool`'s threads, a speculator per
    /// column, from here on (nullptr: one after another).
    void search_columns_on(SpeculatorPool* pool) { columns_ = pool; }

    /// The splits of class `rows` (record `whole`) along each column at depth 0 (failing_along
    /// with `failing`, else along), searched at once on the threads of search_columns_on()'s
    /// pool, each by a specializer of its own that reads this one's tuples (no search writes
    /// any) from the work done now; their work is then charged here (specialize_parallel.cpp).
    /// Empty where they are not used (no pool, a speculation, depth > 0, fewer than
    /// kColumnRows rows), or where a search threw or the work allowed could have stopped one
    /// (their work on top of the work done stays below the budget, else the caller searches
    /// the columns one after another).
    std::vector<std::optional<Split>> along_each(bool failing, const std::vector<std::int32_t>& rows,
                                                 const Part& whole, std::size_t depth);

    /// The tuples, the balanced tuples and the work counted (specializer_ledger.hpp).
    SpecializerLedger& ledger() { return ledger_; }
    const SpecializerLedger& ledger() const { return ledger_; }

    /// Work done: the specializer's own and its checks' (since a speculation began).
    std::size_t work() const { return ledger_.work(check_.work()); }

    /// Whether the work allowed is spent, asked between rounds of a split's search: no split
    /// is then searched any further (the splits made stand; the split being searched is
    /// dropped, or kept if its last round completed it).
    bool spent() const { return work() > ledger_.budget(); }

    /// From here on, runs on `record`'s snapshot as though `work` had been done, recording
    /// into it (nullptr: on its own tuples again). The checks' work so far is not counted.
    void speculate(Speculation* record, std::size_t work) { ledger_.speculate(record, work, check_.work()); }

    /// Whether `record`'s run would run alike from here (SpecializerLedger::holds()).
    bool holds(const Speculation& record) const { return ledger_.holds(record, work()); }

    /// The part rows[begin, end): its tuple, loss and, with `checked`, its violating rows
    /// (a class too small to split is never checked: its count stays 0, unread).
    Part describe(const std::vector<std::int32_t>& rows, std::size_t begin, std::size_t end, bool checked = true);

    /// The largest D of a row in the set last measured (exact where it exceeds t(G)).
    std::int64_t measured_worst() const {
        std::int64_t worst = 0;
        for (const std::int32_t u : check_.present()) worst = std::max(worst, check_.degree(u));
        return worst;
    }

    /// `rows` ordered by (value in column j, row) into scratch_. Codes that are integers in a
    /// range below 2^31 (taxonomy leaves, ages, any integer column) are packed above the row
    /// (in as many bits as the largest row needs) into one 64-bit key and radix sorted, O(m)
    /// per 11 bits of key; other values are sorted as (value, row) pairs, O(m log m).
    void order_by_value(const std::vector<std::int32_t>& rows, std::size_t j);

    /// `rows` ordered by column j into scratch_, and the bounds of its pieces there: a
    /// taxonomy column by the child of the rows' common node that holds each row's leaf, a
    /// numeric one at its median value (between distinct values). 0, the piece ends, m; empty
    /// when every row has one value. O(m log m) at most (order_by_value).
    std::vector<std::size_t> cut_along(std::size_t j, const std::vector<std::int32_t>& rows);

    /// The rows cut_along ordered into scratch_, between `cuts`: pieces of at least k rows
    /// into `pieces`, the others pooled into `rest`. O(m).
    void pieces_of(const std::vector<std::size_t>& cuts, std::vector<std::vector<std::int32_t>>& pieces,
                   std::vector<std::int32_t>& rest) const;

    /// The kept pieces' own splits as one: their rows in order, their parts (bounds shifted),
    /// kept rows and violating rows summed. The splits' parts are moved out.
    static Split joined(std::vector<Split>& kept);

    /// The split of class `whole` (rows, its part record) along column j, if any part is kept.
    /// At `depth` > 0 the class's own tuple is published by another class: no part may keep it.
    std::optional<Split> along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& whole,
                               std::size_t depth);

    /// Moves rows of `piece` to `rest` until the piece passes. Each round sheds, for the
    /// violating values in decreasing excess D - t, as many rows of the value as its excess
    /// needs once the rows shed before it in the round (its neighbours) are counted; the
    /// first kGentlePeels rounds shed the worst value only (a piece that nearly passes
    /// should lose few rows). False when the piece cannot pass (too small, too few distinct
    /// values, or kMaxPeels rounds). True: the passing piece was measured last (its measure
    /// stays readable), at the cost `measured` of the checks' work.
    bool peel(std::vector<std::int32_t>& piece, std::vector<std::int32_t>& rest, std::size_t& measured);

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
    bool feed(std::vector<std::vector<std::int32_t>>& pieces, std::vector<std::int32_t>& rest);

    /// The best split of a class over all columns, if any keeps rows.
    std::optional<Split> best(const std::vector<std::int32_t>& rows, const Part& whole, std::size_t depth);

    /// A failing class split along column j into parts that need not pass (best effort):
    /// the pieces of cut_along of at least k rows, each publishing its own tuple, or (where
    /// another class publishes it, or it is riskier than `top`, the class being split, up to
    /// kMaxDepth levels down) split again the same way; the other rows pooled into one
    /// remainder (the smallest pieces join it while it has fewer than k rows) that publishes
    /// a tuple no class publishes, or at depth 0 the class's own. Every part is no riskier
    /// than `top`, and at depth 0 the parts' violating rows together are no more than the
    /// class's. O(d^depth m log m + checks of the parts) for m rows.
    std::optional<Split> failing_along(std::size_t j, const std::vector<std::int32_t>& rows, const Part& top,
                                       std::size_t depth);

    /// The failing split (see failing_along) of `rows`, `top` or a piece of it, over all
    /// columns with the fewest violating rows (ties: the least loss, then the lower column).
    std::optional<Split> best_failing(const std::vector<std::int32_t>& rows, const Part& top, std::size_t depth);

    /// The balanced split (balanced_split.hpp) of failing class `rows` (record `top`), kept
    /// where the failing target's invariants hold (kept()).
    std::optional<Split> balanced(const std::vector<std::int32_t>& rows, const Part& top);

    /// The covering split (cover_split.hpp) of failing class `rows` (record `top`) into parts
    /// of at most `most` rows (but the one keeping its tuple), kept where the failing target's invariants hold (kept()).
    std::optional<Split> covering(const std::vector<std::int32_t>& rows, const Part& top, std::size_t most);

private:
    /// Whether a set of rows of class `top` would publish a tuple of its own (or `top`'s).
    Publishable publishable(const Part& top);

    /// The split of failing class `rows` (record `top`) into `parts`, kept where the failing
    /// target's invariants hold by this file's own check: the parts are the class's rows, each
    /// once; every part has at least k rows and is no riskier than `top`; their violating rows
    /// together are no more than its; and their tuples are pairwise distinct and published by
    /// no other class (one part may keep the class's own).
    std::optional<Split> kept(const std::vector<std::int32_t>& rows, const Part& top,
                              const std::vector<std::vector<std::int32_t>>& parts);

    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& keys_;
    const Neighbours& nb_;
    PartChecker check_;
    const MondrianParams& params_;
    SpecializerLedger ledger_;
    SpeculatorPool* columns_ = nullptr;  ///< where large classes' columns are searched at once
    std::vector<std::int32_t> scratch_;
    std::vector<std::pair<double, std::int32_t>> by_value_;  ///< scratch of order_by_value()
    std::vector<std::uint64_t> sort_keys_, sort_spare_;      ///< scratch of order_by_value()
    std::vector<std::int8_t> verdict_;  ///< per value: -1 unknown, 1 far from the worst, 0 not
    std::vector<std::int64_t> quota_;   ///< per value: rows still to shed in a peeling round
    std::vector<std::int64_t> shed_rows_;  ///< per value: rows shed so far in a round (Relief)
};

/// What a pass tells every class it tries.
struct Round {
    SpecializeTarget target;
    std::size_t pass;
    std::size_t n;  ///< rows of the table
};

/// Whether split_class() tries to split class `entry` as a pass begins (but for the work
/// allowed): which classes' rows count in choosing how the pass uses its threads.
bool tries(const Entry& entry, const Round& round, std::size_t k);

/// Class `entry` of a pass tried, and the parts its splits make tried in turn, depth first
/// (a split's parts in order): the classes left appended to `done`, the splits counted.
void split_class(Specializer& specializer, Entry entry, const Round& round, std::vector<Entry>& done,
                 std::int64_t& splits);

}  // namespace proxanon::specializing
