// What the binding files share: the numpy array types, their conversion to vectors and
// matrices (and of vectors back to numpy), taxonomy specs, and the relation given as value ids
// per row and a CSR adjacency. Private to cpp/bindings.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace py = pybind11;

namespace proxanon::bindings {

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

Csr to_csr(const Int32Array& row_value, const Int64Array& offsets, const Int32Array& targets);

/// The same for an optional argument.
std::optional<std::vector<std::int32_t>> to_vector(const std::optional<Int32Array>& array, const char* name);

/// Hands a vector's buffer to numpy without copying it.
template <typename T>
py::array_t<T> to_numpy(std::vector<T>&& data) {
    auto* owned = new std::vector<T>(std::move(data));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), owner);
}

/// A 2-D view (n x cols) of a C-contiguous float64 array; 1-D means one column.
struct Matrix {
    const double* data;
    std::size_t rows;
    std::size_t cols;
};

Matrix as_matrix(const DoubleArray& array, const char* name);

double seconds_since(std::chrono::steady_clock::time_point start);

/// (parent of every node, number of leaves) of a taxonomy QI column; leaves come first.
using TaxonomySpec = std::optional<std::pair<std::vector<std::int32_t>, std::size_t>>;

/// The native taxonomy of each QI column that has one.
std::vector<std::optional<Taxonomy>> make_taxonomies(const std::vector<TaxonomySpec>& specs);

/// One taxonomy entry and one node-key list per QI column, a key per node of each taxonomy.
void check_node_keys(const std::vector<TaxonomySpec>& qi_taxonomies,
                     const std::vector<std::vector<std::int32_t>>& node_keys, std::size_t cols);

/// Fills the value table and builds the neighbour structure over it on the threads given
/// (0: the hardware's), polling the interrupt given; runs with the GIL released.
using RelationBuilder = std::function<Neighbours(ValueTable& table, std::size_t threads, Interrupt*)>;

}  // namespace proxanon::bindings
