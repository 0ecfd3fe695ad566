#include "proxanon/neighbours/neighbours.hpp"

#include "proxanon/common/parallel.hpp"

#include <algorithm>
#include <stdexcept>

namespace proxanon {

namespace {
constexpr std::size_t kDenseValues = 8192;  ///< up to 8 MiB of adjacency bits
}  // namespace

Structure parse_structure(const std::string& name) {
    if (name == "auto") return Structure::Auto;
    if (name == "graph") return Structure::Graph;
    if (name == "sorted") return Structure::Sorted;
    if (name == "grid") return Structure::Grid;
    throw std::invalid_argument("neighbours must be 'auto', 'graph', 'sorted' or 'grid', got '" +
                                name + "'");
}

const char* structure_name(Structure structure) {
    switch (structure) {
    case Structure::Auto: return "auto";
    case Structure::Graph: return "graph";
    case Structure::Sorted: return "sorted";
    case Structure::Grid: return "grid";
    }
    return "auto";
}

Structure choose_structure(Structure asked, const ValueTable& table, const Distance& distance) {
    if (asked == Structure::Sorted && table.s != 1) {
        throw std::invalid_argument("neighbours='sorted' needs a sensitive attribute of one component, got " +
                                    std::to_string(table.s) + "; use 'grid' or 'auto'");
    }
    if (asked != Structure::Auto) return asked;
    if (table.size() <= kImplicitAbove) return Structure::Graph;
    if (table.s == 1) return Structure::Sorted;
    const auto& w = distance.weights();
    const bool indexable = std::any_of(w.begin(), w.end(), [](double x) { return x > 0.0; });
    return indexable ? Structure::Grid : Structure::Graph;
}

Neighbours::Neighbours(const ValueTable& table, NeighbourGraph graph, Interrupt* interrupt)
    : structure_(Structure::Graph), table_(&table), graph_(std::move(graph)) {
    if (graph_.size() != table.size()) throw std::invalid_argument("graph and value table differ in size");
    poll(interrupt);
    degree_ = proxanon::row_degrees(table, graph_);
    const std::size_t values = graph_.size();
    if (values <= kDenseValues) {
        dense_.assign((values * values + 63) / 64, 0);
        for (std::size_t u = 0; u < values; ++u) {
            dense_[(u * values + u) >> 6] |= std::uint64_t{1} << ((u * values + u) & 63);
            for (const std::int32_t* p = graph_.begin(u); p != graph_.end(u); ++p) {
                const std::size_t bit = u * values + static_cast<std::size_t>(*p);
                dense_[bit >> 6] |= std::uint64_t{1} << (bit & 63);
            }
        }
    }
}

Neighbours::Neighbours(const ValueTable& table, const Distance& distance, Structure structure,
                       std::size_t threads, Interrupt* interrupt)
    : structure_(structure), table_(&table), distance_(distance) {
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    if (structure == Structure::Sorted) {
        if (table.s != 1) throw std::invalid_argument("the sorted structure needs one component");
        sorted_degrees(threads, interrupt);
    } else if (structure == Structure::Grid) {
        degree_ = implicit_row_degrees(table, distance, threads, interrupt);
    } else {
        throw std::invalid_argument("an implicit structure is Sorted or Grid");
    }
}

/// The values are in ascending order (ValueTable's order for one component) and fl(x - y) is
/// monotone in y, so for every built-in metric the neighbours of u at or above it are a
/// prefix of [u, U) and those below it a suffix of [0, u): the first neighbour below and the
/// end of those above never move back as u grows. Each block of kSortedBlock values finds
/// its first value's by two binary searches with the exact test, then walks both pointers
/// forward (binary searches for every value jumped across a million values and missed cache
/// at every step); prefix sums of the counts give the degrees. O(U log U) at worst.
void Neighbours::sorted_degrees(std::size_t threads, Interrupt* interrupt) {
    const ValueTable& t = *table_;
    const std::size_t values = t.size();
    std::vector<std::int64_t> before(values + 1, 0);  // rows of the values below each id
    for (std::size_t u = 0; u < values; ++u) before[u + 1] = before[u] + t.count[u];
    degree_.assign(values, 0);
    first_.assign(values, 0);
    last_.assign(values, 0);
    constexpr std::size_t kSortedBlock = 4096;
    const std::size_t blocks = (values + kSortedBlock - 1) / kSortedBlock;
    parallel_for(blocks, threads, interrupt, [&](std::size_t b) {
        const std::size_t from = b * kSortedBlock;
        const std::size_t to = std::min(values, from + kSortedBlock);
        const double* x = t.value(from);
        std::size_t lo = 0, hi = from;  // first neighbour below `from`: in [0, from]
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (distance_->within(x, t.value(mid))) hi = mid; else lo = mid + 1;
        }
        std::size_t first = lo;
        lo = from + 1;
        hi = values;  // one past the last neighbour above `from`: in [from + 1, U]
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (distance_->within(x, t.value(mid))) lo = mid + 1; else hi = mid;
        }
        std::size_t last = lo;
        for (std::size_t u = from; u < to; ++u) {
            x = t.value(u);
            while (first < u && !distance_->within(x, t.value(first))) ++first;
            last = std::max(last, u + 1);
            while (last < values && distance_->within(x, t.value(last))) ++last;
            degree_[u] = before[last] - before[first] - 1;
            first_[u] = static_cast<std::int32_t>(first);
            last_[u] = static_cast<std::int32_t>(last);
        }
    });
}

