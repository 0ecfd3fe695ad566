// The helpers convert.hpp declares; its templates stay there.
#include "convert.hpp"

namespace proxanon::bindings {

Csr to_csr(const Int32Array& row_value, const Int64Array& offsets, const Int32Array& targets) {
    return {to_vector(row_value, "row_value"), to_vector(offsets, "offsets"), to_vector(targets, "targets")};
}

std::optional<std::vector<std::int32_t>> to_vector(const std::optional<Int32Array>& array, const char* name) {
    if (!array) return std::nullopt;
    return to_vector(*array, name);
}

Matrix as_matrix(const DoubleArray& array, const char* name) {
    if (array.ndim() == 1) return {array.data(), static_cast<std::size_t>(array.shape(0)), 1};
    if (array.ndim() == 2) {
        return {array.data(), static_cast<std::size_t>(array.shape(0)),
                static_cast<std::size_t>(array.shape(1))};
    }
    throw std::invalid_argument(std::string(name) + " must be 1-D or 2-D");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::optional<Taxonomy>> make_taxonomies(const std::vector<TaxonomySpec>& specs) {
    std::vector<std::optional<Taxonomy>> taxonomies;
    for (const TaxonomySpec& spec : specs) {
        if (spec) taxonomies.emplace_back(Taxonomy(spec->first, spec->second));
        else taxonomies.emplace_back(std::nullopt);
    }
    return taxonomies;
}

void check_node_keys(const std::vector<TaxonomySpec>& qi_taxonomies,
                     const std::vector<std::vector<std::int32_t>>& node_keys, std::size_t cols) {
    if (qi_taxonomies.size() != cols || node_keys.size() != cols) {
        throw std::invalid_argument("qi_taxonomies and node_keys need one entry per quasi-identifier column");
    }
    for (std::size_t i = 0; i < cols; ++i) {
        if (qi_taxonomies[i] && node_keys[i].size() != qi_taxonomies[i]->first.size()) {
            throw std::invalid_argument("node_keys of a taxonomy column needs one key per node");
        }
    }
}

}  // namespace proxanon::bindings
