// Independent per-item work spread over threads (row degrees of the implicit structures).
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "proxanon/interrupt.hpp"

namespace proxanon {

/// Threads to use for `asked` (0: one per hardware thread).
inline std::size_t thread_count(std::size_t asked) {
    if (asked > 0) return asked;
    return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

/// Calls f(i) for every i in [0, count), in blocks of kParallelBlock items each split over
/// up to `threads` threads (0: the hardware's); the calling thread polls `interrupt` between
/// blocks and works on the first share itself. f must not throw, and each f(i) must write
/// only what belongs to i: the results are then the same for any number of threads.
/// Cost: the work of f plus one thread start per block and extra thread.
inline constexpr std::size_t kParallelBlock = 1024;

template <typename F>
void parallel_for(std::size_t count, std::size_t threads, Interrupt* interrupt, F&& f) {
    threads = thread_count(threads);
    std::vector<std::thread> pool;
    for (std::size_t start = 0; start < count; start += kParallelBlock) {
        poll(interrupt);
        const std::size_t end = std::min(count, start + kParallelBlock);
        const std::size_t share = (end - start + threads - 1) / threads;
        pool.clear();
        for (std::size_t from = start + share; from < end; from += share) {
            pool.emplace_back([&f, from, to = std::min(end, from + share)] {
                for (std::size_t i = from; i < to; ++i) f(i);
            });
        }
        for (std::size_t i = start; i < std::min(end, start + share); ++i) f(i);
        for (auto& worker : pool) worker.join();
    }
}

}  // namespace proxanon
