#include "proxanon/neighbours/neighbour_graph.hpp"

#include "proxanon/neighbours/box_tree.hpp"
#include "proxanon/common/parallel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace proxanon {

namespace {

constexpr std::size_t kMaxGridDims = 3;
/// Cells per grid component at most: keys stay far inside int64 whatever the range of the
/// values or the size of epsilon (cells are widened instead; still correct, only coarser).
constexpr double kMaxCellsPerDim = 1099511627776.0;  // 2^40
/// Values whose neighbours are counted exactly to estimate a graph's size before refusing it:
/// as many as kSampleWork candidate tests allow, within [kMinSample, kMaxSample].
constexpr std::size_t kMinSample = 256, kMaxSample = 4096;
constexpr double kSampleWork = 2e7;
/// A graph whose sampled size exceeds the cap by this factor is refused on the estimate; in
/// between, an exact count decides (as slow as building, but allocating nothing).
constexpr double kEstimateMargin = 1.25;
using CellKey = std::array<std::int64_t, kMaxGridDims>;

/// Finds the neighbours of one value without storing the graph. Grid (L1, L2, Linf): values
/// sorted by cell, up to three components indexed; MinComponent: each component's values
/// sorted, a value's candidates along i are one run. Cost per value: its candidates.
class NeighbourFinder {
public:
    NeighbourFinder(const ValueTable& table, const Distance& distance)
        : table_(table), distance_(distance) {
        if (distance.metric() == Metric::MinComponent) index_components(); else index_grid();
    }

    /// Appends the neighbours of u (not u itself; MinComponent may repeat one) to `found`.
    void neighbours(std::size_t u, std::vector<std::int32_t>& found) const {
        if (distance_.metric() == Metric::MinComponent) component_neighbours(u, found);
        else grid_neighbours(u, found);
    }

