// pybind11 glue for XColor's engine: a partition over the sensitive values or over a given
// relation, a session of merge rounds, and the live progress and statistics of a run; the
// GIL is released around the core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/session.hpp"
#include "proxanon/xcolor/xcolor.hpp"

#include "convert.hpp"
#include "signal_check.hpp"

using namespace proxanon;
using namespace proxanon::bindings;

namespace {

/// The options of a run from a proxanon.engine.EngineOptions (validated in Python): the one
/// place where they cross the boundary.
XColorOptions options_from(const py::handle& given) {
    XColorOptions options;
    options.k = given.attr("k").cast<std::size_t>();
    options.delta = given.attr("delta").cast<double>();
    options.search_limit = given.attr("search_limit").cast<std::size_t>();
    options.trace = given.attr("trace").cast<bool>();
    const auto init = given.attr("init").cast<std::string>();
    if (init == "degree") options.init = Init::Degree;
    else if (init == "qi") options.init = Init::Qi;
    else throw std::invalid_argument("unknown init '" + init + "'");
    options.init_block = given.attr("init_block").cast<std::size_t>();
    const auto moves = given.attr("moves").cast<std::string>();
    if (moves == "swap") options.moves = Moves::Swap;
    else if (moves == "auto") options.moves = Moves::Auto;
    else throw std::invalid_argument("unknown moves '" + moves + "'");
    options.suppress = given.attr("suppress").cast<bool>();
    options.threads = given.attr("threads").cast<std::size_t>();
    const py::object progress = given.attr("progress");
    options.progress = progress.is_none() ? nullptr : progress.cast<Progress*>();
    return options;
}

/// A run's result as proxanon.engine wraps it (run_engine and a session's last run).
py::dict engine_dict(XColorResult&& result, std::size_t distinct, std::size_t value_edges,
                     Structure structure, double seconds_graph, bool trace) {
    py::dict out;
    out["groups"] = to_numpy(std::move(result.groups));
    out["violating_rows"] = to_numpy(std::move(result.violating_rows));
    out["violating_groups"] = to_numpy(std::move(result.violating_groups));
    out["suppressed_rows"] = to_numpy(std::move(result.suppressed_rows));
    out["stats"] = result.stats;
    out["distinct_values"] = distinct;
    out["value_edges"] = value_edges;
    out["neighbours"] = structure_name(structure);
    out["seconds_graph"] = seconds_graph;
    if (trace) {
        const auto swaps = static_cast<py::ssize_t>(result.swap_log.size() / 3);
        out["initial_groups"] = to_numpy(std::move(result.initial_groups));
        out["swap_log"] = to_numpy(std::move(result.swap_log)).reshape({swaps, py::ssize_t{3}});
        const auto moved = static_cast<py::ssize_t>(result.move_log.size() / 4);
        out["move_log"] = to_numpy(std::move(result.move_log)).reshape({moved, py::ssize_t{4}});
    }
    return out;
}

/// The engine run shared by both entry points: `build` makes the relation, the rest is the same.
py::dict run_engine(const RelationBuilder& build, std::size_t n, const py::handle& given,
                    const std::optional<DoubleArray>& quasi_identifiers,
                    const std::vector<TaxonomySpec>& qi_taxonomies,
                    const std::optional<std::vector<std::int32_t>>& initial_groups) {
    std::optional<Matrix> qi;
    if (quasi_identifiers) {
        qi = as_matrix(*quasi_identifiers, "quasi_identifiers");
        if (qi->rows != n) throw std::invalid_argument("quasi_identifiers and sensitive differ in rows");
    }
    SignalCheck signals;
    XColorOptions options = options_from(given);
    options.interrupt = signals.interrupt();
    if (!qi_taxonomies.empty() && (!qi || qi_taxonomies.size() != qi->cols)) {
        throw std::invalid_argument("qi_taxonomies needs one entry per quasi-identifier column");
    }
    std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);

