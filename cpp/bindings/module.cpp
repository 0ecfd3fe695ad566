// pybind11 glue: convert arrays, release the GIL around the core, wrap the results.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxanon/balls.hpp"
#include "proxanon/class_counts.hpp"
#include "proxanon/distance.hpp"
#include "proxanon/exchange.hpp"
#include "proxanon/initialize.hpp"
#include "proxanon/loss.hpp"
#include "proxanon/mondrian.hpp"
#include "proxanon/neighbour_graph.hpp"
#include "proxanon/neighbours.hpp"
#include "proxanon/ordering.hpp"
#include "proxanon/parallel.hpp"
#include "proxanon/absorb.hpp"
#include "proxanon/session.hpp"
#include "proxanon/specialize.hpp"
#include "proxanon/vacate.hpp"
#include "proxanon/violation_queue.hpp"
#include "proxanon/xcolor.hpp"

namespace py = pybind11;
using namespace proxanon;

namespace {

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Int64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using Int32Array = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;

/// A 1-D integer array (one entry per row, value or edge) as a vector, in one copy: such inputs
/// come as numpy arrays, not lists (at 3M rows, `tolist()` and the list's conversion took
/// 0.25 s a call, and a list of 10M ints holds 360 MB of int objects).
template <typename T>
std::vector<T> to_vector(const py::array_t<T, py::array::c_style | py::array::forcecast>& array,
                         const char* name) {
    if (array.ndim() != 1) throw std::invalid_argument(std::string(name) + " must be 1-D");
    return std::vector<T>(array.data(), array.data() + array.shape(0));
}

/// A relation given as value ids per row and a CSR adjacency between the values.
struct Csr {
    std::vector<std::int32_t> row_value;
    std::vector<std::int64_t> offsets;
    std::vector<std::int32_t> targets;
};

Csr to_csr(const Int32Array& row_value, const Int64Array& offsets, const Int32Array& targets) {
    return {to_vector(row_value, "row_value"), to_vector(offsets, "offsets"), to_vector(targets, "targets")};
}

/// The same for an optional argument.
std::optional<std::vector<std::int32_t>> to_vector(const std::optional<Int32Array>& array, const char* name) {
    if (!array) return std::nullopt;
    return to_vector(*array, name);
}

/// Hands a vector's buffer to numpy without copying it.
template <typename T>
py::array_t<T> to_numpy(std::vector<T>&& data) {
    auto* owned = new std::vector<T>(std::move(data));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), owner);
}

Metric parse_metric(const std::string& name) {
    if (name == "l1") return Metric::L1;
    if (name == "l2") return Metric::L2;
    if (name == "linf") return Metric::Linf;
    if (name == "min_component") return Metric::MinComponent;
    throw std::invalid_argument("unknown metric '" + name + "'");
}

/// A 2-D view (n x cols) of a C-contiguous float64 array; 1-D means one column.
struct Matrix {
    const double* data;
    std::size_t rows;
    std::size_t cols;
};

Matrix as_matrix(const DoubleArray& array, const char* name) {
    if (array.ndim() == 1) return {array.data(), static_cast<std::size_t>(array.shape(0)), 1};
    if (array.ndim() == 2) {
        return {array.data(), static_cast<std::size_t>(array.shape(0)),
                static_cast<std::size_t>(array.shape(1))};
    }
    throw std::invalid_argument(std::string(name) + " must be 1-D or 2-D");
}

/// A request to stop the native calls made on the threads that watch it (proxanon._beside:
/// work run beside the caller's, which Ctrl-C cannot reach, since Python runs signal handlers
/// on the main thread only). `with request:` makes the calling thread watch it until the
/// block ends (blocks nest: a thread stops when any request it watches is set);
/// `request.set()` may come from any thread.
class StopRequest {
public:
    void set() { requested_.store(true); }
    bool requested() const { return requested_.load(); }

private:
    std::atomic<bool> requested_{false};
};

/// The requests the calling thread watches, outermost first (`with request:` in Python).
thread_local std::vector<const StopRequest*> t_watched;