    /// An upper bound on the adjacency entries: the candidate pairs the search would test.
    /// O(U · 3^g log cells) or O(U · s log U).
    std::uint64_t candidate_bound() const {
        std::uint64_t total = 0;
        if (distance_.metric() == Metric::MinComponent) {
            for (std::size_t u = 0; u < table_.size(); ++u) {
                for (std::size_t i = 0; i < table_.s; ++i) {
                    const auto [lo, hi] = component_run(u, i);
                    total += static_cast<std::uint64_t>(hi - lo);
                }
            }
            return total;
        }
        for (std::size_t c = 0; c + 1 < cell_start_.size(); ++c) {
            std::uint64_t around = 0;
            for_adjacent_cells(cells_[c], [&](std::size_t d) {
                around += cell_start_[d + 1] - cell_start_[d];
            });
            const std::uint64_t own = cell_start_[c + 1] - cell_start_[c];
            total += own * (around - 1);
        }
        return total;
    }

private:
    void index_grid() {
        const std::size_t u_count = table_.size();
        struct Candidate { double cells; std::size_t dim; double lo; double width; };
        std::vector<Candidate> candidates;
        for (std::size_t i = 0; i < table_.s; ++i) {
            const double radius = distance_.box_radius(i);
            if (!std::isfinite(radius)) continue;
            double lo = std::numeric_limits<double>::infinity();
            double hi = -lo;
            for (std::size_t u = 0; u < u_count; ++u) {
                lo = std::min(lo, table_.value(u)[i]);
                hi = std::max(hi, table_.value(u)[i]);
            }
            const double span = hi - lo;
            // A span beyond double range cannot be cut into cells; the component then does
            // not prune (the distance of such far values overflows to inf: not neighbours).
            if (!std::isfinite(span)) continue;
            const double width = std::max(radius * (1.0 + kCellWidening), span / kMaxCellsPerDim);
            const double cells = std::floor(span / width) + 1.0;
            if (cells >= 2.0) candidates.push_back({cells, i, lo, width});
        }
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            if (a.cells != b.cells) return a.cells > b.cells;
            return a.dim < b.dim;
        });
        for (std::size_t j = 0; j < candidates.size() && j < kMaxGridDims; ++j) {
            dims_.push_back(candidates[j].dim);
            origin_.push_back(candidates[j].lo);
            width_.push_back(candidates[j].width);
        }
        key_.resize(u_count);
        for (std::size_t u = 0; u < u_count; ++u) key_[u] = cell_of(table_.value(u));
        order_.resize(u_count);
        std::iota(order_.begin(), order_.end(), 0);
        std::sort(order_.begin(), order_.end(), [&](std::int32_t a, std::int32_t b) {
            const auto ua = static_cast<std::size_t>(a);
            const auto ub = static_cast<std::size_t>(b);
            if (key_[ua] != key_[ub]) return key_[ua] < key_[ub];
            return a < b;
        });
        for (std::size_t i = 0; i < u_count; ++i) {
            const CellKey& k = key_[static_cast<std::size_t>(order_[i])];
            if (cells_.empty() || cells_.back() != k) {
                cells_.push_back(k);
                cell_start_.push_back(i);
            }
        }
        cell_start_.push_back(u_count);
        // The values again in cell order, so that scanning a cell reads memory in sequence.
        const std::size_t s = table_.s;
        ordered_.resize(u_count * s);
        for (std::size_t i = 0; i < u_count; ++i) {
            const double* x = table_.value(static_cast<std::size_t>(order_[i]));
            std::copy(x, x + s, ordered_.begin() + static_cast<std::ptrdiff_t>(i * s));
        }
    }

    const double* ordered(std::size_t i) const { return ordered_.data() + i * table_.s; }

    CellKey cell_of(const double* x) const {
        CellKey key{0, 0, 0};
        for (std::size_t j = 0; j < dims_.size(); ++j) {
            key[j] = static_cast<std::int64_t>(std::floor((x[dims_[j]] - origin_[j]) / width_[j]));
        }
        return key;
    }

    /// Calls f(index of cell) for every occupied cell within one step of `centre`, itself too.
    template <typename F>
    void for_adjacent_cells(const CellKey& centre, F&& f) const {
        std::size_t offsets = 1;
        for (std::size_t j = 0; j < dims_.size(); ++j) offsets *= 3;
        for (std::size_t o = 0; o < offsets; ++o) {
            CellKey target = centre;
            std::size_t code = o;
            for (std::size_t j = 0; j < dims_.size(); ++j) {
                target[j] += static_cast<std::int64_t>(code % 3) - 1;
                code /= 3;
            }
            const auto it = std::lower_bound(cells_.begin(), cells_.end(), target);
            if (it != cells_.end() && *it == target) f(static_cast<std::size_t>(it - cells_.begin()));
        }
    }

    void grid_neighbours(std::size_t u, std::vector<std::int32_t>& found) const {
        const double* x = table_.value(u);
        for_adjacent_cells(key_[u], [&](std::size_t c) {
            for (std::size_t i = cell_start_[c]; i < cell_start_[c + 1]; ++i) {
                const std::int32_t w = order_[i];
                if (static_cast<std::size_t>(w) != u && distance_.within(x, ordered(i))) found.push_back(w);
            }
        });
    }

    void index_components() {
        sorted_.resize(table_.s);
        for (std::size_t i = 0; i < table_.s; ++i) {
            auto& order = sorted_[i];
            order.resize(table_.size());
            std::iota(order.begin(), order.end(), 0);
            std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
                const double xa = table_.value(static_cast<std::size_t>(a))[i];
                const double xb = table_.value(static_cast<std::size_t>(b))[i];
                return xa != xb ? xa < xb : a < b;
            });
        }
    }

    /// Positions [lo, hi) in sorted_[i] of the values within u's window along component i.
    std::pair<std::size_t, std::size_t> component_run(std::size_t u, std::size_t i) const {
        // Widened like a grid cell, so that rounding never leaves a close value outside.
        const double radius = distance_.box_radius(i) * (1.0 + kCellWidening);
        if (!std::isfinite(radius)) return {0, 0};  // weight 0: this component is never close
        const double xi = table_.value(u)[i];
        const auto& order = sorted_[i];
        const auto value = [&](std::int32_t w) { return table_.value(static_cast<std::size_t>(w))[i]; };
        const auto lo = std::lower_bound(order.begin(), order.end(), xi - radius,
                                         [&](std::int32_t w, double b) { return value(w) < b; });
        const auto hi = std::upper_bound(lo, order.end(), xi + radius,
                                         [&](double b, std::int32_t w) { return b < value(w); });
        return {static_cast<std::size_t>(lo - order.begin()), static_cast<std::size_t>(hi - order.begin())};
    }

