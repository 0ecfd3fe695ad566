// pybind11 glue for Mondrian's strict cut and the steps that refine published classes
// (specialize, the covering split, absorption), over a bound relation (relation.hpp); the GIL is released around the core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "proxanon/publish/absorb.hpp"
#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/global/lattice.hpp"
#include "proxanon/mondrian/hierarchy_cut.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/specialize.hpp"
#include "proxanon/publish/vacate.hpp"

#include "convert.hpp"
#include "relation.hpp"
#include "signal_check.hpp"

using namespace proxanon;
using namespace proxanon::bindings;

namespace {

/// Python's criteria (proxanon._engine.options.NativeCriteria): per column its codes, value
/// count and whether numeric; per criterion (kind, value, c, column).
using CriteriaSpecs = std::vector<std::tuple<int, double, double, std::size_t>>;

CriteriaData criteria_data(const std::vector<Int32Array>& codes, const std::vector<std::int32_t>& counts,
                           const std::vector<bool>& numeric, const CriteriaSpecs& specs, std::size_t n) {
    if (codes.size() != counts.size() || codes.size() != numeric.size()) {
        throw std::invalid_argument("criteria_codes, criteria_values and criteria_numeric differ in length");
    }
    CriteriaData data;
    for (std::size_t j = 0; j < codes.size(); ++j) {
        CriteriaColumn column{to_vector(codes[j], "criteria_codes"), counts[j], numeric[j]};
        if (column.codes.size() != n) throw std::invalid_argument("criteria_codes differ from the table in rows");
        for (const std::int32_t v : column.codes) {
            if (v < 0 || v >= column.m) throw std::invalid_argument("criteria_codes out of range");
        }
        data.columns.push_back(std::move(column));
    }
    for (const auto& [kind, value, c, column] : specs) {
        if (kind < CriterionSpec::Distinct || kind > CriterionSpec::Delta || column >= data.columns.size()) {
            throw std::invalid_argument("a criterion names an unknown kind or column");
        }
        data.specs.push_back(CriterionSpec{kind, value, c, column});
    }
    return data;
}

/// The structure a part's checks read (Mondrian's and specialization's): the epsilon relation
/// (a graph where it is small enough, else a grid unless !grid_checks), or none without epsilon.
Neighbours part_neighbours(const ValueTable& table, const BoundRelation& relation, std::size_t max_graph_entries,
                           Interrupt* interrupt, bool grid_checks) {
    if (relation.epsilon()) {
        return Neighbours::for_checks(table, relation.distance(), max_graph_entries, interrupt, grid_checks);
    }
    return Neighbours(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}), interrupt);
}

/// A part's checks (k, l, (epsilon, delta)^k, the criteria) as the core takes them, the
/// criteria's data kept beside them and the stop request in place; not copied or moved
/// (params.criteria points into it).
struct PartChecks {
    PartChecks(std::size_t k, std::size_t l, bool dissimilarity, double delta, const std::vector<Int32Array>& codes,
               const std::vector<std::int32_t>& counts, const std::vector<bool>& numeric, const CriteriaSpecs& specs,
               std::size_t n)
        : criteria(criteria_data(codes, counts, numeric, specs, n)) {
        params.k = k;
        params.l = l;
        params.dissimilarity = dissimilarity;
        params.delta = delta;
        params.criteria = &criteria;
        params.interrupt = signals.interrupt();
    }
    PartChecks(const PartChecks&) = delete;
    PartChecks& operator=(const PartChecks&) = delete;

    /// `work(neighbours)` with the GIL released, over the structure these checks read of
    /// `relation`'s sensitive values (part_neighbours); the seconds it took, that structure
    /// included.
    template <typename F>
    double run(const BoundRelation& relation, std::size_t max_graph_entries, bool grid_checks, F&& work) {
        const Matrix& sa = relation.sensitive();
        return signals.run([&] {
            py::gil_scoped_release release;
            const auto start = std::chrono::steady_clock::now();
            // Without the distance check or distinct l the checks never read the sensitive
            // values: one abstract value for every row, not a grouping of n values.
            const ValueTable table = relation.epsilon() || params.l > 0
                ? ValueTable::from_rows(sa.data, sa.rows, sa.cols)
                : ValueTable::from_labels(std::vector<std::int32_t>(sa.rows, 0), 1);
            const Neighbours neighbours =
                part_neighbours(table, relation, max_graph_entries, params.interrupt, grid_checks);
            work(neighbours);
            return seconds_since(start);
        });
    }

