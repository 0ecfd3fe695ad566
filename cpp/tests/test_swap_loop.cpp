// C++ unit tests of the swap loop (swap_loop.hpp), with no Python: run by ctest. Every swap
// of the loss-aware loop replayed against a brute-force choice of partner, and the state where
// it stops; searches settled by the record of searches that found no partner make the same
// swaps, set-asides and classes as searches that read their classes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/swap_loop.hpp"
#include "proxanon/xcolor/xcolor.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

/// Every swap of the loss-aware swap loop (search_limit 0: every class examined) replayed: its
/// partner is, by brute force over every row of every other class, an exchangeable one
/// (movable class, Lambda < 0) with the least change of loss (losses computed from the
/// members), then the least Lambda, then the lower row; its Lambda is the one logged. QI
/// codes make every cost a multiple of 1/8, so the sums are exact and ties are real.
void test_swap_loop_takes_the_least_loss_partner() {
    const std::size_t n = 400, k = 10;
    const std::vector<double> sa = random_levels(n, 1, 12, 21);
    const Distance distance{Metric::L1, {1.0}, 1.0 / 12.0};
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    std::mt19937 rng(22);
    std::vector<double> qi(n * 2);
    for (std::size_t r = 0; r < n; ++r) {
        qi[2 * r] = static_cast<double>(rng() % 8);                 // a leaf of kEightLeaves
        qi[2 * r + 1] = static_cast<double>(r < 2 ? 8 * r : rng() % 9);  // 0 .. 8: eighths
    }
    std::vector<std::optional<Taxonomy>> taxonomies;
    taxonomies.emplace_back(Taxonomy(kEightLeaves, 8));
    taxonomies.emplace_back(std::nullopt);
    const LossModel loss(qi.data(), n, 2, std::move(taxonomies));
    std::size_t stopped_violations = 0;
    for (const double delta : {0.7, 0.8}) {
        XColorOptions options;
        options.k = k;
        options.delta = delta;
        options.trace = true;
        options.threads = 1;
        const XColorResult result = run_xcolor(table, Neighbours(table, graph), loss, options);
        CHECK(result.swap_log.size() >= 3 * 20);  // enough swaps to mean something
        std::vector<std::int32_t> groups = result.initial_groups;
        const auto near = [&](std::size_t a, std::size_t b) { return distance.within(&sa[a], &sa[b]); };
        const auto count_in = [&](std::size_t row, std::int32_t c, std::size_t skip) {  // rows of c near row
            std::int64_t d = 0;
            for (std::size_t q = 0; q < n; ++q) d += groups[q] == c && q != row && q != skip && near(row, q);
            return d;
        };
        const auto class_loss = [&](std::int32_t c, std::size_t out, std::size_t in) {
            double total = 0.0;
            for (std::size_t i = 0; i < 2; ++i) {
                double lo = 1e300, hi = -1e300;
                for (std::size_t q = 0; q < n; ++q) {
                    if ((groups[q] != c || q == out) && q != in) continue;
                    lo = std::min(lo, loss.row(static_cast<std::int32_t>(q))[i]);
                    hi = std::max(hi, loss.row(static_cast<std::int32_t>(q))[i]);
                }
                total += loss.cost(i, lo, hi);
            }
            return total;
        };
        const std::size_t none = n;
        for (std::size_t e = 0; e < result.swap_log.size(); e += 3) {
            const auto v = static_cast<std::size_t>(result.swap_log[e]);
            const auto w = static_cast<std::size_t>(result.swap_log[e + 1]);
            const std::int32_t home = groups[v];
            std::vector<std::int64_t> size(n / k, 0);
            for (const std::int32_t g : groups) ++size[static_cast<std::size_t>(g)];
            const auto allowed = [&](std::int32_t c) {
                return static_cast<std::int64_t>(allowed_neighbours(static_cast<std::size_t>(size[static_cast<std::size_t>(c)]), delta));
            };
            const std::int64_t own_v = count_in(v, home, none);
            std::int64_t best = -1, best_lambda = 0;
            double best_change = 0.0;
            for (std::size_t x = 0; x < n; ++x) {
                const std::int32_t away = groups[x];
                if (away == home) continue;
                const std::int64_t d_away = count_in(v, away, none);
                if (d_away > allowed(away)) continue;  // not movable
                const std::int64_t lambda = d_away - own_v + count_in(x, home, none) - count_in(x, away, none) -
                                            2 * (near(v, x) ? 1 : 0);
                if (lambda >= 0) continue;
                const double change = class_loss(home, v, x) + class_loss(away, x, v) -
                                      class_loss(home, none, none) - class_loss(away, none, none);
                if (best < 0 || change < best_change || (change == best_change && lambda < best_lambda)) {
                    best = static_cast<std::int64_t>(x);
                    best_change = change;
                    best_lambda = lambda;
                }
            }
            CHECK(best == static_cast<std::int64_t>(w));
            CHECK(best_lambda == result.swap_log[e + 2]);
            std::swap(groups[v], groups[w]);
        }
        // Where the loop stopped, no violation has an exchangeable partner: each was set
        // aside by a search that found none, or by one that another row of its value and
        // class made since the last swap (the loop's record of searches that found none).
        std::vector<std::int64_t> size(n / k, 0);
        for (const std::int32_t g : groups) ++size[static_cast<std::size_t>(g)];
        const auto allowed = [&](std::int32_t c) {
            return static_cast<std::int64_t>(allowed_neighbours(static_cast<std::size_t>(size[static_cast<std::size_t>(c)]), delta));
        };
        for (std::size_t v = 0; v < n; ++v) {
            const std::int32_t home = groups[v];
            const std::int64_t own_v = count_in(v, home, none);
            if (own_v <= allowed(home)) continue;
            ++stopped_violations;
            for (std::size_t x = 0; x < n; ++x) {
                const std::int32_t away = groups[x];
                if (away == home || count_in(v, away, none) > allowed(away)) continue;
                const std::int64_t lambda = count_in(v, away, none) - own_v + count_in(x, home, none) -
                                            count_in(x, away, none) - 2 * (near(v, x) ? 1 : 0);
                CHECK(lambda >= 0);
            }
        }
    }
    CHECK(stopped_violations > 0);  // the stopping state is tested
}

