// Property-preserving substitution: see substitution.hpp for the invariant and the cost.
#include "proxanon/substitution/substitution.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "proxanon/common/splitmix.hpp"

namespace proxanon {
namespace {

/// Natural logarithm of a positive normal double from exactly rounded operations only
/// (frexp, +, *, /), so that it gives the same bits on every platform, unlike std::log.
/// log(x) = e·ln 2 + 2·atanh((r - 1)/(r + 1)) with r in [1/√2, √2), |t| <= 0.172: the odd
/// series to t^25 leaves an error below 1e-19.
double portable_log(double x) {
    int exponent = 0;
    double r = std::frexp(x, &exponent);
    if (r < 0.70710678118654752) {
        r *= 2.0;
        --exponent;
    }
    static constexpr double inverse_odd[] = {1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17,
                                             1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9,  1.0 / 7,
                                             1.0 / 5,  1.0 / 3,  1.0};
    const double t = (r - 1.0) / (r + 1.0);
    const double t2 = t * t;
    double series = 0.0;
    for (const double coefficient : inverse_odd) series = series * t2 + coefficient;
    return exponent * 0.69314718055994531 + 2.0 * t * series;
}

/// The random numbers of one segment (its choice of properties of interest and its random
/// walk): xoshiro256** (Blackman and Vigna) seeded through splitmix64 from (seed, stream,
/// segment), so that each segment draws a stream of its own, alike on any thread and in any
/// order of the segments; normal samples by Marsaglia's polar method, which needs only a
/// logarithm and a square root.
class SegmentStream {
public:
    SegmentStream(std::uint64_t seed, std::uint64_t stream, std::uint64_t segment) {
        std::uint64_t mix = seed;
        mix = splitmix64(mix) ^ stream;
        mix = splitmix64(mix) ^ segment;
        for (std::uint64_t& word : state_) word = splitmix64(mix);
    }

    std::uint64_t next() {
        const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u = 0.0;
        double v = 0.0;
        double s = 0.0;
        do {
            u = 2.0 * uniform() - 1.0;
            v = 2.0 * uniform() - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * portable_log(s) / s);
        spare_ = v * factor;
        has_spare_ = true;
        return u * factor;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    std::uint64_t state_[4] = {};
    double spare_ = 0.0;
    bool has_spare_ = false;
};

/// Algorithm 1 with one pointer per j: as i walks down from j - 1, u_j - u_i grows, so the
/// first k with u_k - u_j >= u_j - u_i only moves right; O(m^2) in all. The comparisons are
/// the float64 differences a checker computes, never the breakpoint 2u_j - u_i, whose
/// rounding could disagree with them.
template <typename Emit>
void for_each_locality(const std::vector<double>& u, Emit&& emit) {
    const auto m = static_cast<std::int32_t>(u.size());
    for (std::int32_t j = 1; j + 1 < m; ++j) {
        std::int32_t p = j + 1;
        for (std::int32_t i = j - 1; i >= 0; --i) {
            const double left = u[j] - u[i];
            while (p < m && u[p] - u[j] < left) ++p;
            if (p - 1 > j) emit(Locality{i, j, p - 1, Relation::Farther});
            std::int32_t q = p;
            if (q < m && !(u[q] - u[j] > left)) ++q;  // equidistant: not kept (header)
            if (q < m && u[q] - u[j] > left) emit(Locality{i, j, q, Relation::Closer});
        }
    }
}

using OrderPair = std::pair<std::int32_t, std::int32_t>;

/// The transitive reduction of the order constraints a < b (indices into the sorted values):
/// a pair is dropped when a chain of other kept pairs implies it. reach[a] is the bitset of
/// values above a that a chain from a reaches; O(pairs · m / 64) time, O(m^2 / 64) words.
std::vector<OrderPair> reduce_orders(std::size_t m, std::vector<OrderPair> pairs) {
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    const std::size_t words = (m + 63) / 64;
    std::vector<std::uint64_t> reach(m * words, 0);
    std::vector<std::uint64_t> covered(words);
    std::vector<OrderPair> kept;
    std::size_t end = pairs.size();
    while (end > 0) {  // sources from the top down, so reach[b] is final when a needs it
        const std::int32_t a = pairs[end - 1].first;
        std::size_t begin = end;
        while (begin > 0 && pairs[begin - 1].first == a) --begin;
        std::fill(covered.begin(), covered.end(), 0);
        std::uint64_t* reach_a = &reach[static_cast<std::size_t>(a) * words];
        for (std::size_t p = begin; p < end; ++p) {  // targets ascending: implied ones follow
            const auto b = static_cast<std::size_t>(pairs[p].second);
            const std::uint64_t bit = std::uint64_t{1} << (b % 64);
            if ((covered[b / 64] & bit) == 0) kept.push_back(pairs[p]);
            const std::uint64_t* reach_b = &reach[b * words];
            for (std::size_t w = 0; w < words; ++w) covered[w] |= reach_b[w];
            reach_a[b / 64] |= bit;
        }
        for (std::size_t w = 0; w < words; ++w) reach_a[w] |= covered[w];
        end = begin;
    }
    std::sort(kept.begin(), kept.end());
    return kept;
}

/// A kept locality as "the small gap is at most the large gap", both gaps taken in the kept
/// order (x_i <= x_j <= x_k), where |x_i - x_j| = x_j - x_i and |x_j - x_k| = x_k - x_j
/// exactly: Closer has small = x_j - x_i, large = x_k - x_j; Farther the reverse. Linear, and
/// its slack large - small is the very difference a checker compares.
struct GapLocality {
    std::int32_t small_low, small_high, large_low, large_high;
    Relation relation;
};

struct Segment {
    std::vector<double> values;  ///< substituted value per row of the segment
    std::vector<std::int64_t> i, j, k;
    std::vector<std::int8_t> relation;
    std::size_t localities = 0;
    std::size_t moved = 0;
    std::size_t rejected = 0;