Neighbours Neighbours::build(const ValueTable& table, const Distance& distance, Structure asked,
                             std::size_t max_entries, std::size_t threads,
                             Interrupt* interrupt) {
    const Structure structure = choose_structure(asked, table, distance);
    if (structure == Structure::Graph) {
        return Neighbours(table, NeighbourGraph::build(table, distance, max_entries, interrupt), interrupt);
    }
    if (asked == Structure::Auto && structure == Structure::Grid) {
        // Many values but few neighbours each (coded census attributes): a stored graph
        // answers counts from adjacency lists, where a grid searches cells every time.
        if (std::optional<NeighbourGraph> graph = small_value_graph(table, distance, max_entries, interrupt)) {
            return Neighbours(table, std::move(*graph), interrupt);
        }
    }
    return Neighbours(table, distance, structure, threads, interrupt);
}

Neighbours Neighbours::for_checks(const ValueTable& table, const Distance& distance,
                                  std::size_t max_entries, Interrupt* interrupt, bool grid_fallback) {
    const Structure structure = choose_structure(Structure::Auto, table, distance);
    if (structure != Structure::Grid) return build(table, distance, structure, max_entries, 1, interrupt);
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    // Checks sum a value's neighbours over and over: from a stored graph that is a pass over
    // its adjacency, from a grid a search of adjacent cells. The graph is kept when it fits.
    try {
        return Neighbours(table, NeighbourGraph::build(table, distance, max_entries, interrupt), interrupt);
    } catch (const GraphTooDense&) {
        if (!grid_fallback) throw;
        return Neighbours(table, distance, ChecksOnly{});
    }
}

Neighbours::Neighbours(const ValueTable& table, const Distance& distance, ChecksOnly)
    : structure_(Structure::Grid), table_(&table), distance_(distance) {}

NeighbourCount::NeighbourCount(const Neighbours& neighbours)
    : nb_(neighbours), graph_(neighbours.graph()),
      sorted_(neighbours.structure() == Structure::Sorted) {
    if (graph_) count_.assign(neighbours.size(), 0);
}

void NeighbourCount::clear() {
    for (std::int32_t w : touched_) count_[static_cast<std::size_t>(w)] = 0;
    touched_.clear();
    added_.clear();
    ordered_ = false;
}

void NeighbourCount::add(std::int32_t u, std::int32_t times) {
    if (!graph_) {
        added_.emplace_back(u, times);
        ordered_ = false;
        return;
    }
    auto bump = [&](std::int32_t w) {
        auto& c = count_[static_cast<std::size_t>(w)];
        if (c == 0) touched_.push_back(w);
        c += times;
    };
    bump(u);
    const auto uu = static_cast<std::size_t>(u);
    for (const std::int32_t* p = graph_->begin(uu); p != graph_->end(uu); ++p) bump(*p);
}

/// The values added within w's interval [first, last) of value ids: after sorting what was
/// added (once per batch of adds), two binary searches and a difference of running sums.
std::int32_t NeighbourCount::count_sorted(std::int32_t w) const {
    if (!ordered_) {
        std::sort(added_.begin(), added_.end());
        prefix_.assign(added_.size() + 1, 0);
        for (std::size_t i = 0; i < added_.size(); ++i) prefix_[i + 1] = prefix_[i] + added_[i].second;
        ordered_ = true;
    }
    const auto [lo, hi] = nb_.in_interval(added_.begin(), added_.end(), w,
                                          [](const std::pair<std::int32_t, std::int32_t>& x) { return x.first; });
    return prefix_[static_cast<std::size_t>(hi - added_.begin())] -
           prefix_[static_cast<std::size_t>(lo - added_.begin())];
}

}  // namespace proxanon
