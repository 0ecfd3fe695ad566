#include "proxanon/publish/session.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include "proxanon/publish/exchange.hpp"
#include "proxanon/publish/published_key.hpp"
#include "proxanon/publish/tuple_counts.hpp"

namespace proxanon {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The QI codes of `rows`, row-major: the table's own when `rows` are all of its n rows in
/// order (no copy: at 10M rows a copy is 320 MB), else gathered into `buffer`. O(|rows| d).
const double* codes_of(const QuasiIdentifiers& qi, std::size_t n, const std::vector<std::int32_t>& rows,
                       std::vector<double>& buffer) {
    if (rows.size() == n) return qi.codes;  // rows only ever shrink from 0 .. n-1, in order
    buffer.resize(rows.size() * qi.d);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double* x = qi.codes + static_cast<std::size_t>(rows[i]) * qi.d;
        std::copy(x, x + qi.d, buffer.begin() + static_cast<std::ptrdiff_t>(i * qi.d));
    }
    return buffer.data();
}

/// Class per group (-1 for a group with no row): groups with one published tuple share a
/// class, numbered in the order of their first group. O(n d + groups d).
std::vector<std::int32_t> merge_by_tuple(const QuasiIdentifiers& qi, const std::vector<std::int32_t>& rows,
                                         const std::vector<std::int32_t>& groups, std::size_t count) {
    const std::size_t d = qi.d;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> lo(count * d, inf), hi(count * d, -inf);
    std::vector<char> used(count, 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto g = static_cast<std::size_t>(groups[i]);
        used[g] = 1;
        const double* x = qi.codes + static_cast<std::size_t>(rows[i]) * d;
        for (std::size_t j = 0; j < d; ++j) {
            lo[g * d + j] = std::min(lo[g * d + j], x[j]);
            hi[g * d + j] = std::max(hi[g * d + j], x[j]);
        }
    }
    std::vector<std::int32_t> merged(count, -1);
    TupleCounts classes(2 * d);  // its dense numbering of tuples is the class numbering
    Tuple key(2 * d);
    for (std::size_t g = 0; g < count; ++g) {
        if (!used[g]) continue;
        for (std::size_t j = 0; j < d; ++j) {
            const Taxonomy* tax = (*qi.taxonomies)[j] ? &*(*qi.taxonomies)[j] : nullptr;
            std::tie(key[2 * j], key[2 * j + 1]) = published_pair(tax, (*qi.node_keys)[j], lo[g * d + j], hi[g * d + j]);
        }
        merged[g] = static_cast<std::int32_t>(classes.index(key));
    }
    return merged;
}

}  // namespace

SessionResult run_session(const RowsRelation& relation, std::size_t n, const QuasiIdentifiers& qi,
                          const std::vector<std::int64_t>& sensitive_ids, const SessionOptions& options,
                          const std::vector<std::int32_t>* start) {
    if (sensitive_ids.size() != n) throw std::invalid_argument("sensitive_ids needs one id per row");
    const XColorOptions& xo = options.xcolor;
    SessionResult out;
    std::vector<std::int32_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0);

    ValueTable table;
    std::optional<Neighbours> neighbours;
    LossModel loss;
    const auto build = [&] {
        neighbours.emplace(relation(table, rows, xo.threads, xo.interrupt));
        if (options.qi_aware && qi.d > 0) {
            std::vector<double> buffer;
            loss = LossModel(codes_of(qi, n, rows, buffer), rows.size(), qi.d, *qi.taxonomies);
        } else {
            loss = LossModel();
        }
    };
    const auto began = std::chrono::steady_clock::now();
    build();
    out.seconds_graph = seconds_since(began);
    out.distinct = table.size();
    out.value_edges = neighbours->value_edges();
    out.structure = neighbours->structure();
    XColorResult run = run_xcolor(table, *neighbours, loss, xo, start);
    out.first = run.stats;
    out.swaps = run.stats.swaps;

    const auto merging = std::chrono::steady_clock::now();
    // Per row of the run: how many first-run groups the class it was last merged into came
    // from (rows keep it when a repair moves them; a group takes its largest).
    std::vector<std::int64_t> row_from(n, 1);
    for (;;) {
        out.last_rows = rows;
        if (xo.suppress && rows.size() - run.suppressed_rows.size() < xo.k) {
            out.too_few = true;
            break;
        }
        std::vector<std::int32_t> kept, groups;
        std::vector<std::int64_t> kept_from;
        std::size_t count = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (run.groups[i] < 0) continue;
            kept.push_back(rows[i]);
            groups.push_back(run.groups[i]);
            kept_from.push_back(row_from[i]);
            count = std::max(count, static_cast<std::size_t>(run.groups[i]) + 1);
        }
        const bool dropped = kept.size() < rows.size();
        rows = std::move(kept);
        row_from = std::move(kept_from);
        if (out.rounds == 0 && qi.d > 0 && !rows.empty()) {
            // The engine's own groups, near k rows, before any merge: spread equal tuples.
            std::vector<double> buffer;
            const double* codes = codes_of(qi, n, rows, buffer);
            std::vector<std::int64_t> ids(rows.size()), given(groups.begin(), groups.end());
            for (std::size_t i = 0; i < rows.size(); ++i) ids[i] = sensitive_ids[static_cast<std::size_t>(rows[i])];
            ExchangeParams params;
            params.interrupt = xo.interrupt;
            const std::vector<std::int64_t> spread = spread_equal_tuples(given, codes, qi.d, *qi.taxonomies, ids, params);
            for (std::size_t i = 0; i < rows.size(); ++i) groups[i] = static_cast<std::int32_t>(spread[i]);
        }
        const std::vector<std::int32_t> merged = merge_by_tuple(qi, rows, groups, count);
        std::size_t used = 0, classes = 0;
        std::vector<std::int64_t> group_from(count, 0);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            auto& g = group_from[static_cast<std::size_t>(groups[i])];
            g = std::max(g, row_from[i]);
        }
        for (std::size_t g = 0; g < count; ++g) {
            if (merged[g] < 0) continue;
            ++used;
            classes = std::max(classes, static_cast<std::size_t>(merged[g]) + 1);
        }
        out.formed_from.assign(classes, 0);
        for (std::size_t g = 0; g < count; ++g) {
            if (merged[g] >= 0) out.formed_from[static_cast<std::size_t>(merged[g])] += group_from[g];
        }
        out.classes.resize(rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            out.classes[i] = merged[static_cast<std::size_t>(groups[i])];
            row_from[i] = out.formed_from[static_cast<std::size_t>(out.classes[i])];
        }
        // Rows left out stay out in later rounds: past the budget, no round can help.
        const bool over_budget = static_cast<double>(n - rows.size()) > options.budget * static_cast<double>(n);
        if (classes == used || run.stats.remaining_violations != 0 || over_budget ||
            static_cast<std::size_t>(out.rounds) >= options.max_rounds) {
            break;
        }
        ++out.rounds;
        if (dropped) build();
        run = run_xcolor(table, *neighbours, loss, xo, &out.classes);
        out.swaps += run.stats.swaps;
    }
    out.released = std::move(rows);
    out.last = std::move(run);
    out.seconds_merge = seconds_since(merging);
    return out;
}

}  // namespace proxanon
