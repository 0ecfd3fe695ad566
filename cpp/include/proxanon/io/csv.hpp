// CSV files as the command line reads and writes them (docs/design/architecture.md#files):
// records found in the raw bytes, fields split where a column is read or a row written, and
// every field that is not replaced written back with the bytes it was read with.
// Invariant: the bytes between two records' offsets are the file's (nothing is decoded or
// normalized here); a record is a line, or several where a quoted field holds a line end.
// Cost: scan() reads every byte once (memchr for line ends and quotes); split() O(record);
// columns() and write() split each record once. Memory: three int64 per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proxanon/common/interrupt.hpp"

namespace proxanon::csv {

/// Why bytes cannot be read as CSV (the words of the message are the caller's).
enum class Problem : int {
    Unclosed = 0,    ///< a quoted field is never closed (`line`: where its record starts)
    FieldCount = 1,  ///< a record has `fields` fields, not the header's
    BadQuote = 2,    ///< a quoted field is not closed right before `context`
    Empty = 3,       ///< no record at all
};

struct Error : std::runtime_error {
    Error(Problem p, std::int64_t at_line, std::int64_t count = 0, std::string after = {})
        : std::runtime_error("CSV"), problem(p), line(at_line), fields(count), context(std::move(after)) {}
    Problem problem;
    std::int64_t line;
    std::int64_t fields;
    std::string context;
};

/// Every record that holds more than white space, header first: its bytes [begin, end)
/// without the line end (and without the '\r' of "\r\n"), and the 1-based line it starts on.
/// A line with an odd number of quotes goes on to the next one. `crlf`: the first line ends
/// with "\r\n". `start`: where the first record may begin (after a byte-order mark).
struct Records {
    std::vector<std::int64_t> begin, end, line;
    bool crlf = false;
};

Records scan(std::string_view data, std::size_t start);

/// The fields of the record [b, e) as offset pairs appended to `bounds` (cleared first): a
/// field starting with a quote runs to its closing quote ("" inside is one quote), any other
/// to the next separator. Throws Error(BadQuote) where a closing quote is not followed by
/// the separator or the record's end.
void split(std::string_view data, std::int64_t b, std::int64_t e, char sep, std::int64_t line,
           std::vector<std::int64_t>& bounds);

/// A field as the library reads it: unquoted where quoted, white space around it removed
/// where `strip`. The view is into `field` where nothing is unquoted, else into `scratch`.
std::string_view value(std::string_view field, std::string& scratch, bool strip = true);

/// A column the writer replaces: per written row the index of its text, the texts already
/// quoted and encoded.
struct Replaced {
    std::size_t column;
    const std::vector<std::string>* texts;
    const std::int64_t* codes;
};

/// What write() writes of each row: `order` lists, per output field, a source field index
/// (below `fields`) or fields + j for the j-th appended integer column.
struct Layout {
    char sep;
    std::size_t fields;  ///< the header's field count: every record must have as many
    std::string newline;
    std::vector<std::size_t> order;
    std::vector<Replaced> replaced;
    std::vector<const std::int64_t*> appended;  ///< per appended column, a value per written row
};

/// The records `rows` (indices into the data records of `records`, header excluded) written
/// as `layout` says, each ending with its newline. Polls `interrupt` every 64k rows.
std::string write(std::string_view data, const Records& records, const std::int64_t* rows,
                  std::size_t n_rows, const Layout& layout, Interrupt* interrupt);

}  // namespace proxanon::csv
