#include "proxanon/initialize.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <utility>

namespace proxanon {

std::vector<std::int32_t> equitable_sizes(std::size_t n, std::size_t m) {
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    std::vector<std::int32_t> sizes(m, static_cast<std::int32_t>(n / m));
    for (std::size_t c = 0; c < n % m; ++c) sizes[c] += 1;
    return sizes;
}

std::vector<std::int32_t> initialize(const std::vector<std::int64_t>& degree, std::size_t m) {
    const std::size_t n = degree.size();
    if (m == 0 || m > n) throw std::invalid_argument("need 1 <= m <= n classes");
    // Sort key (max_degree - degree) << 32 | row: descending degree, then ascending row.
    std::int64_t top = 0;
    for (std::int64_t d : degree) {
        if (d < 0 || d >= (std::int64_t{1} << 31)) throw std::invalid_argument("degrees must lie in [0, 2^31)");
        top = std::max(top, d);
    }
    std::vector<std::uint64_t> keys(n);
    for (std::size_t r = 0; r < n; ++r) {
        keys[r] = (static_cast<std::uint64_t>(top - degree[r]) << 32) | r;
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::int32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::int32_t>(keys[i] & 0xffffffffULL);

    using Entry = std::pair<std::int64_t, std::int32_t>;  // (degree sum, class)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
    std::vector<std::int64_t> sum(m, 0);
    std::vector<std::int32_t> size(m, 0);
    std::vector<std::int32_t> assigned(n, -1);
    const auto base = static_cast<std::int32_t>(n / m);
    for (std::size_t c = 0; c < m; ++c) open.emplace(0, static_cast<std::int32_t>(c));

    const std::size_t filled = static_cast<std::size_t>(base) * m;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == filled) {  // every class holds floor(n/m): each may take one more row
            for (std::size_t c = 0; c < m; ++c) open.emplace(sum[c], static_cast<std::int32_t>(c));
        }
        const auto [s, c] = open.top();
        open.pop();
        const auto uc = static_cast<std::size_t>(c);
        const auto row = static_cast<std::size_t>(order[i]);
        assigned[row] = c;
        sum[uc] = s + degree[row];
        size[uc] += 1;
        if (i < filled && size[uc] < base) open.emplace(sum[uc], c);
    }
    return assigned;
}

}  // namespace proxanon