    CriteriaData criteria;
    SignalCheck signals;
    MondrianParams params;
};

MondrianParams checks(std::size_t k, std::size_t l, bool dissimilarity, double delta) {
    MondrianParams params;
    params.k = k;
    params.l = l;
    params.dissimilarity = dissimilarity;
    params.delta = delta;
    return params;
}

py::dict run_mondrian(const BoundRelation& relation, std::size_t k, double delta, std::size_t l,
                      const DoubleArray& quasi_identifiers,
                      const std::vector<TaxonomySpec>& qi_taxonomies, bool grid_checks,
                      std::size_t max_graph_entries, const std::vector<Int32Array>& criteria_codes,
                      const std::vector<std::int32_t>& criteria_values,
                      const std::vector<bool>& criteria_numeric, const CriteriaSpecs& criteria,
                      bool follow_hierarchy, std::int64_t max_suppressed) {
    const Matrix qi = as_matrix(quasi_identifiers, "quasi_identifiers");
    if (qi.rows != relation.rows()) throw std::invalid_argument("quasi_identifiers and the relation differ in rows");
    if (max_suppressed != 0 && !follow_hierarchy) {
        throw std::invalid_argument("max_suppressed applies to the hierarchy cut (follow_hierarchy=True) only");
    }
    std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    PartChecks checked(k, l, relation.epsilon().has_value(), delta, criteria_codes, criteria_values,
                       criteria_numeric, criteria, relation.rows());
    const MondrianParams& params = checked.params;
    MondrianResult result;
    std::int64_t merged = 0, units = 0, suppressed = 0;
    const double seconds = checked.run(relation, max_graph_entries, grid_checks, [&](const Neighbours& neighbours) {
        const LossModel loss(qi.data, qi.rows, qi.cols, std::move(taxonomies));
        if (follow_hierarchy) {
            HierarchyCutResult cut = hierarchy_cut(loss, neighbours, params, max_suppressed);
            result.groups = std::move(cut.groups);
            result.cuts = cut.cuts;
            result.satisfied = cut.satisfied;
            result.violating_rows = std::move(cut.violating_rows);
            merged = cut.merged;
            units = cut.units;
            suppressed = cut.suppressed;
        } else {
            result = mondrian(loss, neighbours, params);
        }
    });
    py::dict out;
    out["groups"] = to_numpy(std::move(result.groups));
    out["cuts"] = result.cuts;
    out["satisfied"] = result.satisfied;
    out["violating_rows"] = to_numpy(std::move(result.violating_rows));
    out["merged"] = merged;
    out["units"] = units;
    out["suppressed"] = suppressed;
    out["seconds"] = seconds;
    return out;
}

/// One quasi-identifier of the lattice: per level the node of each leaf, and each node's NCP.
using LatticeSpec = std::pair<std::vector<Int32Array>, std::vector<double>>;

