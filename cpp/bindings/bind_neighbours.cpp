// pybind11 glue for the neighbour relation: the graph, a structure's queries, the value
// relation, and the row-level balls and windows; the GIL is released around the core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxanon/proofs/balls.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"

#include "convert.hpp"
#include "signal_check.hpp"

using namespace proxanon;
using namespace proxanon::bindings;

namespace {

py::dict graph_dict(ValueTable&& table, NeighbourGraph&& graph) {
    std::vector<std::int64_t> degree = row_degrees(table, graph);
    const std::size_t u_count = table.size();
    const std::size_t s = table.s;
    py::dict out;
    out["values"] = to_numpy(std::move(table.values)).reshape({static_cast<py::ssize_t>(u_count),
                                                               static_cast<py::ssize_t>(s)});
    out["counts"] = to_numpy(std::move(table.count));
    out["row_value"] = to_numpy(std::move(table.row_value));
    out["offsets"] = to_numpy(std::vector<std::int64_t>(graph.offsets()));
    out["targets"] = to_numpy(std::vector<std::int32_t>(graph.targets()));
    out["value_degree"] = to_numpy(std::move(degree));
    return out;
}

py::dict neighbour_graph(const DoubleArray& sensitive, Metric metric,
                         const std::vector<double>& weights, double epsilon,
                         std::size_t max_entries) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    ValueTable table;
    NeighbourGraph graph;
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        const Distance distance(metric, weights, epsilon);
        table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        graph = NeighbourGraph::build(table, distance, max_entries, signals.interrupt());
    });
    return graph_dict(std::move(table), std::move(graph));
}

/// The three answers of a neighbour structure, per row, for tests against brute force:
/// the row degree of each row, adjacency of each row pair, and for each probe row the number
/// of `members` rows in its closed neighbourhood.
py::dict neighbour_queries(const DoubleArray& sensitive, Metric metric,
                           const std::vector<double>& weights, double epsilon,
                           Structure neighbours, const std::vector<std::int32_t>& pairs,
                           const std::vector<std::int32_t>& members,
                           const std::vector<std::int32_t>& probes, std::size_t threads) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Structure asked = neighbours;
    const Distance distance(metric, weights, epsilon);
    const ValueTable table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
    const auto row = [&](std::int32_t r) {
        if (r < 0 || static_cast<std::size_t>(r) >= sa.rows) throw std::invalid_argument("row out of range");
        return table.row_value[static_cast<std::size_t>(r)];
    };
    if (pairs.size() % 2 != 0) throw std::invalid_argument("pairs must be flat (a, b) row pairs");
    const Neighbours nb = Neighbours::build(table, distance, asked, kMaxGraphEntries, threads);
    std::vector<std::int64_t> degree(sa.rows);
    for (std::size_t r = 0; r < sa.rows; ++r) degree[r] = nb.row_degrees()[static_cast<std::size_t>(table.row_value[r])];
    std::vector<std::uint8_t> adjacent(pairs.size() / 2);
    for (std::size_t i = 0; i < adjacent.size(); ++i) adjacent[i] = nb.adjacent(row(pairs[2 * i]), row(pairs[2 * i + 1]));
    NeighbourCount count(nb);
    for (std::int32_t r : members) count.add(row(r), 1);
    std::vector<std::int32_t> counts;
    for (std::int32_t r : probes) counts.push_back(count.count(row(r)));
    py::dict out;
    out["neighbours"] = structure_name(nb.structure());
    out["degree"] = to_numpy(std::move(degree));
    out["adjacent"] = to_numpy(std::move(adjacent));
    out["counts"] = to_numpy(std::move(counts));
    return out;
}

/// The distinct values, their multiplicities, each row's value id and each value's row
/// degree, from the structure `neighbours` picks (no graph is returned, so none need be
/// stored); with `centre` >= 0 also the values adjacent to that one (it included), O(U).
py::dict value_relation(const DoubleArray& sensitive, Metric metric,
                        const std::vector<double>& weights, double epsilon,
                        Structure neighbours, std::int64_t centre, std::size_t threads) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Structure asked = neighbours;
    ValueTable table;
    std::vector<std::int64_t> degree;
    std::vector<std::int32_t> around;
    Structure structure = asked;
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        const Distance distance(metric, weights, epsilon);
        table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        const Neighbours nb = Neighbours::build(table, distance, asked, kMaxGraphEntries, threads,
                                                signals.interrupt());
        structure = nb.structure();
        degree = nb.row_degrees();
        if (centre >= static_cast<std::int64_t>(table.size())) throw std::invalid_argument("centre is not a value id");
        for (std::size_t u = 0; centre >= 0 && u < table.size(); ++u) {
            if (nb.adjacent(static_cast<std::int32_t>(centre), static_cast<std::int32_t>(u))) {
                around.push_back(static_cast<std::int32_t>(u));
            }
        }
    });
    const std::size_t u_count = table.size();
    py::dict out;
    out["values"] = to_numpy(std::move(table.values)).reshape({static_cast<py::ssize_t>(u_count),
                                                               static_cast<py::ssize_t>(sa.cols)});
    out["counts"] = to_numpy(std::move(table.count));
    out["row_value"] = to_numpy(std::move(table.row_value));
    out["value_degree"] = to_numpy(std::move(degree));
    out["around"] = to_numpy(std::move(around));
    out["neighbours"] = structure_name(structure);
    return out;
}

