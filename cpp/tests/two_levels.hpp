// Test data shared by the C++ test programs: a taxonomy of two levels over runs of leaves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"

namespace {

/// A two-level taxonomy: `leaves` leaves in runs of `fan` under inner nodes, under a root.
proxanon::Taxonomy two_levels(std::int32_t leaves, std::int32_t fan) {
    const std::int32_t inner = (leaves + fan - 1) / fan;
    std::vector<std::int32_t> parent(static_cast<std::size_t>(leaves + inner + 1));
    const std::int32_t root = leaves + inner;
    for (std::int32_t v = 0; v < leaves; ++v) parent[static_cast<std::size_t>(v)] = leaves + v / fan;
    for (std::int32_t v = leaves; v < root; ++v) parent[static_cast<std::size_t>(v)] = root;
    parent[static_cast<std::size_t>(root)] = -1;
    return proxanon::Taxonomy(parent, static_cast<std::size_t>(leaves));
}

}  // namespace