/// The stop request the binding hands the core: with the GIL taken briefly, Python runs its
/// signal handlers; the exception one raises (KeyboardInterrupt for Ctrl-C) is kept and
/// raised again once the core has unwound (`rethrow`). On a thread that watches a
/// StopRequest, a set request stops the core too (with RuntimeError), read without the GIL
/// at every poll (Interrupt's quick hook).
class SignalCheck {
public:
    SignalCheck() = default;
    SignalCheck(const SignalCheck&) = delete;
    SignalCheck& operator=(const SignalCheck&) = delete;
    ~SignalCheck() {
        Py_XDECREF(type_);
        Py_XDECREF(value_);
        Py_XDECREF(traceback_);
    }

    Interrupt* interrupt() { return &interrupt_; }

    /// Runs `work` (which releases the GIL) and turns an interruption into the Python error.
    template <typename F>
    auto run(F&& work) {
        try {
            return work();
        } catch (const Interrupted&) {
            if (type_ == nullptr) {  // a stop request (stopped()), no Python error fetched
                PyErr_SetString(PyExc_RuntimeError, "stopped: the caller no longer needs this result");
            } else {
                PyErr_Restore(type_, value_, traceback_);
                type_ = value_ = traceback_ = nullptr;
            }
            throw py::error_already_set();
        }
    }

private:
    /// Whether a watched StopRequest is set (atomic reads; no GIL needed).
    bool stopped() const {
        return std::any_of(watched_.begin(), watched_.end(), [](const StopRequest* r) { return r->requested(); });
    }

    bool check() {
        if (stopped()) return true;
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() == 0) return false;
        PyErr_Fetch(&type_, &value_, &traceback_);
        return true;
    }

    PyObject* type_ = nullptr;
    PyObject* value_ = nullptr;
    PyObject* traceback_ = nullptr;
    const std::vector<const StopRequest*> watched_ = t_watched;  // the constructing thread's
    Interrupt interrupt_{[this] { return check(); }, [this] { return stopped(); }};
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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

py::dict neighbour_graph(const DoubleArray& sensitive, const std::string& metric,
                         const std::vector<double>& weights, double epsilon,
                         std::size_t max_entries) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    ValueTable table;
    NeighbourGraph graph;
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        const Distance distance(parse_metric(metric), weights, epsilon);
        table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        graph = NeighbourGraph::build(table, distance, max_entries, signals.interrupt());
    });
    return graph_dict(std::move(table), std::move(graph));
}

/// The three answers of a neighbour structure, per row, for tests against brute force:
/// the row degree of each row, adjacency of each row pair, and for each probe row the number
/// of `members` rows in its closed neighbourhood.
py::dict neighbour_queries(const DoubleArray& sensitive, const std::string& metric,
                           const std::vector<double>& weights, double epsilon,
                           const std::string& neighbours, const std::vector<std::int32_t>& pairs,
                           const std::vector<std::int32_t>& members,
                           const std::vector<std::int32_t>& probes, std::size_t threads) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Structure asked = parse_structure(neighbours);
    const Distance distance(parse_metric(metric), weights, epsilon);
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
py::dict value_relation(const DoubleArray& sensitive, const std::string& metric,
                        const std::vector<double>& weights, double epsilon,
                        const std::string& neighbours, std::int64_t centre, std::size_t threads) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Structure asked = parse_structure(neighbours);
    ValueTable table;
    std::vector<std::int64_t> degree;
    std::vector<std::int32_t> around;
    Structure structure = asked;
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        const Distance distance(parse_metric(metric), weights, epsilon);
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
void on_rows(const DoubleArray& sensitive, const std::string& metric,
             const std::vector<double>& weights, double epsilon, F&& f) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    if (weights.size() != sa.cols) throw std::invalid_argument("one weight per sensitive column is needed");
    SignalCheck signals;
    signals.run([&] {
        py::gil_scoped_release release;
        f(sa, Distance(parse_metric(metric), weights, epsilon), signals.interrupt());
    });
}

