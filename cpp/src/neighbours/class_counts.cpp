#include "proxanon/neighbours/class_counts.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "proxanon/common/ordering.hpp"
#include "proxanon/common/parallel.hpp"

namespace proxanon {

void count_in_class(const ValueTable& table, const Distance& distance, const std::int32_t* rows,
                    std::size_t m, std::int64_t* out) {
    // (value, position in the class) packed in one key and radix sorted (std::sort of the
    // pairs was a third of a check): runs of one value give its multiplicity.
    // Scratch kept per thread: called once per class (100k classes of 10 rows at 1M rows),
    // its allocations cost more than its counting.
    thread_local std::vector<std::uint64_t> by_value, spare;
    thread_local std::vector<std::int32_t> value;      // distinct values of the class
    thread_local std::vector<std::int64_t> times;      // their multiplicities
    thread_local std::vector<std::size_t> index_of;    // per position: its value's index in `value`
    by_value.resize(m);
    value.clear();
    times.clear();
    index_of.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
        by_value[i] = static_cast<std::uint64_t>(table.row_value[static_cast<std::size_t>(rows[i])]) << 32 | i;
    }
    radix_sort(by_value, spare);
    for (std::size_t i = 0; i < m; ++i) {
        const auto v = static_cast<std::int32_t>(by_value[i] >> 32);
        if (i == 0 || v != value.back()) {
            value.push_back(v);
            times.push_back(0);
        }
        times.back() += 1;
        index_of[by_value[i] & 0xffffffffULL] = value.size() - 1;
    }
    const std::size_t u = value.size();
    thread_local std::vector<std::int64_t> count;
    count.assign(u, 0);
    if (u <= kPairwiseValues) {
        for (std::size_t a = 0; a < u; ++a) {
            std::int64_t c = times[a] - 1;
            const double* x = table.value(static_cast<std::size_t>(value[a]));
            for (std::size_t b = 0; b < u; ++b) {
                if (b != a && distance.within(x, table.value(static_cast<std::size_t>(value[b])))) c += times[b];
            }
            count[a] = c;
        }
    } else if (table.s == 1) {
        // One component: value ids ascend with the value (ValueTable::from_rows), so the
        // class's values in order lie on a line.
        std::vector<std::int64_t> before(u + 1, 0);
        for (std::size_t i = 0; i < u; ++i) before[i + 1] = before[i] + times[i];
        const auto near = [&](std::size_t a, std::size_t b) {
            return distance.within(table.value(static_cast<std::size_t>(value[a])),
                                   table.value(static_cast<std::size_t>(value[b])));
        };
        for_each_line_run(u, near, [&](std::size_t i, std::size_t first, std::size_t last) {
            count[i] = before[last] - before[first] - 1;
        });
    } else {
        // The class's values as a table of their own, multiplicities as counts: the row
        // degree of a value there is D_V of every member holding it.
        ValueTable own;
        own.s = table.s;
        own.values.reserve(u * table.s);
        for (const std::int32_t v : value) {
            const double* x = table.value(static_cast<std::size_t>(v));
            own.values.insert(own.values.end(), x, x + table.s);
        }
        own.count = std::move(times);
        count = implicit_row_degrees(own, distance, 1, nullptr);
    }
    for (std::size_t i = 0; i < m; ++i) out[i] = count[index_of[i]];
}

GraphClassCounter::GraphClassCounter(const ValueTable& table, const NeighbourGraph& graph)
    : table_(table), graph_(graph), times_(table.size(), 0) {
    if (graph.size() != table.size()) throw std::invalid_argument("graph and value table differ in size");
}

void GraphClassCounter::count(const std::int32_t* rows, std::size_t m, std::int64_t* out) {
    const auto at = [](std::int32_t v) { return static_cast<std::size_t>(v); };
    distinct_.clear();
    for (std::size_t i = 0; i < m; ++i) {
        const std::int32_t u = table_.row_value[at(rows[i])];
        if (times_[at(u)]++ == 0) distinct_.push_back(u);
    }
    degree_.resize(distinct_.size());
    for (std::size_t a = 0; a < distinct_.size(); ++a) {
        const std::int32_t u = distinct_[a];
        std::int64_t c = times_[at(u)] - 1;
        for (const std::int32_t* w = graph_.begin(at(u)); w != graph_.end(at(u)); ++w) c += times_[at(*w)];
        degree_[a] = c;
    }
    // The class's values in `times_` now hold their count (read per row), then zero again.
    for (std::size_t a = 0; a < distinct_.size(); ++a) times_[at(distinct_[a])] = static_cast<std::int32_t>(degree_[a]);
    for (std::size_t i = 0; i < m; ++i) out[i] = times_[at(table_.row_value[at(rows[i])])];
    for (const std::int32_t u : distinct_) times_[at(u)] = 0;
}

