// SignalCheck's polls (signal_check.hpp) and the binding of StopRequest, whose `with` block
// makes the calling thread watch it.
#include "signal_check.hpp"

#include <algorithm>
#include <stdexcept>

namespace proxanon::bindings {

thread_local std::vector<const StopRequest*> t_watched;

SignalCheck::~SignalCheck() {
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
}

bool SignalCheck::stopped() const {
    return std::any_of(watched_.begin(), watched_.end(), [](const StopRequest* r) { return r->requested(); });
}

bool SignalCheck::check() {
    if (stopped()) return true;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return false;
    PyErr_Fetch(&type_, &value_, &traceback_);
    return true;
}

}  // namespace proxanon::bindings

using proxanon::bindings::StopRequest;
using proxanon::bindings::t_watched;

void register_stop_request(py::module_& mod) {
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
}
