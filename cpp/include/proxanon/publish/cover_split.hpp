// A covering split of a failing class (specialize.hpp's Covering target): where a
// best-effort table's failing class still holds more than `most` rows (2% of the table)
// after the cuts, the balanced split and absorption, its rows are dealt into parts that each
// publish a tuple of their own and keep the class's mix (class_mix.hpp: no part riskier than
// the class, no calm row made to violate).
//
// The balanced split cuts the class along a tree, each piece holding only the rows of its
// cell; here the parts' cells overlap. A part publishes the class's tuple T with one or two
// taxonomy columns narrowed to nodes below T's (a candidate: a tuple no other class
// publishes, whose rows in the class number at least k and span its nodes, so that a part of
// them can publish it), and holds only rows those nodes cover; one part keeps T itself and
// may hold any row. Many candidates cover a row (its age band, its five-year band, its year,
// ...), so rows can be traded between parts until every part's mix is within the class's.
//
// Steps. (1) Candidates, greedily: among those narrowing the fewest columns (they cover the
// most rows, so they can trade the most), the one covering most rows not yet dealt (up to
// kFill of `most`; ties: the lower columns, then the lower nodes) takes them, until what is
// left for T's part is at most kFill of `most` or no candidate takes k rows. (2) A local
// search: a random row (half of the time one of a part that exceeds) moves to another part
// that covers it, or trades places with a row of that part that its own part covers; a step
// is kept if it lowers the parts' excess, else with the probability exp(-rise / heat) of
// simulated annealing. A part's excess: its rows times their values' excess over its bounds,
// plus kSizePenalty per row beyond its size limit or short of k, and per node it must span
// (its candidate's, or T's for T's part) whose rows all lie under one child (its tuple would
// be finer). A round may spend a third of the work left; the heat falls from kStartHeat to
// kLeastHeat over the first half of that, the work done being the clock. The random numbers
// come from a generator seeded by the class (its size and first row), so a class is always
// split alike, whatever the thread count. (3) After a round that leaves no part exceeding, a
// part whose rows publish a tuple that is taken gives its rows to T's part and the search
// goes on; after a round that does not, T's part may hold another quarter of `most` (it
// alone mixes rows of every cell). kCoverRounds rounds at most.
//
// Cost: the class's distinct values and their adjacency, O(v^2) (at most kBalancedValues
// values, else no split); the candidates, O(m h^2) for m rows and taxonomies of height h,
// and the greedy deal O(m h^2) per part chosen; a step of the search O(v + the degrees of
// the values moved + h d). At most kCoverWorkPerRow units per row of the class in all (and
// `work_cap`), after which no split is proposed. Adult with the ARX taxonomies on the four
// QIs, best effort at epsilon 0.1, delta 0.8: the class of 2,900 rows publishing "*" (53
// distinct values) became parts of at most 751 rows (T's; the others at most 602, 2%),
// "White, Never-married" (1,250) of at most 821 and "White" (2,001) of at most 1,233; the
// table's largest class 9.6% -> 4.1% of the rows, in 0.07-0.09 s; with the small classes
// publishing the tuples those parts need emptied first (vacate.hpp), 1.96%.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "proxanon/publish/balanced_split.hpp"
#include "proxanon/common/loss.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "proxanon/publish/published_key.hpp"

namespace proxanon {

/// Work the covering split may do per row of its class (values weighed, neighbours counted,
/// rows dealt and placed), after which it proposes nothing. A search that fails spends all of
/// it: Adult's best effort at epsilon 0.2, delta 0.6 (ARX taxonomies) deals no class above 2%
/// and takes 0.5 s longer; at 2^13 epsilon 0.1, delta 0.8 publishes a largest class of 4.1%
/// in 0.13 s, at 2^15 4.0% in 0.6 s.
inline constexpr std::size_t kCoverWorkPerRow = std::size_t{1} << 12;

/// Whether no class publishes a tuple (so that a part may publish it).
using FreeKey = std::function<bool(const Key&)>;

/// The parts proposed for failing class `rows` (publishing `key`; row ids into `qi` and
/// `neighbours`' table), each of at least k rows and all but the one keeping `key` of at most
/// `most` (that one may hold more where the search needs it), together exactly `rows`,
/// each no riskier than the class and making no calm row violate, each `publishable`; empty
/// where none is found. `node_keys` names each taxonomy column's nodes by published label (as
/// published_key.hpp reads them); `free` says whether a candidate's tuple is free. `work` is
/// charged one unit per value weighed and neighbour counted; past kCoverWorkPerRow per row
/// of the class, or past `work_cap` in all, no split is proposed.
std::vector<std::vector<std::int32_t>> covering_parts(const std::vector<std::int32_t>& rows, const Key& key,
                                                      const LossModel& qi,
                                                      const std::vector<std::vector<std::int32_t>>& node_keys,
                                                      const Neighbours& neighbours, std::size_t k, double delta,
                                                      std::size_t most, const FreeKey& free,
                                                      const Publishable& publishable, std::size_t& work,
                                                      std::size_t work_cap = static_cast<std::size_t>(-1));

}  // namespace proxanon