/// Rows within `radius` of each centre row (itself included): their number per centre, and
/// with `members` the rows of the first centre's ball, ascending (balls.hpp). Nothing else is
/// built, so a few centres give a lower bound on the largest ball in O(n) memory.
py::dict balls(const DoubleArray& sensitive, const std::string& metric,
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
py::dict window_clique(const DoubleArray& sensitive, const std::string& metric,
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

/// (parent of every node, number of leaves) of a taxonomy QI column; leaves come first.
using TaxonomySpec = std::optional<std::pair<std::vector<std::int32_t>, std::size_t>>;

/// The native taxonomy of each QI column that has one.
std::vector<std::optional<Taxonomy>> make_taxonomies(const std::vector<TaxonomySpec>& specs) {
    std::vector<std::optional<Taxonomy>> taxonomies;
    for (const TaxonomySpec& spec : specs) {
        if (spec) taxonomies.emplace_back(Taxonomy(spec->first, spec->second));
        else taxonomies.emplace_back(std::nullopt);
    }
    return taxonomies;
}

/// One taxonomy entry and one node-key list per QI column, a key per node of each taxonomy.
void check_node_keys(const std::vector<TaxonomySpec>& qi_taxonomies,
                     const std::vector<std::vector<std::int32_t>>& node_keys, std::size_t cols) {
    if (qi_taxonomies.size() != cols || node_keys.size() != cols) {
        throw std::invalid_argument("qi_taxonomies and node_keys need one entry per quasi-identifier column");
    }
    for (std::size_t i = 0; i < cols; ++i) {
        if (qi_taxonomies[i] && node_keys[i].size() != qi_taxonomies[i]->first.size()) {
            throw std::invalid_argument("node_keys of a taxonomy column needs one key per node");
        }
    }
}

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

/// Fills the value table and builds the neighbour structure over it on the threads given
/// (0: the hardware's), polling the interrupt given; runs with the GIL released.
using RelationBuilder = std::function<Neighbours(ValueTable& table, std::size_t threads, Interrupt*)>;

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

/// The relation given as value ids per row and a CSR adjacency between the values; the
/// builder takes the vectors over.
RelationBuilder csr_relation(std::vector<std::int32_t>& row_value, std::vector<std::int64_t>& offsets,
                             std::vector<std::int32_t>& targets) {
    if (offsets.empty()) throw std::invalid_argument("offsets needs one entry per value plus one");
    const std::size_t values = offsets.size() - 1;
    return [&row_value, &offsets, &targets, values](ValueTable& table, std::size_t /*threads*/,
                                                    Interrupt* interrupt) {
        table = ValueTable::from_labels(std::move(row_value), values);
        return Neighbours(table, NeighbourGraph::from_csr(std::move(offsets), std::move(targets)),
                          interrupt);
    };
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

/// The checks of a Mondrian part (and of a specialized class).
MondrianParams checks(std::size_t k, std::size_t l, bool dissimilarity, double delta) {
    MondrianParams params;
    params.k = k;
    params.l = l;
    params.dissimilarity = dissimilarity;
    params.delta = delta;
    return params;
}

py::dict run_mondrian(const DoubleArray& sensitive, const std::string& metric,
                      const std::vector<double>& weights, std::optional<double> epsilon,
                      std::size_t k, double delta, std::size_t l,
                      const DoubleArray& quasi_identifiers,
                      const std::vector<TaxonomySpec>& qi_taxonomies, bool grid_checks,
                      std::size_t max_graph_entries) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Matrix qi = as_matrix(quasi_identifiers, "quasi_identifiers");
    if (qi.rows != sa.rows) throw std::invalid_argument("quasi_identifiers and sensitive differ in rows");
    std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    MondrianParams params = checks(k, l, epsilon.has_value(), delta);
    SignalCheck signals;
    params.interrupt = signals.interrupt();
    MondrianResult result;
    double seconds = 0.0;
    signals.run([&] {
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        const ValueTable table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        const Neighbours neighbours =
            epsilon ? Neighbours::for_checks(table, Distance(parse_metric(metric), weights, *epsilon),
                                             max_graph_entries, params.interrupt, grid_checks)
                    : Neighbours(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}),
                                 params.interrupt);
        const LossModel loss(qi.data, qi.rows, qi.cols, std::move(taxonomies));
        result = mondrian(loss, neighbours, params);
        seconds = seconds_since(start);
    });
    py::dict out;
    out["groups"] = to_numpy(std::move(result.groups));
    out["cuts"] = result.cuts;
    out["satisfied"] = result.satisfied;
    out["violating_rows"] = to_numpy(std::move(result.violating_rows));
    out["seconds"] = seconds;
    return out;
}

