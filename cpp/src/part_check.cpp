#include "proxanon/part_check.hpp"

#include <algorithm>

#include "proxanon/class_counts.hpp"
#include "proxanon/colouring.hpp"

namespace proxanon {

PartChecker::PartChecker(const Neighbours& neighbours, const MondrianParams& params)
    : nb_(neighbours), graph_(neighbours.graph()), params_(params),
      count_(neighbours.size(), 0), degree_(neighbours.size(), 0) {
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
    if (params_.l == 0 && !params_.dissimilarity) return true;
    if (!graph_ || !params_.dissimilarity) return measure(begin, end) == 0;
    count_present(begin, end);
    if (present_.size() < params_.l) return false;
    return std::none_of(present_.begin(), present_.end(),
                        [&](std::int32_t u) { return graph_degree(u) > allowed_; });
}

std::int64_t PartChecker::measure(const std::int32_t* begin, const std::int32_t* end) {
    count_present(begin, end);
    const auto size = static_cast<std::size_t>(end - begin);
    if (params_.dissimilarity) {
        if (graph_) graph_degrees(); else implicit_degrees(begin, end);
    }
    if (size < params_.k || present_.size() < params_.l) return static_cast<std::int64_t>(size);
    std::int64_t bad = 0;
    for (std::int32_t u : present_) {
        if (degree_[at(u)] > allowed_) bad += count_[at(u)];
    }
    return bad;
}

void PartChecker::graph_degrees() {
    std::size_t adjacency = 0;
    for (std::int32_t u : present_) adjacency += graph_->degree(at(u));
    const std::size_t p = present_.size();
    if (p > 1 && p * (p - 1) / 2 * kTestsPerEntry < adjacency) {
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
        return;
    }
    for (std::int32_t u : present_) degree_[at(u)] = graph_degree(u);
}

void PartChecker::implicit_degrees(const std::int32_t* begin, const std::int32_t* end) {
    const auto size = static_cast<std::size_t>(end - begin);
    row_counts_.resize(size);
    count_in_class(nb_.table(), *nb_.distance(), begin, size, row_counts_.data());
    for (std::size_t i = 0; i < size; ++i) degree_[at(value_of(begin[i]))] = row_counts_[i];
}

}  // namespace proxanon
