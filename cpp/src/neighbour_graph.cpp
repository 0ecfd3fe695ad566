#include "proxanon/neighbour_graph.hpp"

#include <algorithm>
#include <cstring>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <iterator>
#include <stdexcept>
#include <string>

namespace proxanon {

namespace {

/// Hash of one row's bytes (FNV-1a over the 8-byte words, then a final mix).
std::uint64_t hash_row(const double* x, std::size_t s) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < s; ++i) {
        double v = x[i] == 0.0 ? 0.0 : x[i];  // -0.0 and 0.0 are the same value
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 1099511628211ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

}  // namespace

ValueTable ValueTable::from_rows(const double* sensitive, std::size_t n, std::size_t s) {
    if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::length_error("proxanon supports at most 2^31 - 1 rows");
    }
    auto row = [&](std::int32_t r) { return sensitive + static_cast<std::size_t>(r) * s; };
    auto same = [&](std::int32_t a, std::int32_t b) {
        const double* x = row(a);
        const double* y = row(b);
        for (std::size_t i = 0; i < s; ++i) if (!(x[i] == y[i])) return false;
        return true;
    };
    // Open addressing: slot -> first row holding that value. O(n) expected.
    std::size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    std::vector<std::int32_t> slot_row(capacity, -1);
    std::vector<std::int32_t> first_row_of(n);  // representative row of each row's value
    std::vector<std::int32_t> representatives;
    for (std::size_t r = 0; r < n; ++r) {
        const auto ri = static_cast<std::int32_t>(r);
        std::size_t slot = static_cast<std::size_t>(hash_row(row(ri), s)) & (capacity - 1);
        while (slot_row[slot] >= 0 && !same(slot_row[slot], ri)) slot = (slot + 1) & (capacity - 1);
        if (slot_row[slot] < 0) {
            slot_row[slot] = ri;
            representatives.push_back(ri);
        }
        first_row_of[r] = slot_row[slot];
    }
    // Value ids follow the lexicographic order of the values, whatever the row order.
    std::sort(representatives.begin(), representatives.end(), [&](std::int32_t a, std::int32_t b) {
        const double* x = row(a);
        const double* y = row(b);
        for (std::size_t i = 0; i < s; ++i) {
            if (x[i] < y[i]) return true;
            if (y[i] < x[i]) return false;
        }
        return false;
    });
    std::vector<std::int32_t> id_of_rep(n, -1);
    ValueTable table;
    table.s = s;
    table.values.reserve(representatives.size() * s);
    for (std::size_t u = 0; u < representatives.size(); ++u) {
        const double* x = row(representatives[u]);
        for (std::size_t i = 0; i < s; ++i) table.values.push_back(x[i] == 0.0 ? 0.0 : x[i]);
        id_of_rep[static_cast<std::size_t>(representatives[u])] = static_cast<std::int32_t>(u);
    }
    table.count.assign(representatives.size(), 0);
    table.row_value.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
        const std::int32_t u = id_of_rep[static_cast<std::size_t>(first_row_of[r])];
        table.row_value[r] = u;
        table.count[static_cast<std::size_t>(u)] += 1;
    }
    return table;
}

namespace {

constexpr std::size_t kMaxGridDims = 3;
using CellKey = std::array<std::int64_t, kMaxGridDims>;

/// The grid: which components index it, the cell width along each, and per value its cell.
struct Grid {
    std::vector<std::size_t> dims;
    std::vector<double> origin;
    std::vector<double> width;

