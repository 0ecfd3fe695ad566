// How a native call stops: SignalCheck, the Interrupt the binding hands the core (Ctrl-C in
// Python's signal handlers, or a StopRequest the calling thread watches). Private to
// cpp/bindings; signal_check.cpp binds StopRequest.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <vector>

#include "proxanon/common/interrupt.hpp"

namespace py = pybind11;

namespace proxanon::bindings {

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
extern thread_local std::vector<const StopRequest*> t_watched;

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
    ~SignalCheck();

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
    bool stopped() const;

    bool check();

    PyObject* type_ = nullptr;
    PyObject* value_ = nullptr;
    PyObject* traceback_ = nullptr;
    const std::vector<const StopRequest*> watched_ = t_watched;  // the constructing thread's
    Interrupt interrupt_{[this] { return check(); }, [this] { return stopped(); }};
};

}  // namespace proxanon::bindings
