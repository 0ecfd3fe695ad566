// The bookkeeping of specialize() (specialize.hpp), apart from its searches of splits
// (specializer.hpp): which tuples the classes publish, which a balanced split made, the work
// done against the budget, and, while a Specializer runs as a speculation
// (specialize_parallel.hpp), what the run read and changed on a snapshot of the tuples, and
// whether and how it is committed.
// Invariant: on its own tuples, a ledger's counts are those of every publish() and replace()
// made; on a speculation, its own tuples stay as they were and the run's reads and changes
// are recorded in order, so that commit() after holds() leaves the ledger as running the
// class here would have.
// Cost: O(1) expected per tuple read or changed (a hash lookup or two on a speculation);
// holds() and commit() O(tuples the run read or changed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "proxanon/publish/published_key.hpp"
#include "proxanon/publish/tuple_counts.hpp"

namespace proxanon::specializing {

/// A set of rows rows[begin, end) of some array, with what a split needs to know of it.
struct Part {
    std::size_t begin = 0, end = 0;
    std::int64_t violations = 0;
    std::int64_t worst = 0;  ///< the largest D of a row, exact where it exceeds t(G) (if checked)
    Key key;
    double loss = 0.0;  ///< rows times loss(part): Wang and Liu's per-group loss (§V-B)
    std::size_t size() const { return end - begin; }
    /// Whether its risk (docs/design/privacy-model.md: largest D over size - 1, 1 for one
    /// row) is at most `other`'s; exact where either fails (a passing part's risk is within 1 -
    /// delta, below a failing one's).
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

/// The published tuples, the balanced ones and the work of one Specializer. The work counted
/// is the ledger's own (charge()) plus its owner's checks' since a speculation began: the
/// owner passes its checks' work where it is read.
class SpecializerLedger {
public:
    SpecializerLedger(std::size_t key_width, std::size_t budget) : published_(key_width), budget_(budget) {}

    std::size_t budget() const { return budget_; }

    /// Work done, given the owner's checks' work now.
    std::size_t work(std::size_t checks) const { return work_ + checks - check_start_; }
    /// The checks' share of it.
    std::size_t checks_work(std::size_t checks) const { return checks - check_start_; }
    /// Adds `tests` adjacency tests made outside the checks.
    void charge(std::size_t tests) { work_ += tests; }
    /// The counter charge() adds to, for the splits that count their own work into it
    /// (balanced_parts, covering_parts).
    std::size_t& counter() { return work_; }

    /// From here on, runs on `record`'s snapshot as though `work` had been done, recording
    /// into it (nullptr: on its own tuples again); `checks`, the owner's checks' work now, is
    /// not counted.
    void speculate(Speculation* record, std::size_t work, std::size_t checks) {
        spec_ = record;
        work_ = work;
        check_start_ = checks;
    }
    bool speculating() const { return spec_ != nullptr; }

    /// On a speculation, notes a split's work allowance (holds() asks it to fit the budget).
    void allow(std::size_t allowance) {
        if (spec_ != nullptr) spec_->allowance = std::max(spec_->allowance, allowance);
    }

    /// Whether `record`'s run (on a snapshot of these tuples, from the work done then) would
    /// run alike from here, `now` the work done now: every tuple it asked about has the count
    /// it saw, no tuple it asked whether balanced became so, and the work allowed could not
    /// stop it (its work and its largest split allowance on top of `now` stay below the
    /// budget: no spent() nor any cap of balanced_parts and covering_parts then differs).
    bool holds(const Speculation& record, std::size_t now) const {
        for (const auto& [key, count] : record.seen) {
            if (published_.get(key) != count) return false;
        }
        for (const Key& key : record.balanced_unseen) {
            if (balanced_.count(key) != 0) return false;
        }
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

    TupleCounts published_;  ///< tuple -> classes publishing it
    std::unordered_set<Key, KeyHash> balanced_;  ///< tuples of the parts balanced splits made
    Speculation* spec_ = nullptr;  ///< where a speculation reads and records, if one runs
    std::size_t budget_;           ///< work allowed (checks' and the specializer's own)
    std::size_t work_ = 0;         ///< adjacency tests made outside the checks
    std::size_t check_start_ = 0;  ///< the checks' work when the speculation began
};

}  // namespace proxanon::specializing
