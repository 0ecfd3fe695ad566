// Distances over the sensitive attribute (docs/design/definitions.md) and the epsilon-neighbour
// test (docs/design/privacy-model.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "proxanon/common/tolerance.hpp"

namespace proxanon {

/// The built-in distances over sensitive components already on a common scale.
/// L1 = sum w_i |x_i - y_i|, L2 = sqrt(sum w_i (x_i - y_i)^2), Linf = max_i w_i |x_i - y_i|,
/// MinComponent = min_i w_i |x_i - y_i| (Wang and Liu, XColor, Example 2; not a metric: two
/// values are neighbours as soon as one component is close).
enum class Metric { L1, L2, Linf, MinComponent };

/// The neighbour test's threshold: delta(x, y) <= eps + kNeighbourSlack * max(1, eps)
/// (docs/design/privacy-model.md).
inline double neighbour_threshold(double epsilon) {
    return epsilon + kNeighbourSlack * std::max(1.0, epsilon);
}

/// Answers "is delta(x, y) <= epsilon?" for one weighted metric. Cost O(s) per test.
class Distance {
public:
    Distance(Metric metric, std::vector<double> weights, double epsilon)
        : metric_(metric), weights_(std::move(weights)), epsilon_(epsilon),
          threshold_(neighbour_threshold(epsilon)) {
        if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
            throw std::invalid_argument("epsilon must be a finite number >= 0");
        }
        for (double w : weights_) {
            if (!(w >= 0.0) || !std::isfinite(w)) {
                throw std::invalid_argument("weights must be finite and >= 0");
            }
        }
    }

    Metric metric() const { return metric_; }
    double epsilon() const { return epsilon_; }
    std::size_t dimensions() const { return weights_.size(); }
    const std::vector<double>& weights() const { return weights_; }

    /// True iff the rows x and y (each of `dimensions()` components) are epsilon-neighbours.
    /// A difference that overflows to inf counts as far; a weight-0 component never counts
    /// (0 * inf would be NaN).
    bool within(const double* x, const double* y) const {
        const std::size_t s = weights_.size();
        switch (metric_) {
        case Metric::L1: {
            double acc = 0.0;
            for (std::size_t i = 0; i < s; ++i) {
                acc += term(i, std::fabs(x[i] - y[i]));
                if (acc > threshold_) return false;
            }
            return true;
        }
        case Metric::L2: {
            // Squares are compared with the squared threshold unless that overflows; then
            // the differences are taken in units of the threshold.
            const bool scaled = !std::isfinite(threshold_ * threshold_);
            const double limit = scaled ? 1.0 : threshold_ * threshold_;
            double acc = 0.0;
            for (std::size_t i = 0; i < s; ++i) {
                const double diff = scaled ? (x[i] - y[i]) / threshold_ : x[i] - y[i];
                if (weights_[i] > 0.0) acc += weights_[i] * diff * diff;
                if (acc > limit) return false;
            }
            return true;
        }
        case Metric::Linf:
            for (std::size_t i = 0; i < s; ++i) {
                if (term(i, std::fabs(x[i] - y[i])) > threshold_) return false;
            }
            return true;
        case Metric::MinComponent:
            for (std::size_t i = 0; i < s; ++i) {
                if (close_in(i, x, y)) return true;
            }
            return false;
        }
        return false;
    }

    /// MinComponent: true iff component i alone makes x and y neighbours.
    bool close_in(std::size_t i, const double* x, const double* y) const {
        return weights_[i] > 0.0 && term(i, std::fabs(x[i] - y[i])) <= threshold_;
    }

    /// Half-width r_i of the box that holds every neighbour of x along component i:
    /// within(x, y) implies |x_i - y_i| <= r_i for L1, L2 and Linf (one weighted term alone
    /// cannot exceed the threshold). Infinite when w_i == 0 (the component is free). For
    /// MinComponent it is the window along i in which a close component makes a neighbour.
    double box_radius(std::size_t i) const {
        const double w = weights_[i];
        if (w <= 0.0) return std::numeric_limits<double>::infinity();
        if (metric_ == Metric::L2) return threshold_ / std::sqrt(w);
        return threshold_ / w;
    }

private:
    /// w_i * part, with a zero weight silencing the component even where part is inf.
    double term(std::size_t i, double part) const { return weights_[i] > 0.0 ? weights_[i] * part : 0.0; }

    Metric metric_;
    std::vector<double> weights_;
    double epsilon_;
    double threshold_;
};

}  // namespace proxanon
