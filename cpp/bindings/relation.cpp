// BoundRelation (relation.hpp) and its binding: _core.Relation, and the enums that cross the
// boundary by name (Metric, Structure, Init, Moves, CriterionKind), one definition each, here.
#include "relation.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "proxanon/mondrian/criteria_check.hpp"
#include "proxanon/xcolor/xcolor.hpp"

namespace proxanon::bindings {

namespace {

/// The empty relation over `table`: no two values are neighbours.
Neighbours no_edges(const ValueTable& table, Interrupt* interrupt) {
    return Neighbours(table, NeighbourGraph::from_csr(std::vector<std::int64_t>(table.size() + 1, 0), {}), interrupt);
}

/// Over a subset of the rows of a given relation: the values those rows use, renumbered in
/// order, and their induced graph. O(rows + edges).
Neighbours induced(const Csr& csr, ValueTable& table, const std::vector<std::int32_t>& rows, Interrupt* interrupt) {
    const std::size_t values = csr.offsets.size() - 1;
    std::vector<std::int32_t> id(values, -1);
    for (const std::int32_t r : rows) id[static_cast<std::size_t>(csr.row_value[static_cast<std::size_t>(r)])] = 0;
    std::int32_t next = 0;
    for (std::int32_t& u : id) {
        if (u == 0) u = next++;
    }
    std::vector<std::int32_t> sub;
    sub.reserve(rows.size());
    for (const std::int32_t r : rows) sub.push_back(id[static_cast<std::size_t>(csr.row_value[static_cast<std::size_t>(r)])]);
    std::vector<std::int64_t> off{0};
    std::vector<std::int32_t> to;
    for (std::size_t u = 0; u < values; ++u) {
        if (id[u] < 0) continue;
        for (auto p = csr.offsets[u]; p < csr.offsets[u + 1]; ++p) {
            const std::int32_t w = id[static_cast<std::size_t>(csr.targets[static_cast<std::size_t>(p)])];
            if (w >= 0) to.push_back(w);
        }
        off.push_back(static_cast<std::int64_t>(to.size()));
    }
    table = ValueTable::from_labels(std::move(sub), static_cast<std::size_t>(next));
    return Neighbours(table, NeighbourGraph::from_csr(std::move(off), std::move(to)), interrupt);
}

}  // namespace

BoundRelation::BoundRelation(const DoubleArray& sensitive, Metric metric, std::vector<double> weights,
                             std::optional<double> epsilon)
    : array_(sensitive), metric_(metric), weights_(std::move(weights)), epsilon_(epsilon) {
    sa_ = as_matrix(*array_, "sensitive");
    rows_ = sa_.rows;
    if (epsilon_) {
        if (weights_.size() != sa_.cols) {
            throw std::invalid_argument("weights needs one entry per sensitive column (" +
                                        std::to_string(sa_.cols) + "), not " + std::to_string(weights_.size()));
        }
        (void)distance();  // validates epsilon and the weights
    }
}

BoundRelation::BoundRelation(const Int32Array& row_value, const Int64Array& offsets, const Int32Array& targets)
    : csr_(to_csr(row_value, offsets, targets)) {
    if (csr_->offsets.empty()) throw std::invalid_argument("offsets needs one entry per value plus one");
    rows_ = csr_->row_value.size();
    epsilon_ = 0.0;  // the relation is given: its edges are the neighbours
}

const Matrix& BoundRelation::sensitive() const {
    if (given()) throw std::invalid_argument("a given relation holds no sensitive values");
    return sa_;
}

Distance BoundRelation::distance() const {
    if (given() || !epsilon_) throw std::invalid_argument("the relation has no distance at epsilon");
    return Distance(metric_, weights_, *epsilon_);
}

RelationBuilder BoundRelation::engine(Structure asked, std::size_t max_graph_entries) const {
    if (given()) {
        return [this](ValueTable& table, std::size_t /*threads*/, Interrupt* interrupt) {
            table = ValueTable::from_labels(csr_->row_value, csr_->offsets.size() - 1);
            return Neighbours(table, NeighbourGraph::from_csr(csr_->offsets, csr_->targets), interrupt);
        };
    }
    return [this, asked, max_graph_entries](ValueTable& table, std::size_t threads, Interrupt* interrupt) {
        table = ValueTable::from_rows(sa_.data, sa_.rows, sa_.cols);
        return Neighbours::build(table, distance(), asked, max_graph_entries, threads, interrupt);
    };
}

RowsRelation BoundRelation::over_rows(Structure asked, std::size_t max_graph_entries) const {
    // Over every row, the engine's structure; over a subset, the same built for its rows.
    return [this, whole = engine(asked, max_graph_entries), asked, max_graph_entries](
               ValueTable& table, const std::vector<std::int32_t>& rows, std::size_t threads,
               Interrupt* interrupt) {
        if (rows.size() == rows_) return whole(table, threads, interrupt);
        if (given()) return induced(*csr_, table, rows, interrupt);
        std::vector<double> sub(rows.size() * sa_.cols);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const double* x = sa_.data + static_cast<std::size_t>(rows[i]) * sa_.cols;
            std::copy(x, x + sa_.cols, sub.begin() + static_cast<std::ptrdiff_t>(i * sa_.cols));
        }
        table = ValueTable::from_rows(sub.data(), rows.size(), sa_.cols);
        return Neighbours::build(table, distance(), asked, max_graph_entries, threads, interrupt);
    };
}