py::dict run_lattice(const BoundRelation& relation, std::size_t k, double delta, std::size_t l,
                     const std::vector<LatticeSpec>& columns, const Int32Array& leaf, const Int64Array& offsets,
                     const Int32Array& rows, std::int64_t max_suppressed, bool monotone,
                     std::size_t max_graph_entries, const std::vector<Int32Array>& criteria_codes,
                     const std::vector<std::int32_t>& criteria_values, const std::vector<bool>& criteria_numeric,
                     const CriteriaSpecs& criteria) {
    const std::size_t n = relation.rows();
    std::vector<LatticeColumn> lattice;
    for (const auto& [levels, ncp] : columns) {
        LatticeColumn column{{}, ncp};
        for (const Int32Array& level : levels) column.node.push_back(to_vector(level, "levels"));
        lattice.push_back(std::move(column));
    }
    LatticeUnits units{to_vector(leaf, "leaf"), to_vector(offsets, "offsets"), to_vector(rows, "rows")};
    if (units.offsets.empty() || units.offsets.front() != 0 || units.offsets.back() != static_cast<std::int64_t>(n) ||
        units.rows.size() != n || !std::is_sorted(units.offsets.begin(), units.offsets.end())) {
        throw std::invalid_argument("offsets and rows must give every row of the table to one unit");
    }
    for (const std::int32_t r : units.rows) {
        if (r < 0 || static_cast<std::size_t>(r) >= n) throw std::invalid_argument("a unit's row is out of range");
    }
    if (max_suppressed < 0) throw std::invalid_argument("max_suppressed must be >= 0");
    PartChecks checked(k, l, relation.epsilon().has_value(), delta, criteria_codes, criteria_values,
                       criteria_numeric, criteria, n);
    const MondrianParams& params = checked.params;
    LatticeResult result;
    const double seconds = checked.run(relation, max_graph_entries, true, [&](const Neighbours& neighbours) {
        result = search_lattice(lattice, units, neighbours, params, max_suppressed, monotone);
    });
    py::dict out;
    out["found"] = result.found;
    out["levels"] = result.levels;
    out["groups"] = to_numpy(std::move(result.groups));
    out["suppressed"] = result.suppressed;
    out["cost"] = result.cost;
    out["nodes"] = result.nodes;
    out["checked"] = result.checked;
    out["top_suppressed"] = result.top_suppressed;
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
/// rows by the covering split, in vacate.hpp's rounds with vacating and absorption
/// (cover_failing()), "absorb" moves giant classes' rows instead (absorb.hpp),
/// "absorb_failing" failing giant classes' rows too (a best-effort table).
py::dict specialize_with(const RelationBuilder& build, std::size_t n, std::vector<std::int32_t> classes,
                         const DoubleArray& quasi_identifiers,
                         const std::vector<TaxonomySpec>& qi_taxonomies,
                         const std::vector<std::vector<std::int32_t>>& node_keys, std::size_t k,
                         std::size_t l, bool dissimilarity, double delta, const std::string& step,
                         std::size_t threads, const CriteriaData* criteria = nullptr) {
    const std::optional<SpecializeTarget> target = specialize_target(step);
    const Matrix qi = as_matrix(quasi_identifiers, "quasi_identifiers");
    if (qi.rows != n || classes.size() != n) throw std::invalid_argument("classes, quasi_identifiers and the relation differ in rows");
    check_node_keys(qi_taxonomies, node_keys, qi.cols);
    std::vector<std::optional<Taxonomy>> taxonomies = make_taxonomies(qi_taxonomies);
    MondrianParams params = checks(k, l, dissimilarity, delta);
    params.criteria = criteria;
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
            result = cover_failing(loss, node_keys, neighbours, std::move(classes), params, threads);
        } else {
            result = specialize(loss, node_keys, neighbours, classes, params, *target, kSpecializeWorkPerRow, threads);
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
                        const std::vector<std::vector<std::int32_t>>& node_keys, const BoundRelation& relation,
                        std::size_t k, std::size_t l, double delta, std::size_t max_graph_entries,
                        const std::string& step, std::size_t threads,
                        const std::vector<Int32Array>& criteria_codes,
                        const std::vector<std::int32_t>& criteria_values,
                        const std::vector<bool>& criteria_numeric, const CriteriaSpecs& criteria) {
    const CriteriaData criteria_checked =
        criteria_data(criteria_codes, criteria_values, criteria_numeric, criteria, relation.rows());
    return specialize_with(relation.checks(max_graph_entries), relation.rows(), to_vector(classes, "classes"),
                           quasi_identifiers, qi_taxonomies, node_keys, k, l, relation.epsilon().has_value(), delta,
                           step, threads, &criteria_checked);
}

}  // namespace

