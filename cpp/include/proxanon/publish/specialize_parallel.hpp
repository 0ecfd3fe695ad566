// specialize() on several threads (specialize.hpp, "Threads"): a pass's classes speculated on
// in parallel and committed in order (speculated_pass()), and a large class's columns
// searched at once (Specializer::along_each()), each search on a speculator of its own.
// Invariant: the classes, splits and work are those of one thread, for any number of them:
// a speculation stands only where it holds on what was committed before it (Specializer::
// holds()), else its class runs again on that. Cost: per speculator, a PartChecker (O(U)
// memory) made on first use; per pass speculated on, a copy of the published tuples and of
// the balanced ones, and a thread start per thread beyond the caller's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/publish/specializer.hpp"

namespace proxanon::specializing {

struct Speculator;

/// Speculators for the threads of one specialize() call, made on first use: each a
/// Specializer with checks, scratch and polls of its own (its polls throw once stopping() is
/// set; only on the thread that made the pool do they ask the caller's interrupt too).
class SpeculatorPool {
public:
    /// `size` speculators over the arguments of specialize(), for `threads` threads.
    SpeculatorPool(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                   const Neighbours& neighbours, const MondrianParams& params, std::size_t budget,
                   std::size_t threads, std::size_t size);
    ~SpeculatorPool();
    SpeculatorPool(const SpeculatorPool&) = delete;
    SpeculatorPool& operator=(const SpeculatorPool&) = delete;

    std::size_t threads() const { return threads_; }
    /// The i-th speculator's specializer, made if need be; while on the thread that made the
    /// pool, its polls ask the caller's interrupt (`params`') too.
    Specializer& at(std::size_t i);
    /// Drops the i-th speculator (a throw may have left its scratch mid-use).
    void drop(std::size_t i);
    std::atomic<bool>& stopping() { return stopping_; }

private:
    const LossModel& qi_;
    const std::vector<std::vector<std::int32_t>>& node_keys_;
    const Neighbours& neighbours_;
    const MondrianParams& params_;
    std::size_t budget_, threads_;
    std::atomic<bool> stopping_{false};
    Interrupt* caller_;     ///< params.interrupt, asked on the thread owner_ only
    std::thread::id owner_; ///< the thread that made the pool (the caller's)
    std::vector<std::unique_ptr<Speculator>> each_;
};

/// The classes of `open` (moved out), one pass of specialize() on `pool`'s threads: each class
/// with every split of its parts speculated on from the tuples and work of `specializer` as
/// the pass begins, committed in order where it holds, else run again on `specializer`
/// (parallel.hpp's in_order()); the classes left appended to `done` and the splits counted
/// as split_class() one after another would. Polls the caller's interrupt (throws
/// Interrupted) on the calling thread only.
void speculated_pass(Specializer& specializer, std::vector<Entry>& open, const Round& round,
                     SpeculatorPool& pool, std::vector<Entry>& done, std::int64_t& splits);

}  // namespace proxanon::specializing