RelationBuilder BoundRelation::checks(std::size_t max_graph_entries) const {
    if (given()) return engine(Structure::Graph, max_graph_entries);
    // The structure `Auto` picks, as the engine's, for checks only (no grid degrees): a set's
    // counts on an implicit one come from class_counts.hpp.
    return [this, max_graph_entries](ValueTable& table, std::size_t /*threads*/, Interrupt* interrupt) {
        table = ValueTable::from_rows(sa_.data, sa_.rows, sa_.cols);
        if (!epsilon_) return no_edges(table, interrupt);
        return Neighbours::for_checks(table, distance(), max_graph_entries, interrupt);
    };
}

}  // namespace proxanon::bindings

using namespace proxanon;
using namespace proxanon::bindings;

void register_relation(py::module_& mod) {
    py::enum_<Metric>(mod, "Metric", "The built-in distances over the scaled sensitive columns.")
        .value("l1", Metric::L1)
        .value("l2", Metric::L2)
        .value("linf", Metric::Linf)
        .value("min_component", Metric::MinComponent);
    py::enum_<Structure>(mod, "Structure", "How the epsilon-neighbour relation is held (neighbours.hpp).")
        .value("auto", Structure::Auto)
        .value("graph", Structure::Graph)
        .value("sorted", Structure::Sorted)
        .value("grid", Structure::Grid);
    py::enum_<Init>(mod, "Init", "XColor's starting colouring (xcolor.hpp).")
        .value("degree", Init::Degree)
        .value("qi", Init::Qi);
    py::enum_<Moves>(mod, "Moves", "The moves of XColor's repair (xcolor.hpp).")
        .value("auto", Moves::Auto)
        .value("swap", Moves::Swap);
    py::enum_<CriterionSpec::Kind>(mod, "CriterionKind", "The privacy criteria the native checks know (criteria_check.hpp).")
        .value("distinct", CriterionSpec::Distinct)
        .value("entropy", CriterionSpec::Entropy)
        .value("recursive", CriterionSpec::Recursive)
        .value("t_closeness", CriterionSpec::TCloseness)
        .value("beta_likeness", CriterionSpec::Beta)
        .value("delta_disclosure", CriterionSpec::Delta);
    py::class_<BoundRelation>(mod, "Relation",
                              "The relation one job's native calls share (relation.hpp): the sensitive values\n"
                              "under a built-in metric and epsilon, or a given graph between values.")
        .def(py::init<const DoubleArray&, Metric, std::vector<double>, std::optional<double>>(),
             py::arg("sensitive"), py::arg("metric"), py::arg("weights"), py::arg("epsilon"),
             "The sensitive values (n x s, float64) under `metric`, one weight per column, at "
             "`epsilon` (None: no distance checked).")
        .def(py::init<const Int32Array&, const Int64Array&, const Int32Array&>(), py::arg("row_value"),
             py::arg("offsets"), py::arg("targets"),
             "A given relation: each row's value id and the CSR adjacency between the values.")
        .def_property_readonly("rows", &BoundRelation::rows)
        .def_property_readonly("given", &BoundRelation::given)
        .def_property_readonly("epsilon", &BoundRelation::epsilon);
}
