// Top-down specialization of published classes (docs/design/publishing.md): a class an attacker
// sees (rows sharing one published QI tuple) is split along one quasi-identifier into sub-classes
// that publish finer, pairwise distinct tuples, so that coarse taxonomy nodes do not gather giant
// classes.
//
// Invariant kept at every step: the published tuples of all classes are pairwise distinct,
// every class has at least k rows (if it had before), a class that passed the checks of
// `MondrianParams` is replaced only by parts that pass them, and a failing class only by
// passing parts plus one remainder with no more violating rows than the class had, or (the
// failing target, for a table published as best effort) by parts no riskier than the class
// whose violating rows together are no more than the class had; so the table's violating
// rows never grow, no row's class becomes riskier, and no class grows.
//
// The failing target: where no table satisfies, the rows that cannot be protected gather in
// a few classes publishing coarse tuples. Such a class is split like any other (the pieces
// of one column; a piece whose tuple another class publishes, or that is riskier than the
// class, split again up to two levels down; what is left pooled into a remainder that keeps
// the class's tuple), but its parts need not pass: the split with the fewest violating rows
// is taken if they are no more than the class's and no part's risk (docs/design/privacy-model.md:
// largest D over size - 1) exceeds the class's, and its parts are split again. Parts that pass
// are specialized as above; classes that passed before are not tried. Adult, ARX taxonomies on
// the four QIs, epsilon 0.1, delta 0.7: the largest class 3,228 -> 1,208 rows, violating rows
// 3,134 -> 3,128. A class that is the table's worst mix of neighbours (at delta 0.8 one of 8,061
// rows publishing "*" on every QI, 7,923 of them violating, risk 0.76) cannot be split this way:
// a part of it with a larger share of the crowd would expose its rows more, and parts that all
// share it equally are not found along QI cuts. Such a class (of at least 2 kBalancedLeafK k
// rows), once no cut splits it, gets the balanced split of balanced_split.hpp in the first pass,
// checked here against the same invariants (its parts are tried like any other part, and balanced
// again only while they hold more than 2% of the table's rows). After absorption (absorb.hpp), a
// failing class still above 2% of the rows gets the covering split of cover_split.hpp (the
// Covering target, a call of its own: the class's rows dealt into parts publishing tuples that
// overlap, checked here as above), in the rounds of vacate.hpp's cover_failing(), which first
// empties small classes publishing tuples its parts need.
//
// One split of a class C (tuple T) along QI j: a taxonomy column is partitioned by the child
// of T_j's node that holds each row's leaf, a numeric column is cut at its median (between
// distinct values). Pieces of at least k rows are candidates, the others are pooled into
// one remainder. Then, for a bounded number of rounds: a failing candidate sheds its rows of
// the values with the most excess neighbours into the remainder ("peel") until it passes; a
// passing candidate whose tuple another class publishes is split once more (two levels at
// most) into parts with tuples of their own, or pooled; the remainder (T_j's node on column
// j, apart from every kept part) must have at least k rows, no more violating rows than C,
// and T or a tuple no class publishes; while it has too many violating rows it is "fed" rows
// of the kept parts that are no neighbours of its worst values, or else the smallest kept
// part joins it. The column leaving the most rows in kept parts wins (ties: the least loss,
// then the lower column); every part is split again, and passes over all classes repeat
// while any splits (a split frees its tuple for a class tried earlier; two at most).
//
// Cost: per class tried, d sorts of its rows and per round the checks of its parts,
// O(d r (m log m + c)) for a class of m rows and r rounds (bounded by constants), where a
// check of p rows costs O(p + sum of the degrees of its distinct values) over a graph and
// O(p log p) over the sorted one-component structure (part_check.hpp), and after a peeling
// round over a graph O(p + the shed values' degrees) (PartChecker::measure_shed: the rows
// left are not counted again), with the same work charged to the budget as a check of the
// rows would be; a piece that peeling left passing is not checked again. Peeling also
// finds each violating value's relief by the rows shed before it (part_check.hpp's Relief:
// O(v log v) a round on a line, adjacency reads over a graph, else at most
// kReliefTestsPerRow pair tests per row); about O(d n log^2 n) for a table of
// n rows when splits are balanced, and stopped near kSpecializeWorkPerRow per row (below).
//
// Threads: a pass tries its classes in order, each with every split of its parts, and a
// class reads what those before it wrote (the published tuples, the tuples of balanced
// splits' parts, the work done). On several threads the classes are speculated on: each
// thread takes the next class no thread has taken and runs it whole, with checks and scratch
// of its own, on a copy of the tuples as the pass began plus its own changes, from the work
// done then, recording every tuple whose count it read and every tuple it asked whether
// balanced (parallel.hpp's in_order()). The calling thread completes the classes in order:
// a class no thread has taken it runs itself on what is committed; another's it commits
// where the run holds, that is where every tuple read still has the count read, no tuple
// asked became balanced, and the work done now plus the run's work plus its largest
// allowance of a balanced or covering split (kBalancedWorkPerRow, kCoverWorkPerRow per row)
// stays below the budget (no comparison with the budget or a cap can then differ); else it
// runs the class again on what is committed, as one thread would. Committing applies the
// run's changes of tuples and balanced tuples in its order, its work, its splits and the
// classes it leaves; so every thread count gives the classes one thread gives. Where one
// class holds at least half the rows of the classes the pass tries (the first pass over one
// class, or over a giant one and a few small), the classes run one after
// another instead, and a class of at least kColumnRows rows has its columns searched at once
// (the splits along each, at depth 0): no search writes a tuple, so each runs on a
// specializer of its own from the work done before them, and their results stand where
// that work plus all of theirs stays below the budget (else the columns are searched one
// after another). Extra cost: per tuple read or changed, a hash lookup or two; per class,
// its rows copied; per speculation that does not hold, the class run again. Adult, ARX
// taxonomies, epsilon 0.1, delta 0.8, best effort, two threads: of its five calls that
// split, 2,560 speculations committed, 20 classes run again and 368 run by the calling
// thread, and 55 large classes had their columns searched at once; the classes run again
// are often the costliest (large classes publish tuples that other large ones ask about),
// so a pass gains less than its share of small classes suggests. The code: specializer.hpp
// (the searches, split_class()), specialize_parallel.hpp (speculators, the speculated pass).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxanon/common/loss.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/neighbours/neighbours.hpp"

