// The privacy criteria besides (epsilon, delta)^k (docs/guide/criteria.md) as a check of a
// set of rows, for Mondrian's cut and specialization's splits: l-diversity (distinct,
// entropy, recursive), t-closeness, basic beta-likeness and delta-disclosure, each on one
// coded column. The definitions are those of proxanon._results.privacy (pycanon's); where
// floating point could decide (entropy, t, beta, delta), the check is stricter by a relative
// 1e-9, so that a set it passes also passes the Python measure that audits the result.
// Cost: O(set size + values present) per column, O(m) more for t-closeness of an ordered
// column of m values; memory O(m) per column once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace proxanon {

/// One criterion on one column (an index into CriteriaData::columns).
struct CriterionSpec {
    enum Kind : int { Distinct = 0, Entropy = 1, Recursive = 2, TCloseness = 3, Beta = 4, Delta = 5 };
    int kind = Distinct;
    double value = 0.0;  ///< l, t, beta or delta
    double c = 0.0;      ///< c of recursive (c, l)
    std::size_t column = 0;
};

/// A column the criteria read: each row's code 0..m-1 (in the column's sorted order, as
/// pycanon sorts it) and whether its values are numbers (ordered distance for t).
struct CriteriaColumn {
    std::vector<std::int32_t> codes;
    std::int32_t m = 0;
    bool numeric = false;
};

/// The columns and the criteria on them; the table's distribution of each column is that
/// of all the rows given.
struct CriteriaData {
    std::vector<CriteriaColumn> columns;
    std::vector<CriterionSpec> specs;
    bool empty() const { return specs.empty(); }
};

/// Whether a set of rows satisfies every criterion of a CriteriaData. Not thread-safe (its
/// counts are scratch): one per checker.
class CriteriaCheck {
public:
    explicit CriteriaCheck(const CriteriaData& data);
    bool holds(const std::int32_t* begin, const std::int32_t* end);
    /// The same for a set given as distinct rows each standing for `counts[j]` rows with its
    /// codes (identical rows carried once, hierarchy_cut.hpp): O(rows given + values present).
    bool holds(const std::int32_t* rows, const std::int64_t* counts, std::size_t m);
    /// A set built row by row: start() empties it, add() puts `count` rows with the codes of
    /// `row` in, holds_running() is holds() of what was added, in O(values present) per
    /// call rather than O(rows) (a remainder's top-up checks after every piece).
    void start();
    void add(std::int32_t row, std::int64_t count);
    bool holds_running() const;

private:
    bool column_holds(std::size_t j, std::size_t size, const std::vector<std::int64_t>& count,
                      const std::vector<std::int32_t>& present) const;
    /// Counts column j's values over the rows given (each `counts[j]` times, or once).
    void count_column(std::size_t j, const std::int32_t* rows, const std::int64_t* counts,
                      std::size_t m);

    const CriteriaData& data_;
    std::vector<std::vector<double>> p_;      ///< per column, the table's frequency of each value
    std::vector<std::vector<double>> cum_p_;  ///< per column, its cumulative frequencies
    std::vector<std::int64_t> count_;         ///< scratch: rows per value of the set
    std::vector<std::int32_t> present_;       ///< scratch: the values of the set
    std::vector<std::vector<std::int64_t>> running_;        ///< per column, start()..add() counts
    std::vector<std::vector<std::int32_t>> running_present_;  ///< per column, their values
    std::int64_t running_size_ = 0;
};

}  // namespace proxanon
