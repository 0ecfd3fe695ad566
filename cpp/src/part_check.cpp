#include "proxanon/part_check.hpp"

#include "proxanon/class_counts.hpp"
#include "proxanon/colouring.hpp"

namespace proxanon {

PartChecker::PartChecker(const Neighbours& neighbours, const MondrianParams& params)
    : nb_(neighbours), graph_(neighbours.graph()), params_(params),
      count_(neighbours.size(), 0), degree_(neighbours.size(), 0) {
}

std::int64_t PartChecker::measure(const std::int32_t* begin, const std::int32_t* end) {
    for (std::int32_t u : present_) count_[at(u)] = degree_[at(u)] = 0;
    present_.clear();
    const auto size = static_cast<std::size_t>(end - begin);
    allowed_ = allowed_neighbours(size, params_.delta);
    const auto& row_value = nb_.table().row_value;
    for (const std::int32_t* p = begin; p != end; ++p) {
        const std::int32_t u = row_value[at(*p)];
        if (count_[at(u)]++ == 0) present_.push_back(u);
    }
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
    for (std::int32_t u : present_) {
        std::int64_t d = count_[at(u)] - 1;
        for (const std::int32_t* p = graph_->begin(at(u)); p != graph_->end(at(u)); ++p) d += count_[at(*p)];
        degree_[at(u)] = d;
    }
}

void PartChecker::implicit_degrees(const std::int32_t* begin, const std::int32_t* end) {
    const auto size = static_cast<std::size_t>(end - begin);
    row_counts_.resize(size);
    count_in_class(nb_.table(), *nb_.distance(), begin, size, row_counts_.data());
    for (std::size_t i = 0; i < size; ++i) degree_[at(value_of(begin[i]))] = row_counts_[i];
}

}  // namespace proxanon