public:
    /// MinComponent: the sum of count over the neighbours of u other than u itself, without
    /// storing them; a neighbour is counted along the first component that makes it one.
    std::int64_t component_weight(std::size_t u) const {
        const double* x = table_.value(u);
        std::int64_t total = 0;
        const auto weigh = [&](std::int32_t w) { total += table_.count[static_cast<std::size_t>(w)]; };
        for (std::size_t i = 0; i < table_.s; ++i) {
            const auto [lo, hi] = component_run(u, i);
            for (std::size_t p = lo; p < hi; ++p) {
                const std::int32_t w = sorted_[i][p];
                const double* y = table_.value(static_cast<std::size_t>(w));
                if (static_cast<std::size_t>(w) == u || !distance_.close_in(i, x, y)) continue;
                bool earlier = false;
                for (std::size_t j = 0; j < i && !earlier; ++j) earlier = distance_.close_in(j, x, y);
                if (!earlier) weigh(w);
            }
        }
        return total;
    }

    /// The row degree of every value (count - 1 plus the counts of its neighbours), Grid
    /// only: each pair of values in adjacent cells is tested once, and the adjacent cells
    /// are looked up once per unit of values, not once per value; about half the tests of
    /// a search per value (within() is symmetric). Units of up to 64 values of a
    /// cell are taken by up to 8 workers (parallel_for_slots), each adding into its own
    /// counts; integer sums, so the degrees are the same for any number of threads. The
    /// calling thread polls `interrupt` between its units. Memory: one count per value and
    /// worker.
    std::vector<std::int64_t> grid_degrees(std::size_t threads, Interrupt* interrupt) const {
        const std::size_t workers = std::min<std::size_t>(thread_count(threads), 8);
        const std::size_t u_count = table_.size();
        std::vector<std::vector<std::int64_t>> part(workers, std::vector<std::int64_t>(u_count, 0));
        // Units of work: up to kUnit values of one cell (crowded cells are split, so that
        // skewed values still spread over the workers).
        constexpr std::size_t kUnit = 64;
        std::vector<std::pair<std::size_t, std::size_t>> units;  // (cell, first value position)
        for (std::size_t c = 0; c + 1 < cell_start_.size(); ++c) {
            for (std::size_t i = cell_start_[c]; i < cell_start_[c + 1]; i += kUnit) units.emplace_back(c, i);
        }
        parallel_for_slots(units.size(), workers, interrupt, [&](std::size_t w, std::size_t q) {
            const auto [c, first] = units[q];
            pair_cell(c, first, std::min(first + kUnit, cell_start_[c + 1]), part[w]);
        });
        std::vector<std::int64_t> degree(u_count);
        for (std::size_t u = 0; u < u_count; ++u) {
            std::int64_t d = table_.count[u] - 1;
            for (const auto& p : part) d += p[u];
            degree[u] = d;
        }
        return degree;
    }

    bool grid() const { return distance_.metric() != Metric::MinComponent; }
    /// The components the grid indexes (at most three).
    std::size_t grid_dims() const { return dims_.size(); }

private:
    /// Adds to `degree` the neighbour counts of the pairs of a value at positions [from, to)
    /// of cell c with a later value of c or a value of an adjacent cell d > c (pairs with
    /// d < c are d's).
    void pair_cell(std::size_t c, std::size_t from, std::size_t to, std::vector<std::int64_t>& degree) const {
        const std::size_t s = table_.s;
        for_adjacent_cells(cells_[c], [&](std::size_t d) {
            if (d < c) return;
            for (std::size_t i = from; i < to; ++i) {
                const auto a = static_cast<std::size_t>(order_[i]);
                const double* x = ordered(i);
                for (std::size_t j = d == c ? i + 1 : cell_start_[d]; j < cell_start_[d + 1]; ++j) {
                    if (!distance_.within(x, ordered_.data() + j * s)) continue;
                    const auto b = static_cast<std::size_t>(order_[j]);
                    degree[a] += table_.count[b];
                    degree[b] += table_.count[a];
                }
            }
        });
    }

    void component_neighbours(std::size_t u, std::vector<std::int32_t>& found) const {
        const double* x = table_.value(u);
        for (std::size_t i = 0; i < table_.s; ++i) {
            const auto [lo, hi] = component_run(u, i);
            for (std::size_t p = lo; p < hi; ++p) {
                const std::int32_t w = sorted_[i][p];
                if (static_cast<std::size_t>(w) != u && distance_.within(x, table_.value(static_cast<std::size_t>(w)))) {
                    found.push_back(w);
                }
            }
        }
    }

    const ValueTable& table_;
    const Distance& distance_;
    std::vector<std::size_t> dims_;   ///< grid: the components that index it
    std::vector<double> origin_, width_;
    std::vector<CellKey> key_;        ///< grid: cell of each value
    std::vector<std::int32_t> order_; ///< grid: values sorted by cell
    std::vector<double> ordered_;     ///< grid: their coordinates, in that order
    std::vector<CellKey> cells_;      ///< grid: each occupied cell once, sorted
    std::vector<std::size_t> cell_start_;
    std::vector<std::vector<std::int32_t>> sorted_;  ///< MinComponent: values by component
};

