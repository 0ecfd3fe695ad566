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

/// Polled from the native loops, between units of work. A poll costs a counter increment;
/// every 64th reads the clock, and the caller's hook runs at most every 0.1 s (the binding's
/// hook takes the GIL to check for signals). When the hook returns true, poll() throws
/// Interrupted, so every loop unwinds. Units of work are at most milliseconds, so a stop
/// request is honoured within a fraction of a second.
class Interrupt {
public:
    explicit Interrupt(std::function<bool()> hook) : hook_(std::move(hook)) {}

    void poll() {
        if (++calls_ % 64 != 0) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        if (hook_()) throw Interrupted();
    }

private:
    std::function<bool()> hook_;
    std::uint64_t calls_ = 0;
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// Polls `interrupt` when there is one.
inline void poll(Interrupt* interrupt) {
    if (interrupt) interrupt->poll();
}

}  // namespace proxanon