/// A search settled by the swap loop's record of searches that found no partner (another
/// row of the same value and class, since the last swap, covering the classes this one
/// examines) against every search reading its classes: the same swaps, set-asides, classes
/// examined and classes, with the paper's full scan and with a search limit whose budgets run
/// out (an infeasible table of few values, so that searches fail and repeat).
void test_swap_loop_settles_repeated_searches_exactly() {
    const std::size_t n = 3000, k = 10;
    const std::vector<double> sa = random_levels(n, 1, 2, 31);  // 0, 1/2, 1: the middle near all
    const Distance distance{Metric::L1, {1.0}, 1.0 / 2.0};
    const ValueTable table = ValueTable::from_rows(sa.data(), n, 1);
    const NeighbourGraph graph = NeighbourGraph::build(table, distance, 1u << 24);
    const Neighbours neighbours(table, graph);
    std::vector<std::int32_t> initial(n);
    for (std::size_t r = 0; r < n; ++r) initial[r] = static_cast<std::int32_t>(r % (n / k));
    const LossModel no_loss;  // the colouring keeps a reference: not a temporary
    for (const std::size_t limit : {std::size_t{0}, std::size_t{4}}) {
        XColorOptions options;
        options.k = k;
        options.delta = 0.5;
        options.trace = true;
        options.threads = 1;
        options.search_limit = limit;
        const auto run = [&](bool settle_known) {
            Colouring colouring(table, neighbours, no_loss, options.delta, initial, 1);
            SwapLoop loop(colouring, options, SwapLoopShortcuts{settle_known, true});
            XColorResult result;
            loop.run(result);
            return std::make_tuple(result.swap_log, loop.set_aside_count(), loop.classes_examined(),
                                   colouring.class_ids(), loop.settled_searches());
        };
        const auto [log, aside, examined, classes, settled] = run(true);
        const auto [log_read, aside_read, examined_read, classes_read, settled_read] = run(false);
        CHECK(log == log_read && aside == aside_read && examined == examined_read && classes == classes_read);
        CHECK(settled > 0 && settled_read == 0);
        CHECK(log.size() >= 3 * 20);  // enough swaps to mean something
        // With the limit, retries and searches past it spent the budget of 2^18 classes.
        if (limit != 0) CHECK(examined > (std::int64_t{1} << 18));
    }
}

}  // namespace

int main() {
    return run_tests("swap loop", {test_swap_loop_takes_the_least_loss_partner,
                                   test_swap_loop_settles_repeated_searches_exactly});
}
