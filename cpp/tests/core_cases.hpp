// Test data and brute-force checks shared by the C++ test programs of the core's stages: the
// 8-leaf taxonomy of the loss-aware tests, rows over t(class) counted pair by pair, the
// Mondrian checks of k and dissimilarity alone, and an XColor run repeated on two threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/xcolor.hpp"
#include "check.hpp"

namespace {

/// A taxonomy over 8 leaves: pairs under 4 nodes (8-11), those under 2 (12, 13), the root 14.
const std::vector<std::int32_t> kEightLeaves{8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, -1};

/// Rows of `classes` with more epsilon-neighbours in their class than t(class), pair by pair.
inline std::size_t brute_violating_rows(const std::vector<std::int32_t>& classes, const std::vector<double>& sens,
                                        std::size_t s, const proxanon::Distance& distance, double delta) {
    std::size_t bad = 0;
    for (std::size_t a = 0; a < classes.size(); ++a) {
        std::size_t size = 0;
        std::int32_t near = 0;
        for (std::size_t b = 0; b < classes.size(); ++b) {
            if (classes[b] != classes[a]) continue;
            ++size;
            near += a != b && distance.within(&sens[a * s], &sens[b * s]);
        }
        bad += near > proxanon::allowed_neighbours(size, delta);
    }
    return bad;
}

/// The checks of k rows and (epsilon, delta)^k-dissimilarity, without l.
inline proxanon::MondrianParams dissimilarity_checks(std::size_t k, double delta) {
    proxanon::MondrianParams params;
    params.k = k;
    params.dissimilarity = true;
    params.delta = delta;
    return params;
}

/// The colouring's classes are counted on the threads asked for: the run that made `result`
/// (no loss model), made again on two threads, gives the same groups, swaps and potential.
inline void check_same_on_two_threads(const proxanon::ValueTable& table, const proxanon::NeighbourGraph& graph,
                                      const proxanon::XColorOptions& params, const proxanon::XColorResult& result) {
    proxanon::XColorOptions two = params;
    two.threads = 2;
    const proxanon::XColorResult parallel =
        proxanon::run_xcolor(table, proxanon::Neighbours(table, graph), proxanon::LossModel(), two);
    CHECK(parallel.groups == result.groups && parallel.swap_log == result.swap_log);
    CHECK(parallel.stats.initial_potential == result.stats.initial_potential);
}

}  // namespace
