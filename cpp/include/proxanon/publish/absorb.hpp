// Absorption of rows from giant published classes into finer classes that cover them
// (the last step of specialization, docs/design/publishing.md): a row of a class C may move to a
// class D whose published tuple already covers the row's QI values (each taxonomy node of D is
// the row's leaf or an ancestor of it; each numeric interval of D holds the row's value). D's
// tuple does not change, and C's does not either, because a row that alone holds one of C's
// extremes never moves; so the published tuples stay pairwise distinct. The row is then published
// with D's finer tuple (loss(D) < loss(C) is required: each move lowers the table's loss), and C
// shrinks.
//
// Rows move one at a time, then in bundles: a giving class at its limit (a value with exactly
// t(G) neighbours) can spare a row of that value but none of its other rows alone (each lowers
// t(G)), while a covering class at its own limit cannot take that row alone; the row then moves
// with companions, rows of the giving class that the same covering class covers (fewest
// neighbours first), as many as that class needs to pass (at most kBundle rows in all), and
// the bundle is kept only if both classes pass after it. Adult with the ARX taxonomies at
// epsilon 0.05: largest class 946 -> 626 rows with takers up to the cap, 456 rows with takers
// up to twice the cap.
//
// Failing givers (a table published as best effort, `failing_givers`): a class that fails
// gives rows one at a time too, most neighbours first, in passes over its rows while one
// moves any, each only where it stays within its risk as first measured (worst D over
// size - 1) and the rows that stay hold no more violations; the row joins a passing class
// that passes after it, or a failing one that stays within its own risk and gains no
// violating row but the row itself if that violated already. So no failing class becomes
// riskier and the table's violating rows never grow (Adult, ARX taxonomies, epsilon 0.1,
// delta 0.8: 10,776 -> 9,591 violating rows, the largest class 11.6% -> 9.6%).
//
// Invariant: only classes that pass the checks of `MondrianParams` give or take rows (but
// for failing givers, as above), and a move is made only when both pass after it (at least
// k rows, distinct l, and no value with more than t(G) epsilon-neighbours, counted
// exactly); classes above `cap` rows give, classes
// that stay within the takers' limit (twice `cap`) and no larger than the class they take
// from take, so no class grows past the larger of that limit and its old size, and the
// largest class never grows. A giving class stops at `cap` rows (a bundle may take it up to
// kBundle rows below).
//
// Cost: per class touched, its distinct values counted once over the neighbour structure
// (NeighbourCount, O(p + sum of their degrees) over a graph); per row of a giving class, a
// test that the class spares it, O(1) unless t(G) falls with the row while a member is at
// it (then O(p_giver)), at most kMaxCovers covering tuples looked up in a hash index, at most
// kScan classes read per tuple, and a check of O(p) adjacency tests for each class read (p:
// its distinct values, p <= cap); per row moved, O(min(p_giver, degree)) to update the giver's
// counts (HeldValues, held_values.hpp: its value's adjacency list over a graph, where that is
// shorter); so O(rows in giving classes * kMaxCovers * kScan * cap) plus O(p_giver) per row moved
// or spared under a falling t(G), independent of the other classes' sizes. Bundles: per pass (at
// most kBundlePasses) at most kBundleTriesPerRow bundles per row of the giving class, each
// reading at most kCompanionCombos of its QI combinations (O(d) each) and moving at most kBundle
// rows at O(p) each; each QI combination's covering classes looked up once. A giving class's QI
// combinations list their candidate takers once, and a taker that refused a value is not asked
// again until it changes. A failing giver's check costs O(min(degree, p)) per row (its counts at
// its current size, O(p), made again after each move; O(p) more where the row's value alone holds
// the largest D), a failing taker's O(p); those checks charge p each, whatever the structure (so
// that it moves the same rows over any), and stop at kFailingTestsPerRow * n; a failing giver
// makes at most kFailingPasses passes. The counts of classes (passes(), and each move's
// HeldValues::change) are not charged. Memory O(n + classes * d).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/publish/held_values.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// The cap of a table of n rows: the larger of 2k rows and 1/200 of the table, so that on a
/// large table only classes far above k give rows (proxanon.anonymize makes no call at all
/// when no class is above it).
inline std::size_t absorb_cap(std::size_t n, std::size_t k) {
    return n / 200 > 2 * k ? (n + 199) / 200 : 2 * k;
}

/// Adjacency tests the checks of failing classes may make in one call, per row of the table
/// (FailingChecks' budget: Adult at epsilon 0.2, delta 0.6 spent 128 per row, and gained
/// with more).
constexpr std::size_t kFailingTestsPerRow = 1024;

/// Moves rows of classes above `cap` rows into covering classes as above; `classes` (class
/// id per row, 0 .. C-1, pairwise distinct published tuples) is updated in place and keeps
/// every id. `node_keys` as in specialize(). Returns the rows moved. Polls
/// `params.interrupt` per giving class (throws Interrupted). With `failing_givers` (a table
/// published as best effort), failing classes above the cap give rows one at a time too,
/// their checks within `failing_tests_per_row` adjacency tests per row of the table.
std::int64_t absorb(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                    const Neighbours& neighbours, std::vector<std::int32_t>& classes,
                    const MondrianParams& params, std::size_t cap, bool failing_givers = false,
                    std::size_t failing_tests_per_row = kFailingTestsPerRow);

}  // namespace proxanon