    void add(std::int64_t a, std::int64_t b, std::int64_t c, Relation r) {
        i.push_back(a);
        j.push_back(b);
        k.push_back(c);
        relation.push_back(static_cast<std::int8_t>(r));
    }
};

/// The walk in the polytope {lo <= x <= hi, kept orders, kept localities}, from u.
class Walk {
public:
    Walk(std::vector<double> start, double lo, double hi, std::vector<GapLocality> localities,
         std::vector<OrderPair> orders)
        : x_(std::move(start)), lo_(lo), hi_(hi), localities_(std::move(localities)),
          orders_(std::move(orders)) {}

    /// Runs the iterations; returns (steps moved, steps rejected). Each iteration is one scan
    /// of the constraints: it checks the current point exactly and bounds the next step; a
    /// point that fails the check (rounding at the end of a maximal step) is undone.
    std::pair<std::size_t, std::size_t> run(std::size_t iterations, SegmentStream& random) {
        const std::size_t m = x_.size();
        std::vector<double> direction(m);
        std::vector<double> previous = x_;
        std::size_t moved = 0;
        std::size_t rejected = 0;
        for (std::size_t iteration = 0; iteration < iterations; ++iteration) {
            double norm = 0.0;
            for (double& d : direction) {
                d = random.normal();
                norm += d * d;
            }
            norm = std::sqrt(norm);
            if (norm == 0.0) continue;
            for (double& d : direction) d /= norm;
            double longest = 0.0;
            if (!scan(direction, longest)) {
                x_ = previous;
                --moved;
                ++rejected;
                scan(direction, longest);
            }
            const double length = random.uniform() * longest;
            if (length > 0.0) {
                previous = x_;
                for (std::size_t v = 0; v < m; ++v) x_[v] += length * direction[v];
                ++moved;
            }
        }
        if (!feasible()) {
            x_ = previous;
            --moved;
            ++rejected;
        }
        return {moved, rejected};
    }

    const std::vector<double>& point() const { return x_; }

private:
    /// Whether x satisfies every constraint exactly as a checker evaluates it; and in
    /// `longest` the largest step along `direction` that the slack of the linear forms and
    /// the bounds allow (the paper's l = max(0, theta_max), eq. 5).
    bool scan(const std::vector<double>& d, double& longest) const {
        double theta = std::numeric_limits<double>::infinity();
        bool ok = true;
        // The signs of a random direction are coin flips: selects and bitwise ands keep
        // these loops free of branches that would be mispredicted half the time.
        for (std::size_t v = 0; v < x_.size(); ++v) {
            ok &= (lo_ <= x_[v]) & (x_[v] <= hi_);
            const double room = (d[v] > 0.0 ? hi_ : lo_) - x_[v];
            if (d[v] != 0.0) theta = std::min(theta, room / d[v]);
        }
        for (const auto& [a, b] : orders_) {
            const double slack = x_[b] - x_[a];
            ok &= slack >= 0.0;
            const double rate = d[a] - d[b];
            if ((rate > 0.0) & (slack < theta * rate)) theta = slack / rate;
        }
        for (const GapLocality& c : localities_) {
            const double slack = (x_[c.large_high] - x_[c.large_low]) -
                                 (x_[c.small_high] - x_[c.small_low]);
            ok &= slack >= 0.0;
            const double rate = (d[c.small_high] - d[c.small_low]) -
                                (d[c.large_high] - d[c.large_low]);
            if ((rate > 0.0) & (slack < theta * rate)) theta = slack / rate;
        }
        longest = std::max(0.0, theta);
        return ok;
    }

    bool feasible() const {
        double unused = 0.0;
        return scan(std::vector<double>(x_.size(), 0.0), unused);
    }

    std::vector<double> x_;
    double lo_;
    double hi_;
    std::vector<GapLocality> localities_;
    std::vector<OrderPair> orders_;
};

Segment substitute_segment(const double* values, std::size_t begin, std::size_t end, double lo,
                           double hi, const SubstitutionParams& params, std::size_t index) {
    SegmentStream random(params.seed, params.stream, index);
    const std::size_t rows = end - begin;
    std::vector<std::size_t> order(rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[begin + a] < values[begin + b]; });

