// Bindings of io/csv.hpp: csv_records, csv_fields, csv_columns and csv_write over a bytes object held by
// Python (never copied), and CsvError, which carries the problem's kind and where it is
// (proxanon.tableio words the message).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxanon/io/csv.hpp"

#include "convert.hpp"
#include "signal_check.hpp"

using namespace proxanon;
using namespace proxanon::bindings;

namespace {

const char* const kProblems[] = {"unclosed", "fields", "quote", "empty"};

/// Distinct values each column's decoded texts are shared for (a QI column repeats a few
/// values over millions of rows); past it, every further distinct text is decoded alone.
constexpr std::size_t kSharedTexts = std::size_t{1} << 16;

/// Hashes texts and views alike, so a field is looked up without a copy.
struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

std::string_view bytes_of(const py::bytes& data) {
    char* ptr = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(data.ptr(), &ptr, &size) != 0) throw py::error_already_set();
    return {ptr, static_cast<std::size_t>(size)};
}

char separator(const std::string& sep) {
    if (sep.size() != 1) throw std::invalid_argument("the separator must be one byte");
    return sep[0];
}

csv::Records records_of(const Int64Array& begin, const Int64Array& end, const Int64Array& line) {
    csv::Records r;
    r.begin = to_vector(begin, "begin");
    r.end = to_vector(end, "end");
    r.line = to_vector(line, "line");
    if (r.begin.size() != r.end.size() || r.begin.size() != r.line.size() || r.begin.empty()) {
        throw std::invalid_argument("begin, end and line differ in length or are empty");
    }
    return r;
}

py::dict run_records(const py::bytes& data, std::size_t start) {
    const std::string_view text = bytes_of(data);
    csv::Records r;
    {
        py::gil_scoped_release release;
        r = csv::scan(text, start);
    }
    py::dict out;
    out["begin"] = to_numpy(std::move(r.begin));
    out["end"] = to_numpy(std::move(r.end));
    out["line"] = to_numpy(std::move(r.line));
    out["crlf"] = r.crlf;
    return out;
}

/// The raw fields of the record [begin, end) of `data` (starting on `line`).
py::list run_fields(const py::bytes& data, std::int64_t begin, std::int64_t end, const std::string& sep,
                    std::int64_t line) {
    const std::string_view text = bytes_of(data);
    if (begin < 0 || end < begin || static_cast<std::size_t>(end) > text.size()) {
        throw std::invalid_argument("the record is not inside data");
    }
    std::vector<std::int64_t> bounds;
    csv::split(text, begin, end, separator(sep), line, bounds);
    py::list out;
    for (std::size_t j = 0; j < bounds.size(); j += 2) {
        out.append(py::bytes(text.data() + bounds[j], static_cast<std::size_t>(bounds[j + 1] - bounds[j])));
    }
    return out;
}

/// Per column of `columns`, its value (csv::value, stripped where `strip`) in every data
/// record, decoded with `encoding`, as (codes, texts): texts[codes[i]] is record i's. Each
/// distinct value is decoded once, in the order of first appearance (past kSharedTexts
/// distinct values, each further record's value is a text of its own). Each record must
/// have `fields` fields.
py::list run_columns(const py::bytes& data, const Int64Array& begin, const Int64Array& end,
                     const Int64Array& line, const std::string& sep, std::size_t fields,
                     const std::vector<std::size_t>& columns, const std::string& encoding,
                     bool strip) {
    const std::string_view text = bytes_of(data);
    const csv::Records r = records_of(begin, end, line);
    const char s = separator(sep);
    for (const std::size_t c : columns) {
        if (c >= fields) throw std::invalid_argument("a column index is past the header's fields");
    }
    const std::size_t n = r.begin.size() - 1;
    const bool utf8 = encoding == "utf-8";
    std::vector<py::list> texts(columns.size());
    std::vector<std::vector<std::int64_t>> codes(columns.size(), std::vector<std::int64_t>(n));
    std::vector<std::unordered_map<std::string, std::int64_t, TextHash, std::equal_to<>>> seen(columns.size());
    std::vector<std::int64_t> bounds;
    std::string scratch;
    for (std::size_t i = 0; i < n; ++i) {
        if ((i & 0xffff) == 0 && PyErr_CheckSignals() != 0) throw py::error_already_set();
        csv::split(text, r.begin[i + 1], r.end[i + 1], s, r.line[i + 1], bounds);
        if (bounds.size() / 2 != fields) {
            throw csv::Error(csv::Problem::FieldCount, r.line[i + 1], static_cast<std::int64_t>(bounds.size() / 2));
        }
        for (std::size_t j = 0; j < columns.size(); ++j) {
            const std::size_t f = columns[j];
            const std::string_view cell =
                csv::value(text.substr(static_cast<std::size_t>(bounds[2 * f]),
                                       static_cast<std::size_t>(bounds[2 * f + 1] - bounds[2 * f])),
                           scratch, strip);
            const auto hit = seen[j].find(cell);
            if (hit != seen[j].end()) {
                codes[j][i] = hit->second;
                continue;
            }
            PyObject* decoded = utf8 ? PyUnicode_DecodeUTF8(cell.data(), static_cast<Py_ssize_t>(cell.size()), "strict")
                                     : PyUnicode_Decode(cell.data(), static_cast<Py_ssize_t>(cell.size()),
                                                        encoding.c_str(), "strict");
            if (decoded == nullptr) throw py::error_already_set();
            const auto code = static_cast<std::int64_t>(py::len(texts[j]));
            texts[j].append(py::reinterpret_steal<py::object>(decoded));
            if (seen[j].size() < kSharedTexts) seen[j].emplace(std::string(cell), code);
            codes[j][i] = code;
        }
    }
    py::list result;
    for (std::size_t j = 0; j < columns.size(); ++j) {
        result.append(py::make_tuple(to_numpy(std::move(codes[j])), texts[j]));
    }
    return result;
}

