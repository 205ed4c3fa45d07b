// CSV data: a numeric table, one example per line, as a training set — the
// feature columns become the rows of x and one column (by name or index)
// becomes the targets: class labels (for softmax cross-entropy) or values.
//
//   sepal_length,sepal_width,petal_length,petal_width,species
//   5.1,3.5,1.4,0.2,0
//
// The first line is a header when every field on it is text (CsvHeader::Auto;
// a line mixing numbers and text is an error that asks which it is). Fields
// may be quoted ("a,b"; "" is a quote), spaces around fields are ignored, CRLF
// line ends and a UTF-8 byte order mark are accepted, blank lines are skipped.
// Every value must be a finite decimal number (no hex, inf or nan); errors
// name the source, line and column ("data.csv:7:12: field 3 'abc' is not a
// number") and nothing is returned from a malformed file.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gltrain/file_io.hpp"
#include "gltrain/format_error.hpp"
#include "gltrain/host_matrix.hpp"

namespace gltrain {

enum class CsvHeader { Auto, Yes, No };

// How loadCsvFile reads a CSV file.
struct CsvOptions {
    // Whether the first row is a header: detected (Auto), present or absent.
    CsvHeader header = CsvHeader::Auto;
    // The field separator.
    char delimiter = ',';
    // The target column: a header name, or an index (0-based; negative counts
    // from the end, so -1 is the last). Empty: no targets, every column is a feature.
    std::string labelColumn = "-1";
    // Targets are class labels (integers in [0, numClasses)) or, when false,
    // any finite values (regression, binary cross-entropy).
    bool classLabels = true;
    int numClasses = 0;  // > 0: a label must be below it
    float scale = 1.0f;  // every feature is multiplied by it (e.g. 1/255 for pixels)
    long limit = 0;      // > 0: only the first `limit` data rows
};

// A CSV file read into features and targets.
struct CsvData {
    std::vector<std::string> header;  // column names; empty without a header row
    int labelColumn = -1;             // the target column's index, -1 without one
    HostMatrix x;                     // data rows x feature columns (scaled)
    std::vector<int> labels;          // the label column as class labels (classLabels)...
    HostMatrix values;                // ...or as a rows x 1 matrix of values; both empty without a label column
};

namespace csv_detail {

struct Field {
    std::string text;  // unquoted, trimmed
    size_t column;     // 1-based character column where the field starts
};

inline bool isSpace(char c) { return c == ' ' || c == '\t'; }

// Splits one line (no line end) into fields; `where` prefixes errors.
inline void split(std::string_view line, char delimiter, const std::string& where, std::vector<Field>& out) {
    out.clear();
    size_t i = 0;
    for (;;) {
        while (i < line.size() && isSpace(line[i])) ++i;
        Field f{{}, i + 1};
        if (i < line.size() && line[i] == '"') {
            ++i;
            for (;;) {
                if (i >= line.size())
                    throw FormatError(where + ":" + std::to_string(f.column) + ": unterminated quoted field");
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        f.text += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                f.text += line[i++];
            }
            while (i < line.size() && isSpace(line[i])) ++i;
            if (i < line.size() && line[i] != delimiter)
                throw FormatError(where + ":" + std::to_string(i + 1) + ": text after a closing quote");
        } else {
            const size_t start = i;
            while (i < line.size() && line[i] != delimiter) ++i;
            size_t end = i;
            while (end > start && isSpace(line[end - 1])) --end;
            f.text.assign(line.substr(start, end - start));
        }
        out.push_back(std::move(f));
        if (i >= line.size()) return;
        ++i;  // the delimiter
    }
}

// A finite decimal number: [+-] digits [. digits] [(e|E) [+-] digits], at
// least one digit in the mantissa. strtod alone would also take hex, inf,
// nan and leading blanks.
inline bool parseNumber(const std::string& s, double& value) {
    size_t i = 0, digits = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        size_t e = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++e;
        if (e == 0) return false;
    }
    if (i != s.size()) return false;
    value = std::strtod(s.c_str(), nullptr);
    return true;
}

// Text from the file as a message shows it: control bytes escaped (\0, \t,
// \x1b...), so a NUL cannot cut the message short nor an escape sequence
// reach the terminal. Other bytes, UTF-8 included, are kept.
inline std::string printable(std::string_view s) {
    std::string out;
    for (char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c != 0x7f) {
            out += ch;
        } else if (c == 0) {
            out += "\\0";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

// A cell in a message: quoted, at most 40 bytes of it, escaped.
inline std::string quoted(const std::string& s) {
    return "'" + printable(s.size() > 40 ? std::string_view(s).substr(0, 40) : std::string_view(s)) +
           (s.size() > 40 ? "..." : "") + "'";
}

// The label column's index among `cols` columns (see CsvOptions::labelColumn).
inline int resolveColumn(const std::string& spec, const std::vector<std::string>& header, size_t cols,
                         const std::string& source) {
    for (size_t c = 0; c < header.size(); ++c)
        if (header[c] == spec) return int(c);
    double v = 0;
    if (!parseNumber(spec, v) || v != std::floor(v)) {
        if (header.empty())
            throw FormatError("CSV " + source + ": label column " + quoted(spec) +
                              " is not an index and the file has no header row to name it");
        std::string names;
        for (auto& h : header) names += (names.empty() ? "" : ", ") + printable(h);
        throw FormatError("CSV " + source + ": no column named " + quoted(spec) + " (columns: " + names + ")");
    }
    const double index = v < 0 ? double(cols) + v : v;
    if (!(index >= 0 && index < double(cols)))
        throw FormatError("CSV " + source + ": label column " + printable(spec) + " is out of range (the file has " +
                          std::to_string(cols) + " columns)");
    return int(index);
}

}  // namespace csv_detail

// Parses CSV text; `source` names it in errors (the file name).
inline CsvData parseCsv(std::string_view text, const std::string& source = "<csv>", const CsvOptions& o = {}) {
    using namespace csv_detail;
    if (!(std::isfinite(o.scale))) throw ArgumentError("CSV " + source + ": scale must be finite");
    if (o.delimiter == '"' || o.delimiter == '\n' || o.delimiter == '\r' || isSpace(o.delimiter))
        throw ArgumentError("CSV " + source + ": the delimiter cannot be a quote, a blank or a line end");
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

    CsvData d;
    std::vector<Field> fields;
    std::vector<float> x;
    std::vector<int> labels;
    std::vector<float> values;
    size_t cols = 0;     // fields per line, from the first line
    long firstLine = 0;  // the line that set cols
    bool first = true;
    long rows = 0;
    long lineNo = 0;
    size_t pos = 0;
    while (pos < text.size() && (o.limit <= 0 || rows < o.limit)) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        bool blank = true;
        for (char c : line) blank = blank && isSpace(c);
        if (blank) continue;
        const std::string where = source + ":" + std::to_string(lineNo);
        split(line, o.delimiter, where, fields);

        if (first) {
            first = false;
            cols = fields.size();
            firstLine = lineNo;
            size_t numeric = 0;
            double v;
            for (auto& f : fields) numeric += parseNumber(f.text, v) ? 1 : 0;
            bool header = o.header == CsvHeader::Yes;
            if (o.header == CsvHeader::Auto) {
                if (numeric != 0 && numeric != fields.size())
                    throw FormatError(where +
                                      ": the first line mixes numbers and text; say whether it is a header "
                                      "(CsvHeader::Yes / No; gltrain: --header / --no-header)");
                header = numeric == 0;
            }
            if (!o.labelColumn.empty()) {
                if (header)
                    for (auto& f : fields) d.header.push_back(f.text);
                d.labelColumn = resolveColumn(o.labelColumn, d.header, cols, source);
                if (cols < 2) throw FormatError(where + ": one column is the label and no column is left for features");
            } else if (header) {
                for (auto& f : fields) d.header.push_back(f.text);
            }
            if (header) continue;
        }
        if (fields.size() != cols)
            throw FormatError(where + ": " + std::to_string(fields.size()) + " fields, expected " +
                              std::to_string(cols) + " (as on line " + std::to_string(firstLine) + ")");
        for (size_t c = 0; c < cols; ++c) {
            const Field& f = fields[c];
            const std::string at = where + ":" + std::to_string(f.column) + ": field " + std::to_string(c + 1) +
                                   (d.header.empty() ? "" : " (" + printable(d.header[c]) + ")");
            double v = 0;
            if (f.text.empty()) throw FormatError(at + " is empty");
            if (!parseNumber(f.text, v)) throw FormatError(at + " " + quoted(f.text) + " is not a number");
            if (!std::isfinite(float(v)))
                throw FormatError(at + " " + quoted(f.text) + " is out of range for a 32-bit float");
            if (int(c) != d.labelColumn) {
                x.push_back(float(v) * o.scale);
            } else if (!o.classLabels) {
                values.push_back(float(v));
            } else {
                if (!(v >= 0 && v == std::floor(v) && v <= double(std::numeric_limits<int>::max())))
                    throw FormatError(at + ": label " + quoted(f.text) + " is not a class index (an integer >= 0)");
                if (o.numClasses > 0 && v >= o.numClasses)
                    throw FormatError(at + ": label " + f.text + " is out of range 0.." +
                                      std::to_string(o.numClasses - 1));
                labels.push_back(int(v));
            }
        }
        if (++rows > std::numeric_limits<int>::max()) throw FormatError("CSV " + source + ": too many rows");
    }
    if (rows == 0) throw FormatError("CSV " + source + ": no data rows");
    const int features = int(cols) - (d.labelColumn >= 0 ? 1 : 0);
    d.x = HostMatrix(int(rows), features, std::move(x));
    if (d.labelColumn >= 0) {
        if (o.classLabels) d.labels = std::move(labels);
        else d.values = HostMatrix(int(rows), 1, std::move(values));
    }
    return d;
}

// Reads and parses a CSV file. The path must name a regular file (readFile:
// a device, FIFO or directory is refused before it is opened).
inline CsvData loadCsvFile(const std::string& path, const CsvOptions& o = {}) {
    const std::vector<uint8_t> bytes = readFile(path, "CSV");
    return parseCsv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path, o);
}

}  // namespace gltrain