/// Sorts and deduplicates one value's neighbours.
void normalize(std::vector<std::int32_t>& found) {
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
}

std::string megabytes(std::uint64_t bytes) {
    char text[32];
    const double size = static_cast<double>(bytes);
    if (size >= 1e9) std::snprintf(text, sizeof text, "%.1f GB", size / 1e9);
    else std::snprintf(text, sizeof text, "%.1f MB", size / 1e6);
    return text;
}

[[noreturn]] void refuse(std::uint64_t entries, const char* how, std::size_t values,
                         std::size_t max_entries) {
    const std::uint64_t bytes = entries * sizeof(std::int32_t) + (values + 1) * sizeof(std::int64_t);
    throw GraphTooDense(
        "the epsilon-neighbour graph over the " + std::to_string(values) +
        " distinct sensitive values would hold " + how + " " + std::to_string(entries) +
        " adjacency entries and need " + how + " " + megabytes(bytes) + ", above the cap of " +
        std::to_string(max_entries) + " entries (" +
        megabytes(max_entries * sizeof(std::int32_t)) + ")", entries, bytes);
}

/// Refuses, before anything is stored, a graph of more than `max_entries` entries. Free when
/// the candidate pairs fit under the cap; otherwise a sample of values evenly spread over the
/// ids estimates the size (refused past kEstimateMargin times the cap), and an exact count,
/// stopping at the cap, settles the rest.
void check_size(const NeighbourFinder& finder, std::size_t values, std::size_t max_entries,
                Interrupt* interrupt) {
    const std::uint64_t candidates = finder.candidate_bound();
    if (candidates <= max_entries) return;
    std::vector<std::int32_t> found;
    const double per_value = static_cast<double>(candidates) / static_cast<double>(values);
    const auto sample = static_cast<std::size_t>(
        std::clamp(kSampleWork / per_value, double(kMinSample), double(kMaxSample)));
    const std::size_t step = std::max<std::size_t>(1, values / sample);
    std::uint64_t sampled = 0, seen = 0;
    for (std::size_t u = 0; u < values; u += step) {
        poll(interrupt);
        found.clear();
        finder.neighbours(u, found);
        normalize(found);
        sampled += found.size();
        ++seen;
    }
    const std::uint64_t estimate = sampled * values / seen;
    if (static_cast<double>(estimate) > kEstimateMargin * static_cast<double>(max_entries)) {
        refuse(estimate, "about", values, max_entries);
    }
    std::uint64_t total = 0;
    for (std::size_t u = 0; u < values; ++u) {
        poll(interrupt);
        found.clear();
        finder.neighbours(u, found);
        normalize(found);
        total += found.size();
        if (total > max_entries) refuse(total, "more than", values, max_entries);
    }
}

}  // namespace

std::optional<NeighbourGraph> small_value_graph(const ValueTable& table, const Distance& distance,
                                                std::size_t max_entries, Interrupt* interrupt) {
    std::size_t rows = 0;
    for (const std::int64_t c : table.count) rows += static_cast<std::size_t>(c);
    const std::size_t cap = std::min(max_entries, kGraphWorkPerRow * rows);
    try {
        NeighbourGraph graph = NeighbourGraph::build(table, distance, cap, interrupt);
        std::size_t work = 0;
        for (std::size_t u = 0; u < graph.size(); ++u) work += static_cast<std::size_t>(table.count[u]) * graph.degree(u);
        if (work <= kGraphWorkPerRow * rows) return graph;
    } catch (const GraphTooDense&) {
    }
    return std::nullopt;
}