/// The data records `rows` written as csv::write writes them: `order` as Layout::order,
/// `replaced` per replaced field index its texts (quoted, encoded) and an index per row,
/// `appended` the integer columns.
py::bytes run_write(const py::bytes& data, const Int64Array& begin, const Int64Array& end,
                    const Int64Array& line, const std::string& sep, std::size_t fields,
                    const Int64Array& rows, const std::vector<std::size_t>& order,
                    const std::vector<std::pair<std::size_t, std::pair<std::vector<std::string>, Int64Array>>>& replaced,
                    const std::vector<Int64Array>& appended, const std::string& newline) {
    const std::string_view text = bytes_of(data);
    const csv::Records r = records_of(begin, end, line);
    const std::vector<std::int64_t> picked = to_vector(rows, "rows");
    csv::Layout layout{separator(sep), fields, newline, order, {}, {}};
    std::vector<std::vector<std::int64_t>> codes;
    codes.reserve(replaced.size());
    for (const auto& [column, entry] : replaced) {
        codes.push_back(to_vector(entry.second, "codes"));
        if (column >= fields || codes.back().size() != picked.size()) {
            throw std::invalid_argument("a replaced column is past the header or has not one code per row");
        }
        for (const std::int64_t c : codes.back()) {
            if (c < 0 || static_cast<std::size_t>(c) >= entry.first.size()) throw std::invalid_argument("a code is out of range");
        }
        layout.replaced.push_back({column, &entry.first, codes.back().data()});
    }
    std::vector<std::vector<std::int64_t>> ints;
    ints.reserve(appended.size());
    for (const Int64Array& a : appended) {
        ints.push_back(to_vector(a, "appended"));
        if (ints.back().size() != picked.size()) throw std::invalid_argument("an appended column has not one value per row");
        layout.appended.push_back(ints.back().data());
    }
    for (const std::size_t f : order) {
        if (f >= fields + appended.size()) throw std::invalid_argument("order names a field that is not there");
    }
    SignalCheck signals;
    std::string out = signals.run([&] {
        py::gil_scoped_release release;
        return csv::write(text, r, picked.data(), picked.size(), layout, signals.interrupt());
    });
    return py::bytes(out);
}

}  // namespace

void register_csv(py::module_& mod) {
    static py::exception<csv::Error> error(mod, "CsvError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const csv::Error& e) {
            const py::tuple args = py::make_tuple(kProblems[static_cast<int>(e.problem)], e.line, e.fields,
                                                  py::bytes(e.context));
            PyErr_SetObject(error.ptr(), args.ptr());
        }
    });
    mod.def("csv_records", &run_records, py::arg("data"), py::arg("start") = 0,
            "The records of CSV bytes (io/csv.hpp): begin, end and line (1-based) of every record "
            "holding more than white space, header first, and crlf; CsvError('unclosed', line) "
            "where a quoted field is never closed, ('empty', 0) where no record holds anything.");
    mod.def("csv_fields", &run_fields, py::arg("data"), py::arg("begin"), py::arg("end"), py::arg("sep"),
            py::arg("line"), "The raw fields (bytes) of one record; CsvError('quote', ...) as csv_columns.");
    mod.def("csv_columns", &run_columns, py::arg("data"), py::arg("begin"), py::arg("end"),
            py::arg("line"), py::arg("sep"), py::arg("fields"), py::arg("columns"), py::arg("encoding"),
            py::arg("strip") = true,
            "Per column index, (codes, texts): the unquoted (and, where strip, stripped) text of that "
            "field in every data record is texts[codes[i]], each distinct text decoded once; CsvError('fields', line, count) for a record without `fields` fields, "
            "('quote', line, 0, bytes after) for a quoted field not closed before a separator.");
    mod.def("csv_write", &run_write, py::arg("data"), py::arg("begin"), py::arg("end"), py::arg("line"),
            py::arg("sep"), py::arg("fields"), py::arg("rows"), py::arg("order"), py::arg("replaced"),
            py::arg("appended"), py::arg("newline"),
            "The data records `rows` as bytes, each field as read except the replaced ones, "
            "then the appended integer columns, in `order`; one newline after each.");
}
