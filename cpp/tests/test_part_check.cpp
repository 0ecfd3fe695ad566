// C++ unit tests of the part checks (part_check.hpp), with no Python: run by ctest.
// PartChecker::measure_shed against measure() of the rows left, over a sparse graph and a
// dense one; passes_weighted() against passes() of the same rows; and a peeling round's relief against brute force, on a line, over a graph and by
// pair tests in two components.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "proxanon/common/distance.hpp"
#include "proxanon/mondrian/mondrian.hpp"
#include "proxanon/mondrian/part_check.hpp"
#include "proxanon/neighbours/neighbour_graph.hpp"
#include "proxanon/neighbours/neighbours.hpp"
#include "check.hpp"
#include "core_cases.hpp"
#include "random_levels.hpp"

namespace {

using namespace proxanon;

void test_measure_shed_against_measure() {
    // PartChecker::measure_shed leaves what measure() of the rows left gives: the verdict,
    // t(G), the values present with their counts and D, and the work counted. Over a sparse
    // graph (adjacency lists read) and a dense one (pairs of present values tested).
    for (const double epsilon : {0.04, 0.6}) {
        const std::size_t n = 800, s = 2;
        const std::vector<double> rows = random_levels(n, s, 60, 41);
        const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
        const Distance distance(Metric::L1, {0.5, 0.5}, epsilon);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        const MondrianParams params = dissimilarity_checks(5, 0.7);
        PartChecker shedding(nb, params), fresh(nb, params);
        std::mt19937 rng(static_cast<unsigned>(epsilon * 1000));
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<std::int32_t> piece;
            for (std::size_t r = 0; r < n; ++r) {
                if (rng() % 2 == 0) piece.push_back(static_cast<std::int32_t>(r));
            }
            shedding.measure(piece.data(), piece.data() + piece.size());
            while (piece.size() > 10) {
                // Shed the last x rows of a few present values, as a peeling round does.
                std::vector<std::pair<std::int32_t, std::int64_t>> shed;
                for (const std::int32_t u : shedding.present()) {
                    if (rng() % 4 == 0) shed.emplace_back(u, 1 + static_cast<std::int64_t>(rng() % shedding.count(u)));
                }
                std::map<std::int32_t, std::int64_t> left(shed.begin(), shed.end());
                std::vector<std::int32_t> kept;
                for (std::size_t i = piece.size(); i-- > 0;) {
                    auto it = left.find(shedding.value_of(piece[i]));
                    if (it != left.end() && it->second > 0) --it->second; else kept.push_back(piece[i]);
                }
                piece.assign(kept.rbegin(), kept.rend());
                const std::size_t work_shed = shedding.work(), work_fresh = fresh.work();
                const std::int64_t got = shedding.measure_shed(shed, piece.size());
                CHECK(got == fresh.measure(piece.data(), piece.data() + piece.size()));
                CHECK(shedding.work() - work_shed == fresh.work() - work_fresh);
                CHECK(shedding.allowed() == fresh.allowed());
                std::set<std::int32_t> a(shedding.present().begin(), shedding.present().end());
                std::set<std::int32_t> b(fresh.present().begin(), fresh.present().end());
                CHECK(a == b && a.size() == shedding.present().size());
                for (const std::int32_t u : b) {
                    CHECK(shedding.count(u) == fresh.count(u));
                    CHECK(shedding.degree(u) == fresh.degree(u));
                }
            }
        }
    }
}