void register_mondrian(py::module_& mod) {
    mod.def("mondrian", &run_mondrian, py::arg("relation"), py::arg("k"), py::arg("delta"),
            py::arg("l"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies") = std::vector<TaxonomySpec>{}, py::arg("grid_checks") = true,
            py::arg("max_graph_entries") = kMaxGraphEntries,
            py::arg("criteria_codes") = std::vector<Int32Array>{},
            py::arg("criteria_values") = std::vector<std::int32_t>{},
            py::arg("criteria_numeric") = std::vector<bool>{}, py::arg("criteria") = CriteriaSpecs{},
            py::arg("follow_hierarchy") = false, py::arg("max_suppressed") = 0,
            "Strict multidimensional Mondrian with k, distinct-l and (epsilon, delta) checks;\n"
            "follow_hierarchy: the hierarchy cut instead (hierarchy_cut.hpp): parts split by the\n"
            "children of their taxonomy nodes, classes published at their tightest nodes, at most\n"
            "max_suppressed rows left out (group -1) where that costs less;\n"
            "criteria_*: privacy criteria each part also satisfies (criteria_check.hpp);\n"
            "grid_checks=False refuses (GraphTooDenseError) where they would need a grid\n"
            "(a graph of more than max_graph_entries).");
    mod.def("lattice", &run_lattice, py::arg("relation"), py::arg("k"), py::arg("delta"), py::arg("l"), py::arg("columns"),
            py::arg("leaf"), py::arg("offsets"), py::arg("rows"), py::arg("max_suppressed"),
            py::arg("monotone"), py::arg("max_graph_entries") = kMaxGraphEntries,
            py::arg("criteria_codes") = std::vector<Int32Array>{},
            py::arg("criteria_values") = std::vector<std::int32_t>{},
            py::arg("criteria_numeric") = std::vector<bool>{}, py::arg("criteria") = CriteriaSpecs{},
            "Full-domain recoding (global/lattice.hpp): the level per column of lowest loss whose\n"
            "failing classes, suppressed, are at most max_suppressed rows; columns: per QI its\n"
            "node of each leaf per level and each node's NCP; units: leaf codes (units x d) and\n"
            "their rows (CSR offsets, rows).");
    mod.def("specialize", &run_specialize, py::arg("classes"), py::arg("quasi_identifiers"),
            py::arg("qi_taxonomies"), py::arg("node_keys"), py::arg("relation"), py::arg("k"), py::arg("l"),
            py::arg("delta"),
            py::arg("max_graph_entries") = kMaxGraphEntries, py::arg("step") = "split",
            py::arg("threads") = 1, py::arg("criteria_codes") = std::vector<Int32Array>{},
            py::arg("criteria_values") = std::vector<std::int32_t>{},
            py::arg("criteria_numeric") = std::vector<bool>{}, py::arg("criteria") = CriteriaSpecs{},
            "Split every class of at least 2k rows into checked parts publishing distinct finer "
            "tuples; the checks keep the epsilon graph where it holds at most max_graph_entries "
            "entries, else search a grid. step 'split_failing': split only failing classes, "
            "into parts with no more violating rows in all; 'absorb': instead move rows of "
            "classes above the cap into passing classes that cover them (absorb.hpp); "
            "'absorb_failing': failing classes above the cap give rows too; 'cover_failing': "
            "deal failing classes above 2% of the rows into parts of at most 2%, in rounds "
            "that empty small classes publishing tuples those parts need and absorb again "
            "(vacate.hpp). The splits run on `threads` threads (0: the hardware's), with the same "
            "result for any number.");
    mod.def("absorb_cap", &absorb_cap, py::arg("n"), py::arg("k"),
            "Absorption's cap: the larger of 2k rows and 1/200 of the n rows (absorb.hpp).");
    mod.def("largest_class_rows", &largest_class_rows, py::arg("n"),
            "The most rows a published class should hold in a table of n rows (2%, "
            "specialize.hpp): failing classes above it are dealt into parts.");
}