/// Runs f(rows, distance) on the rows of `sensitive` without the GIL, interruptible: the one
/// way the row-level queries (balls, windows) meet a weighted built-in distance.
template <typename F>
void on_rows(const DoubleArray& sensitive, Metric metric,
             const std::vector<double>& weights, double epsilon, F&& f) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    if (weights.size() != sa.cols) throw std::invalid_argument("one weight per sensitive column is needed");
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        f(sa, Distance(metric, weights, epsilon), signals.interrupt());
    });
}

/// Rows within `radius` of each centre row (itself included): their number per centre, and
/// with `members` the rows of the first centre's ball, ascending (balls.hpp). Nothing else is
/// built, so a few centres give a lower bound on the largest ball in O(n) memory.
py::dict balls(const DoubleArray& sensitive, Metric metric,
               const std::vector<double>& weights, double radius,
               const std::vector<std::int64_t>& centres, bool members, std::size_t threads,
               const std::string& shape) {
    if (shape != "ball" && shape != "orthants") throw std::invalid_argument("shape must be 'ball' or 'orthants'");
    Balls found;
    on_rows(sensitive, metric, weights, radius, [&](const Matrix& sa, const Distance& distance, Interrupt* interrupt) {
        found = count_balls(sa.data, sa.rows, distance, shape == "ball" ? Shape::Ball : Shape::Orthants,
                            centres, members, threads, interrupt);
    });
    py::dict out;
    out["sizes"] = to_numpy(std::move(found.sizes));
    out["rows"] = to_numpy(std::move(found.rows));
    return out;
}

/// One weighted component: the largest window of rows from an anchor up to its last
/// epsilon-neighbour, and the largest degree (balls.hpp): {anchor, size, degree_row, degree}.
py::dict window_clique(const DoubleArray& sensitive, Metric metric,
                       const std::vector<double>& weights, double epsilon) {
    Windows found;
    on_rows(sensitive, metric, weights, epsilon, [&](const Matrix& sa, const Distance& distance, Interrupt*) {
        found = largest_window(sa.data, sa.rows, distance);
    });
    py::dict out;
    out["anchor"] = found.anchor;
    out["size"] = found.size;
    out["degree_row"] = found.degree_row;
    out["degree"] = found.degree;
    return out;
}

}  // namespace

void register_neighbours(py::module_& mod) {
    mod.def("neighbour_graph", &neighbour_graph, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"),
            py::arg("max_entries") = kMaxGraphEntries,
            "The distinct values, their multiplicities and the CSR epsilon-neighbour graph.");
    mod.def("neighbour_queries", &neighbour_queries, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("neighbours"), py::arg("pairs"),
            py::arg("members"), py::arg("probes"), py::arg("threads") = 0,
            "A neighbour structure's row degrees, pair adjacency and counts of a row set.");
    mod.def("value_relation", &value_relation, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("neighbours") = Structure::Auto,
            py::arg("centre") = -1, py::arg("threads") = 0,
            "Distinct values, counts, row value ids, row degree per value, and one value's neighbours.");
    mod.def("balls", &balls, py::arg("sensitive"), py::arg("metric"), py::arg("weights"),
            py::arg("radius"), py::arg("centres"), py::arg("members") = false,
            py::arg("threads") = 0, py::arg("shape") = "ball",
            "Per centre row, the rows of its ball of the radius (shape 'ball') or of its largest "
            "orthant of epsilon = radius (shape 'orthants'): {'sizes', 'rows' (the first "
            "centre's, with members)}.");
    mod.def("largest_window", &window_clique, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"),
            "One weighted component: {'anchor', 'size'} of the largest run of rows from an anchor "
            "up to its last epsilon-neighbour (the largest clique), and {'degree_row', 'degree'} "
            "of the row with the most epsilon-neighbours.");
}
