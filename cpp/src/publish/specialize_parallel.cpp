#include "proxanon/publish/specialize_parallel.hpp"

#include <algorithm>
#include <thread>
#include <unordered_set>
#include <utility>

#include "proxanon/common/parallel.hpp"

namespace proxanon::specializing {

/// A specializer for one thread's speculations: its own checks, scratch and polls, which
/// throw once `stopping`; while it runs on the thread `owner` (the caller's), its polls ask
/// the caller's interrupt too (at most every 0.1 s, its own rate: asking directly, not
/// through the caller's counter, which would stretch that to 6.4 s), which no other thread may.
struct Speculator {
    Speculator(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
               const Neighbours& neighbours, const MondrianParams& checks, std::size_t budget,
               const std::atomic<bool>& stopping, Interrupt* caller, std::thread::id owner)
        : interrupt([caller, owner] { return caller != nullptr && std::this_thread::get_id() == owner && caller->ask(); },
                    [&stopping] { return stopping.load(std::memory_order_relaxed); }),
          params(polled_by(checks, &interrupt)), specializer(qi, node_keys, neighbours, params, budget) {}

    static MondrianParams polled_by(MondrianParams checks, Interrupt* polled) {
        checks.interrupt = polled;
        return checks;
    }

    Interrupt interrupt;
    MondrianParams params;
    Specializer specializer;
};

SpeculatorPool::SpeculatorPool(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                               const Neighbours& neighbours, const MondrianParams& params, std::size_t budget,
                               std::size_t threads, std::size_t size)
    : qi_(qi), node_keys_(node_keys), neighbours_(neighbours), params_(params), budget_(budget),
      threads_(threads), caller_(params.interrupt), owner_(std::this_thread::get_id()), each_(size) {}

SpeculatorPool::~SpeculatorPool() = default;

Specializer& SpeculatorPool::at(std::size_t i) {
    if (!each_[i]) each_[i] = std::make_unique<Speculator>(qi_, node_keys_, neighbours_, params_, budget_, stopping_, caller_, owner_);
    return each_[i]->specializer;
}

void SpeculatorPool::drop(std::size_t i) { each_[i].reset(); }

std::vector<std::optional<Split>> Specializer::along_each(bool failing, const std::vector<std::int32_t>& rows,
                                                          const Part& whole, std::size_t depth) {
    const std::size_t d = qi_.dimensions();
    if (columns_ == nullptr || ledger_.speculating() || depth != 0 || rows.size() < kColumnRows || d < 2 || spent()) return {};
    SpeculatorPool& pool = *columns_;
    std::vector<std::optional<Split>> splits(d);
    std::vector<Speculation> records(d);
    std::vector<char> threw(d, 0);
    const std::size_t start = work();
    pool.stopping() = false;
    parallel_each(d, pool.threads(), [&](std::size_t j) {
        try {
            Specializer& own = pool.at(j);
            records[j].recorded = false;  // the tuples do not change while the columns are searched
            records[j].published = &ledger_.published();
            records[j].balanced = &ledger_.balanced_tuples();
            own.speculate(&records[j], start);
            splits[j] = failing ? own.failing_along(j, rows, whole, 0) : own.along(j, rows, whole, 0);
            records[j].work = own.work() - start;
            own.speculate(nullptr, 0);
        } catch (...) {
            threw[j] = 1;
            pool.stopping() = true;
            pool.drop(j);
        }
    });
    // Ctrl-C seen by the column searched on the calling thread: the search stops here.
    if (params_.interrupt != nullptr && params_.interrupt->stopped()) throw Interrupted();
    const std::size_t budget = ledger_.budget();
    std::size_t total = 0;
    for (std::size_t j = 0; j < d; ++j) {
        if (threw[j] || records[j].work >= budget - start - total) return {};  // start < budget: not spent()
        total += records[j].work;
    }
    ledger_.charge(total);
    return splits;
}

void speculated_pass(Specializer& specializer, std::vector<Entry>& open, const Round& round,
                     SpeculatorPool& pool, std::vector<Entry>& done, std::int64_t& splits) {
    const TupleCounts snapshot = specializer.ledger().published();
    const std::unordered_set<Key, KeyHash> balanced = specializer.ledger().balanced_tuples();
    const std::size_t work = specializer.work();
    Interrupt* const interrupt = specializer.params().interrupt;
    std::vector<Speculation> records(open.size());
    pool.stopping() = false;
    in_order(
        open.size(), pool.threads(), interrupt, pool.stopping(),
        [&](std::size_t slot, std::size_t i) {
            Speculation& record = records[i];
            record.published = &snapshot;
            record.balanced = &balanced;
            Specializer& own = pool.at(slot);
            own.speculate(&record, work);
            try {
                split_class(own, Entry(open[i]), round, record.done, record.splits);
            } catch (...) {
                pool.drop(slot);  // its scratch may be left mid-use: a new one next time
                throw;
            }
            record.work = own.work() - work;
            own.speculate(nullptr, 0);
        },
        [&](std::size_t i) {
            Speculation& record = records[i];
            if (!specializer.holds(record)) return false;
            specializer.ledger().commit(record);
            splits += record.splits;
            for (Entry& entry : record.done) done.push_back(std::move(entry));
            record = Speculation{};
            return true;
        },
        [&](std::size_t i) {
            records[i] = Speculation{};
            split_class(specializer, std::move(open[i]), round, done, splits);
        });
}

}  // namespace proxanon::specializing