void test_passes_weighted_against_passes() {
    // passes_weighted() of a set given as one row per value with its count says what passes()
    // of the rows says, with the distance check (sparse and dense graphs), distinct l alone,
    // and k alone.
    for (const double epsilon : {0.04, 0.6}) {
        const std::size_t n = 600, s = 2;
        const std::vector<double> rows = random_levels(n, s, 40, 17);
        const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
        const Distance distance(Metric::L1, {0.5, 0.5}, epsilon);
        const Neighbours nb = Neighbours::build(table, distance, Structure::Graph, kMaxGraphEntries);
        MondrianParams only_l;
        only_l.k = 5;
        only_l.l = 6;
        MondrianParams only_k;
        only_k.k = 40;
        for (const MondrianParams& params : {dissimilarity_checks(5, 0.7), dissimilarity_checks(3, 0.3), only_l, only_k}) {
            PartChecker by_rows(nb, params), by_values(nb, params);
            std::mt19937 rng(static_cast<unsigned>(epsilon * 1000) + static_cast<unsigned>(params.l));
            int passed = 0, trials = 0;
            for (const std::size_t every : {2u, 5u, 20u, 60u}) {
                for (int trial = 0; trial < 15; ++trial, ++trials) {
                    std::vector<std::int32_t> piece;
                    std::map<std::int32_t, std::pair<std::int32_t, std::int64_t>> per_value;
                    for (std::size_t r = 0; r < n; ++r) {
                        if (rng() % every != 0) continue;
                        piece.push_back(static_cast<std::int32_t>(r));
                        auto& [rep, count] = per_value.try_emplace(by_rows.value_of(static_cast<std::int32_t>(r)),
                                                                   static_cast<std::int32_t>(r), 0).first->second;
                        ++count;
                        (void)rep;
                    }
                    std::vector<std::int32_t> reps;
                    std::vector<std::int64_t> counts;
                    for (const auto& [u, entry] : per_value) {
                        reps.push_back(entry.first);
                        counts.push_back(entry.second);
                    }
                    const bool expected = by_rows.passes(piece.data(), piece.data() + piece.size());
                    CHECK(by_values.passes_weighted(reps.data(), counts.data(), reps.size()) == expected);
                    passed += expected;
                }
            }
            CHECK(passed > 0 || params.dissimilarity);  // the k and l cases pass on large sets
        }
    }
}

void test_relief_against_brute_force() {
    // A peeling round's relief (part_check.hpp) on a line (sorted, and a graph over the same
    // one component), over a graph off a line and by pair tests in two components: the rows
    // shed before each violating value among its neighbours, as brute force counts them.
    for (const std::size_t s : {std::size_t{1}, std::size_t{2}}) {
        const std::size_t n = 900;
        const std::vector<double> rows = random_levels(n, s, 300, static_cast<unsigned>(31 + s));
        const ValueTable table = ValueTable::from_rows(rows.data(), n, s);
        const std::vector<double> weights(s, 1.0 / static_cast<double>(s));
        const Distance distance(Metric::L1, weights, 4.0 / 300);  // neighbours exactly epsilon apart
        for (const Structure structure : {Structure::Sorted, Structure::Graph, Structure::Grid}) {
            if (s == 1 && structure == Structure::Grid) continue;
            if (s == 2 && structure == Structure::Sorted) continue;
            const Neighbours nb = Neighbours::build(table, distance, structure, kMaxGraphEntries);
            MondrianParams params;
            const PartChecker check(nb, params);
            CHECK(check.on_a_line() == (structure == Structure::Sorted) || structure == Structure::Graph);
            std::mt19937 rng(3);
            std::vector<std::pair<std::int64_t, std::int32_t>> violating;
            for (std::size_t u = 0; u < table.size(); ++u) {
                if (rng() % 3 == 0) violating.emplace_back(-static_cast<std::int64_t>(rng() % 50), static_cast<std::int32_t>(u));
            }
            std::sort(violating.begin(), violating.end());
            std::vector<std::int64_t> shed_rows;
            Relief relief(check, violating, std::size_t{1} << 30, shed_rows);
            std::vector<std::pair<std::int32_t, std::int64_t>> shed;
            for (const auto& [minus, w] : violating) {
                std::int64_t want = 0;
                for (const auto& [u, x] : shed) {
                    if (distance.within(table.value(static_cast<std::size_t>(u)), table.value(static_cast<std::size_t>(w)))) want += x;
                }
                CHECK(relief.of(w) == want);
                if (rng() % 2 == 0) {
                    const auto x = static_cast<std::int64_t>(1 + rng() % 4);
                    shed.emplace_back(w, x);
                    relief.shed(w, x);
                }
            }
        }
    }
}

}  // namespace

int main() {
    return run_tests("part check", {test_relief_against_brute_force, test_measure_shed_against_measure,
                                    test_passes_weighted_against_passes});
}
