// pybind11 module _core: its docstring, the exceptions it raises, and the bindings of each
// area (bind_*.cpp, signal_check.cpp), registered in turn.
#include <pybind11/pybind11.h>

#include "proxanon/neighbours/neighbour_graph.hpp"

namespace py = pybind11;

void register_relation(py::module_& mod);        // relation.cpp
void register_engine(py::module_& mod);          // bind_engine.cpp
void register_mondrian(py::module_& mod);        // bind_mondrian.cpp
void register_neighbours(py::module_& mod);      // bind_neighbours.cpp
void register_components(py::module_& mod);     // bind_components.cpp
void register_stop_request(py::module_& mod);    // signal_check.cpp
void register_substitution(py::module_& mod);    // bind_substitution.cpp
void register_csv(py::module_& mod);             // bind_csv.cpp

PYBIND11_MODULE(_core, mod) {
    mod.doc() = "proxanon's native XColor engine (see proxanon.partition for the public API)";

    register_relation(mod);  // first: the others' defaults name its enums
    register_engine(mod);
    register_mondrian(mod);
    register_neighbours(mod);
    register_components(mod);
    register_stop_request(mod);
    py::register_exception<proxanon::GraphTooDense>(mod, "GraphTooDenseError", PyExc_ValueError);
    register_substitution(mod);
    register_csv(mod);
}
