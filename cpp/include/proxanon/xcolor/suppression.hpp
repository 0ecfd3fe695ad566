// Suppression (on_infeasible = "suppress"): leave rows out until every class satisfies
// (epsilon, delta)^k-dissimilarity. Not in Wang and Liu's XColor paper, whose Algorithm 2 has no
// answer for an instance it cannot repair.
#pragma once

#include <cstddef>
#include <cstdint>

#include "proxanon/xcolor/colouring.hpp"
#include "proxanon/xcolor/xcolor.hpp"

namespace proxanon {

/// While a violation remains, leaves out the row with the largest excess D - t (ties: larger
/// D, lower row). A class that falls below k rows is dissolved: each of its rows moves, in
/// row order, to the first class of >= k rows among the 256 nearest outward that it can join
/// within its allowance without putting a row there that is within its own over it (a class
/// that already violates may take it: its violations stay for the heap), or is left out too.
///
/// Invariant: classes keep >= k rows or are empty; the left-out rows are exactly those with
/// class -1. Each step removes a row or a class, so it ends after at most n steps. The worst
/// row comes from a heap of the classes' worst rows, refreshed for the classes a step
/// changed: a step costs O(|V| + log n) for the class it leaves plus, when that class is
/// dissolved, O(256 · class size) adjacency tests per row to place (not a scan of every row
/// per step, nor of every class per row placed: both O(n^2) in all where classes are small).
void suppress_violations(Colouring& colouring, std::size_t k, XColorResult& result,
                         Interrupt* interrupt = nullptr);

}  // namespace proxanon