    XColorResult result;
    std::size_t distinct = 0;
    std::size_t value_edges = 0;
    Structure structure = Structure::Graph;
    double seconds_graph = 0.0;
    signals.run([&] {
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        ValueTable table;
        const Neighbours neighbours = build(table, options.threads, options.interrupt);
        const LossModel loss = qi ? LossModel(qi->data, qi->rows, qi->cols, std::move(taxonomies))
                                  : LossModel();
        seconds_graph = seconds_since(start);
        distinct = table.size();
        value_edges = neighbours.value_edges();
        structure = neighbours.structure();
        result = run_xcolor(table, neighbours, loss, options, initial_groups ? &*initial_groups : nullptr);
    });
    return engine_dict(std::move(result), distinct, value_edges, structure, seconds_graph, options.trace);
}

py::dict run_partition(const DoubleArray& sensitive, const std::string& metric,
                       const std::vector<double>& weights, double epsilon,
                       const py::handle& options, const std::optional<DoubleArray>& quasi_identifiers,
                       const std::vector<TaxonomySpec>& qi_taxonomies,
                       const std::optional<Int32Array>& initial_groups,
                       std::size_t max_graph_entries, const std::string& neighbours) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Metric kind = parse_metric(metric);
    const Structure asked = parse_structure(neighbours);
    RelationBuilder build = [&](ValueTable& table, std::size_t threads, Interrupt* interrupt) {
        const Distance distance(kind, weights, epsilon);
        table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        return Neighbours::build(table, distance, asked, max_graph_entries, threads, interrupt);
    };
    return run_engine(build, sa.rows, options, quasi_identifiers, qi_taxonomies,
                      to_vector(initial_groups, "initial_groups"));
}

/// The same run over a relation given as value ids per row and a CSR adjacency between the
/// values (a user's distance evaluated in Python, or a precomputed neighbour graph).
py::dict run_partition_graph(const Int32Array& row_values, const Int64Array& offset_array,
                             const Int32Array& target_array, const py::handle& options,
                             const std::optional<DoubleArray>& quasi_identifiers,
                             const std::vector<TaxonomySpec>& qi_taxonomies,
                             const std::optional<Int32Array>& initial_groups) {
    Csr csr = to_csr(row_values, offset_array, target_array);
    const std::size_t n = csr.row_value.size();
    const RelationBuilder build = csr_relation(csr.row_value, csr.offsets, csr.targets);
    return run_engine(build, n, options, quasi_identifiers, qi_taxonomies,
                      to_vector(initial_groups, "initial_groups"));
}

/// A session's relation over any rows of a matrix of sensitive values (the arrays outlive it).
RowsRelation matrix_rows(const Matrix& sa, Metric kind, const std::vector<double>& weights, double epsilon,
                         Structure asked, std::size_t max_graph_entries) {
    return [sa, kind, weights, epsilon, asked, max_graph_entries](
               ValueTable& table, const std::vector<std::int32_t>& rows, std::size_t threads, Interrupt* interrupt) {
        const Distance distance(kind, weights, epsilon);
        if (rows.size() == sa.rows) {
            table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        } else {
            std::vector<double> sub(rows.size() * sa.cols);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const double* x = sa.data + static_cast<std::size_t>(rows[i]) * sa.cols;
                std::copy(x, x + sa.cols, sub.begin() + static_cast<std::ptrdiff_t>(i * sa.cols));
            }
            table = ValueTable::from_rows(sub.data(), rows.size(), sa.cols);
        }
        return Neighbours::build(table, distance, asked, max_graph_entries, threads, interrupt);
    };
}

/// A session's relation given as value ids per row and a CSR adjacency between the values:
/// over a subset of the rows, the values it uses, renumbered in order, and their induced graph.
RowsRelation csr_rows(const std::vector<std::int32_t>& row_value, const std::vector<std::int64_t>& offsets,
                      const std::vector<std::int32_t>& targets) {
    if (offsets.empty()) throw std::invalid_argument("offsets needs one entry per value plus one");
    return [&row_value, &offsets, &targets](ValueTable& table, const std::vector<std::int32_t>& rows,
                                            std::size_t /*threads*/, Interrupt* interrupt) {
        const std::size_t values = offsets.size() - 1;
        if (rows.size() == row_value.size()) {
            table = ValueTable::from_labels(row_value, values);
            return Neighbours(table, NeighbourGraph::from_csr(offsets, targets), interrupt);
        }
        std::vector<std::int32_t> id(values, -1);
        for (const std::int32_t r : rows) id[static_cast<std::size_t>(row_value[static_cast<std::size_t>(r)])] = 0;
        std::int32_t next = 0;
        for (std::int32_t& u : id) {
            if (u == 0) u = next++;
        }
        std::vector<std::int32_t> sub;
        for (const std::int32_t r : rows) sub.push_back(id[static_cast<std::size_t>(row_value[static_cast<std::size_t>(r)])]);
        std::vector<std::int64_t> off{0};
        std::vector<std::int32_t> to;
        for (std::size_t u = 0; u < values; ++u) {
            if (id[u] < 0) continue;
            for (auto p = offsets[u]; p < offsets[u + 1]; ++p) {
                const std::int32_t w = id[static_cast<std::size_t>(targets[static_cast<std::size_t>(p)])];
                if (w >= 0) to.push_back(w);
            }
            off.push_back(static_cast<std::int64_t>(to.size()));
        }
        table = ValueTable::from_labels(std::move(sub), static_cast<std::size_t>(next));
        return Neighbours(table, NeighbourGraph::from_csr(std::move(off), std::move(to)), interrupt);
    };
}

