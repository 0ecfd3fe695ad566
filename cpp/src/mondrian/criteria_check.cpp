#include "proxanon/mondrian/criteria_check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace proxanon {

namespace {

/// A measure passes its bound only with this relative margin (see criteria_check.hpp).
constexpr double kMargin = 1e-9;

}  // namespace

CriteriaCheck::CriteriaCheck(const CriteriaData& data) : data_(data) {
    std::size_t most = 0;
    for (const CriteriaColumn& column : data.columns) {
        const auto m = static_cast<std::size_t>(column.m);
        most = std::max(most, m);
        std::vector<double> counts(m, 0.0);
        for (const std::int32_t v : column.codes) counts[static_cast<std::size_t>(v)] += 1.0;
        const double n = static_cast<double>(column.codes.size());
        std::vector<double> p(m), cum(m);
        double running = 0.0;
        for (std::size_t v = 0; v < m; ++v) {
            p[v] = counts[v] / n;
            running += counts[v];
            cum[v] = running / n;
        }
        p_.push_back(std::move(p));
        cum_p_.push_back(std::move(cum));
    }
    count_.assign(most, 0);
}

void CriteriaCheck::count_column(std::size_t j, const std::int32_t* rows, const std::int64_t* counts,
                                 std::size_t m) {
    const std::vector<std::int32_t>& codes = data_.columns[j].codes;
    present_.clear();
    for (std::size_t i = 0; i < m; ++i) {
        const auto v = static_cast<std::size_t>(codes[static_cast<std::size_t>(rows[i])]);
        if (count_[v] == 0) present_.push_back(static_cast<std::int32_t>(v));
        count_[v] += counts == nullptr ? 1 : counts[i];
    }
}

bool CriteriaCheck::holds(const std::int32_t* begin, const std::int32_t* end) {
    return holds(begin, nullptr, static_cast<std::size_t>(end - begin));
}

bool CriteriaCheck::holds(const std::int32_t* rows, const std::int64_t* counts, std::size_t m) {
    std::int64_t size = static_cast<std::int64_t>(m);
    if (counts != nullptr) {
        size = 0;
        for (std::size_t i = 0; i < m; ++i) size += counts[i];
    }
    if (size == 0) return true;
    for (std::size_t j = 0; j < data_.columns.size(); ++j) {
        count_column(j, rows, counts, m);
        const bool ok = column_holds(j, static_cast<std::size_t>(size), count_, present_);
        for (const std::int32_t v : present_) count_[static_cast<std::size_t>(v)] = 0;
        if (!ok) return false;
    }
    return true;
}

bool CriteriaCheck::column_holds(std::size_t j, std::size_t size, const std::vector<std::int64_t>& count,
                                 const std::vector<std::int32_t>& present) const {
    const CriteriaColumn& column = data_.columns[j];
    const std::vector<double>& p = p_[j];
    const double n = static_cast<double>(size);
    for (const CriterionSpec& spec : data_.specs) {
        if (spec.column != j) continue;
        switch (spec.kind) {
            case CriterionSpec::Distinct:
                if (static_cast<double>(present.size()) < spec.value) return false;
                break;
            case CriterionSpec::Entropy: {
                double h = 0.0;
                for (const std::int32_t v : present) {
                    const double q = static_cast<double>(count[static_cast<std::size_t>(v)]) / n;
                    h -= q * std::log(q);
                }
                if (std::exp(h) < spec.value * (1.0 + kMargin)) return false;
                break;
            }
            case CriterionSpec::Recursive: {
                if (static_cast<double>(present.size()) < spec.value) return false;
                std::vector<std::int64_t> r;
                r.reserve(present.size());
                for (const std::int32_t v : present) r.push_back(count[static_cast<std::size_t>(v)]);
                std::sort(r.begin(), r.end(), std::greater<>());
                const auto skip = static_cast<std::size_t>(spec.value) - 1;
                std::int64_t tail = 0;
                for (std::size_t i = skip; i < r.size(); ++i) tail += r[i];
                if (!(static_cast<double>(r[0]) < spec.c * static_cast<double>(tail))) return false;
                break;
            }
            case CriterionSpec::TCloseness: {
                double emd = 0.0;
                if (!column.numeric) {
                    for (const std::int32_t v : present) {
                        const double q = static_cast<double>(count[static_cast<std::size_t>(v)]) / n;
                        emd += std::max(q - p[static_cast<std::size_t>(v)], 0.0);
                    }
                } else if (column.m > 1) {
                    double cum_q = 0.0;
                    for (std::size_t v = 0; v < static_cast<std::size_t>(column.m); ++v) {
                        cum_q += static_cast<double>(count[v]) / n;
                        emd += std::abs(cum_q - cum_p_[j][v]);
                    }
                    emd /= static_cast<double>(column.m - 1);
                }
                if (emd > spec.value * (1.0 - kMargin)) return false;
                break;
            }
            case CriterionSpec::Beta:
            case CriterionSpec::Delta:
                for (const std::int32_t v : present) {
                    const double pv = p[static_cast<std::size_t>(v)];
                    const double q = static_cast<double>(count[static_cast<std::size_t>(v)]) / n;
                    const double measure = spec.kind == CriterionSpec::Beta ? (q - pv) / pv
                                                                              : std::abs(std::log(q / pv));
                    if (measure > spec.value * (1.0 - kMargin)) return false;
                }
                break;
            default:
                return false;
        }
    }
    return true;
}

void CriteriaCheck::start() {
    if (running_.empty()) {
        for (const CriteriaColumn& column : data_.columns) {
            running_.emplace_back(static_cast<std::size_t>(column.m), 0);
            running_present_.emplace_back();
        }
    }
    for (std::size_t j = 0; j < running_.size(); ++j) {
        for (const std::int32_t v : running_present_[j]) running_[j][static_cast<std::size_t>(v)] = 0;
        running_present_[j].clear();
    }
    running_size_ = 0;
}

void CriteriaCheck::add(std::int32_t row, std::int64_t count) {
    for (std::size_t j = 0; j < running_.size(); ++j) {
        const auto v = static_cast<std::size_t>(data_.columns[j].codes[static_cast<std::size_t>(row)]);
        if (running_[j][v] == 0) running_present_[j].push_back(static_cast<std::int32_t>(v));
        running_[j][v] += count;
    }
    running_size_ += count;
}

bool CriteriaCheck::holds_running() const {
    if (running_size_ == 0) return true;
    for (std::size_t j = 0; j < running_.size(); ++j) {
        if (!column_holds(j, static_cast<std::size_t>(running_size_), running_[j], running_present_[j])) return false;
    }
    return true;
}

}  // namespace proxanon
