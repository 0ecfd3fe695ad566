// C++ unit tests of property-preserving substitution, with no Python: run by ctest.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "proxanon/substitution/substitution.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

bool has(const std::vector<Locality>& all, int i, int j, int k, Relation r) {
    for (const Locality& loc : all) {
        if (loc.i == i && loc.j == j && loc.k == k && loc.relation == r) return true;
    }
    return false;
}

/// Values 1, 2, 3, 5, 8, 13: for (i, j) = (1, 2) the breakpoint 2·2 - 1 = 3 is a value itself,
/// so the equidistant triple (1, 2, 3) is skipped and 5 is the first farther one.
void test_algorithm_1_on_a_small_example() {
    const std::vector<Locality> all = extract_localities({1, 2, 3, 5, 8, 13});
    CHECK(has(all, 0, 1, 3, Relation::Closer));
    CHECK(!has(all, 0, 1, 2, Relation::Closer));
    CHECK(has(all, 0, 3, 4, Relation::Farther));  // 5 - 1 = 4 > 8 - 5 = 3
    CHECK(has(all, 0, 3, 5, Relation::Closer));   // 4 < 13 - 5 = 8
    CHECK(all.size() == 10);
    bool refused = false;
    try {
        extract_localities({1, 1, 2});
    } catch (const std::invalid_argument&) {
        refused = true;
    }
    CHECK(refused);
}

bool holds(const SubstitutionResult& r, std::size_t c) {
    const auto& x = r.values;
    const double xi = x[static_cast<std::size_t>(r.i[c])];
    const double xj = x[static_cast<std::size_t>(r.j[c])];
    switch (static_cast<Relation>(r.relation[c])) {
        case Relation::Order: return xi <= xj;
        case Relation::Equal: return xi == xj;
        default: break;
    }
    const double xk = x[static_cast<std::size_t>(r.k[c])];
    const double near = std::abs(xi - xj);
    const double far = std::abs(xj - xk);
    return static_cast<Relation>(r.relation[c]) == Relation::Closer ? near <= far : near >= far;
}

void test_walk_keeps_constraints_and_is_deterministic() {
    std::vector<double> values;
    for (int r = 0; r < 1000; ++r) values.push_back(static_cast<double>((r * 37) % 101) * 0.5);
    SubstitutionParams params;
    params.segment_size = 50;
    params.poi_fraction = 0.2;
    params.iterations = 300;
    params.seed = 7;
    const SubstitutionResult a = substitute_column(values.data(), values.size(), 0.0, 60.0, params);
    params.n_threads = 3;
    const SubstitutionResult b = substitute_column(values.data(), values.size(), 0.0, 60.0, params);
    CHECK(a.values == b.values);
    CHECK(a.relation == b.relation);
    CHECK(!a.relation.empty());
    for (std::size_t c = 0; c < a.relation.size(); ++c) CHECK(holds(a, c));
    std::size_t moved = 0;
    for (std::size_t r = 0; r < values.size(); ++r) {
        CHECK(a.values[r] >= 0.0 && a.values[r] <= 60.0);
        moved += a.values[r] != values[r];
    }
    CHECK(moved > values.size() / 2);
}

void test_bad_parameters_throw() {
    const std::vector<double> values = {1, 2, std::nan(""), 4};
    SubstitutionParams params;
    int thrown = 0;
    for (int which = 0; which < 3; ++which) {
        SubstitutionParams p = params;
        double hi = 10.0;
        if (which == 1) p.segment_size = 2;
        if (which == 2) hi = 3.0;
        try {
            const std::vector<double> clean = {1, 2, 3, 4};
            substitute_column(which == 0 ? values.data() : clean.data(), 4, 0.0, hi, p);
        } catch (const std::invalid_argument&) {
            ++thrown;
        }
    }
    CHECK(thrown == 3);
}

}  // namespace

int main() {
    test_algorithm_1_on_a_small_example();
    test_walk_keeps_constraints_and_is_deterministic();
    test_bad_parameters_throw();
    if (failures == 0) std::puts("all substitution tests passed");
    return failures == 0 ? 0 : 1;
}
