// Vacating the tuples a failing class needs (a table published as best effort),
// and the rounds that deal such classes: cover_split.hpp deals a failing class F above
// `most` rows (2% of the table) into parts that publish F's tuple with a taxonomy column
// narrowed (its age band, its sex, ...), each a tuple no other class publishes. On real
// tables small classes publish many of those tuples (Adult, ARX taxonomies, epsilon 0.1,
// delta 0.8: a class of 17 rows publishes `White, Married-civ-spouse`, which covers 738 rows
// of the class of 2,001 publishing `White`), so F keeps most of its rows.
//
// vacate() empties such an owner O: each of O's rows moves into another class that passes,
// whose published tuple already covers the row (so that tuple stays as it is), that still
// passes with it, and that holds at most `most` rows after it; all of O's rows move or none
// does. O's tuple is then published by no class, and the covering split may give it to a
// part of F. Owners are tried for each failing class above `most` rows (largest first; ties:
// the lower id), its one-column narrowings covering at least k of its rows, most rows first
// (ties: the lower column, then the lower node); owners of at most kOwnerRows · k rows.
//
// Invariant: no tuple becomes published that was not; a class that passed passes; every row
// moved is in a class that passes after it, so the table's violating rows never grow (an
// owner that failed loses its violating rows to classes where they do not violate) and no
// class that stays becomes riskier than t(G) allows, as before. Class ids stay 0 .. C-1,
// every one used: the classes after an emptied one move down by one.
//
// cover_failing() runs rounds of vacate(), the covering split (specialize()'s Covering
// target, where a failing class holds more than 2% of the rows) and absorption with failing
// givers (absorb.hpp: every class above its cap gives, passing or failing) while a class
// holds more than 2% of the rows and the round changed the table, at most kVacateRounds: the
// parts the covering split leaves above 2% (the one keeping F's tuple) shed rows by
// absorption, and absorption run again moves rows it could not before (the UCI copy at
// epsilon 0.05, delta 0.7: after the absorption of a best-effort table its largest class,
// which passes, holds 2,319 rows; a second call moves 2,598 rows and leaves 458, a third 750
// more), and the next round vacates what the failing ones need. Adult, ARX taxonomies, best
// effort at epsilon 0.1, delta 0.8: the largest class 1,233 -> 592 rows (4.1% -> 1.96%),
// violating rows 9,528 -> 9,197, max risk 0.76014 -> 0.75969, GCP 0.394 -> 0.376, for 0.04 s more
// (the step 0.08 -> 0.12 s); the UCI copy at epsilon 0.05, delta 0.7: 7.7% -> 1.5%.
//
// Cost of vacate(): O(n d) to gather the classes and file them by tuple (O(C) hash entries);
// per failing class above `most` rows, its candidates O(m h + the taxonomies' nodes) for m
// rows and taxonomies of height h; per owner tried, per row, at most kMaxCovers covering
// tuples looked up and kRead classes read per tuple (cover_index.hpp), a check of O(p)
// adjacency tests for each of at most kScan covering classes (p: their distinct values);
// the classes' values counted once each (HeldValues). cover_failing(): per round (at most
// kVacateRounds), vacate(), specialize()'s pass over every class and absorb() over the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/specialize.hpp"

namespace proxanon {

/// Owners of at most this many times k rows are emptied (Adult: the owners emptied held
/// 12-37 rows at k = 10; larger ones found no home for some row).
constexpr std::size_t kOwnerRows = 4;
/// Rounds of cover_failing() at most (Adult at epsilon 0.1, delta 0.8 needs two).
constexpr std::size_t kVacateRounds = 3;

/// Empties owners of the tuples that failing classes above `most` rows need, as above;
/// `classes` (class id per row, 0 .. C-1, every id used, pairwise distinct published tuples)
/// is updated in place. `node_keys` as in specialize(). Returns the classes emptied, and in
/// `failing_large` the failing classes above `most` rows it found. Polls `params.interrupt`
/// per owner (throws Interrupted).
std::int64_t vacate(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                    const Neighbours& neighbours, std::vector<std::int32_t>& classes,
                    const MondrianParams& params, std::size_t most, std::size_t& failing_large);

/// Rounds of vacate(), the covering split and absorption from failing classes, as above;
/// `splits` counts the classes split, emptied, and the rows absorbed (0: the table is as it
/// was). Checks its arguments as specialize() does (checked_classes(), throws
/// std::invalid_argument). The covering splits run on `threads` threads (specialize()).
SpecializeResult cover_failing(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                               const Neighbours& neighbours, std::vector<std::int32_t> classes,
                               const MondrianParams& params, std::size_t threads = 1);

}  // namespace proxanon