    Segment out;
    std::vector<double> distinct;
    std::vector<std::int64_t> representative;  // the first row (in data order) of each value
    std::vector<std::int32_t> variable(rows);
    for (std::size_t r : order) {
        const double value = values[begin + r];
        const auto row = static_cast<std::int64_t>(begin + r);
        if (distinct.empty() || value != distinct.back()) {
            distinct.push_back(value);
            representative.push_back(row);
        } else {
            out.add(representative.back(), row, -1, Relation::Equal);
        }
        variable[r] = static_cast<std::int32_t>(distinct.size() - 1);
    }

    std::vector<GapLocality> kept;
    std::vector<OrderPair> needed;
    for_each_locality(distinct, [&](const Locality& loc) {
        ++out.localities;
        if (!(random.uniform() < params.poi_fraction)) return;
        if (loc.relation == Relation::Closer) kept.push_back({loc.i, loc.j, loc.j, loc.k, loc.relation});
        else kept.push_back({loc.j, loc.k, loc.i, loc.j, loc.relation});
        needed.emplace_back(loc.i, loc.j);
        needed.emplace_back(loc.j, loc.k);
    });
    std::vector<OrderPair> orders = reduce_orders(distinct.size(), std::move(needed));
    for (const GapLocality& c : kept) {
        const bool closer = c.relation == Relation::Closer;
        const std::int32_t i = closer ? c.small_low : c.large_low;
        const std::int32_t j = closer ? c.small_high : c.small_low;
        const std::int32_t k = closer ? c.large_high : c.small_high;
        out.add(representative[static_cast<std::size_t>(i)],
                representative[static_cast<std::size_t>(j)],
                representative[static_cast<std::size_t>(k)], c.relation);
    }
    for (const auto& [a, b] : orders) {
        out.add(representative[static_cast<std::size_t>(a)],
                representative[static_cast<std::size_t>(b)], -1, Relation::Order);
    }

    Walk walk(distinct, lo, hi, std::move(kept), std::move(orders));
    std::tie(out.moved, out.rejected) = walk.run(params.iterations, random);
    out.values.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        out.values[r] = walk.point()[static_cast<std::size_t>(variable[r])];
    }
    return out;
}

}  // namespace

std::vector<Locality> extract_localities(const std::vector<double>& sorted_values) {
    for (std::size_t v = 1; v < sorted_values.size(); ++v) {
        if (!(sorted_values[v - 1] < sorted_values[v])) {
            throw std::invalid_argument("extract_localities needs strictly increasing values");
        }
    }
    std::vector<Locality> out;
    for_each_locality(sorted_values, [&](const Locality& loc) { out.push_back(loc); });
    return out;
}

SubstitutionResult substitute_column(const double* values, std::size_t n, double lo, double hi,
                                     const SubstitutionParams& params) {
    if (params.segment_size < 3) throw std::invalid_argument("segment_size must be at least 3");
    if (!(params.poi_fraction > 0.0 && params.poi_fraction <= 1.0)) {
        throw std::invalid_argument("poi_fraction must lie in (0, 1]");
    }
    if (params.n_threads < 1) throw std::invalid_argument("n_threads must be at least 1");
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
        throw std::invalid_argument("bounds must be finite with lo <= hi");
    }
    for (std::size_t r = 0; r < n; ++r) {
        if (!std::isfinite(values[r])) {
            throw std::invalid_argument("value at row " + std::to_string(r) + " is not finite");
        }
        if (values[r] < lo || values[r] > hi) {
            throw std::invalid_argument("value at row " + std::to_string(r) +
                                        " lies outside the bounds");
        }
    }
    SubstitutionResult result;
    if (n == 0) return result;

    const std::size_t segments = std::max<std::size_t>(1, n / params.segment_size);
    std::vector<Segment> parts(segments);
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    auto worker = [&]() {
        for (std::size_t s = next++; s < segments; s = next++) {
            try {
                const std::size_t begin = s * params.segment_size;
                const std::size_t end = s + 1 == segments ? n : begin + params.segment_size;
                parts[s] = substitute_segment(values, begin, end, lo, hi, params, s);
            } catch (...) {
                if (!failed.exchange(true)) failure = std::current_exception();
                return;
            }
        }
    };
    const std::size_t threads = std::min(params.n_threads, segments);
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);

    result.values.reserve(n);
    for (Segment& part : parts) {
        result.values.insert(result.values.end(), part.values.begin(), part.values.end());
        result.i.insert(result.i.end(), part.i.begin(), part.i.end());
        result.j.insert(result.j.end(), part.j.begin(), part.j.end());
        result.k.insert(result.k.end(), part.k.begin(), part.k.end());
        result.relation.insert(result.relation.end(), part.relation.begin(), part.relation.end());
        result.localities += part.localities;
        result.steps_moved += part.moved;
        result.steps_rejected += part.rejected;
        part = Segment();
    }
    return result;
}

}  // namespace proxanon