NeighbourGraph NeighbourGraph::build(const ValueTable& table, const Distance& distance,
                                     std::size_t max_entries, Interrupt* interrupt) {
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    const std::size_t u_count = table.size();
    const NeighbourFinder finder(table, distance);
    check_size(finder, u_count, max_entries, interrupt);
    NeighbourGraph graph;
    graph.offsets_.reserve(u_count + 1);
    graph.offsets_.push_back(0);
    std::vector<std::int32_t> found;
    for (std::size_t u = 0; u < u_count; ++u) {
        poll(interrupt);
        found.clear();
        finder.neighbours(u, found);
        normalize(found);
        graph.targets_.insert(graph.targets_.end(), found.begin(), found.end());
        graph.offsets_.push_back(static_cast<std::int64_t>(graph.targets_.size()));
    }
    return graph;
}

NeighbourGraph NeighbourGraph::from_csr(std::vector<std::int64_t> offsets,
                                        std::vector<std::int32_t> targets) {
    if (offsets.empty() || offsets.front() != 0 ||
        offsets.back() != static_cast<std::int64_t>(targets.size())) {
        throw std::invalid_argument("CSR offsets must start at 0 and end at len(targets)");
    }
    const auto u_count = static_cast<std::int64_t>(offsets.size() - 1);
    for (std::size_t u = 0; u + 1 < offsets.size(); ++u) {
        if (offsets[u + 1] < offsets[u]) throw std::invalid_argument("CSR offsets must not decrease");
        std::sort(targets.begin() + offsets[u], targets.begin() + offsets[u + 1]);
        for (auto i = offsets[u]; i < offsets[u + 1]; ++i) {
            const auto t = static_cast<std::size_t>(i);
            if (targets[t] < 0 || targets[t] >= u_count || static_cast<std::size_t>(targets[t]) == u) {
                throw std::invalid_argument("CSR targets must be other value ids");
            }
            if (i > offsets[u] && targets[t] == targets[t - 1]) {
                throw std::invalid_argument("CSR targets must not repeat");
            }
        }
    }
    NeighbourGraph graph;
    graph.offsets_ = std::move(offsets);
    graph.targets_ = std::move(targets);
    for (std::size_t u = 0; u < graph.size(); ++u) {
        for (const std::int32_t* p = graph.begin(u); p != graph.end(u); ++p) {
            if (!graph.adjacent(*p, static_cast<std::int32_t>(u))) {
                throw std::invalid_argument("CSR adjacency must be symmetric");
            }
        }
    }
    return graph;
}

bool NeighbourGraph::adjacent(std::int32_t a, std::int32_t b) const {
    if (a == b) return true;
    const auto ua = static_cast<std::size_t>(a);
    return std::binary_search(begin(ua), end(ua), b);
}

std::vector<std::int64_t> implicit_row_degrees(const ValueTable& table, const Distance& distance,
                                               std::size_t threads, Interrupt* interrupt) {
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    const NeighbourFinder finder(table, distance);
    if (finder.grid()) {
        const std::size_t above = finder.grid_dims() < 3 ? kTreeAbove : 2 * kTreeAbove;
        if (finder.candidate_bound() > above * table.size()) {
            return box_tree_degrees(table, distance, threads, interrupt);
        }
        return finder.grid_degrees(threads, interrupt);
    }
    std::vector<std::int64_t> degree(table.size());
    parallel_for(table.size(), threads, interrupt, [&](std::size_t u) {
        degree[u] = table.count[u] - 1 + finder.component_weight(u);
    });
    return degree;
}

std::vector<std::int64_t> row_degrees(const ValueTable& table, const NeighbourGraph& graph) {
    std::vector<std::int64_t> degree(table.size());
    for (std::size_t u = 0; u < table.size(); ++u) {
        std::int64_t d = table.count[u] - 1;
        for (const std::int32_t* p = graph.begin(u); p != graph.end(u); ++p) {
            d += table.count[static_cast<std::size_t>(*p)];
        }
        degree[u] = d;
    }
    return degree;
}

}  // namespace proxanon