/// A session (session.hpp) over `relation`; the merge rounds' options as given.
py::dict session_with(const RowsRelation& relation, std::size_t n, const py::handle& given,
                      const DoubleArray& quasi_identifiers, const std::vector<TaxonomySpec>& qi_taxonomies,
                      const std::vector<std::vector<std::int32_t>>& node_keys, const Int64Array& sensitive_ids,
                      bool qi_aware, std::optional<std::size_t> max_rounds, double budget,
                      const std::optional<std::vector<std::int32_t>>& start) {
    const Matrix qm = as_matrix(quasi_identifiers, "quasi_identifiers");
    if (qm.rows != n || static_cast<std::size_t>(sensitive_ids.size()) != n) {
        throw std::invalid_argument("quasi_identifiers, sensitive_ids and the relation differ in rows");
    }
    check_node_keys(qi_taxonomies, node_keys, qm.cols);
    if (start && start->size() != n) throw std::invalid_argument("start needs one class per row");
    const std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    const std::vector<std::int64_t> ids(sensitive_ids.data(), sensitive_ids.data() + n);
    SignalCheck signals;
    SessionOptions options;
    options.xcolor = options_from(given);
    options.xcolor.interrupt = signals.interrupt();
    options.qi_aware = qi_aware;
    if (max_rounds) options.max_rounds = *max_rounds;
    options.budget = budget;
    QuasiIdentifiers qi{qm.data, qm.cols, &taxonomies, &node_keys};
    SessionResult result;
    signals.run([&] {
        py::gil_scoped_release release;
        result = run_session(relation, n, qi, ids, options, start ? &*start : nullptr);
    });
    py::dict out;
    out["released"] = to_numpy(std::move(result.released));
    out["classes"] = to_numpy(std::move(result.classes));
    out["formed_from"] = to_numpy(std::move(result.formed_from));
    out["last_rows"] = to_numpy(std::move(result.last_rows));
    out["first"] = result.first;
    out["rounds"] = result.rounds;
    out["swaps"] = result.swaps;
    out["too_few"] = result.too_few;
    out["seconds_merge"] = result.seconds_merge;
    out["last"] = engine_dict(std::move(result.last), result.distinct, result.value_edges, result.structure,
                              result.seconds_graph, options.xcolor.trace);
    return out;
}

py::dict run_session_rows(const DoubleArray& sensitive, const std::string& metric,
                          const std::vector<double>& weights, double epsilon, const py::handle& options,
                          const DoubleArray& quasi_identifiers, const std::vector<TaxonomySpec>& qi_taxonomies,
                          const std::vector<std::vector<std::int32_t>>& node_keys, const Int64Array& sensitive_ids,
                          bool qi_aware, std::optional<std::size_t> max_rounds, double budget,
                          const std::optional<Int32Array>& start,
                          std::size_t max_graph_entries, const std::string& neighbours) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const RowsRelation relation = matrix_rows(sa, parse_metric(metric), weights, epsilon,
                                              parse_structure(neighbours), max_graph_entries);
    return session_with(relation, sa.rows, options, quasi_identifiers, qi_taxonomies, node_keys, sensitive_ids,
                        qi_aware, max_rounds, budget, to_vector(start, "start"));
}

