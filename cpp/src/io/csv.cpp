#include "proxanon/io/csv.hpp"

#include <charconv>
#include <cstring>

namespace proxanon::csv {

namespace {

constexpr char kQuote = '"';

bool blank(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/// Quotes in [p, q).
std::size_t quotes(const char* p, const char* q) {
    std::size_t count = 0;
    while (p < q) {
        const void* hit = std::memchr(p, kQuote, static_cast<std::size_t>(q - p));
        if (hit == nullptr) break;
        ++count;
        p = static_cast<const char*>(hit) + 1;
    }
    return count;
}

}  // namespace

Records scan(std::string_view data, std::size_t start) {
    Records out;
    const char* base = data.data();
    const char* const last = base + data.size();
    const char* p = base + std::min(start, data.size());
    std::int64_t line = 1;
    bool first = true;
    while (p <= last) {
        const char* record = p;
        const std::int64_t record_line = line;
        std::size_t open = 0;  // quotes so far in the record
        const char* stop;
        for (;;) {
            const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(last - p));
            stop = hit == nullptr ? last : static_cast<const char*>(hit);
            open += quotes(p, stop);
            if (first) {
                out.crlf = stop > record && stop[-1] == '\r';
                first = false;
            }
            if (open % 2 == 0) break;
            if (stop == last) throw Error(Problem::Unclosed, record_line);
            p = stop + 1;
            ++line;
        }
        const char* end = stop > record && stop[-1] == '\r' ? stop - 1 : stop;
        bool filled = false;
        for (const char* c = record; c < end && !filled; ++c) filled = !blank(static_cast<unsigned char>(*c));
        if (filled) {
            out.begin.push_back(record - base);
            out.end.push_back(end - base);
            out.line.push_back(record_line);
        }
        if (stop == last) break;
        p = stop + 1;
        ++line;
    }
    if (out.begin.empty()) throw Error(Problem::Empty, 0);
    return out;
}

void split(std::string_view data, std::int64_t b, std::int64_t e, char sep, std::int64_t line,
           std::vector<std::int64_t>& bounds) {
    bounds.clear();
    const char* base = data.data();
    const char* p = base + b;
    const char* const end = base + e;
    if (std::memchr(p, kQuote, static_cast<std::size_t>(end - p)) == nullptr) {
        for (;;) {
            const void* hit = std::memchr(p, sep, static_cast<std::size_t>(end - p));
            const char* stop = hit == nullptr ? end : static_cast<const char*>(hit);
            bounds.push_back(p - base);
            bounds.push_back(stop - base);
            if (stop == end) return;
            p = stop + 1;
        }
    }
    for (;;) {
        const char* stop = p;
        if (p < end && *p == kQuote) {
            // A quoted field: "" is a quote inside it; the first lone quote closes it.
            const char* q = p + 1;
            const char* closed = nullptr;
            while (q < end) {
                if (*q != kQuote) {
                    ++q;
                } else if (q + 1 < end && q[1] == kQuote) {
                    q += 2;
                } else {
                    closed = q;
                    break;
                }
            }
            stop = closed == nullptr ? p : closed + 1;
        } else {
            const void* hit = std::memchr(p, sep, static_cast<std::size_t>(end - p));
            stop = hit == nullptr ? end : static_cast<const char*>(hit);
        }
        bounds.push_back(p - base);
        bounds.push_back(stop - base);
        if (stop == end) return;
        if (*stop != sep) {
            const std::size_t shown = std::min<std::size_t>(10, static_cast<std::size_t>(end - stop));
            throw Error(Problem::BadQuote, line, 0, std::string(stop, shown));
        }
        p = stop + 1;
    }
}

std::string_view value(std::string_view field, std::string& scratch, bool strip) {
    std::string_view out = field;
    if (field.size() >= 2 && field.front() == kQuote && field.back() == kQuote) {
        scratch.clear();
        for (std::size_t i = 1; i + 1 < field.size(); ++i) {
            scratch.push_back(field[i]);
            if (field[i] == kQuote && i + 2 < field.size() && field[i + 1] == kQuote) ++i;
        }
        out = scratch;
    }
    if (!strip) return out;
    std::size_t lo = 0, hi = out.size();
    while (lo < hi && blank(static_cast<unsigned char>(out[lo]))) ++lo;
    while (hi > lo && blank(static_cast<unsigned char>(out[hi - 1]))) --hi;
    return out.substr(lo, hi - lo);
}

std::string write(std::string_view data, const Records& records, const std::int64_t* rows,
                  std::size_t n_rows, const Layout& layout, Interrupt* interrupt) {
    std::string out;
    std::vector<std::int64_t> bounds;
    std::vector<const Replaced*> replaced(layout.fields, nullptr);
    for (const Replaced& r : layout.replaced) replaced.at(r.column) = &r;
    const std::size_t n_records = records.begin.size() - 1;
    char digits[24];
    for (std::size_t i = 0; i < n_rows; ++i) {
        if ((i & 0xffff) == 0) poll(interrupt);
        const auto row = static_cast<std::size_t>(rows[i]);
        if (row >= n_records) throw std::out_of_range("a written row is not a data record");
        split(data, records.begin[row + 1], records.end[row + 1], layout.sep, records.line[row + 1], bounds);
        if (bounds.size() / 2 != layout.fields) {
            throw Error(Problem::FieldCount, records.line[row + 1], static_cast<std::int64_t>(bounds.size() / 2));
        }
        for (std::size_t j = 0; j < layout.order.size(); ++j) {
            if (j > 0) out.push_back(layout.sep);
            const std::size_t f = layout.order[j];
            if (f >= layout.fields) {
                const std::int64_t v = layout.appended[f - layout.fields][i];
                const auto done = std::to_chars(digits, digits + sizeof digits, v);
                out.append(digits, done.ptr);
            } else if (replaced[f] != nullptr) {
                out.append((*replaced[f]->texts)[static_cast<std::size_t>(replaced[f]->codes[i])]);
            } else {
                out.append(data.data() + bounds[2 * f], static_cast<std::size_t>(bounds[2 * f + 1] - bounds[2 * f]));
            }
        }
        out.append(layout.newline);
    }
    return out;
}

}  // namespace proxanon::csv
