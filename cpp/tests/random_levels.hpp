// Test data shared by the C++ test programs: values on a few levels, so that they repeat.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace {

/// n x s values drawn from {0, 1/levels, ..., 1}.
std::vector<double> random_levels(std::size_t n, std::size_t s, int levels, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> level(0, levels);
    std::vector<double> rows(n * s);
    for (double& x : rows) x = level(rng) / static_cast<double>(levels);
    return rows;
}

}  // namespace
