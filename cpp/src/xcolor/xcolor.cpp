#include "proxanon/xcolor/xcolor.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/xcolor/exact.hpp"
#include "proxanon/xcolor/excess_descent.hpp"
#include "proxanon/xcolor/initialize.hpp"
#include "proxanon/xcolor/suppression.hpp"
#include "proxanon/xcolor/swap_loop.hpp"

namespace proxanon {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

namespace {

/// The group size s >= k (up to 2k) that lets each row have the most neighbours relative to
/// the group, i.e. maximizes (t(s) + 1) / s (ties: the smaller s). t is a floor, so sizes of
/// exactly k often waste allowance: with delta = 0.8, a group of 10 allows 1 neighbour (11%)
/// but a group of 11 allows 2 (20%). A clique of c rows needs c <= sum over groups of
/// (t(G) + 1), which this choice maximizes among equitable partitions with sizes >= k.
std::size_t roomiest_size(std::size_t k, double delta) {
    const auto room = [&](std::size_t size) {  // t(size) + 1, exact
        return static_cast<std::uint64_t>(allowed_neighbours(size, delta)) + 1;
    };
    std::size_t best = k;
    for (std::size_t s = k + 1; s <= 2 * k; ++s) {
        if (room(s) * best > room(best) * s) best = s;  // (t(s)+1)/s > (t(best)+1)/best
    }
    return best;
}

XColorResult run_once(const ValueTable& table, const Neighbours& neighbours,
                      const LossModel& loss, const XColorOptions& options,
                      const std::vector<std::int32_t>* initial_classes, std::size_t m,
                      bool allow_excess);

/// The heuristics left violations in a table small enough to search: returns the exact
/// partition (with suppression: the one leaving out the fewest rows, all of them when no group
/// can satisfy), or, when none exists, `heuristic` as it is. Either way marked exact_search.
XColorResult settle_exactly(const ValueTable& table, const Neighbours& neighbours,
                            const LossModel& loss, const XColorOptions& options,
                            XColorResult heuristic) {
    const ExactPartition exact = exact_partition(table, neighbours, loss, options.k, options.delta,
                                                 options.suppress, options.interrupt);
    if (exact.groups.empty() && !options.suppress) {
        heuristic.stats.exact_search = 1;
        return heuristic;
    }
    const std::vector<std::int32_t> groups =
        exact.groups.empty() ? std::vector<std::int32_t>(table.row_value.size(), -1) : exact.groups;
    XColorOptions plain = options;
    plain.suppress = false;
    XColorResult result = run_once(table, neighbours, loss, plain, &groups, 0, false);
    result.stats.exact_search = 1;
    return result;
}

}  // namespace

XColorResult run_xcolor(const ValueTable& table, const Neighbours& neighbours,
                        const LossModel& loss, const XColorOptions& options,
                        const std::vector<std::int32_t>* initial_classes) {
    const std::size_t n = table.row_value.size();
    if (options.k < 1 || options.k > n) throw std::invalid_argument("need 1 <= k <= n");
    if (initial_classes && std::any_of(initial_classes->begin(), initial_classes->end(),
                                       [](std::int32_t c) { return c < 0; })) {
        throw std::invalid_argument("initial classes must be >= 0");
    }
    const bool stronger = options.moves == Moves::Auto;
    if (!stronger || initial_classes != nullptr) {
        return run_once(table, neighbours, loss, options, initial_classes, n / options.k, stronger);
    }
    XColorOptions quiet = options;  // suppression, if asked for, only on the final grouping
    quiet.suppress = false;
    XColorResult first = run_once(table, neighbours, loss, quiet, nullptr, n / options.k, false);
    if (first.stats.remaining_violations == 0) return first;
    // Swaps stalled: regroup into the roomiest size (fewer, larger groups, still >= k) and
    // repair again; keep whichever leaves fewer violating rows, then reduce its excess.
    const std::size_t size = roomiest_size(options.k, options.delta);
    const bool first_capped = first.stats.repair_capped > 0;
    XColorResult best = std::move(first);
    if (size > options.k && n / size >= 1) {
        XColorResult regrouped = run_once(table, neighbours, loss, quiet, nullptr, n / size, false);
        regrouped.stats.regrouped_size = static_cast<std::int64_t>(size);
        if (regrouped.stats.remaining_violations < best.stats.remaining_violations) {
            regrouped.stats.seconds_initialize += best.stats.seconds_initialize;
            regrouped.stats.seconds_repair += best.stats.seconds_repair;
            best = std::move(regrouped);
        } else {
            best.stats.seconds_initialize += regrouped.stats.seconds_initialize;
            best.stats.seconds_repair += regrouped.stats.seconds_repair;
        }
    }
    if (best.stats.remaining_violations == 0) return best;
    // Phase 2 (and suppression) on the chosen grouping, which is this run's starting point;
    // a small table the heuristics cannot settle is searched exactly (suppression included).
    const bool small = n <= kExactRows;
    XColorResult finished = run_once(table, neighbours, loss, small ? quiet : options, &best.groups, 0, true);
    finished.stats.regrouped_size = best.stats.regrouped_size;
    finished.stats.initial_violations = best.stats.initial_violations;
    finished.stats.initial_potential = best.stats.initial_potential;
    finished.stats.swaps += best.stats.swaps;
    finished.stats.stalled_violations = best.stats.remaining_violations;
    // A cap that bit in the swaps before: what is left is left because of it too.
    if (finished.stats.repair_capped == 0 && (first_capped || best.stats.repair_capped > 0)) {
        finished.stats.repair_capped = finished.stats.remaining_violations;
    }
    finished.stats.seconds_initialize += best.stats.seconds_initialize;
    finished.stats.seconds_repair += best.stats.seconds_repair;
    if (options.trace) {
        finished.initial_groups = std::move(best.initial_groups);
        best.swap_log.insert(best.swap_log.end(), finished.swap_log.begin(), finished.swap_log.end());
        finished.swap_log = std::move(best.swap_log);
    }
    if (small && finished.stats.remaining_violations > 0) {
        return settle_exactly(table, neighbours, loss, options, std::move(finished));
    }
    return finished;
}

namespace {

/// A start whose classes all pass already (a merging round's classes that need no repair):
/// the swap loop would find no violation, and phase 2 and suppression nothing to do, so its
/// result follows from the class counts alone, without building the colouring (3M rows: 0.84 s
/// for nothing). Returns that result (groups and potentials; the caller fills n, the degrees
/// and the time), or nullopt when some row violates or is left out. O(n) plus the counts.
std::optional<XColorResult> passing_start(const Neighbours& neighbours, const std::vector<std::int32_t>& initial, std::size_t m,
                                          const XColorOptions& options) {
    if (std::any_of(initial.begin(), initial.end(), [](std::int32_t c) { return c < 0; })) return std::nullopt;
    const std::vector<std::int64_t> labels(initial.begin(), initial.end());
    const std::vector<std::int64_t> counts = class_neighbour_counts(neighbours, labels, options.threads, options.interrupt);
    std::vector<std::int64_t> size(m, 0);
    for (const std::int32_t c : initial) ++size[static_cast<std::size_t>(c)];
    std::vector<std::int32_t> allowed(m);
    for (std::size_t c = 0; c < m; ++c) allowed[c] = allowed_neighbours(static_cast<std::size_t>(size[c]), options.delta);
    std::int64_t twice = 0;
    for (std::size_t r = 0; r < initial.size(); ++r) {
        if (counts[r] > allowed[static_cast<std::size_t>(initial[r])]) return std::nullopt;
        twice += counts[r];
    }
    XColorResult result;
    result.groups = initial;  // every id used: numbered as given
    result.stats.m = static_cast<std::int64_t>(m);
    result.stats.initial_potential = result.stats.final_potential = twice / 2;
    return result;
}

XColorResult run_once(const ValueTable& table, const Neighbours& neighbours,
                      const LossModel& loss, const XColorOptions& options,
                      const std::vector<std::int32_t>* initial_classes, std::size_t m,
                      bool allow_excess) {
    const std::size_t n = table.row_value.size();
    if (neighbours.size() != table.size()) throw std::invalid_argument("neighbours and value table differ in size");
    if (initial_classes) {
        if (initial_classes->size() != n) throw std::invalid_argument("initial colouring needs one class per row");
        std::int32_t top = -1;  // class -1: a row left out from the start (exact search only)
        for (std::int32_t c : *initial_classes) top = std::max(top, c);
        m = static_cast<std::size_t>(top) + 1;
        std::vector<std::uint8_t> used(m, 0);
        for (std::int32_t c : *initial_classes) if (c >= 0) used[static_cast<std::size_t>(c)] = 1;
        if (std::find(used.begin(), used.end(), 0) != used.end()) {
            throw std::invalid_argument("initial classes must use every id 0..m-1");
        }
    }

    XColorResult result;
    XColorStats& stats = result.stats;
    stats.n = static_cast<std::int64_t>(n);
    stats.m = static_cast<std::int64_t>(m);
    const std::vector<std::int64_t>& value_degree = neighbours.row_degrees();
    std::vector<std::int64_t> degree(n);
    std::int64_t degree_sum = 0;
    for (std::size_t r = 0; r < n; ++r) {
        degree[r] = value_degree[static_cast<std::size_t>(table.row_value[r])];
        stats.max_degree = std::max(stats.max_degree, degree[r]);
        degree_sum += degree[r];
    }
    stats.row_edges = degree_sum / 2;

    if (options.progress) options.progress->phase.store(Progress::kInitialize, std::memory_order_relaxed);
    auto start = Clock::now();
    if (initial_classes != nullptr && !options.trace) {
        if (std::optional<XColorResult> passed = passing_start(neighbours, *initial_classes, m, options)) {
            passed->stats.n = stats.n;
            passed->stats.max_degree = stats.max_degree;
            passed->stats.row_edges = stats.row_edges;
            passed->stats.seconds_initialize = seconds_since(start);
            if (options.progress) options.progress->phase.store(Progress::kDone, std::memory_order_relaxed);
            return *std::move(passed);
        }
    }
    std::vector<std::int32_t> initial;
    if (initial_classes) {
        initial = *initial_classes;
    } else if (options.init == Init::Qi) {
        if (!loss.active()) throw std::invalid_argument("the QI-aware start needs QI columns");
        initial = initialize_in_blocks(degree, qi_order(loss, n, options.k, options.threads), m, options.init_block);
    } else {
        initial = initialize(degree, m);
    }
    if (options.trace) result.initial_groups = initial;
    for (std::size_t r = 0; r < n; ++r) {
        if (initial[r] < 0) result.suppressed_rows.push_back(static_cast<std::int32_t>(r));
    }
    Colouring colouring(table, neighbours, loss, options.delta, initial, options.threads, options.interrupt);
    stats.seconds_initialize = seconds_since(start);
    stats.initial_potential = colouring.potential();
    stats.initial_violations = colouring.violations();

    if (options.progress) options.progress->phase.store(Progress::kRepair, std::memory_order_relaxed);
    start = Clock::now();
    SwapLoop swaps(colouring, options);
    swaps.run(result);
    stats.stalled_violations = colouring.violations();
    ExcessDescent descent(colouring, options);
    if (allow_excess && stats.stalled_violations > 0) descent.run(result);
    stats.seconds_repair = seconds_since(start);
    start = Clock::now();
    if (options.suppress) suppress_violations(colouring, options.k, result, options.interrupt);
    stats.seconds_suppress = seconds_since(start);
    std::sort(result.suppressed_rows.begin(), result.suppressed_rows.end());
    stats.suppressed = static_cast<std::int64_t>(result.suppressed_rows.size());
    swaps.publish();
    if (options.progress) options.progress->phase.store(Progress::kDone, std::memory_order_relaxed);

    // Classes emptied by suppression are dropped; the others keep their order.
    result.groups = colouring.class_ids();
    std::vector<std::int32_t> renumber(m, -1);
    for (std::int32_t c : result.groups) if (c >= 0) renumber[static_cast<std::size_t>(c)] = 0;
    std::int32_t next = 0;
    for (auto& id : renumber) if (id == 0) id = next++;
    for (auto& c : result.groups) if (c >= 0) c = renumber[static_cast<std::size_t>(c)];
    m = static_cast<std::size_t>(next);
    stats.m = static_cast<std::int64_t>(m);
    stats.final_potential = colouring.potential();
    stats.swaps = swaps.swaps();
    stats.set_aside = swaps.set_aside_count();
    stats.excess_moves = descent.moves();
    stats.transfers = descent.transfers();
    stats.classes_examined = swaps.classes_examined();
    const bool capped = swaps.capped() > 0 || descent.capped() > 0;
    std::vector<std::uint8_t> bad_group(m, 0);
    for (std::size_t r = 0; r < n; ++r) {
        const auto row = static_cast<std::int32_t>(r);
        if (result.groups[r] >= 0 && colouring.is_violation(row)) {
            result.violating_rows.push_back(row);
            bad_group[static_cast<std::size_t>(result.groups[r])] = 1;
        }
    }
    for (std::size_t c = 0; c < m; ++c) {
        if (bad_group[c]) result.violating_groups.push_back(static_cast<std::int32_t>(c));
    }
    stats.remaining_violations = static_cast<std::int64_t>(result.violating_rows.size());
    stats.repair_capped = capped ? stats.remaining_violations : 0;
    return result;
}

}  // namespace

}  // namespace proxanon