py::dict run_session_graph(const Int32Array& row_values, const Int64Array& offset_array,
                           const Int32Array& target_array, const py::handle& options,
                           const DoubleArray& quasi_identifiers, const std::vector<TaxonomySpec>& qi_taxonomies,
                           const std::vector<std::vector<std::int32_t>>& node_keys, const Int64Array& sensitive_ids,
                           bool qi_aware, std::optional<std::size_t> max_rounds, double budget,
                           const std::optional<Int32Array>& start) {
    const Csr csr = to_csr(row_values, offset_array, target_array);
    const RowsRelation relation = csr_rows(csr.row_value, csr.offsets, csr.targets);
    return session_with(relation, csr.row_value.size(), options, quasi_identifiers, qi_taxonomies, node_keys,
                        sensitive_ids, qi_aware, max_rounds, budget, to_vector(start, "start"));
}

}  // namespace

void register_engine(py::module_& mod) {
    mod.def("partition", &run_partition, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("options"),
            py::arg("quasi_identifiers") = py::none(),
            py::arg("qi_taxonomies") = std::vector<TaxonomySpec>{},
            py::arg("initial_groups") = py::none(), py::arg("max_graph_entries") = kMaxGraphEntries,
            py::arg("neighbours") = "auto",
            "Build the neighbour structure, run INITIALIZE, the swap loop and what options ask for.");
    mod.def("partition_graph", &run_partition_graph, py::arg("row_value"), py::arg("offsets"),
            py::arg("targets"), py::arg("options"), py::arg("quasi_identifiers") = py::none(),
            py::arg("qi_taxonomies") = std::vector<TaxonomySpec>{},
            py::arg("initial_groups") = py::none(),
            "Run the engine over a given relation: value id per row and CSR between values.");
    mod.def("session", &run_session_rows, py::arg("sensitive"), py::arg("metric"), py::arg("weights"),
            py::arg("epsilon"), py::arg("options"), py::arg("quasi_identifiers"), py::arg("qi_taxonomies"),
            py::arg("node_keys"), py::arg("sensitive_ids"), py::arg("qi_aware"), py::arg("max_rounds"),
            py::arg("budget"), py::arg("start") = py::none(),
            py::arg("max_graph_entries") = kMaxGraphEntries, py::arg("neighbours") = "auto",
            "One session: XColor's run, then rounds merging groups that publish one QI tuple and "
            "repairing the merged classes, over structures built once (session.hpp).");
    mod.def("session_graph", &run_session_graph, py::arg("row_value"), py::arg("offsets"),
            py::arg("targets"), py::arg("options"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("node_keys"), py::arg("sensitive_ids"),
            py::arg("qi_aware"), py::arg("max_rounds"), py::arg("budget"),
            py::arg("start") = py::none(),
            "The same over a given relation: value id per row and CSR between values.");

    py::class_<Progress>(mod, "Progress",
                         "Live counters of a running partition, readable from another thread.")
        .def(py::init<>())
        .def_property_readonly("phase", [](const Progress& p) {
            static const char* names[] = {"graph", "initialize", "repair", "done"};
            return std::string(names[p.phase.load(std::memory_order_relaxed)]);
        })
        .def_property_readonly("queued", [](const Progress& p) { return p.queued.load(std::memory_order_relaxed); })
        .def_property_readonly("set_aside", [](const Progress& p) { return p.set_aside.load(std::memory_order_relaxed); })
        .def_property_readonly("swaps", [](const Progress& p) { return p.swaps.load(std::memory_order_relaxed); });

    // The statistics as PROXANON_ENGINE_STATS (xcolor.hpp) lists them: one read-only attribute
    // per field, and their names in order as ENGINE_STATS_FIELDS.
    py::class_<XColorStats> stats(mod, "Stats", "The numbers of one engine run (read-only).");
#define PROXANON_STATS_ATTRIBUTE(name, type, doc) stats.def_readonly(#name, &XColorStats::name, doc);
    PROXANON_ENGINE_STATS(PROXANON_STATS_ATTRIBUTE)
#undef PROXANON_STATS_ATTRIBUTE
#define PROXANON_STATS_NAME(name, type, doc) #name,
    const std::vector<std::string> names{PROXANON_ENGINE_STATS(PROXANON_STATS_NAME)};
    mod.attr("ENGINE_STATS_FIELDS") = py::tuple(py::cast(names));
#undef PROXANON_STATS_NAME
}
