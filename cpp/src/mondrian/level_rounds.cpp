#include "proxanon/mondrian/level_rounds.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace proxanon {

namespace {

/// The rounds' state: each unit's node per column, and the units not yet published.
class Rounds {
public:
    Rounds(const LossModel& qi, const std::vector<std::int32_t>& rep,
           const std::vector<std::int64_t>& weight, const UnitsCheck& passes)
        : qi_(qi), weight_(weight), passes_(passes), d_(qi.dimensions()), u_(rep.size()),
          node_(u_ * d_) {
        for (std::size_t u = 0; u < u_; ++u) {
            const double* x = qi.row(rep[u]);
            for (std::size_t i = 0; i < d_; ++i) node_[u * d_ + i] = static_cast<std::int32_t>(x[i]);
        }
        left_.resize(u_);
        std::iota(left_.begin(), left_.end(), 0);
    }

    bool run(RoundsResult& result, Interrupt* interrupt);

private:
    struct Outcome {
        std::int64_t published = 0;  ///< rows of the passing tuples
        double cost = 0.0;           ///< their rows times their tuples' NCPs
    };
    std::int32_t lifted(std::int32_t u, std::size_t i, std::size_t column) const {
        const std::int32_t v = node_[static_cast<std::size_t>(u) * d_ + i];
        if (i != column) return v;
        const std::int32_t up = qi_.taxonomy(i)->parent(v);
        return up < 0 ? v : up;
    }
    double ncp(std::size_t i, std::int32_t v) const {
        const Taxonomy& tax = *qi_.taxonomy(i);
        return static_cast<std::size_t>(v) < tax.leaves() ? 0.0 : tax.share(v);
    }
    /// The units left in runs of equal tuples once `column` is lifted (none: as they are);
    /// each run's [begin, end) into `order_`. Publishes the passing runs where `commit`.
    Outcome round(std::size_t column, bool commit, std::vector<std::vector<std::int32_t>>& classes);

    const LossModel& qi_;
    const std::vector<std::int64_t>& weight_;
    const UnitsCheck& passes_;
    std::size_t d_, u_;
    std::vector<std::int32_t> node_;
    std::vector<std::int32_t> left_;
    std::vector<std::int32_t> order_;
};

Rounds::Outcome Rounds::round(std::size_t column, bool commit,
                              std::vector<std::vector<std::int32_t>>& classes) {
    order_ = left_;
    const auto less = [&](std::int32_t a, std::int32_t b) {
        for (std::size_t i = 0; i < d_; ++i) {
            const std::int32_t x = lifted(a, i, column), y = lifted(b, i, column);
            if (x != y) return x < y;
        }
        return a < b;
    };
    const auto same = [&](std::int32_t a, std::int32_t b) {
        for (std::size_t i = 0; i < d_; ++i) {
            if (lifted(a, i, column) != lifted(b, i, column)) return false;
        }
        return true;
    };
    std::sort(order_.begin(), order_.end(), less);
    Outcome out;
    std::vector<std::int32_t> run, kept;
    for (std::size_t j = 0; j < order_.size();) {
        std::size_t e = j + 1;
        while (e < order_.size() && same(order_[j], order_[e])) ++e;
        run.assign(order_.begin() + static_cast<std::ptrdiff_t>(j), order_.begin() + static_cast<std::ptrdiff_t>(e));
        std::int64_t w = 0;
        for (const std::int32_t u : run) w += weight_[static_cast<std::size_t>(u)];
        if (passes_(run)) {
            double per_row = 0.0;
            for (std::size_t i = 0; i < d_; ++i) per_row += ncp(i, lifted(run[0], i, column));
            out.published += w;
            out.cost += per_row * static_cast<double>(w);
            if (commit) classes.push_back(run);
        } else if (commit) {
            kept.insert(kept.end(), run.begin(), run.end());
        }
        j = e;
    }
    if (commit) {
        if (column < d_) {
            for (const std::int32_t u : kept) {
                std::int32_t& v = node_[static_cast<std::size_t>(u) * d_ + column];
                const std::int32_t up = qi_.taxonomy(column)->parent(v);
                if (up >= 0) v = up;
            }
        }
        left_ = std::move(kept);
    }
    return out;
}

bool Rounds::run(RoundsResult& result, Interrupt* interrupt) {
    std::vector<std::vector<std::int32_t>>& classes = result.classes;
    round(d_, true, classes);  // the exact tuples
    result.after.emplace_back(classes.size(), left_);
    std::vector<std::vector<std::int32_t>> none;
    while (!left_.empty()) {
        poll(interrupt);
        std::size_t best = d_;
        double best_score = -std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < d_; ++c) {
            bool liftable = false;
            double lift = 0.0;  // the NCP all rows left gain in column c
            for (const std::int32_t u : left_) {
                const std::int32_t v = node_[static_cast<std::size_t>(u) * d_ + c];
                const std::int32_t up = qi_.taxonomy(c)->parent(v);
                if (up < 0) continue;
                liftable = true;
                lift += (ncp(c, up) - ncp(c, v)) * static_cast<double>(weight_[static_cast<std::size_t>(u)]);
            }
            if (!liftable) continue;
            // The lift that publishes rows at the lowest cost each: the NCP of the rows it
            // publishes plus what it adds to every row left, per row published (a lift that
            // publishes nothing ranks by what it adds alone, after every other).
            const Outcome o = round(c, false, none);
            const double score = o.published > 0 ? -(o.cost + lift) / static_cast<double>(o.published)
                                                 : -1e300 - lift;
            if (score > best_score) {
                best_score = score;
                best = c;
            }
        }
        if (best == d_) {
            // Every column at its root: the rows left are one tuple.
            if (!passes_(left_)) return false;
            classes.push_back(left_);
            left_.clear();
            break;
        }
        round(best, true, classes);
        result.after.emplace_back(classes.size(), left_);
    }
    return true;
}

}  // namespace

RoundsResult level_rounds(const LossModel& qi, const std::vector<std::int32_t>& rep,
                          const std::vector<std::int64_t>& weight, const UnitsCheck& passes,
                          Interrupt* interrupt) {
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if (qi.taxonomy(i) == nullptr) return {};
    }
    RoundsResult result;
    Rounds rounds(qi, rep, weight, passes);
    result.complete = rounds.run(result, interrupt);
    return result;
}

}  // namespace proxanon
