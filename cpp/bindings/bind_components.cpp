// pybind11 glue for the engine's components, exposed for tests and the Python steps:
// INITIALIZE, class counts, the stable order by label, value ids, the exchange step, the
// allowance and the neighbour threshold, and the violation queue; the GIL is released
// around the core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/publish/exchange.hpp"
#include "proxanon/xcolor/initialize.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/common/ordering.hpp"
#include "proxanon/common/tolerance.hpp"
#include "proxanon/xcolor/violation_queue.hpp"

#include "convert.hpp"
#include "signal_check.hpp"

using namespace proxanon;
using namespace proxanon::bindings;

namespace {

py::array_t<std::int32_t> initialize_classes(const Int64Array& degree, std::size_t m) {
    if (degree.ndim() != 1) throw std::invalid_argument("degree must be 1-D");
    std::vector<std::int64_t> d(degree.data(), degree.data() + degree.shape(0));
    std::vector<std::int32_t> classes;
    {
        py::gil_scoped_release release;
        classes = initialize(d, m);
    }
    return to_numpy(std::move(classes));
}

/// D_V(r) per row of a partition given as runs of rows (class_counts.hpp), in the order of
/// `order`, with the GIL released: `order` lists every row once, grouped by class, and class c
/// is order[starts[c] .. starts[c + 1]) (the last to the end).
py::array_t<std::int64_t> class_counts(const DoubleArray& sensitive, Metric metric,
                                       const std::vector<double>& weights, double epsilon,
                                       const Int64Array& order, const Int64Array& starts,
                                       std::size_t threads) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const std::size_t n = sa.rows;
    if (static_cast<std::size_t>(order.size()) != n) throw std::invalid_argument("order must list every row once");
    if (n >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::invalid_argument("class_counts takes fewer than 2^31 rows");
    }
    ClassRuns runs;
    runs.rows.resize(n);
    std::vector<std::uint8_t> seen(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t r = order.data()[i];
        if (r < 0 || static_cast<std::size_t>(r) >= n || seen[static_cast<std::size_t>(r)]) {
            throw std::invalid_argument("order must list every row once");
        }
        seen[static_cast<std::size_t>(r)] = 1;
        runs.rows[i] = static_cast<std::int32_t>(r);
    }
    const auto classes = static_cast<std::size_t>(starts.size());
    for (std::size_t c = 0; c < classes; ++c) {
        const std::int64_t at = starts.data()[c];
        const std::int64_t before = c == 0 ? -1 : starts.data()[c - 1];
        if ((c == 0 && at != 0) || at <= before || static_cast<std::size_t>(at) >= n) {
            throw std::invalid_argument("starts must rise from 0 and stay below the number of rows");
        }
        runs.start.push_back(static_cast<std::size_t>(at));
    }
    if (classes == 0 && n > 0) throw std::invalid_argument("starts must rise from 0 and stay below the number of rows");
    runs.start.push_back(n);
    SignalCheck signals;
    std::vector<std::int64_t> out;
    signals.run([&] {
        py::gil_scoped_release release;
        const Distance distance(metric, weights, epsilon);
        const ValueTable table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        out = class_neighbour_counts(table, distance, runs, threads, signals.interrupt());
    });
    return to_numpy(std::move(out));
}

/// The stable order of rows by label (ordering.hpp's radix order: one counting pass where
/// the labels span fewer than 4n values, as group ids do, else O(n) per 11 bits of their
/// range), as numpy.argsort(labels, kind="stable") gives it.
py::array_t<std::int64_t> order_by_label(const Int64Array& labels) {
    const auto n = static_cast<std::size_t>(labels.size());
    std::vector<std::uint64_t> keys(n);
    const std::int64_t* given = labels.data();
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = static_cast<std::uint64_t>(given[i]) ^ (std::uint64_t{1} << 63);  // signed order
    }
    std::vector<std::int64_t> order;
    {
        py::gil_scoped_release release;
        order = radix_order(keys);
    }
    return to_numpy(std::move(order));
}

/// Per row of `sensitive`, the rank of its value among the distinct values in lexicographic
/// order (ValueTable's value id): equal exactly for equal rows. O(n) expected plus a sort of
/// the distinct values, with the GIL released.
py::array_t<std::int64_t> value_ids(const DoubleArray& sensitive) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    std::vector<std::int64_t> ids;
    {
        py::gil_scoped_release release;
        const ValueTable table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        ids.assign(table.row_value.begin(), table.row_value.end());
    }
    return to_numpy(std::move(ids));
}

