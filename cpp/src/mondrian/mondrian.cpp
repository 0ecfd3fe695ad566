#include "proxanon/mondrian/mondrian.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "proxanon/mondrian/part_check.hpp"
#include "proxanon/mondrian/units.hpp"

namespace proxanon {

namespace {

/// The checks of a part given as units: over rows (every unit one row) PartChecker's; over
/// weighted units (k-anonymity and the criteria alone) the part's weight against k and the
/// criteria's counts of the units' representatives, O(units) per check.
class UnitChecks {
public:
    UnitChecks(const Neighbours& neighbours, const MondrianParams& params, const RowUnits& units, bool weighted)
        : checker_(neighbours, params), params_(params), units_(units), weighted_(weighted) {
        if (weighted_ && params.criteria != nullptr && !params.criteria->empty()) criteria_.emplace(*params.criteria);
    }

    bool passes(const std::int32_t* begin, const std::int32_t* end) {
        if (!weighted_) return checker_.passes(begin, end);
        rows_.clear();
        counts_.clear();
        std::int64_t weight = 0;
        for (const std::int32_t* u = begin; u != end; ++u) {
            const auto at = static_cast<std::size_t>(*u);
            rows_.push_back(units_.representative(at));
            counts_.push_back(units_.weight(at));
            weight += counts_.back();
        }
        if (weight < static_cast<std::int64_t>(params_.k)) return false;
        return !criteria_ || criteria_->holds(rows_.data(), counts_.data(), rows_.size());
    }

    PartChecker& rows() { return checker_; }

private:
    PartChecker checker_;
    const MondrianParams& params_;
    const RowUnits& units_;
    bool weighted_;
    std::optional<CriteriaCheck> criteria_;
    std::vector<std::int32_t> rows_;
    std::vector<std::int64_t> counts_;
};

/// The units' QI codes and weights, in the order of `order` and permuted with it: a part's
/// extremes and values are read in one sequential stretch (read through `order`, every level
/// of the cut read the whole table scattered: 3M census rows, 96 MB of codes).
struct UnitCodes {
    UnitCodes(const LossModel& qi, const RowUnits& units)
        : d(qi.dimensions()), order(units.size()), codes(units.size() * d), weight(units.size()) {
        std::iota(order.begin(), order.end(), 0);
        for (std::size_t u = 0; u < units.size(); ++u) {
            const double* x = qi.row(units.representative(u));
            std::copy(x, x + d, codes.begin() + static_cast<std::ptrdiff_t>(u * d));
            weight[u] = units.weight(u);
        }
    }