/// What a specialize call's `step` asks for: a target of specialize(), or none (absorb).
std::optional<SpecializeTarget> specialize_target(const std::string& step) {
    if (step == "split") return SpecializeTarget::Passing;
    if (step == "split_failing") return SpecializeTarget::Failing;
    if (step == "cover_failing") return SpecializeTarget::Covering;
    if (step == "absorb" || step == "absorb_failing") return std::nullopt;
    throw std::invalid_argument("step must be 'split', 'split_failing', 'cover_failing', 'absorb' or 'absorb_failing', not '" +
                                step + "'");
}

/// Top-down specialization of published classes over the relation `build` makes (the checks
/// of Mondrian: k, distinct l, and (epsilon, delta)^k-dissimilarity when `dissimilarity`):
/// `step` "split" splits every class (SpecializeTarget::Passing), "split_failing" only the
/// failing ones (SpecializeTarget::Failing), "cover_failing" the failing ones above 2% of the
/// rows by the covering split alone (SpecializeTarget::Covering), "absorb" moves giant classes' rows instead
/// (absorb.hpp), "absorb_failing" failing giant classes' rows too (a best-effort table).
py::dict specialize_with(const RelationBuilder& build, std::size_t n, std::vector<std::int32_t> classes,
                         const DoubleArray& quasi_identifiers,
                         const std::vector<TaxonomySpec>& qi_taxonomies,
                         const std::vector<std::vector<std::int32_t>>& node_keys, std::size_t k,
                         std::size_t l, bool dissimilarity, double delta, const std::string& step) {
    const std::optional<SpecializeTarget> target = specialize_target(step);
    const Matrix qi = as_matrix(quasi_identifiers, "quasi_identifiers");
    if (qi.rows != n || classes.size() != n) throw std::invalid_argument("classes, quasi_identifiers and the relation differ in rows");
    check_node_keys(qi_taxonomies, node_keys, qi.cols);
    std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    MondrianParams params = checks(k, l, dissimilarity, delta);
    SignalCheck signals;
    params.interrupt = signals.interrupt();
    SpecializeResult result;
    std::int64_t absorbed = 0;
    signals.run([&] {
        py::gil_scoped_release release;
        ValueTable table;
        const Neighbours neighbours = build(table, 1, params.interrupt);
        const LossModel loss(qi.data, qi.rows, qi.cols, std::move(taxonomies));
        if (!target) {
            absorbed = absorb(loss, node_keys, neighbours, classes, params, absorb_cap(n, k),
                              step == "absorb_failing");
            result.classes = std::move(classes);
        } else if (*target == SpecializeTarget::Covering) {
            result = cover_failing(loss, node_keys, neighbours, std::move(classes), params);
        } else {
            result = specialize(loss, node_keys, neighbours, classes, params, *target);
        }
    });
    py::dict out;
    out["classes"] = to_numpy(std::move(result.classes));
    out["splits"] = result.splits;
    out["absorbed"] = absorbed;
    return out;
}

py::dict run_specialize(const Int32Array& classes, const DoubleArray& quasi_identifiers,
                        const std::vector<TaxonomySpec>& qi_taxonomies,
                        const std::vector<std::vector<std::int32_t>>& node_keys,
                        const DoubleArray& sensitive, const std::string& metric,
                        const std::vector<double>& weights, std::optional<double> epsilon,
                        std::size_t k, std::size_t l, double delta, std::size_t max_graph_entries,
                        const std::string& step) {
    const Matrix sa = as_matrix(sensitive, "sensitive");
    const Metric kind = parse_metric(metric);
    // The structure `Auto` picks, as the engine's, for checks only (no grid degrees): a set's
    // counts on an implicit one come from class_counts.hpp.
    RelationBuilder build = [&](ValueTable& table, std::size_t /*threads*/, Interrupt* interrupt) {
        table = ValueTable::from_rows(sa.data, sa.rows, sa.cols);
        if (!epsilon) {
            return Neighbours(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}),
                              interrupt);
        }
        return Neighbours::for_checks(table, Distance(kind, weights, *epsilon), max_graph_entries,
                                      interrupt);
    };
    return specialize_with(build, sa.rows, to_vector(classes, "classes"), quasi_identifiers, qi_taxonomies,
                           node_keys, k, l, epsilon.has_value(), delta, step);
}

