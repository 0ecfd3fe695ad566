#include "proxanon/mondrian/part_check.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "proxanon/neighbours/class_counts.hpp"
#include "proxanon/xcolor/colouring.hpp"

namespace proxanon {

std::vector<std::int32_t> whole_table_violating_rows(PartChecker& checker, const MondrianParams& params,
                                                     std::size_t n) {
    std::vector<std::int32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    checker.measure(all.data(), all.data() + n);
    const bool diverse = checker.present().size() >= params.l && !checker.criteria_failed();
    std::vector<std::int32_t> rows;
    for (std::int32_t r : all) {
        if (!diverse || (params.dissimilarity && checker.degree(checker.value_of(r)) > checker.allowed())) {
            rows.push_back(r);
        }
    }
    return rows;
}

PartChecker::PartChecker(const Neighbours& neighbours, const MondrianParams& params)
    : nb_(neighbours), graph_(neighbours.graph()), params_(params),
      count_(neighbours.size(), 0), degree_(neighbours.size(), 0) {
    if (params.criteria != nullptr && !params.criteria->empty()) criteria_.emplace(*params.criteria);
}

void PartChecker::count_present(const std::int32_t* begin, const std::int32_t* end) {
    for (std::int32_t u : present_) count_[at(u)] = degree_[at(u)] = 0;
    present_.clear();
    allowed_ = allowed_neighbours(static_cast<std::size_t>(end - begin), params_.delta);
    work_ += static_cast<std::size_t>(end - begin);
    const auto& row_value = nb_.table().row_value;
    for (const std::int32_t* p = begin; p != end; ++p) {
        const std::int32_t u = row_value[at(*p)];
        if (count_[at(u)]++ == 0) present_.push_back(u);
    }
}

std::int64_t PartChecker::graph_degree(std::int32_t u) {
    // D in the whole table bounds D in any of its parts: within the allowance, no need to
    // count (a large part allows many neighbours).
    const std::int64_t whole = nb_.row_degrees()[at(u)];
    if (whole <= allowed_) return whole;
    work_ += graph_->degree(at(u));  // its adjacency list, read
    std::int64_t d = count_[at(u)] - 1;
    for (const std::int32_t* q = graph_->begin(at(u)); q != graph_->end(at(u)); ++q) d += count_[at(*q)];
    return d;
}

bool PartChecker::passes(const std::int32_t* begin, const std::int32_t* end) {
    const auto size = static_cast<std::size_t>(end - begin);
    if (size < params_.k) return false;
    if (criteria_ && !criteria_->holds(begin, end)) return false;
    if (params_.l == 0 && !params_.dissimilarity) return true;
    if (!graph_ || !params_.dissimilarity) return measure(begin, end) == 0;
    count_present(begin, end);
    if (present_.size() < params_.l) return false;
    return std::none_of(present_.begin(), present_.end(),
                        [&](std::int32_t u) { return graph_degree(u) > allowed_; });
}

bool PartChecker::passes_weighted(const std::int32_t* rows, const std::int64_t* counts, std::size_t m) {
    std::int64_t size = 0;
    for (std::size_t i = 0; i < m; ++i) size += counts[i];
    if (size < static_cast<std::int64_t>(params_.k)) return false;
    if (criteria_ && !criteria_->holds(rows, counts, m)) return false;
    if (params_.l == 0 && !params_.dissimilarity) return true;
    if (params_.dissimilarity && !graph_) throw std::logic_error("passes_weighted needs a graph with epsilon");
    for (std::int32_t u : present_) count_[at(u)] = degree_[at(u)] = 0;
    present_.clear();
    allowed_ = allowed_neighbours(static_cast<std::size_t>(size), params_.delta);
    work_ += m;
    const auto& row_value = nb_.table().row_value;
    for (std::size_t i = 0; i < m; ++i) {
        const std::int32_t u = row_value[at(rows[i])];
        if (count_[at(u)] == 0) present_.push_back(u);
        count_[at(u)] += counts[i];
    }
    if (present_.size() < params_.l) return false;
    if (!params_.dissimilarity) return true;
    return std::none_of(present_.begin(), present_.end(),
                        [&](std::int32_t u) { return graph_degree(u) > allowed_; });
}

std::int64_t PartChecker::measure(const std::int32_t* begin, const std::int32_t* end) {
    criteria_failed_ = criteria_ && !criteria_->holds(begin, end);
    count_present(begin, end);
    const auto size = static_cast<std::size_t>(end - begin);
    if (params_.dissimilarity) {
        if (graph_) pairs_ = graph_degrees(); else implicit_degrees(begin, end);
    }
    return violating(size);
}

std::int64_t PartChecker::violating(std::size_t size) const {
    if (size < params_.k || present_.size() < params_.l || criteria_failed_) {
        return static_cast<std::int64_t>(size);
    }
    std::int64_t bad = 0;
    for (std::int32_t u : present_) {
        if (degree_[at(u)] > allowed_) bad += count_[at(u)];
    }
    return bad;
}

std::int64_t PartChecker::measure_shed(const std::vector<std::pair<std::int32_t, std::int64_t>>& shed,
                                       std::size_t size) {
    if (!graph_ || !params_.dissimilarity) throw std::logic_error("measure_shed needs a graph and epsilon");
    const std::int64_t before = allowed_;
    const auto& whole = nb_.row_degrees();
    allowed_ = allowed_neighbours(size, params_.delta);
    work_ += size;  // as count_present would count
    // D was exact before where the table's D exceeded t(G) (or everywhere, pairs tested):
    // it drops by the rows shed that are its neighbours or its own value's.
    for (const auto& [w, x] : shed) count_[at(w)] -= x;
    std::size_t kept = 0;
    for (const std::int32_t u : present_) {
        if (count_[at(u)] > 0) present_[kept++] = u; else degree_[at(u)] = 0;
    }
    present_.resize(kept);
    if (pairs_ || pairs_cheaper()) {
        pairs_ = graph_degrees();
        return violating(size);
    }
    for (const auto& [w, x] : shed) {
        if (count_[at(w)] > 0 && whole[at(w)] > before) degree_[at(w)] -= x;
        for (const std::int32_t* q = graph_->begin(at(w)); q != graph_->end(at(w)); ++q) {
            if (count_[at(*q)] > 0 && whole[at(*q)] > before) degree_[at(*q)] -= x;
        }
    }
    for (const std::int32_t u : present_) {
        if (whole[at(u)] <= allowed_) continue;  // the table's D, held since: within t(G)
        if (whole[at(u)] > before) work_ += graph_->degree(at(u));  // exact, kept above
        else degree_[at(u)] = graph_degree(u);  // counted now, as measure() counts it
    }
    return violating(size);
}

bool PartChecker::pairs_cheaper() const {
    std::size_t adjacency = 0;
    for (std::int32_t u : present_) adjacency += graph_->degree(at(u));
    const std::size_t p = present_.size();
    return p > 1 && p * (p - 1) / 2 * kTestsPerEntry < adjacency;
}

bool PartChecker::graph_degrees() {
    const std::size_t p = present_.size();
    if (pairs_cheaper()) {
        // Few values with long adjacency lists (a small part of a dense relation): test the
        // pairs of present values, O(p^2 log degree), instead of reading every list.
        work_ += p * (p - 1) / 2;
        for (std::size_t i = 0; i < p; ++i) degree_[at(present_[i])] = count_[at(present_[i])] - 1;
        for (std::size_t i = 0; i < p; ++i) {
            const std::int32_t u = present_[i];
            for (std::size_t j = i + 1; j < p; ++j) {
                const std::int32_t w = present_[j];
                if (graph_->adjacent(u, w)) {
                    degree_[at(u)] += count_[at(w)];
                    degree_[at(w)] += count_[at(u)];
                }
            }
        }
        return true;
    }
    for (std::int32_t u : present_) degree_[at(u)] = graph_degree(u);
    return false;
}

void PartChecker::implicit_degrees(const std::int32_t* begin, const std::int32_t* end) {
    const auto size = static_cast<std::size_t>(end - begin);
    row_counts_.resize(size);
    count_in_class(nb_.table(), *nb_.distance(), begin, size, row_counts_.data());
    for (std::size_t i = 0; i < size; ++i) degree_[at(value_of(begin[i]))] = row_counts_[i];
}


Relief::Relief(const PartChecker& check, const std::vector<std::pair<std::int64_t, std::int32_t>>& violating,
               std::size_t tests, std::vector<std::int64_t>& shed_rows)
    : check_(check), tests_(tests), shed_rows_(shed_rows) {
    if (check.graph() != nullptr) shed_rows_.resize(check.values(), 0);
    if (!check.on_a_line() || violating.size() < 2) return;
    for (const auto& entry : violating) ids_.push_back(entry.second);
    std::sort(ids_.begin(), ids_.end());
    const std::size_t v = ids_.size();
    first_.resize(v);
    last_.resize(v);
    const auto near = [&](std::size_t a, std::size_t b) { return check.adjacent(ids_[a], ids_[b]); };
    for_each_line_run(v, near, [&](std::size_t i, std::size_t first, std::size_t last) {
        first_[i] = first;
        last_[i] = last;
    });
    work_ = 3 * v;
    tree_.assign(v + 1, 0);
}

Relief::~Relief() {
    if (check_.graph() == nullptr) return;
    for (const auto& entry : shed_) shed_rows_[static_cast<std::size_t>(entry.first)] = 0;
}

std::int64_t Relief::of(std::int32_t w) {
    if (!tree_.empty()) {
        const std::size_t r = rank(w);
        work_ += 1;
        return below(last_[r]) - below(first_[r]);
    }
    std::int64_t relief = 0;
    const NeighbourGraph* graph = check_.graph();
    const auto at = static_cast<std::size_t>(w);
    if (graph != nullptr && graph->degree(at) < shed_.size()) {
        work_ += graph->degree(at);
        for (const std::int32_t* u = graph->begin(at); u != graph->end(at); ++u) {
            relief += shed_rows_[static_cast<std::size_t>(*u)];
        }
    } else if (graph != nullptr || shed_.size() <= tests_) {
        if (graph == nullptr) tests_ -= shed_.size();
        work_ += shed_.size();
        for (const auto& [u, x] : shed_) {
            if (check_.adjacent(u, w)) relief += x;
        }
    }
    return relief;
}

void Relief::shed(std::int32_t w, std::int64_t x) {
    if (tree_.empty()) {
        shed_.emplace_back(w, x);
        if (check_.graph() != nullptr) shed_rows_[static_cast<std::size_t>(w)] = x;
        return;
    }
    for (std::size_t i = rank(w) + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += x;
}

std::size_t Relief::rank(std::int32_t w) const {
    return static_cast<std::size_t>(std::lower_bound(ids_.begin(), ids_.end(), w) - ids_.begin());
}

std::int64_t Relief::below(std::size_t r) const {
    std::int64_t sum = 0;
    for (std::size_t i = r; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
}

}  // namespace proxanon