    CellKey cell_of(const double* x) const {
        CellKey key{0, 0, 0};
        for (std::size_t j = 0; j < dims.size(); ++j) {
            key[j] = static_cast<std::int64_t>(std::floor((x[dims[j]] - origin[j]) / width[j]));
        }
        return key;
    }
};

/// Picks up to three components that split the values into the most cells; a component whose
/// neighbour box is unbounded (weight 0) or covers its whole range cannot prune anything.
Grid choose_grid(const ValueTable& table, const Distance& distance) {
    const std::size_t s = table.s;
    const std::size_t u_count = table.size();
    struct Candidate { double cells; std::size_t dim; double lo; double width; };
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < s; ++i) {
        const double radius = distance.box_radius(i);
        if (!std::isfinite(radius)) continue;
        double lo = std::numeric_limits<double>::infinity();
        double hi = -lo;
        for (std::size_t u = 0; u < u_count; ++u) {
            lo = std::min(lo, table.value(u)[i]);
            hi = std::max(hi, table.value(u)[i]);
        }
        // Slightly wider than the radius so rounding in floor() never puts two neighbours
        // two cells apart.
        const double width = radius * (1.0 + 1e-9);
        const double cells = std::floor((hi - lo) / width) + 1.0;
        if (cells >= 2.0) candidates.push_back({cells, i, lo, width});
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.cells != b.cells) return a.cells > b.cells;
        return a.dim < b.dim;
    });
    Grid grid;
    for (std::size_t j = 0; j < candidates.size() && j < kMaxGridDims; ++j) {
        grid.dims.push_back(candidates[j].dim);
        grid.origin.push_back(candidates[j].lo);
        grid.width.push_back(candidates[j].width);
    }
    return grid;
}

}  // namespace

namespace {

/// Appends one value's neighbours (sorted, each once) as the next CSR row; throws
/// std::length_error past `max_entries` entries, the caller's memory guard.
void append_row(NeighbourGraph::Adjacency& adjacency, std::vector<std::int32_t>& found,
                std::size_t max_entries) {
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    adjacency.targets.insert(adjacency.targets.end(), found.begin(), found.end());
    if (adjacency.targets.size() > max_entries) {
        throw std::length_error(
            "the epsilon-neighbour graph over the distinct sensitive values exceeds " +
            std::to_string(max_entries) + " adjacency entries");
    }
    adjacency.offsets.push_back(static_cast<std::int64_t>(adjacency.targets.size()));
}

/// MinComponent neighbours: the union over components of the values whose component i lies
/// within the window of x_i. Each component's values are sorted once; a value's candidates
/// along i are one contiguous run found by binary search. O(U log U · s + output).
NeighbourGraph::Adjacency min_component_adjacency(const ValueTable& table, const Distance& distance,
                                                  std::size_t max_entries) {
    const std::size_t u_count = table.size();
    const std::size_t s = table.s;
    std::vector<std::vector<std::int32_t>> sorted(s);
    for (std::size_t i = 0; i < s; ++i) {
        auto& order = sorted[i];
        order.resize(u_count);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
            const double xa = table.value(static_cast<std::size_t>(a))[i];
            const double xb = table.value(static_cast<std::size_t>(b))[i];
            return xa != xb ? xa < xb : a < b;
        });
    }
    NeighbourGraph::Adjacency adjacency;
    adjacency.offsets.push_back(0);
    std::vector<std::int32_t> found;
    for (std::size_t u = 0; u < u_count; ++u) {
        found.clear();
        const double* x = table.value(u);
        for (std::size_t i = 0; i < s; ++i) {
            const double radius = distance.box_radius(i);
            if (!std::isfinite(radius)) continue;  // weight 0: this component is never close
            const auto& order = sorted[i];
            auto at_least = [&](double bound) {
                return std::lower_bound(order.begin(), order.end(), bound,
                    [&](std::int32_t w, double b) { return table.value(static_cast<std::size_t>(w))[i] < b; });
            };
            for (auto it = at_least(x[i] - radius); it != order.end(); ++it) {
                const double xi = table.value(static_cast<std::size_t>(*it))[i];
                if (xi > x[i] + radius) break;
                if (static_cast<std::size_t>(*it) != u &&
                    distance.within(x, table.value(static_cast<std::size_t>(*it)))) {
                    found.push_back(*it);
                }
            }
        }
        append_row(adjacency, found, max_entries);
    }
    return adjacency;
}

}  // namespace

