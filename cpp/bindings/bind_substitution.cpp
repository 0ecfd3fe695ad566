// pybind11 glue for property-preserving substitution: one column in, its substituted values
// and the kept constraints out; the GIL is released around the core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "proxanon/substitution/substitution.hpp"

namespace py = pybind11;

namespace {

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

template <typename T>
py::array_t<T> copy_out(const std::vector<T>& data) {
    return py::array_t<T>(static_cast<py::ssize_t>(data.size()), data.data());
}

py::dict substitute_column(const DoubleArray& values, double lo, double hi,
                           std::size_t segment_size, double poi_fraction, std::size_t iterations,
                           std::uint64_t seed, std::uint64_t stream, std::size_t n_threads) {
    if (values.ndim() != 1) throw std::invalid_argument("values must be 1-D");
    proxanon::SubstitutionParams params;
    params.segment_size = segment_size;
    params.poi_fraction = poi_fraction;
    params.iterations = iterations;
    params.seed = seed;
    params.stream = stream;
    params.n_threads = n_threads;
    proxanon::SubstitutionResult result;
    double seconds = 0.0;
    {
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        result = proxanon::substitute_column(values.data(),
                                             static_cast<std::size_t>(values.shape(0)), lo, hi,
                                             params);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    py::dict out;
    out["values"] = copy_out(result.values);
    out["i"] = copy_out(result.i);
    out["j"] = copy_out(result.j);
    out["k"] = copy_out(result.k);
    out["relation"] = copy_out(result.relation);
    out["localities"] = result.localities;
    out["steps_moved"] = result.steps_moved;
    out["steps_rejected"] = result.steps_rejected;
    out["seconds"] = seconds;
    return out;
}

py::dict extract_localities(const DoubleArray& sorted_values) {
    if (sorted_values.ndim() != 1) throw std::invalid_argument("sorted_values must be 1-D");
    const std::vector<double> u(sorted_values.data(), sorted_values.data() + sorted_values.shape(0));
    std::vector<std::int32_t> i, j, k;
    std::vector<std::int8_t> relation;
    for (const proxanon::Locality& loc : proxanon::extract_localities(u)) {
        i.push_back(loc.i);
        j.push_back(loc.j);
        k.push_back(loc.k);
        relation.push_back(static_cast<std::int8_t>(loc.relation));
    }
    py::dict out;
    out["i"] = copy_out(i);
    out["j"] = copy_out(j);
    out["k"] = copy_out(k);
    out["relation"] = copy_out(relation);
    return out;
}

}  // namespace

void register_substitution(py::module_& mod) {
    mod.def("substitute_column", &substitute_column, py::arg("values"), py::arg("lo"),
            py::arg("hi"), py::arg("segment_size"), py::arg("poi_fraction"),
            py::arg("iterations"), py::arg("seed"), py::arg("stream"), py::arg("n_threads"),
            "Property-preserving substitution of one column (values, constraints by row).");
    mod.def("extract_localities", &extract_localities, py::arg("sorted_values"),
            "Algorithm 1 over strictly increasing values: (i, j, k, relation) arrays.");
}
