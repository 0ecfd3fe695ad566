#include "proxanon/xcolor/suppression.hpp"

#include <algorithm>
#include <queue>
#include <tuple>
#include <vector>

namespace proxanon {

namespace {

/// Classes tried per row of a dissolved class, outward from it: placing a row costs at most
/// kReach times a class's size, where searching every class made suppression quadratic
/// (a table with 30% of its rows on one value, 400k rows: 2.4 s of suppression -> 0.04 s,
/// the same rows left out; Adult with the ARX taxonomies at epsilon 0.1, max_suppression 0.4:
/// 10,948 -> 10,866 rows left out, largest class 1,396 -> 596 rows).
constexpr std::size_t kReach = 256;

/// True iff adding v to class c leaves v within its allowance and puts no row of c that is
/// within its allowance over it. Rows of c already over it stay for the heap to take: a class
/// that violates still takes rows that harm no one (else, where every class violates, a
/// dissolved class's rows would all be left out, and each step would dissolve the next).
bool fits(const Colouring& col, std::int32_t v, std::size_t c) {
    const std::int32_t a = col.value_of(v);
    const std::int32_t before = col.allowed(c);
    const std::int32_t t = allowed_neighbours(col.size(c) + 1, col.delta());
    std::int32_t own = 0;
    const AdjacentTo near_a(col.neighbours(), a);
    for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) {
        const bool near = near_a(col.value_of(*p));
        own += near;
        if (own > t || (col.own(*p) <= before && col.own(*p) + near > t)) return false;
    }
    return true;  // own <= t: checked as it grew
}

/// Moves the rows of an undersized class where they fit, or leaves them out; the classes
/// that took a row are added to `changed`.
void dissolve(Colouring& col, std::size_t c, std::size_t k, XColorResult& result,
              std::vector<std::size_t>& changed) {
    std::vector<std::int32_t> rows(col.begin(c), col.end(c));
    std::sort(rows.begin(), rows.end());
    for (std::int32_t v : rows) {
        col.detach(v);
        bool placed = false;
        const std::size_t reach = std::min(col.classes() - 1, kReach);
        for (std::size_t step = 0; step < reach && !placed; ++step) {
            const std::size_t target = col.outward(c, step);
            if (col.size(target) < k || !fits(col, v, target)) continue;
            col.attach(v, target);
            changed.push_back(target);
            placed = true;
        }
        if (!placed) result.suppressed_rows.push_back(v);
    }
}

}  // namespace

void suppress_violations(Colouring& col, std::size_t k, XColorResult& result,
                         Interrupt* interrupt) {
    // Per class, its worst violation by (excess, D, -row): ties to the larger D, then the
    // lower row. The classes' worst rows wait in a heap, largest first, each with its class's
    // version; a class that changes gets an entry of now, and an entry of an older version is
    // dropped when it comes up. So the first entry of its class's version is the worst
    // violation of the table, as a scan of every row would find it, at the cost of reading
    // the classes a step changed (a scan per row left out was O(n) each).
    using Key = std::tuple<std::int64_t, std::int32_t, std::int32_t>;
    struct Entry {
        Key key;
        std::size_t c;
        std::uint64_t version;
        bool operator<(const Entry& other) const { return key < other.key; }
    };
    std::priority_queue<Entry> worst_first;
    const auto push_worst = [&](std::size_t c) {
        const std::int64_t t = col.allowed(c);
        bool any = false;
        Key worst{};
        for (const std::int32_t* p = col.begin(c); p != col.end(c); ++p) {
            if (col.own(*p) <= t) continue;
            const Key key{col.own(*p) - t, col.own(*p), -*p};
            if (!any || worst < key) worst = key;
            any = true;
        }
        if (any) worst_first.push(Entry{worst, c, col.version(c)});
    };
    for (std::size_t c = 0; c < col.classes(); ++c) push_worst(c);
    std::vector<std::size_t> changed;
    while (!worst_first.empty()) {
        poll(interrupt);
        const Entry top = worst_first.top();
        worst_first.pop();
        if (top.version != col.version(top.c)) continue;  // the class changed since
        const std::int32_t worst = -std::get<2>(top.key);
        const std::size_t home = top.c;
        col.detach(worst);
        result.suppressed_rows.push_back(worst);
        changed.assign(1, home);
        if (col.size(home) < k && col.size(home) > 0) dissolve(col, home, k, result, changed);
        std::sort(changed.begin(), changed.end());
        changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
        for (const std::size_t c : changed) push_worst(c);
    }
}

}  // namespace proxanon
