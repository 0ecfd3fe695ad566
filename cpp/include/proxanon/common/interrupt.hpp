// Stopping long native work on request (Ctrl-C) while the core stays free of Python.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>

namespace proxanon {

/// Thrown out of a run when its interrupt hook asks to stop; nothing of the run is kept.
class Interrupted : public std::runtime_error {
public:
    Interrupted() : std::runtime_error("interrupted") {}
};

/// Polled from the native loops, between units of work. A poll runs the caller's `quick`
/// hook (a few flags' reads: another thread's stop requests) and increments a counter;
/// every 64th reads the clock, and the caller's `hook` (the binding's takes the GIL to check
/// for signals) runs at most every 0.1 s. When either returns true, poll() throws
/// Interrupted, so every loop unwinds, and so does every later poll (the request is kept:
/// the binding's hook reports a signal once). Units of work are at most milliseconds, so a
/// stop request is honoured within one unit, Ctrl-C within a fraction of a second. One
/// thread polls an Interrupt (the one that made the call: Python runs signal handlers on the
/// main thread only); parallel sections poll it from the calling thread (parallel.hpp).
class Interrupt {
public:
    explicit Interrupt(std::function<bool()> hook, std::function<bool()> quick = {})
        : hook_(std::move(hook)), quick_(std::move(quick)) {}

    void poll() {
        if (stopped_ || (quick_ && quick_())) stop();
        if (++calls_ % 64 != 0) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        if (hook_()) stop();
    }

    /// Whether to stop, asking both hooks now (no counting, no clock): for a poll that is
    /// itself rate-limited, such as another Interrupt's hook (specialize_parallel.cpp).
    bool ask() {
        if (!stopped_ && ((quick_ && quick_()) || hook_())) stopped_ = true;
        return stopped_;
    }

    /// Whether a poll has thrown (or ask() said stop): every later poll throws.
    bool stopped() const { return stopped_; }

private:
    [[noreturn]] void stop() {
        stopped_ = true;
        throw Interrupted();
    }

    std::function<bool()> hook_;
    std::function<bool()> quick_;
    std::uint64_t calls_ = 0;
    bool stopped_ = false;
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// Polls `interrupt` when there is one.
inline void poll(Interrupt* interrupt) {
    if (interrupt) interrupt->poll();
}

}  // namespace proxanon
