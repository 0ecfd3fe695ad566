// pybind11 glue for XColor's engine: a partition over a bound relation (relation.hpp), a
// session of merge rounds, and the live progress and statistics of a run; the GIL is released
// around the core.
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
#include "relation.hpp"
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
    options.init = given.attr("native_init").cast<Init>();
    options.init_block = given.attr("init_block").cast<std::size_t>();
    options.moves = given.attr("native_moves").cast<Moves>();
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

/// The engine run over the structure `build` makes.
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

py::dict run_partition(const BoundRelation& relation, const py::handle& options,
                       const std::optional<DoubleArray>& quasi_identifiers,
                       const std::vector<TaxonomySpec>& qi_taxonomies,
                       const std::optional<Int32Array>& initial_groups,
                       std::size_t max_graph_entries, Structure neighbours) {
    return run_engine(relation.engine(neighbours, max_graph_entries), relation.rows(), options, quasi_identifiers,
                      qi_taxonomies, to_vector(initial_groups, "initial_groups"));
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

py::dict session_over(const BoundRelation& relation, const py::handle& options,
                     const DoubleArray& quasi_identifiers, const std::vector<TaxonomySpec>& qi_taxonomies,
                     const std::vector<std::vector<std::int32_t>>& node_keys, const Int64Array& sensitive_ids,
                     bool qi_aware, std::optional<std::size_t> max_rounds, double budget,
                     const std::optional<Int32Array>& start, std::size_t max_graph_entries, Structure neighbours) {
    return session_with(relation.over_rows(neighbours, max_graph_entries), relation.rows(), options,
                        quasi_identifiers, qi_taxonomies, node_keys, sensitive_ids, qi_aware, max_rounds, budget,
                        to_vector(start, "start"));
}

}  // namespace

void register_engine(py::module_& mod) {
    mod.def("partition", &run_partition, py::arg("relation"), py::arg("options"),
            py::arg("quasi_identifiers") = py::none(),
            py::arg("qi_taxonomies") = std::vector<TaxonomySpec>{},
            py::arg("initial_groups") = py::none(), py::arg("max_graph_entries") = kMaxGraphEntries,
            py::arg("neighbours") = Structure::Auto,
            "Build the neighbour structure of `relation`, run INITIALIZE, the swap loop and what "
            "options ask for.");
    mod.def("session", &session_over, py::arg("relation"), py::arg("options"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("node_keys"), py::arg("sensitive_ids"), py::arg("qi_aware"),
            py::arg("max_rounds"), py::arg("budget"), py::arg("start") = py::none(),
            py::arg("max_graph_entries") = kMaxGraphEntries, py::arg("neighbours") = Structure::Auto,
            "One session: XColor's run, then rounds merging groups that publish one QI tuple and "
            "repairing the merged classes, over structures built once (session.hpp).");

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
