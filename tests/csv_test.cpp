// The CSV reader (gltrain/csv.hpp): header detection, label columns, quoting,
// scaling, limits, and an error naming source:line:column for every kind of
// malformed input. Parses strings only (this suite also runs in Chromium).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#ifndef __EMSCRIPTEN__
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#endif

#include "gltrain/csv.hpp"

// A namespace per file: the suite is a unity build (tests/CMakeLists.txt).
namespace {
namespace csv_test {

using namespace gltrain;

namespace {

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("(not a FormatError) ") + e.what();
    }
    return "(no exception)";
}

CsvOptions withLabel(const std::string& column) {
    CsvOptions o;
    o.labelColumn = column;
    return o;
}

}  // namespace

TEST(Csv, HeaderDetectedAndLastColumnIsTheLabel) {
    CsvData d = parseCsv("a,b,label\n1,2,0\n3.5,-4e-1,2\n", "t.csv");
    ASSERT_EQ(d.header, (std::vector<std::string>{"a", "b", "label"}));
    EXPECT_EQ(d.labelColumn, 2);
    ASSERT_EQ(d.x.rows, 2);
    ASSERT_EQ(d.x.cols, 2);
    EXPECT_EQ(d.x.data, (std::vector<float>{1, 2, 3.5f, -0.4f}));
    EXPECT_EQ(d.labels, (std::vector<int>{0, 2}));
    EXPECT_EQ(d.values.rows, 0);
}

TEST(Csv, WithoutHeaderTheFirstLineIsData) {
    CsvData d = parseCsv("1,2,1\n3,4,0\n", "t.csv");
    EXPECT_TRUE(d.header.empty());
    EXPECT_EQ(d.x.rows, 2);
    EXPECT_EQ(d.labels, (std::vector<int>{1, 0}));
}

TEST(Csv, LabelColumnByNameIndexAndFromTheEnd) {
    const std::string text = "y,a,b\n1,10,20\n0,30,40\n";
    for (const char* spec : {"y", "0", "-3"}) {
        CsvData d = parseCsv(text, "t.csv", withLabel(spec));
        EXPECT_EQ(d.labelColumn, 0) << spec;
        EXPECT_EQ(d.labels, (std::vector<int>{1, 0})) << spec;
        EXPECT_EQ(d.x.data, (std::vector<float>{10, 20, 30, 40})) << spec;
    }
    CsvData middle = parseCsv(text, "t.csv", withLabel("-2"));
    EXPECT_EQ(middle.labelColumn, 1);
    EXPECT_EQ(middle.x.data, (std::vector<float>{1, 20, 0, 40}));
}

TEST(Csv, NoLabelColumnMakesEveryColumnAFeature) {
    CsvData d = parseCsv("1,2,3\n", "t.csv", withLabel(""));
    EXPECT_EQ(d.labelColumn, -1);
    EXPECT_EQ(d.x.cols, 3);
    EXPECT_TRUE(d.labels.empty());
}

TEST(Csv, ValuesInsteadOfClassLabels) {
    CsvOptions o;
    o.classLabels = false;
    CsvData d = parseCsv("x,y\n1,0.25\n2,-1.5\n", "t.csv", o);
    EXPECT_TRUE(d.labels.empty());
    ASSERT_EQ(d.values.rows, 2);
    ASSERT_EQ(d.values.cols, 1);
    EXPECT_EQ(d.values.data, (std::vector<float>{0.25f, -1.5f}));
}

