// Independent per-item work spread over threads (row degrees of the implicit structures),
// and items that read what earlier ones wrote run in order by speculation (specialize.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "proxanon/common/interrupt.hpp"

namespace proxanon {

/// Threads to use for `asked` (0: one per hardware thread).
inline std::size_t thread_count(std::size_t asked) {
    if (asked > 0) return asked;
    return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

/// Calls f(slot, i) for every i in [0, count) on up to `threads` threads (0: the
/// hardware's), the calling thread one of them; `slot` (0 the calling thread, 1 .. threads-1
/// the others) names the thread, for scratch or sums of its own. Threads take runs of up to
/// kParallelRun items in turn, so an uneven load spreads. The calling thread polls
/// `interrupt` before each of its items and, once no item is left, while it waits for the
/// others; when a poll throws, the others stop before their next item, are joined, and the
/// exception leaves. So Ctrl-C is honoured within a few items' time, however long the loop
/// (a dense grid's row degrees once ran for seconds between polls). f must not
/// throw, and each f(slot, i) must write only what belongs to i or to `slot`: the results are
/// then the same for any number of threads (sums per slot: when they are exact, integers).
/// Cost: the work of f plus one thread start per extra thread and an atomic add per run.
inline constexpr std::size_t kParallelRun = 64;

template <typename F>
void parallel_for_slots(std::size_t count, std::size_t threads, Interrupt* interrupt, F&& f) {
    threads = std::max<std::size_t>(1, std::min(thread_count(threads), count));
    if (threads == 1) {
        for (std::size_t i = 0; i < count; ++i) {
            poll(interrupt);
            f(std::size_t{0}, i);
        }
        return;
    }
    // Runs short enough that every thread gets many: the last ones to finish end together.
    const std::size_t run = std::clamp<std::size_t>(count / (threads * 64), 1, kParallelRun);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> finished{0};
    std::mutex mutex;
    std::condition_variable done;
    const auto work = [&](std::size_t slot, Interrupt* polled) {
        for (std::size_t first = next.fetch_add(run); first < count; first = next.fetch_add(run)) {
            for (std::size_t i = first; i < std::min(count, first + run); ++i) {
                if (stop.load(std::memory_order_relaxed)) return;
                poll(polled);
                f(slot, i);
            }
        }
    };
    struct Pool {
        std::atomic<bool>& stop;
        std::vector<std::thread> threads;
        ~Pool() {  // on the way out, normally or by a poll's throw
            stop = true;
            for (std::thread& thread : threads) thread.join();
        }
    } pool{stop, {}};
    for (std::size_t slot = 1; slot < threads; ++slot) {
        pool.threads.emplace_back([&, slot] {
            work(slot, nullptr);
            {
                const std::lock_guard<std::mutex> lock(mutex);
                ++finished;
            }
            done.notify_all();
        });
    }
    work(0, interrupt);
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex);
            if (done.wait_for(lock, std::chrono::milliseconds(2), [&] { return finished.load() == threads - 1; })) break;
        }
        poll(interrupt);
    }
}

/// parallel_for_slots for items that need no scratch of their own: f(i).
template <typename F>
void parallel_for(std::size_t count, std::size_t threads, Interrupt* interrupt, F&& f) {
    parallel_for_slots(count, threads, interrupt, [&f](std::size_t, std::size_t i) { f(i); });
}

/// Calls f(i) for every i in [0, count) on up to `threads` threads (0: the hardware's), the
/// calling thread one of them, each taking the next item no thread has taken: for a few items
/// of unequal cost, which parallel_for's equal shares would leave on one thread. f must not
/// throw, and each f(i) must write only what belongs to i. Cost: the work of f plus one
/// thread start per extra thread.
template <typename F>
void parallel_each(std::size_t count, std::size_t threads, F&& f) {
    threads = std::min(thread_count(threads), count);
    std::atomic<std::size_t> next{0};
    const auto work = [&f, &next, count] {
        for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) f(i);
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& thread : pool) thread.join();
}

/// Items 0 .. count-1 that may read what earlier ones wrote, run with the results of running
/// them one after another on the calling thread, on up to `threads` threads (0: the
/// hardware's) by speculation. Threads take the items in order, each the next one no thread
/// has taken: `speculate(slot, i)` runs item i on the state as it was before the first item
/// into a record of its own, on the thread's context `slot` (0 the calling thread's, 1 ..
/// threads-1 the others'), and may throw (on another thread the item is then run instead;
/// on the calling thread, which may poll `interrupt` there, the exception leaves). The calling thread
/// completes the items in order: an item no thread has taken it runs itself with `run(i)`,
/// on the state the items before it left; another's it waits for (speculating on the next
/// free item meanwhile, and polling `interrupt`), then `commit(i)` applies the record where
/// it still holds (true) or else `run(i)` runs the item. With one thread every item is run,
/// in order. `run` and `commit` run on the calling thread only, and may throw: `stop` is
/// set when this returns or throws, after which speculations should end soon (throw), and
/// the threads are joined. Unlike parallel_for's fixed shares, items go to whichever thread
/// is free, so one long item holds up no others.
template <typename Speculate, typename Commit, typename Run>
void in_order(std::size_t count, std::size_t threads, Interrupt* interrupt, std::atomic<bool>& stop,
              Speculate&& speculate, Commit&& commit, Run&& run) {
    threads = std::min(thread_count(threads), count);
    std::atomic<std::size_t> next{0};  // the first item no thread has taken
    std::mutex mutex;
    std::condition_variable finished;
    std::vector<char> ready(count, 0), held(count, 0);  // guarded by `mutex`
    // Takes the next free item and speculates on it; false when none is left.
    const auto take = [&](std::size_t slot) {
        const std::size_t i = next.fetch_add(1);
        if (i >= count) return false;
        bool ok = false;
        if (!stop.load()) {
            try {
                speculate(slot, i);
                ok = true;
            } catch (...) {
                if (slot == 0) throw;  // the calling thread's (its polls of `interrupt`)
            }
        }
        {
            const std::lock_guard<std::mutex> lock(mutex);
            ready[i] = 1;
            held[i] = ok ? 1 : 0;
        }
        finished.notify_all();
        return true;
    };
    struct Pool {
        std::atomic<bool>& stop;
        std::vector<std::thread> threads;
        ~Pool() {
            stop = true;
            for (std::thread& thread : threads) thread.join();
        }
    } pool{stop, {}};
    for (std::size_t slot = 1; slot < threads; ++slot) {
        pool.threads.emplace_back([&take, &stop, slot] {
            while (!stop.load() && take(slot)) {
            }
        });
    }
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t expected = i;
        if (next.compare_exchange_strong(expected, i + 1)) {
            run(i);
            continue;
        }
        bool ok = false;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex);
                if (next.load() >= count) finished.wait_for(lock, std::chrono::milliseconds(20), [&] { return ready[i] != 0; });
                if (ready[i]) {
                    ok = held[i] != 0;
                    break;
                }
            }
            poll(interrupt);
            take(0);
        }
        if (!ok || !commit(i)) run(i);
    }
}

}  // namespace proxanon
