// Times qi_order (initialize.hpp), XColor's QI order, on a census-like table: age 0-90 and,
// with "taxonomies", sex, race and marital status as flat taxonomy columns (else numeric).
// Three rounds on one thread and on two; the order's middle row shows the runs agree.
//
//   cmake -S . -B build/cpp-tests -DPROXANON_BUILD_TESTS=ON && cmake --build build/cpp-tests
//   build/cpp-tests/proxanon_qi_order_timing 1000000 taxonomies
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "proxanon/xcolor/initialize.hpp"
#include "proxanon/common/loss.hpp"

namespace {

proxanon::Taxonomy flat(std::int32_t leaves) {
    std::vector<std::int32_t> parent(static_cast<std::size_t>(leaves) + 1, leaves);
    parent.back() = -1;
    return proxanon::Taxonomy(parent, static_cast<std::size_t>(leaves));
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 1000000;
    const bool taxonomies = argc > 2 && std::string(argv[2]) == "taxonomies";
    std::mt19937_64 rng(1);
    std::vector<double> qi(n * 4);
    for (std::size_t r = 0; r < n; ++r) {
        qi[r * 4] = static_cast<double>(rng() % 91);
        qi[r * 4 + 1] = static_cast<double>(rng() % 2);
        qi[r * 4 + 2] = static_cast<double>(rng() % 5);
        qi[r * 4 + 3] = static_cast<double>(rng() % 5);
    }
    std::vector<std::optional<proxanon::Taxonomy>> columns(4);
    if (taxonomies) {
        columns[1].emplace(flat(2));
        columns[2].emplace(flat(5));
        columns[3].emplace(flat(5));
    }
    const proxanon::LossModel model(qi.data(), n, 4, columns);
    for (int round = 0; round < 3; ++round) {
        for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
            const auto start = std::chrono::steady_clock::now();
            const std::vector<std::int32_t> order = proxanon::qi_order(model, n, 10, threads);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::printf("%zu rows, %s, %zu thread(s): %.3f s (middle row %d)\n", n,
                        taxonomies ? "flat taxonomies" : "numeric", threads, seconds, order[n / 2]);
        }
    }
    return 0;
}