py::dict run_specialize_graph(const Int32Array& classes, const DoubleArray& quasi_identifiers,
                              const std::vector<TaxonomySpec>& qi_taxonomies,
                              const std::vector<std::vector<std::int32_t>>& node_keys,
                              const Int32Array& row_values, const Int64Array& offset_array,
                              const Int32Array& target_array, std::size_t k, double delta,
                              const std::string& step) {
    Csr csr = to_csr(row_values, offset_array, target_array);
    const std::size_t n = csr.row_value.size();
    const RelationBuilder build = csr_relation(csr.row_value, csr.offsets, csr.targets);
    return specialize_with(build, n, to_vector(classes, "classes"), quasi_identifiers, qi_taxonomies, node_keys,
                           k, 0, true, delta, step);
}

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
py::array_t<std::int64_t> class_counts(const DoubleArray& sensitive, const std::string& metric,
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
        const Distance distance(parse_metric(metric), weights, epsilon);
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

void register_substitution(py::module_& mod);  // bind_substitution.cpp

PYBIND11_MODULE(_core, mod) {
    mod.doc() = "proxanon's native XColor engine (see proxanon.partition for the public API)";

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
    mod.def("mondrian", &run_mondrian, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("k"), py::arg("delta"),
            py::arg("l"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies") = std::vector<TaxonomySpec>{}, py::arg("grid_checks") = true,
            py::arg("max_graph_entries") = kMaxGraphEntries,
            "Strict multidimensional Mondrian with k, distinct-l and (epsilon, delta) checks;\n"
            "grid_checks=False refuses (GraphTooDenseError) where they would need a grid\n"
            "(a graph of more than max_graph_entries).");
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
    mod.def("specialize", &run_specialize, py::arg("classes"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("node_keys"), py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("k"), py::arg("l"), py::arg("delta"),
            py::arg("max_graph_entries") = kMaxGraphEntries, py::arg("step") = "split",
            "Split every class of at least 2k rows into checked parts publishing distinct finer "
            "tuples; the checks keep the epsilon graph where it holds at most max_graph_entries "
            "entries, else search a grid. step 'split_failing': split only failing classes, "
            "into parts with no more violating rows in all; 'absorb': instead move rows of "
            "classes above the cap into passing classes that cover them (absorb.hpp); "
            "'absorb_failing': failing classes above the cap give rows too.");
    mod.def("specialize_graph", &run_specialize_graph, py::arg("classes"),
            py::arg("quasi_identifiers"), py::arg("qi_taxonomies"), py::arg("node_keys"),
            py::arg("row_value"), py::arg("offsets"), py::arg("targets"), py::arg("k"),
            py::arg("delta"), py::arg("step") = "split",
            "The same over a given relation: value id per row and CSR between values.");
    mod.def("neighbour_graph", &neighbour_graph, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"),
            py::arg("max_entries") = kMaxGraphEntries,
            "The distinct values, their multiplicities and the CSR epsilon-neighbour graph.");
    mod.def("neighbour_queries", &neighbour_queries, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("neighbours"), py::arg("pairs"),
            py::arg("members"), py::arg("probes"), py::arg("threads") = 0,
            "A neighbour structure's row degrees, pair adjacency and counts of a row set.");
    mod.def("value_relation", &value_relation, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("neighbours") = "auto",
            py::arg("centre") = -1, py::arg("threads") = 0,
            "Distinct values, counts, row value ids, row degree per value, and one value's neighbours.");
    mod.def("balls", &balls, py::arg("sensitive"), py::arg("metric"), py::arg("weights"),
            py::arg("radius"), py::arg("centres"), py::arg("members") = false,
            py::arg("threads") = 0, py::arg("shape") = "ball",
            "Per centre row, the rows of its ball of the radius (shape 'ball') or of its largest "
            "orthant of epsilon = radius (shape 'orthants'): {'sizes', 'rows' (the first "
            "centre's, with members)}.");
    mod.def("value_ids", &value_ids, py::arg("sensitive"),
            "Per row, the rank of its value among the distinct rows in lexicographic order.");
    mod.def("order_by_label", &order_by_label, py::arg("labels"),
            "The stable order of rows by label (numpy.argsort(labels, kind='stable')), O(n).");
    mod.def("largest_window", &window_clique, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"),
            "One weighted component: {'anchor', 'size'} of the largest run of rows from an anchor "
            "up to its last epsilon-neighbour (the largest clique), and {'degree_row', 'degree'} "
            "of the row with the most epsilon-neighbours.");
    mod.def("class_counts", &class_counts, py::arg("sensitive"), py::arg("metric"),
            py::arg("weights"), py::arg("epsilon"), py::arg("order"), py::arg("starts"),
            py::arg("threads") = 0,
            "Per row of order (every row once, grouped by class; class c starts at starts[c]), "
            "its epsilon-neighbours among the other rows of its class.");
    py::class_<StopRequest>(mod, "StopRequest",
                            "A request to stop the native calls of the threads that watch it.")
        .def(py::init<>())
        .def("set", &StopRequest::set, "Ask the watching threads' native calls to stop.")
        .def_property_readonly("requested", &StopRequest::requested)
        .def("__enter__", [](StopRequest& request) {
            if (std::find(t_watched.begin(), t_watched.end(), &request) != t_watched.end()) {
                throw std::runtime_error("this thread already watches this StopRequest");
            }
            t_watched.push_back(&request);
            return &request;
        }, py::return_value_policy::reference)
        .def("__exit__", [](StopRequest& request, const py::object&, const py::object&, const py::object&) {
            if (!t_watched.empty() && t_watched.back() == &request) t_watched.pop_back();
        });
    mod.def("exchange_rows", &exchange_rows, py::arg("groups"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("sensitive_ids"),
            "Groups after rows with identical sensitive values are exchanged so that fewer "
            "groups publish the same QI tuple.");
    mod.def("absorb_cap", &absorb_cap, py::arg("n"), py::arg("k"),
            "Absorption's cap: the larger of 2k rows and 1/200 of the n rows (absorb.hpp).");
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
    py::register_exception<GraphTooDense>(mod, "GraphTooDenseError", PyExc_ValueError);

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

    py::class_<XColorStats>(mod, "Stats", "The numbers of one engine run (read-only).")
        .def_readonly("n", &XColorStats::n)
        .def_readonly("m", &XColorStats::m)
        .def_readonly("max_degree", &XColorStats::max_degree)
        .def_readonly("row_edges", &XColorStats::row_edges)
        .def_readonly("initial_violations", &XColorStats::initial_violations)
        .def_readonly("initial_potential", &XColorStats::initial_potential)
        .def_readonly("final_potential", &XColorStats::final_potential)
        .def_readonly("swaps", &XColorStats::swaps)
        .def_readonly("set_aside", &XColorStats::set_aside)
        .def_readonly("classes_examined", &XColorStats::classes_examined)
        .def_readonly("remaining_violations", &XColorStats::remaining_violations)
        .def_readonly("excess_moves", &XColorStats::excess_moves)
        .def_readonly("transfers", &XColorStats::transfers)
        .def_readonly("stalled_violations", &XColorStats::stalled_violations)
        .def_readonly("suppressed", &XColorStats::suppressed)
        .def_readonly("regrouped_size", &XColorStats::regrouped_size)
        .def_readonly("exact_search", &XColorStats::exact_search)
        .def_readonly("seconds_suppress", &XColorStats::seconds_suppress)
        .def_readonly("seconds_initialize", &XColorStats::seconds_initialize)
        .def_readonly("seconds_repair", &XColorStats::seconds_repair);

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

    register_substitution(mod);
}
