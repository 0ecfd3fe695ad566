// The information-loss model of §V-B / SPEC §4 over numeric quasi-identifiers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace proxanon {

/// loss(G) = sum_i |G.A_i| / |A_i|: for a numeric QI the width of the group's interval over the
/// width of the column. Values are stored pre-divided by the column width (a constant column
/// costs nothing), so a group's loss is the sum of its per-column value ranges.
/// With no QI columns every loss is 0 and the swap loop selects on the potential alone.
class LossModel {
public:
    LossModel() = default;

    /// `qi` is row-major n x d.
    LossModel(const double* qi, std::size_t n, std::size_t d) : d_(d), scaled_(n * d) {
        for (std::size_t i = 0; i < d; ++i) {
            double lo = std::numeric_limits<double>::infinity();
            double hi = -lo;
            for (std::size_t r = 0; r < n; ++r) {
                lo = std::min(lo, qi[r * d + i]);
                hi = std::max(hi, qi[r * d + i]);
            }
            const double width = hi - lo;
            for (std::size_t r = 0; r < n; ++r) {
                scaled_[r * d + i] = width > 0.0 ? (qi[r * d + i] - lo) / width : 0.0;
            }
        }
    }

    std::size_t dimensions() const { return d_; }
    bool active() const { return d_ > 0; }
    const double* row(std::int32_t r) const {
        return scaled_.data() + static_cast<std::size_t>(r) * d_;
    }

private:
    std::size_t d_ = 0;
    std::vector<double> scaled_;
};

/// Per-column extremes of one group, enough to price the removal of any one member and the
/// arrival of any one outsider in O(d) (the two-step greedy of §V-B needs both).
/// Invariant per column: lo <= lo2 where lo2 is the minimum once one holder of lo leaves
/// (equal to lo when lo is held twice; +inf when the group has a single member); hi likewise.
class GroupExtremes {
public:
    void compute(const LossModel& model, const std::int32_t* members, std::size_t size) {
        const std::size_t d = model.dimensions();
        const double inf = std::numeric_limits<double>::infinity();
        lo_.assign(d, inf); lo2_.assign(d, inf); hi_.assign(d, -inf); hi2_.assign(d, -inf);
        for (std::size_t j = 0; j < size; ++j) {
            const double* x = model.row(members[j]);
            for (std::size_t i = 0; i < d; ++i) {
                if (x[i] < lo_[i]) { lo2_[i] = lo_[i]; lo_[i] = x[i]; }
                else if (x[i] < lo2_[i]) { lo2_[i] = x[i]; }
                if (x[i] > hi_[i]) { hi2_[i] = hi_[i]; hi_[i] = x[i]; }
                else if (x[i] > hi2_[i]) { hi2_[i] = x[i]; }
            }
        }
        loss_ = 0.0;
        for (std::size_t i = 0; i < d; ++i) loss_ += hi_[i] - lo_[i];
    }

    double loss() const { return loss_; }

    /// loss(G \ {x}) - loss(G) for a member x: negative when x alone holds an extreme.
    double departure(const double* x) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            const double lo = x[i] == lo_[i] ? lo2_[i] : lo_[i];
            const double hi = x[i] == hi_[i] ? hi2_[i] : hi_[i];
            if (lo <= hi) after += hi - lo;
        }
        return after - loss_;
    }

    /// loss(G \ {out} ∪ {in}) for a member `out` and an outsider `in`.
    double exchange(const double* out, const double* in) const {
        double after = 0.0;
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            const double lo = out[i] == lo_[i] ? lo2_[i] : lo_[i];
            const double hi = out[i] == hi_[i] ? hi2_[i] : hi_[i];
            after += std::max(hi, in[i]) - std::min(lo, in[i]);
        }
        return after;
    }

private:
    std::vector<double> lo_, lo2_, hi_, hi2_;
    double loss_ = 0.0;
};

}  // namespace proxanon