NeighbourGraph NeighbourGraph::build(const ValueTable& table, const Distance& distance,
                                     std::size_t max_entries) {
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    if (distance.metric() == Metric::MinComponent) {
        Adjacency adjacency = min_component_adjacency(table, distance, max_entries);
        NeighbourGraph graph;
        graph.offsets_ = std::move(adjacency.offsets);
        graph.targets_ = std::move(adjacency.targets);
        return graph;
    }
    const std::size_t u_count = table.size();
    const Grid grid = choose_grid(table, distance);
    const std::size_t g = grid.dims.size();

    // Values sorted by cell; `cells` lists each occupied cell once with its first position.
    std::vector<CellKey> key(u_count);
    for (std::size_t u = 0; u < u_count; ++u) key[u] = grid.cell_of(table.value(u));
    std::vector<std::int32_t> by_cell(u_count);
    std::iota(by_cell.begin(), by_cell.end(), 0);
    std::sort(by_cell.begin(), by_cell.end(), [&](std::int32_t a, std::int32_t b) {
        const auto ua = static_cast<std::size_t>(a);
        const auto ub = static_cast<std::size_t>(b);
        if (key[ua] != key[ub]) return key[ua] < key[ub];
        return a < b;
    });
    std::vector<CellKey> cells;
    std::vector<std::size_t> cell_start;
    for (std::size_t i = 0; i < u_count; ++i) {
        const CellKey& k = key[static_cast<std::size_t>(by_cell[i])];
        if (cells.empty() || cells.back() != k) {
            cells.push_back(k);
            cell_start.push_back(i);
        }
    }
    cell_start.push_back(u_count);

    std::size_t offset_count = 1;
    for (std::size_t j = 0; j < g; ++j) offset_count *= 3;

    Adjacency adjacency;
    adjacency.offsets.reserve(u_count + 1);
    adjacency.offsets.push_back(0);
    std::vector<std::int32_t> found;
    for (std::size_t u = 0; u < u_count; ++u) {
        found.clear();
        const double* x = table.value(u);
        for (std::size_t o = 0; o < offset_count; ++o) {
            CellKey target = key[u];
            std::size_t code = o;
            for (std::size_t j = 0; j < g; ++j) {
                target[j] += static_cast<std::int64_t>(code % 3) - 1;
                code /= 3;
            }
            const auto it = std::lower_bound(cells.begin(), cells.end(), target);
            if (it == cells.end() || *it != target) continue;
            const auto c = static_cast<std::size_t>(it - cells.begin());
            for (std::size_t i = cell_start[c]; i < cell_start[c + 1]; ++i) {
                const std::int32_t w = by_cell[i];
                if (static_cast<std::size_t>(w) == u) continue;
                if (distance.within(x, table.value(static_cast<std::size_t>(w)))) {
                    found.push_back(w);
                }
            }
        }
        append_row(adjacency, found, max_entries);
    }
    NeighbourGraph graph;
    graph.offsets_ = std::move(adjacency.offsets);
    graph.targets_ = std::move(adjacency.targets);
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

ValueTable ValueTable::from_labels(std::vector<std::int32_t> row_value, std::size_t values) {
    ValueTable table;
    table.s = 0;
    table.count.assign(values, 0);
    for (std::int32_t u : row_value) {
        if (u < 0 || static_cast<std::size_t>(u) >= values) {
            throw std::invalid_argument("value ids must lie in 0..values-1");
        }
        table.count[static_cast<std::size_t>(u)] += 1;
    }
    for (std::size_t u = 0; u < values; ++u) {
        if (table.count[u] == 0) throw std::invalid_argument("every value id must be used by a row");
    }
    table.row_value = std::move(row_value);
    return table;
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
