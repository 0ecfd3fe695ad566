// C++ unit tests of io/csv.hpp, with no Python: run by ctest. Records found with their lines
// (blank lines skipped, quoted line ends kept, "\r\n" noted), fields split around quotes,
// values unquoted and stripped, the errors with their lines, and rows written back byte for
// byte where nothing is replaced.
#include <cstdio>
#include <string>
#include <vector>

#include "proxanon/io/csv.hpp"
#include "check.hpp"

namespace {

using namespace proxanon;

std::string field(const std::string& data, const std::vector<std::int64_t>& bounds, std::size_t j) {
    return data.substr(static_cast<std::size_t>(bounds[2 * j]), static_cast<std::size_t>(bounds[2 * j + 1] - bounds[2 * j]));
}

void check_scan() {
    const std::string data = "a,b\r\n1,\"x\r\ny\"\r\n\r\n  \r\n2,z";
    const csv::Records r = csv::scan(data, 0);
    CHECK(r.crlf);
    CHECK(r.begin.size() == 3);
    CHECK(data.substr(static_cast<std::size_t>(r.begin[1]), static_cast<std::size_t>(r.end[1] - r.begin[1])) == "1,\"x\r\ny\"");
    CHECK(r.line[0] == 1 && r.line[1] == 2 && r.line[2] == 6);
    CHECK(data.substr(static_cast<std::size_t>(r.begin[2])) == "2,z");
    bool unclosed = false;
    try {
        csv::scan("a\n\"open\nmore", 0);
    } catch (const csv::Error& e) {
        unclosed = e.problem == csv::Problem::Unclosed && e.line == 2;
    }
    CHECK(unclosed);
    bool empty = false;
    try {
        csv::scan(" \n\n", 0);
    } catch (const csv::Error& e) {
        empty = e.problem == csv::Problem::Empty;
    }
    CHECK(empty);
    // A byte-order mark is skipped by `start`.
    CHECK(csv::scan("\xef\xbb\xbfh\n1\n", 3).begin[0] == 3);
}

void check_split_and_value() {
    std::vector<std::int64_t> bounds;
    const std::string plain = "1,,ab c, 2 ";
    csv::split(plain, 0, static_cast<std::int64_t>(plain.size()), ',', 1, bounds);
    CHECK(bounds.size() == 8);
    CHECK(field(plain, bounds, 1).empty() && field(plain, bounds, 3) == " 2 ");
    const std::string quoted = "\"a, b\",\"say \"\"hi\"\"\",x\"y,\"\"";
    csv::split(quoted, 0, static_cast<std::int64_t>(quoted.size()), ',', 1, bounds);
    CHECK(bounds.size() == 8);
    CHECK(field(quoted, bounds, 0) == "\"a, b\"");
    CHECK(field(quoted, bounds, 2) == "x\"y");
    CHECK(field(quoted, bounds, 3) == "\"\"");
    std::string scratch;
    const std::string said = field(quoted, bounds, 1);
    CHECK(csv::value(said, scratch) == "say \"hi\"");
    CHECK(csv::value("  \" pad \"", scratch) == "\" pad \"");  // not quoted at its first byte
    CHECK(csv::value("\" pad \"", scratch) == "pad");
    CHECK(csv::value("\" pad \"", scratch, false) == " pad ");
    bool bad = false;
    try {
        const std::string broken = "\"a\"b,c";
        csv::split(broken, 0, static_cast<std::int64_t>(broken.size()), ',', 7, bounds);
    } catch (const csv::Error& e) {
        bad = e.problem == csv::Problem::BadQuote && e.line == 7 && e.context == "b,c";
    }
    CHECK(bad);
}

void check_write() {
    const std::string data = "h1;h2;h3\n\"0;1\";02134;x\n2; 7.00 ;\"q\"\"\"\n";
    const csv::Records r = csv::scan(data, 0);
    const std::vector<std::int64_t> rows = {1, 0};
    const std::vector<std::string> texts = {"A", "\"B;\""};
    const std::vector<std::int64_t> codes = {1, 0};
    const std::vector<std::int64_t> group = {5, -3};
    csv::Layout same{';', 3, "\n", {0, 1, 2}, {}, {}};
    CHECK(csv::write(data, r, rows.data(), 2, same, nullptr) == "2; 7.00 ;\"q\"\"\"\n\"0;1\";02134;x\n");
    csv::Layout changed{';', 3, "\r\n", {2, 0, 3}, {{0, &texts, codes.data()}}, {group.data()}};
    CHECK(csv::write(data, r, rows.data(), 2, changed, nullptr) == "\"q\"\"\";\"B;\";5\r\nx;A;-3\r\n");
    bool count = false;
    try {
        const std::string short_row = "a,b\n1\n";
        const csv::Records s = csv::scan(short_row, 0);
        const std::int64_t first = 0;
        csv::Layout two{',', 2, "\n", {0, 1}, {}, {}};
        csv::write(short_row, s, &first, 1, two, nullptr);
    } catch (const csv::Error& e) {
        count = e.problem == csv::Problem::FieldCount && e.line == 2 && e.fields == 1;
    }
    CHECK(count);
}

}  // namespace

int main() {
    check_scan();
    check_split_and_value();
    check_write();
    if (failures > 0) std::fprintf(stderr, "%d check(s) failed\n", failures);
    return failures > 0 ? 1 : 0;
}