TEST(Csv, QuotesBlanksCrlfBomAndBlankLines) {
    const std::string text = "\xEF\xBB\xBF\"first, name\",\"b\"\"q\",label\r\n\r\n  1 , \"2\" ,1\r\n\n3,4,0";
    CsvData d = parseCsv(text, "t.csv");
    EXPECT_EQ(d.header, (std::vector<std::string>{"first, name", "b\"q", "label"}));
    EXPECT_EQ(d.x.data, (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(d.labels, (std::vector<int>{1, 0}));
}

TEST(Csv, ScaleLimitDelimiterAndForcedHeader) {
    CsvOptions o;
    o.scale = 0.5f;
    o.limit = 2;
    o.delimiter = ';';
    o.header = CsvHeader::Yes;  // numeric names are still a header when told so
    CsvData d = parseCsv("0;1;2\n2;4;1\n6;8;0\n10;12;1\n", "t.csv", o);
    EXPECT_EQ(d.header, (std::vector<std::string>{"0", "1", "2"}));
    EXPECT_EQ(d.x.data, (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(d.labels, (std::vector<int>{1, 0}));
}

TEST(Csv, ErrorsNameLineAndColumn) {
    CsvOptions classes10;
    classes10.numClasses = 10;
    CsvOptions noHeader;
    noHeader.header = CsvHeader::No;
    struct Row {
        std::string text;
        CsvOptions options;
        std::string expected;
    };
    const Row rows[] = {
        {"a,1,label\n1,2,3\n", {}, "d.csv:1: the first line mixes numbers and text"},
        {"a,b,c\n1,2,3\n4,5\n", {}, "d.csv:3: 2 fields, expected 3 (as on line 1)"},
        {"a,b,c\n1,2,3\n1,2,3,4\n", {}, "d.csv:3: 4 fields, expected 3 (as on line 1)"},
        {"a,b,c\n1, abc,3\n", {}, "d.csv:2:4: field 2 (b) 'abc' is not a number"},
        {"1,2,3\n4,,6\n", {}, "d.csv:2:3: field 2 is empty"},
        {"1,2,3\n4,5,2.5\n", {}, "d.csv:2:5: field 3: label '2.5' is not a class index (an integer >= 0)"},
        {"1,2,3\n4,5,-1\n", {}, "label '-1' is not a class index"},
        {"1,2,3\n4,5,10\n", classes10, "d.csv:2:5: field 3: label 10 is out of range 0..9"},
        {"1,2,0\n4,nan,1\n", {}, "d.csv:2:3: field 2 'nan' is not a number"},
        {"1,2,0\n4,inf,1\n", {}, "'inf' is not a number"},
        {"1,2,0\n4,0x10,1\n", {}, "'0x10' is not a number"},
        {"1,2,0\n4,1e,1\n", {}, "'1e' is not a number"},
        {"1,2,0\n4,.,1\n", {}, "'.' is not a number"},
        {"1,2,0\n4,1e39,1\n", {}, "d.csv:2:3: field 2 '1e39' is out of range for a 32-bit float"},
        {"1,\"2,0\n", {}, "d.csv:1:3: unterminated quoted field"},
        {"1,\"2\"x,0\n", {}, "d.csv:1:6: text after a closing quote"},
        {"a,b,c\n", {}, "CSV d.csv: no data rows"},
        {"", {}, "CSV d.csv: no data rows"},
        {"\n  \n", {}, "CSV d.csv: no data rows"},
        {"a,b,c\n1,2,3\n", withLabel("z"), "CSV d.csv: no column named 'z' (columns: a, b, c)"},
        {"1,2,3\n", withLabel("y"), "label column 'y' is not an index and the file has no header row"},
        {"1,2,3\n", withLabel("3"), "label column 3 is out of range (the file has 3 columns)"},
        {"1,2,3\n", withLabel("-4"), "label column -4 is out of range"},
        {"label\n1\n", {}, "d.csv:1: one column is the label and no column is left for features"},
        {"a,b,c\n1,2,3\n", noHeader, "d.csv:1:1: field 1 'a' is not a number"},
        // Control bytes in a quoted cell are escaped: a NUL no longer cuts the message short.
        {std::string("1,2,0\n4,a\0b,1\n", 14), {}, "d.csv:2:3: field 2 'a\\0b' is not a number"},
        {std::string("1,2,0\n4,\"\0\",1\n", 14), {}, "d.csv:2:3: field 2 '\\0' is not a number"},
        {"1,2,0\n4,\x1b[31mred,1\n", {}, "field 2 '\\x1b[31mred' is not a number"},
        {"1,2,0\n4,\"a\tb\x7f\",1\n", {}, "field 2 'a\\tb\\x7f' is not a number"},
        {std::string("a,b\0c,y\n1,x,2\n", 15), {}, "d.csv:2:3: field 2 (b\\0c) 'x' is not a number"},
        {std::string("a,b\0c\n1,2\n", 11), withLabel("z"), "no column named 'z' (columns: a, b\\0c)"},
        {std::string("1,2,0\n4,") + std::string(50, '\0') + ",1\n",
         {},
         "field 2 '\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0"
         "\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0...' is not a number"},
    };
    for (const Row& r : rows) {
        const std::string got = errorOf([&] { parseCsv(r.text, "d.csv", r.options); });
        EXPECT_NE(got.find(r.expected), std::string::npos)
            << "input: " << r.text << "\nexpected: " << r.expected << "\ngot: " << got;
    }
}

#ifndef __EMSCRIPTEN__
TEST(CsvFile, DevicesFifosAndDirectoriesAreRefusedUnread) {
    char tmpl[] = "/tmp/gltrain_csv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, fifo = dir + "/rows.csv";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    // /dev/zero never ends, and opening a FIFO with no writer would wait for one.
    for (const std::string& path : {std::string("/dev/zero"), fifo, dir}) {
        try {
            loadCsvFile(path);
            ADD_FAILURE() << path << ": no error";
        } catch (const IoError& e) {
            const std::string why = path == dir    ? "is a directory"
                                    : path == fifo ? "is a FIFO"
                                                   : "is a character device";
            EXPECT_NE(std::string(e.what()).find("CSV " + path + ": " + why), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(", not a regular file"), std::string::npos) << e.what();
        }
    }
    unlink(fifo.c_str());
    rmdir(dir.c_str());
}
#endif

TEST(Csv, BadOptionsAreArgumentErrors) {
    CsvOptions o;
    o.delimiter = '"';
    EXPECT_THROW(parseCsv("1,2\n", "t.csv", o), ArgumentError);
    o = {};
    o.scale = std::numeric_limits<float>::infinity();
    EXPECT_THROW(parseCsv("1,2\n", "t.csv", o), ArgumentError);
}

}  // namespace csv_test
}  // namespace
