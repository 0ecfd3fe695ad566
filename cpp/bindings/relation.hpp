// The relation one job's native calls share, bound as _core.Relation: the sensitive values
// under a built-in metric and epsilon (epsilon absent: no distance is checked), or a relation
// given as value ids per row and a CSR adjacency between the values (a user's distance
// evaluated in Python, or a graph of rows). The Python layer builds it once per job
// (python/proxanon/_engine/native.py) and every entry point that reads the sensitive values
// takes it: partition, session, specialize, mondrian, lattice, class_counts.
// Invariant: immutable after construction; the arrays it was given are held (read, not
// copied), so its views stay valid while the GIL is released. Cost: O(1) to build a metric
// relation, one copy of the CSR for a given one; each builder below costs what the structure
// it builds costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/session.hpp"

#include "convert.hpp"

namespace proxanon::bindings {

class BoundRelation {
public:
    /// The sensitive values (n x s) under `metric` with `weights` (one per column) and `epsilon`.
    BoundRelation(const DoubleArray& sensitive, Metric metric, std::vector<double> weights,
                  std::optional<double> epsilon);
    /// A given relation: `row_value[r]` is row r's value id, `offsets`/`targets` the CSR
    /// adjacency between values 0 .. offsets.size() - 2.
    BoundRelation(const Int32Array& row_value, const Int64Array& offsets, const Int32Array& targets);

    std::size_t rows() const { return rows_; }
    /// Whether the relation was given as a graph (no sensitive values, no metric).
    bool given() const { return csr_.has_value(); }
    std::optional<double> epsilon() const { return epsilon_; }
    Metric metric() const { return metric_; }
    const std::vector<double>& weights() const { return weights_; }

    /// The sensitive values of a metric relation (throws for a given one).
    const Matrix& sensitive() const;
    /// The distance at epsilon (throws for a given relation or without epsilon).
    Distance distance() const;

    /// The engine's structure over every row: `asked` (Auto picks by size) within
    /// `max_graph_entries` adjacency entries; a given relation's own graph.
    RelationBuilder engine(Structure asked, std::size_t max_graph_entries) const;
    /// A session's: the same over any subset of the rows (session.hpp).
    RowsRelation over_rows(Structure asked, std::size_t max_graph_entries) const;
    /// The structure of specialization's checks: a graph where it holds at most
    /// `max_graph_entries` entries, else an implicit one; no edges without epsilon.
    RelationBuilder checks(std::size_t max_graph_entries) const;

private:
    std::size_t rows_ = 0;
    std::optional<DoubleArray> array_;  ///< held so that sa_ stays valid
    Matrix sa_{nullptr, 0, 0};
    Metric metric_ = Metric::L1;
    std::vector<double> weights_;
    std::optional<double> epsilon_;
    std::optional<Csr> csr_;
};

}  // namespace proxanon::bindings
