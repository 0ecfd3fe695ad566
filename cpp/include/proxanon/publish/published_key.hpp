// The published tuple of a set of rows as a hashable key (specialize.hpp, absorb.hpp): per QI
// column, (lo, hi) of a numeric one's scaled values, or (key, key) of the published label of
// a taxonomy one's lowest common ancestor (node_keys: nodes with one label share a key).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <utility>

#include "proxanon/common/loss.hpp"

namespace proxanon {

using Key = std::vector<double>;

/// FNV-1a over the bit patterns of the key's numbers (-0.0 hashed as 0.0). O(|key|).
struct KeyHash {
    std::size_t operator()(const Key& key) const {
        std::uint64_t h = 1469598103934665603ULL;
        for (double x : key) {
            const double y = x + 0.0;  // -0.0 == 0.0, so both must hash alike
            std::uint64_t bits = 0;
            std::memcpy(&bits, &y, sizeof bits);
            h = (h ^ bits) * 1099511628211ULL;
        }
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

/// The published value of column i for rows spanning [lo, hi] there, as the pair the key
/// holds: (lo, hi) for a numeric column, (key, key) of the LCA's label for a taxonomy one.
/// `taxonomy` is the column's (null for a numeric one) and `node_keys` its nodes' keys.
inline std::pair<double, double> published_pair(const Taxonomy* taxonomy,
                                                const std::vector<std::int32_t>& node_keys,
                                                double lo, double hi) {
    if (taxonomy != nullptr) {
        const std::int32_t node = taxonomy->lca(static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi));
        const auto key = static_cast<double>(node_keys[static_cast<std::size_t>(node)]);
        return {key, key};
    }
    return {lo, hi};
}

}  // namespace proxanon