namespace proxanon {

/// Work a specialization may do per row of the table (rows counted by the checks, adjacency
/// entries read and pairs of values tested over a graph, pairs of values tested in peeling
/// and feeding; over an implicit structure a check counts its rows only): the benchmarks'
/// specializations do at most 6,500 per row (Adult, suppressing at epsilon 0.1), a fifth of
/// it. The budget is asked between rounds, so a round in progress may finish past it. Peeling
/// rows off pieces of a class whose thousands of distinct values are neighbours of one another
/// costs the square of them per round: Mondrian's uncut table of 20k census rows at epsilon 0.2,
/// delta 0.9 took 31 s of specialization, about a million per row.
inline constexpr std::size_t kSpecializeWorkPerRow = std::size_t{1} << 15;

/// Which classes specialize() splits: every class of at least 2k rows, each into passing
/// parts and at most one remainder (Passing); or, for a table published as best effort, only
/// its failing classes, into parts that may fail (Failing; see above: it needs the
/// (epsilon, delta) check and no l, whose failures a part's risk does not measure); or only
/// its failing classes of more than 2% of the rows, by the covering split of cover_split.hpp
/// alone, into parts of at most 2% but the one keeping the class's tuple (Covering; after
/// absorption, with the same needs).
enum class SpecializeTarget { Passing, Failing, Covering };

struct SpecializeResult {
    std::vector<std::int32_t> classes;  ///< class of each row, 0 .. classes-1, in split order
    std::int64_t splits = 0;            ///< classes that were split
    bool stopped = false;               ///< the work allowed was spent: splits may remain
};

/// The most rows a published class should hold in a table of n rows (2%: the
/// class-size rule of docs/design/publishing.md): the
/// failing classes above it get the balanced split again and the covering split, and
/// vacate.hpp's rounds run while a class is above it.
inline std::size_t largest_class_rows(std::size_t n) { return n / 50; }

/// The number of classes C of `classes` once the arguments of specialize() are checked as it
/// takes them (one sensitive value per row, node keys for exactly the taxonomy columns, ids 0
/// .. C-1 with every one used, epsilon and no l for a failing target); throws
/// std::invalid_argument naming what is wrong. O(n + d).
std::size_t checked_classes(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params, SpecializeTarget target);

/// Splits the classes of at least 2k rows that `target` names, as above. `classes` gives a class
/// id per row (0 .. C-1, every id used) whose tuples are pairwise distinct; `node_keys[i]`, for a
/// taxonomy column i, names every node of its taxonomy so that nodes with one published label
/// share a key (empty for a numeric column). `neighbours` is any structure (a set's counts on an
/// implicit one come from class_counts.hpp). The checks are those of `params` (k, distinct l,
/// (epsilon, delta)^k-dissimilarity). Stops searching splits once it has done `work_per_row` ·
/// max(n, 2^12) work (kSpecializeWorkPerRow); the splits made until then stand, with every
/// invariant above. Polls `params.interrupt` per class and per column tried (throws Interrupted;
/// on the calling thread only). On `threads` threads (0: the hardware's) as above, with the same
/// result for any number.
SpecializeResult specialize(const LossModel& qi, const std::vector<std::vector<std::int32_t>>& node_keys,
                            const Neighbours& neighbours, const std::vector<std::int32_t>& classes,
                            const MondrianParams& params,
                            SpecializeTarget target = SpecializeTarget::Passing,
                            std::size_t work_per_row = kSpecializeWorkPerRow, std::size_t threads = 1);

}  // namespace proxanon