/// The exchange step before merging (exchange.hpp), with the GIL released.
py::array_t<std::int64_t> exchange_rows(const Int64Array& groups, const DoubleArray& quasi_identifiers,
                                        const std::vector<TaxonomySpec>& qi_taxonomies,
                                        const Int64Array& sensitive_ids) {
    const Matrix qi = as_matrix(quasi_identifiers, "quasi_identifiers");
    const auto n = static_cast<std::size_t>(groups.size());
    if (qi.rows != n || static_cast<std::size_t>(sensitive_ids.size()) != n) {
        throw std::invalid_argument("groups, quasi_identifiers and sensitive_ids differ in rows");
    }
    if (qi_taxonomies.size() != qi.cols) {
        throw std::invalid_argument("qi_taxonomies needs one entry per quasi-identifier column");
    }
    const std::vector<std::int64_t> given(groups.data(), groups.data() + n);
    const std::vector<std::int64_t> ids(sensitive_ids.data(), sensitive_ids.data() + n);
    const std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    SignalCheck signals;
    ExchangeParams params;
    params.interrupt = signals.interrupt();
    std::vector<std::int64_t> out;
    signals.run([&] {
        py::gil_scoped_release release;
        out = spread_equal_tuples(given, qi.data, qi.cols, taxonomies, ids, params);
    });
    return to_numpy(std::move(out));
}

}  // namespace

void register_components(py::module_& mod) {
    mod.def("value_ids", &value_ids, py::arg("sensitive"),
            "Per row, the rank of its value among the distinct rows in lexicographic order.");
    mod.def("order_by_label", &order_by_label, py::arg("labels"),
            "The stable order of rows by label (numpy.argsort(labels, kind='stable')), O(n).");
    mod.def("class_counts", &class_counts, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("order"), py::arg("starts"),
            py::arg("threads") = 0,
            "Per row of order (every row once, grouped by class; class c starts at starts[c]), "
            "its epsilon-neighbours among the other rows of its class.");
    mod.def("exchange_rows", &exchange_rows, py::arg("groups"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("sensitive_ids"),
            "Groups after rows with identical sensitive values are exchanged so that fewer "
            "groups publish the same QI tuple.");
    mod.def("initialize", &initialize_classes, py::arg("degree"), py::arg("m"),
            "Algorithm 1: the class of each row given row degrees.");
    mod.def("equitable_sizes", &equitable_sizes, py::arg("n"), py::arg("m"));
    mod.def("allowed_neighbours", &allowed_neighbours, py::arg("size"), py::arg("delta"),
            "t(V) = floor((1 - delta)(|V| - 1) + ALLOWANCE_SLACK).");
    mod.def("neighbour_threshold", &neighbour_threshold, py::arg("epsilon"),
            "epsilon + NEIGHBOUR_SLACK * max(1, epsilon): the largest distance of neighbours.");
    mod.attr("MAX_GRAPH_ENTRIES") = kMaxGraphEntries;
    mod.attr("NEIGHBOUR_SLACK") = kNeighbourSlack;
    mod.attr("ALLOWANCE_SLACK") = kAllowanceSlack;

    py::class_<ViolationQueue>(mod, "ViolationQueue",
                               "Bucketed FIFO priority queue of rows (exposed for tests).")
        .def(py::init<std::size_t, std::size_t>(), py::arg("rows"), py::arg("buckets"))
        .def("push", [](ViolationQueue& q, std::int32_t row, std::size_t bucket) {
                 if (row < 0 || static_cast<std::size_t>(row) >= q.rows()) throw py::index_error("row out of range");
                 if (bucket >= q.buckets()) throw py::index_error("bucket out of range");
                 if (q.contains(row)) throw std::invalid_argument("row already queued");
                 q.push(row, bucket);
             }, py::arg("row"), py::arg("bucket"))
        .def("remove", [](ViolationQueue& q, std::int32_t row) {
                 if (row < 0 || static_cast<std::size_t>(row) >= q.rows()) throw py::index_error("row out of range");
                 if (!q.contains(row)) throw std::invalid_argument("row not queued");
                 q.remove(row);
             }, py::arg("row"))
        .def("update", [](ViolationQueue& q, std::int32_t row, std::size_t bucket) {
                 if (row < 0 || static_cast<std::size_t>(row) >= q.rows()) throw py::index_error("row out of range");
                 if (bucket >= q.buckets()) throw py::index_error("bucket out of range");
                 if (!q.contains(row)) throw std::invalid_argument("row not queued");
                 q.update(row, bucket);
             }, py::arg("row"), py::arg("bucket"))
        .def("pop", [](ViolationQueue& q) {
                 if (q.empty()) throw py::index_error("pop from an empty queue");
                 return q.pop();
             })
        .def("__contains__", [](const ViolationQueue& q, std::int32_t row) {
                 return row >= 0 && static_cast<std::size_t>(row) < q.rows() && q.contains(row);
             })
        .def("__len__", &ViolationQueue::size);
}
