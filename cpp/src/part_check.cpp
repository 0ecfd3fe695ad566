#include "proxanon/part_check.hpp"

#include <algorithm>
#include <stdexcept>

#include "proxanon/colouring.hpp"

namespace proxanon {

PartChecker::PartChecker(const Neighbours& neighbours, const MondrianParams& params)
    : nb_(neighbours), graph_(neighbours.graph()), params_(params),
      count_(neighbours.size(), 0), degree_(neighbours.size(), 0) {
    if (params.dissimilarity && !graph_ && neighbours.structure() != Structure::Sorted) {
        throw std::invalid_argument("counting a set's neighbours needs a Graph or a Sorted structure");
    }
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
        if (graph_) graph_degrees(); else sorted_degrees();
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

/// Ids ascend with the one component, and fl(x - y) is monotone in y, so the neighbours of
/// u below it are a suffix of the present values below it and those above a prefix.
void PartChecker::sorted_degrees() {
    std::sort(present_.begin(), present_.end());
    const std::size_t values = present_.size();
    before_.assign(values + 1, 0);
    for (std::size_t i = 0; i < values; ++i) before_[i + 1] = before_[i] + count_[at(present_[i])];
    for (std::size_t i = 0; i < values; ++i) {
        const std::int32_t u = present_[i];
        std::size_t lo = 0, hi = i;  // first neighbour at or below u
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (nb_.adjacent(u, present_[mid])) hi = mid; else lo = mid + 1;
        }
        const std::size_t first = lo;
        lo = i + 1;
        hi = values;  // one past the last neighbour above u
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (nb_.adjacent(u, present_[mid])) lo = mid + 1; else hi = mid;
        }
        degree_[at(u)] = before_[lo] - before_[first] - 1;
    }
}

}  // namespace proxanon