    std::size_t d;
    std::vector<std::int32_t> order;
    std::vector<double> codes;
    std::vector<std::int64_t> weight;
};

/// Every column's extremes over part [begin, end) in one pass, into `lo` and `hi`; returns the
/// part's rows. O((end - begin) · d).
std::int64_t part_extremes(const UnitCodes& part, std::size_t begin, std::size_t end,
                           std::vector<double>& lo, std::vector<double>& hi) {
    const std::size_t d = part.d;
    std::copy(part.codes.begin() + static_cast<std::ptrdiff_t>(begin * d), part.codes.begin() + static_cast<std::ptrdiff_t>((begin + 1) * d), lo.begin());
    std::copy(lo.begin(), lo.end(), hi.begin());
    std::int64_t rows = 0;
    for (std::size_t j = begin; j < end; ++j) {
        const double* x = part.codes.data() + j * d;
        rows += part.weight[j];
        for (std::size_t i = 0; i < d; ++i) {
            lo[i] = std::min(lo[i], x[i]);
            hi[i] = std::max(hi[i], x[i]);
        }
    }
    return rows;
}

/// The columns whose extremes `lo` and `hi` differ, into `spreads` as (cost of the range,
/// column), widest first (ties by column). O(d log d).
void widest_columns(const LossModel& qi, const std::vector<double>& lo, const std::vector<double>& hi,
                    std::vector<std::pair<double, std::size_t>>& spreads) {
    spreads.clear();
    for (std::size_t i = 0; i < lo.size(); ++i) {
        if (lo[i] < hi[i]) spreads.emplace_back(qi.cost(i, lo[i], hi[i]), i);
    }
    std::sort(spreads.begin(), spreads.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
}

/// The value in column `dim` of the part's row at offset `middle` (rows counted by weight):
/// over rows a selection, O(m); over weighted units a sort of the part's units, O(u log u).
/// `column` and `weighted_column` are scratch.
double part_median(const UnitCodes& part, std::size_t begin, std::size_t end, std::size_t dim,
                   std::int64_t middle, bool weighted, std::vector<double>& column,
                   std::vector<std::pair<double, std::int64_t>>& weighted_column) {
    const std::size_t d = part.d;
    const std::vector<double>& codes = part.codes;
    double median = 0.0;
    if (!weighted) {
        column.clear();
        for (std::size_t j = begin; j < end; ++j) column.push_back(codes[j * d + dim]);
        std::nth_element(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(middle), column.end());
        median = column[static_cast<std::size_t>(middle)];
    } else {
        weighted_column.clear();
        for (std::size_t j = begin; j < end; ++j) weighted_column.emplace_back(codes[j * d + dim], part.weight[j]);
        std::sort(weighted_column.begin(), weighted_column.end());
        std::int64_t seen = 0;
        for (const auto& [x, w] : weighted_column) {
            seen += w;
            if (seen > middle) {
                median = x;
                break;
            }
        }
    }
    return median;
}

/// Splits part [begin, end) of `rows` rows in column `dim` at `median`, which goes left unless
/// that leaves the right empty (then the cut falls before it): the units below, at and above
/// it in place, and the first unit of the right half; none where no cut falls between two
/// values. O(end - begin).
std::optional<std::size_t> split_at(UnitCodes& part, std::size_t begin, std::size_t end, std::size_t dim,
                                    double median, std::int64_t rows) {
    const std::size_t d = part.d;
    std::vector<std::int32_t>& order = part.order;
    std::vector<double>& codes = part.codes;
    std::vector<std::int64_t>& weight = part.weight;
    const auto swap_units = [&](std::size_t a, std::size_t b) {
        std::swap(order[a], order[b]);
        std::swap(weight[a], weight[b]);
        std::swap_ranges(codes.begin() + static_cast<std::ptrdiff_t>(a * d), codes.begin() + static_cast<std::ptrdiff_t>((a + 1) * d),
                         codes.begin() + static_cast<std::ptrdiff_t>(b * d));
    };
    std::int64_t less = 0, equal = 0;
    for (std::size_t j = begin; j < end; ++j) {
        const double x = codes[j * d + dim];
        less += x < median ? weight[j] : 0;
        equal += x == median ? weight[j] : 0;
    }
    if (less + equal == rows) equal = 0;
    if (less + equal == 0) return std::nullopt;
    std::size_t below = begin, j = begin, above = end;
    while (j < above) {
        const double x = codes[j * d + dim];
        if (x < median) swap_units(below++, j++);
        else if (x > median) swap_units(j, --above);
        else ++j;
    }
    return equal == 0 ? below : above;
}

/// Gives every row of the units of part [begin, end) the group `group`.
void label_part(const UnitCodes& part, const RowUnits& units, std::size_t begin, std::size_t end,
                std::int32_t group, std::vector<std::int32_t>& groups) {
    for (std::size_t j = begin; j < end; ++j) {
        const auto u = static_cast<std::size_t>(part.order[j]);
        for (std::int64_t e = units.begin[u]; e < units.begin[u + 1]; ++e) {
            groups[static_cast<std::size_t>(units.rows[static_cast<std::size_t>(e)])] = group;
        }
    }
}

}  // namespace

MondrianResult mondrian(const LossModel& qi, const Neighbours& neighbours,
                        const MondrianParams& params) {
    const std::size_t n = neighbours.table().row_value.size();
    if (params.k < 1 || params.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (!qi.active()) throw std::invalid_argument("Mondrian needs quasi-identifier columns");
    // Identical rows travel as one weighted unit where the checks only count rows.
    const bool weighted = !params.dissimilarity && params.l == 0;
    const RowUnits units = weighted ? identical_rows(qi, params.criteria, n) : single_rows(n);
    const std::size_t m_units = units.size();
    UnitCodes part(qi, units);
    UnitChecks checker(neighbours, params, units, weighted);

    MondrianResult result;
    result.groups.assign(n, -1);
    const bool whole_table_passes = checker.passes(part.order.data(), part.order.data() + m_units);
    std::int32_t next_group = 0;
    // Depth first, left half on top, so groups are numbered left to right in QI order.
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, m_units}};
    std::vector<std::pair<double, std::size_t>> spreads;
    std::vector<double> lo(qi.dimensions()), hi(qi.dimensions());
    std::vector<double> column;                              // the part's values in one column
    std::vector<std::pair<double, std::int64_t>> weighted_column;  // with their units' weights
    while (!stack.empty()) {
        const auto [begin, end] = stack.back();
        stack.pop_back();
        poll(params.interrupt);
        const std::int64_t rows = part_extremes(part, begin, end, lo, hi);
        widest_columns(qi, lo, hi, spreads);
        bool cut = false;
        for (const auto& [spread, dim] : spreads) {
            poll(params.interrupt);
            // The median row's value in this column and the rows below and at it: the halves
            // are sets (the checks and the parts below do not depend on the order within
            // them), so over rows a selection and a three-way partition replace a sort, O(m)
            // per column; over weighted units a sort of the part's units, O(u log u).
            const auto middle = static_cast<std::int64_t>((rows + 1) / 2 - 1);  // row offset in the part
            const double median = part_median(part, begin, end, dim, middle, weighted, column, weighted_column);
            const std::optional<std::size_t> boundary = split_at(part, begin, end, dim, median, rows);
            if (!boundary) continue;
            const std::int32_t* base = part.order.data();
            if (checker.passes(base + begin, base + *boundary) &&
                checker.passes(base + *boundary, base + end)) {
                stack.emplace_back(*boundary, end);
                stack.emplace_back(begin, *boundary);
                ++result.cuts;
                cut = true;
                break;
            }
        }
        if (!cut) label_part(part, units, begin, end, next_group++, result.groups);
    }
    // Every part cut off passed the checks, so only an uncut whole table can fail them (the
    // dissimilarity check is not monotone: halves can pass where the whole table fails).
    result.satisfied = whole_table_passes || result.cuts > 0;
    if (!result.satisfied) result.violating_rows = whole_table_violating_rows(checker.rows(), params, n);
    return result;
}

}  // namespace proxanon
