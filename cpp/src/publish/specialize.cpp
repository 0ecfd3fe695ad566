#include "proxanon/publish/specialize.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "proxanon/common/interrupt.hpp"
#include "proxanon/common/parallel.hpp"
#include "proxanon/publish/specialize_parallel.hpp"
#include "proxanon/publish/specializer.hpp"

namespace proxanon {

namespace specializing {

/// Whether split_class() tries to split class `entry` as a pass begins (but for the work
/// allowed): which classes' rows count in choosing how the pass uses its threads.
bool tries(const Entry& entry, const Round& round, std::size_t k) {
    const auto& [rows, whole, made] = entry;
    if (rows.size() < 2 * k) return false;
    switch (round.target) {
        case SpecializeTarget::Passing: return true;
        case SpecializeTarget::Failing: return whole.violations > 0 || made;
        case SpecializeTarget::Covering:
            return round.pass == 0 && !made && whole.violations > 0 && rows.size() > largest_class_rows(round.n);
    }
    return false;
}

/// Class `entry` of a pass tried, and the parts its splits make tried in turn, depth first
/// (a split's parts in order): the classes left appended to `done`, the splits counted.
void split_class(Specializer& specializer, Entry entry, const Round& round, std::vector<Entry>& done,
                 std::int64_t& splits) {
    const MondrianParams& params = specializer.params();
    const SpecializeTarget target = round.target;
    const std::size_t n = round.n;
    std::vector<Entry> stack;
    stack.push_back(std::move(entry));
    while (!stack.empty()) {
        auto [rows, whole, made] = std::move(stack.back());
        const bool from_balanced = specializer.ledger().balanced_tuple(whole.key) && made;
        bool balanced = false;
        stack.pop_back();
        poll(params.interrupt);
        std::optional<Split> split;
        if (rows.size() >= 2 * params.k && !specializer.spent()) {
            if (target == SpecializeTarget::Failing && whole.violations > 0) {
                split = specializer.best_failing(rows, whole, 0);
                // The balanced split is tried in the first pass, and on its own parts
                // only while they hold more than 2% of the table's rows (the class-size
                // rule of docs/design/publishing.md; they are no riskier than their class
                // already).
                if (!split && round.pass == 0 && (!from_balanced || rows.size() > largest_class_rows(n)) && !specializer.spent()) {
                    split = specializer.balanced(rows, whole);
                    balanced = split.has_value();
                }
            } else if (target == SpecializeTarget::Covering) {
                // A class of the table, failing, above 2% of its rows (the class-size
                // rule of docs/design/publishing.md): the covering split, into parts of at most
                // 2% (but the one keeping the class's tuple).
                if (round.pass == 0 && !made && whole.violations > 0 && rows.size() > largest_class_rows(n)) {
                    split = specializer.covering(rows, whole, largest_class_rows(n));
                }
            } else if (target == SpecializeTarget::Passing || made) {
                split = specializer.best(rows, whole, 0);
            }
        }
        if (!split) {
            done.emplace_back(std::move(rows), std::move(whole), made);
            continue;
        }
        ++splits;
        specializer.ledger().replace(whole.key, split->parts);
        if (balanced) {
            for (const Part& part : split->parts) specializer.ledger().add_balanced(part.key);
        }
        for (auto it = split->parts.rbegin(); it != split->parts.rend(); ++it) {
            std::vector<std::int32_t> part_rows(split->rows.begin() + static_cast<std::ptrdiff_t>(it->begin),
                                                split->rows.begin() + static_cast<std::ptrdiff_t>(it->end));
            Part part = *it;
            part.begin = 0;
            part.end = part_rows.size();
            stack.emplace_back(std::move(part_rows), std::move(part), true);
        }
    }
}

}  // namespace specializing

using namespace specializing;

std::size_t checked_classes(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params, SpecializeTarget target) {
    const std::size_t n = classes.size();
    if (neighbours.table().row_value.size() != n) throw std::invalid_argument("classes and sensitive values differ in rows");
    if (node_keys.size() != qi.dimensions()) throw std::invalid_argument("node_keys needs one entry per quasi-identifier");
    // A part's largest D is exact only where it exceeds t(G) (PartChecker): where a class fails
    // by k and (epsilon, delta) alone, that bounds its risk; a class failing by l would not.
    if (target != SpecializeTarget::Passing && (!params.dissimilarity || params.l > 1)) {
        throw std::invalid_argument("the failing target compares (epsilon, delta) risks: it needs epsilon and no l");
    }
    for (std::size_t i = 0; i < qi.dimensions(); ++i) {
        if ((qi.taxonomy(i) != nullptr) == node_keys[i].empty()) {
            throw std::invalid_argument("node_keys must name the nodes of exactly the taxonomy columns");
        }
    }
    std::vector<std::uint8_t> used;
    for (const std::int32_t c : classes) {
        if (c < 0) throw std::invalid_argument("class ids must be >= 0");
        if (static_cast<std::size_t>(c) >= used.size()) used.resize(static_cast<std::size_t>(c) + 1, 0);
        used[static_cast<std::size_t>(c)] = 1;
    }
    if (std::find(used.begin(), used.end(), 0) != used.end()) {
        throw std::invalid_argument("class ids must be 0 .. classes-1, every one used");
    }
    return used.size();
}

SpecializeResult specialize(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params, SpecializeTarget target, std::size_t work_per_row,
                            std::size_t threads) {
    const std::size_t n = classes.size();
    const std::size_t count = checked_classes(qi, node_keys, neighbours, classes, params, target);
    std::vector<std::vector<std::int32_t>> members(count);
    for (std::size_t r = 0; r < n; ++r) members[static_cast<std::size_t>(classes[r])].push_back(static_cast<std::int32_t>(r));
    const std::size_t counted = std::max<std::size_t>(n, 1 << 12);
    const std::size_t budget = work_per_row > std::numeric_limits<std::size_t>::max() / counted
                                   ? std::numeric_limits<std::size_t>::max() : work_per_row * counted;
    Specializer specializer(qi, node_keys, neighbours, params, budget);
    std::vector<Part> wholes;
    for (const auto& rows : members) {
        // Covering reads the violations of the classes above 2% of the rows only.
        const bool checked = target == SpecializeTarget::Covering ? rows.size() > largest_class_rows(n) : rows.size() >= 2 * params.k;
        wholes.push_back(specializer.describe(rows, 0, rows.size(), checked));
        specializer.ledger().publish(wholes.back().key);
    }

    // A split frees its class's tuple for classes tried later, so passes repeat while any
    // class splits (at most kPasses).
    SpecializeResult result;
    std::vector<Entry> open, done;
    for (std::size_t c = 0; c < members.size(); ++c) open.emplace_back(std::move(members[c]), std::move(wholes[c]), false);
    // Threads beyond one: speculators for a pass's classes (a slot per thread) and for the
    // columns of a large class (one per column), made on first use.
    const std::size_t threads_used = thread_count(threads);
    SpeculatorPool speculators(qi, node_keys, neighbours, params, budget, threads_used, threads_used);
    SpeculatorPool columns(qi, node_keys, neighbours, params, budget, threads_used, qi.dimensions());
    for (std::size_t pass = 0; pass < kPasses && !open.empty(); ++pass) {
        const std::int64_t before = result.splits;
        const Round round{target, pass, n};
        // Where one class holds half the rows of the classes tried or more, its columns are
        // searched at once and the classes run one after another; else they are speculated on.
        std::size_t largest = 0, tried = 0;
        for (const Entry& entry : open) {
            if (!tries(entry, round, params.k)) continue;
            tried += std::get<0>(entry).size();
            largest = std::max(largest, std::get<0>(entry).size());
        }
        if (threads_used <= 1 || open.size() <= 1 || 2 * largest >= tried) {
            specializer.search_columns_on(threads_used > 1 ? &columns : nullptr);
            for (auto& entry : open) split_class(specializer, std::move(entry), round, done, result.splits);
            specializer.search_columns_on(nullptr);
        } else {
            speculated_pass(specializer, open, round, speculators, done, result.splits);
        }
        open = std::move(done);
        done.clear();
        if (result.splits == before) break;
    }
    result.stopped = specializer.spent();
    result.classes.assign(n, -1);
    for (std::size_t c = 0; c < open.size(); ++c) {
        for (std::int32_t r : std::get<0>(open[c])) result.classes[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(c);
    }
    return result;
}

}  // namespace proxanon