ClassRuns class_runs(const std::vector<std::int64_t>& labels) {
    // A stable radix order of the kept rows by label, O(n) per 11 bits of the largest label
    // (one counting pass for group ids).
    std::vector<std::int32_t> kept;
    std::vector<std::uint64_t> keys;
    kept.reserve(labels.size());
    keys.reserve(labels.size());
    for (std::size_t r = 0; r < labels.size(); ++r) {
        if (labels[r] < 0) continue;
        kept.push_back(static_cast<std::int32_t>(r));
        keys.push_back(static_cast<std::uint64_t>(labels[r]));
    }
    const std::vector<std::int64_t> order = radix_order(keys);
    ClassRuns runs;
    runs.rows.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        const auto o = static_cast<std::size_t>(order[i]);
        runs.rows[i] = kept[o];
        if (i == 0 || keys[o] != keys[static_cast<std::size_t>(order[i - 1])]) runs.start.push_back(i);
    }
    runs.start.push_back(order.size());
    return runs;
}

namespace {

/// The counts of `runs`' rows, in their order, over `graph` when given, else by
/// count_in_class for `distance`.
std::vector<std::int64_t> counts_of_runs(const ValueTable& table, const NeighbourGraph* graph,
                                         const Distance* distance, const ClassRuns& runs,
                                         std::size_t threads, Interrupt* interrupt) {
    std::vector<std::int64_t> counts(runs.rows.size());
    const auto& start = runs.start;
    for_each_class_count(
        table, graph, distance, start.size() - 1,
        [&](std::size_t c) { return std::pair<const std::int32_t*, std::size_t>(runs.rows.data() + start[c], start[c + 1] - start[c]); },
        [&](std::size_t c, const std::int64_t* got) { std::copy(got, got + (start[c + 1] - start[c]), counts.begin() + static_cast<std::ptrdiff_t>(start[c])); },
        threads, interrupt);
    return counts;
}

/// counts_of_runs per row of `labels` (-1 for a row left out).
std::vector<std::int64_t> counts_by_class(const ValueTable& table, const NeighbourGraph* graph,
                                          const Distance* distance, const std::vector<std::int64_t>& labels,
                                          std::size_t threads, Interrupt* interrupt) {
    if (table.row_value.size() != labels.size()) throw std::invalid_argument("labels and sensitive values differ in rows");
    const ClassRuns runs = class_runs(labels);
    const std::vector<std::int64_t> in_runs = counts_of_runs(table, graph, distance, runs, threads, interrupt);
    std::vector<std::int64_t> counts(labels.size(), -1);
    for (std::size_t i = 0; i < runs.rows.size(); ++i) counts[static_cast<std::size_t>(runs.rows[i])] = in_runs[i];
    return counts;
}

/// The values' own graph where it is small (class_counts.hpp), else none (pairwise tests).
std::optional<NeighbourGraph> graph_for_counts(const ValueTable& table, const Distance& distance, Interrupt* interrupt) {
    if (distance.dimensions() != table.s) {
        throw std::invalid_argument("metric weights and sensitive components differ in number");
    }
    // Few values: every class is tested pairwise by count_in_class, no graph needed.
    return table.size() > kPairwiseValues
        ? small_value_graph(table, distance, std::numeric_limits<std::size_t>::max(), interrupt) : std::nullopt;
}

}  // namespace

void for_each_class_count(const ValueTable& table, const NeighbourGraph* graph, const Distance* distance,
                          std::size_t classes,
                          const std::function<std::pair<const std::int32_t*, std::size_t>(std::size_t)>& rows_of,
                          const std::function<void(std::size_t, const std::int64_t*)>& done,
                          std::size_t threads, Interrupt* interrupt) {
    if (graph == nullptr && distance == nullptr) throw std::invalid_argument("class counts need a graph or a distance");
    const std::size_t workers = std::max<std::size_t>(1, std::min(thread_count(threads), classes));
    // Per worker: a counter over the graph (its scratch) and a buffer for one class's counts.
    std::vector<GraphClassCounter> counters;
    if (graph != nullptr) {
        counters.reserve(workers);
        for (std::size_t w = 0; w < workers; ++w) counters.emplace_back(table, *graph);
    }
    std::vector<std::vector<std::int64_t>> buffers(workers);
    parallel_for_slots(classes, workers, interrupt, [&](std::size_t w, std::size_t c) {
        const auto [rows, m] = rows_of(c);
        buffers[w].resize(m);
        if (graph != nullptr) {
            counters[w].count(rows, m, buffers[w].data());
        } else {
            count_in_class(table, *distance, rows, m, buffers[w].data());
        }
        done(c, buffers[w].data());
    });
}

std::vector<std::int64_t> class_neighbour_counts(const ValueTable& table, const Distance& distance,
                                                 const ClassRuns& runs, std::size_t threads,
                                                 Interrupt* interrupt) {
    const std::optional<NeighbourGraph> graph = graph_for_counts(table, distance, interrupt);
    return counts_of_runs(table, graph ? &*graph : nullptr, &distance, runs, threads, interrupt);
}

std::vector<std::int64_t> class_neighbour_counts(const Neighbours& neighbours, const std::vector<std::int64_t>& labels,
                                                 std::size_t threads, Interrupt* interrupt) {
    return counts_by_class(neighbours.table(), neighbours.graph(), neighbours.distance(), labels, threads, interrupt);
}

}  // namespace proxanon
