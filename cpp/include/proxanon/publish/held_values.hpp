// The values a class holds with their neighbour counts, kept exact as rows join and leave
// (HeldValues), the checks of a class as it stands (passes_checks) and of a passing class
// taking one row (passes_with), and those of a failing class giving or taking one row
// (FailingChecks): the parts of absorb.hpp and vacate.hpp that count, apart from their
// search for covering classes (cover_index.hpp).
//
// Invariant: a HeldValues holds, per distinct value, its rows and the rows of the class in
// its closed epsilon-neighbourhood, and the values per closed count; FailingChecks' answers
// are those of counting every value held after the move (the tests compare them against
// pairwise counts).
// Cost: as stated per member; FailingChecks never makes more adjacency tests than its budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// The distinct sensitive values a class holds, with per value its rows and the rows in its
/// closed epsilon-neighbourhood (D of a row of value u is closed - 1), and the largest D,
/// kept exact as rows join and leave. A change reads, over a graph where `slot` is given and
/// v has fewer neighbours than the class holds values, v's adjacency list: O(degree(v));
/// else it tests v against every value held: O(p). The largest D follows from the values
/// held per closed count: a change moves each count by one, so the largest is found again
/// by a short walk down. Memory O(p + the largest closed count).
class HeldValues {
public:
    /// From the rows' values, ascending, counted in each value's neighbourhood by `counter`
    /// (cleared first).
    void build(const std::vector<std::int32_t>& sorted, NeighbourCount& counter);
    /// One row of value v joins (sign +1) or leaves (-1). `slot`, if given: per value of the
    /// table its place in values() (-1 where not held), read and kept so.
    void change(const Neighbours& nb, std::int32_t v, int sign, std::vector<std::int64_t>* slot);
    /// Calls f(i) for each value i held that is v or adjacent to it: over a graph, where
    /// `slot` (as in change()) is given and v has fewer neighbours than values are held, by
    /// v's adjacency list, O(degree(v)); else by testing each value held, O(p).
    template <typename F>
    void for_each_near(const Neighbours& nb, std::int32_t v, const std::vector<std::int64_t>* slot, F f) const {
        const NeighbourGraph* graph = slot != nullptr ? nb.graph() : nullptr;
        const auto vi = static_cast<std::size_t>(v);
        if (graph != nullptr && graph->degree(vi) < values_.size()) {
            const std::vector<std::int64_t>& place = *slot;
            if (place[vi] >= 0) f(static_cast<std::size_t>(place[vi]));
            for (const std::int32_t* q = graph->begin(vi); q != graph->end(vi); ++q) {
                const std::int64_t i = place[static_cast<std::size_t>(*q)];
                if (i >= 0) f(static_cast<std::size_t>(i));
            }
            return;
        }
        const AdjacentTo near_v(nb, v);
        for (std::size_t i = 0; i < values_.size(); ++i) {
            if (near_v(values_[i])) f(i);
        }
    }

    const std::vector<std::int32_t>& values() const { return values_; }
    std::int64_t count(std::size_t i) const { return count_[i]; }
    std::int64_t closed(std::size_t i) const { return closed_[i]; }
    /// The largest D of a row held (0 when none).
    std::int64_t worst() const { return worst_; }
    /// The largest closed count held (0 when none), and how many values hold a closed count.
    std::int64_t top() const { return top_; }
    std::int64_t values_at(std::int64_t closed) const {
        const auto i = static_cast<std::size_t>(closed);
        return i < at_closed_.size() ? at_closed_[i] : 0;
    }

private:
    void hold(std::int64_t closed, int sign);
    void settle();

    std::vector<std::int32_t> values_;
    std::vector<std::int64_t> count_, closed_;
    std::vector<std::int64_t> at_closed_;  ///< values held per closed count
    std::int64_t top_ = 0;                 ///< the largest closed count held
    std::int64_t worst_ = 0;
};

/// `held` built (HeldValues::build) for class `rows`. O(m log m + the counts).
void count_rows(HeldValues& held, const std::vector<std::int32_t>& rows, const Neighbours& nb,
                NeighbourCount& counter);

/// Whether a class of `size` rows holding `held` passes the checks of `params`: at least k
/// rows, l distinct values, and no D above t(G) where dissimilarity is asked. O(1).
bool passes_checks(const HeldValues& held, std::size_t size, const MondrianParams& params);

/// Whether a class that passes the dissimilarity check (`held`, `size` rows) still passes it
/// with one more row of value v: that row's D and the D of each value near v, one more,
/// within t(size + 1) (docs/design/privacy-model.md). O(p) adjacency tests.
bool passes_with(const HeldValues& held, std::size_t size, std::int32_t v, const Neighbours& nb, double delta);

/// A class's risk as the largest D over size - 1, compared in integers.
struct Risk {
    std::int64_t worst = 0, pairs = 1;
    /// Whether worst / pairs <= this risk.
    bool admits(std::int64_t other_worst, std::int64_t other_pairs) const {
        return other_worst * pairs <= worst * other_pairs;
    }
};

/// Whether a failing class may give or take one row without becoming riskier than `bound`
/// (its risk when absorption first measured it) and without more violating rows (D over
/// t(G) of docs/design/privacy-model.md, allowed_neighbours()), within a budget: each check
/// charges p (the values held; its counts made again, or a rescan, p more), whatever the
/// structure, and once a check finds the budget short, every later answer is no.
class FailingChecks {
public:
    FailingChecks(const Neighbours& neighbours, double delta, std::size_t l)
        : nb_(neighbours), delta_(delta), l_(l) {}

    /// The adjacency tests the checks may still make.
    void budget(std::size_t tests) { left_ = tests; }
    /// A new giving class: its counts are made again at its first check.
    void new_giver() { giver_at_ = 0; }

    /// Whether the giving class (`held`, `size` rows; `slot`: per value of the table its place
    /// in held.values(), -1 where not held) spares a row of value v: at least l values
    /// stay, the class is within `bound` after, and the rows that stay hold no more
    /// violations than they held (t(G) may fall as the class shrinks). Records whether the
    /// row violates there (offered_violating). O(min(degree(v), p)), plus O(p) after each
    /// change of the giver's size and where v's value alone holds the largest D and leaves.
    bool spares(const HeldValues& held, std::size_t size, const Risk& bound, std::int32_t v,
                const std::vector<std::int64_t>& slot);
    /// Whether a failing class (`held`, `size` rows) takes a row of value v offered by the
    /// last spares(): it stays within `bound`, and holds no more violating rows than it
    /// held plus that row if it violated where it was. O(p) adjacency tests.
    bool takes(const HeldValues& held, std::size_t size, const Risk& bound, std::int32_t v);
    /// Whether the row the last spares() was asked about violates in the giving class.
    bool offered_violating() const { return offered_violating_; }

private:
    /// Takes `tests` from the budget; where fewer are left, false, and the budget is spent.
    bool spend(std::size_t tests);

    const Neighbours& nb_;
    double delta_;
    std::size_t l_;
    std::size_t left_ = 0;
    bool offered_violating_ = false;
    /// The giver's size when its rows over t(size) (violating_) and over t(size - 1)
    /// (over_after_) were last counted (0: not yet).
    std::size_t giver_at_ = 0;
    std::int64_t violating_ = 0, over_after_ = 0;
};

}  // namespace proxanon
