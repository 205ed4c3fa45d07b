// Where the command line's data comes from: Fashion-MNIST as Debian installs
// it, a directory of IDX files named as MNIST names them, a pair of IDX files,
// a CSV file, or a text file (text:FILE, byte tokens for a sequence model) —
// turned into the rows and targets a given model takes.
#pragma once
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "args.hpp"
#include "gltrain/csv.hpp"
#include "gltrain/idx.hpp"
#include "gltrain/sequential.hpp"
#include "gltrain/text_data.hpp"

namespace gltrain::cli {

namespace data_detail {
inline bool isCsv(const std::string& path) {
    return path.size() >= 4 &&
           (path.compare(path.size() - 4, 4, ".csv") == 0 || path.compare(path.size() - 4, 4, ".CSV") == 0);
}
// "text:FILE": the file's bytes as tokens.
inline bool isText(const std::string& data) { return data.compare(0, 5, "text:") == 0; }
}  // namespace data_detail

struct DataOptions {
    std::string data;            // --data: "fashion-mnist", a directory of IDX files, a .csv file or text:FILE
    std::string images, labels;  // --images / --labels: IDX files (instead of --data)
    std::string split;           // --split: train or test (IDX directories)
    std::string labelColumn;     // --label-column (CSV); empty: the command's default
    CsvHeader header = CsvHeader::Auto;
    std::optional<float> scale;  // --scale; default 1/255 for IDX images, 1 for CSV
    long limit = 0;              // --limit: the first N rows only
    long windows = 0;            // text, train split: the windows to draw (0: one epoch's; train --steps sets it)
};

// The data options every data-reading command accepts (not formatted: clang-format would take
// the macro's last option for a braced block).
// clang-format off
#define GLTRAIN_CLI_DATA_OPTIONS                                                                                  \
    {"--data", true}, {"--images", true}, {"--labels", true}, {"--split", true}, {"--label-column", true},      \
        {"--header", false}, {"--no-header", false}, {"--scale", true}, {"--limit", true}
// clang-format on

inline DataOptions dataOptions(const Args& a, const char* defaultSplit) {
    DataOptions d;
    d.data = a.value("--data");
    d.images = a.value("--images");
    d.labels = a.value("--labels");
    if (a.has("--data") && (a.has("--images") || a.has("--labels")))
        throw UsageError("give --data or --images/--labels, not both");
    if (!a.has("--data") && !a.has("--images"))
        throw UsageError("no data: give --data fashion-mnist|DIR|FILE.csv|text:FILE, or --images FILE [--labels FILE]");
    if (a.has("--labels") && !a.has("--images")) throw UsageError("--labels needs --images");
    if ((a.has("--data") && d.data.empty()) || (a.has("--images") && d.images.empty()))
        throw UsageError("the data path is empty");
    // What --data names is settled here, before the model is built: a missing
    // path is a runtime error naming it, a path of another kind a usage error.
    if (data_detail::isText(d.data)) {
        struct stat st;
        const std::string file = d.data.substr(5);
        if (file.empty()) throw UsageError("--data text:FILE: the path is empty");
        if (::stat(file.c_str(), &st) != 0) throw IoError("--data " + d.data + ": " + std::strerror(errno));
        if (!S_ISREG(st.st_mode)) throw UsageError("--data " + d.data + ": not a regular file");
    } else if (!d.data.empty() && d.data != "fashion-mnist") {
        struct stat st;
        if (::stat(d.data.c_str(), &st) != 0) throw IoError("--data " + d.data + ": " + std::strerror(errno));
        if (!S_ISDIR(st.st_mode) && !data_detail::isCsv(d.data))
            throw UsageError("--data " + d.data +
                             ": not fashion-mnist, a directory of IDX files or a *.csv file "
                             "(IDX files: --images FILE --labels FILE)");
    }
    if (a.has("--split") && (d.data.empty() || data_detail::isCsv(d.data)))
        throw UsageError("--split is for fashion-mnist, a directory of IDX files or text:FILE");
    d.split = a.choice("--split", defaultSplit, {"train", "test"});
    d.labelColumn = a.value("--label-column");
    if (a.has("--header") && a.has("--no-header")) throw UsageError("give --header or --no-header, not both");
    d.header = a.has("--header") ? CsvHeader::Yes : a.has("--no-header") ? CsvHeader::No : CsvHeader::Auto;
    if ((d.header != CsvHeader::Auto || a.has("--label-column")) && !data_detail::isCsv(d.data))
        throw UsageError("--header, --no-header and --label-column are for CSV files (named *.csv)");
    if (a.has("--scale")) d.scale = float(a.number("--scale", 1.0));
    d.limit = a.integer("--limit", 0, 1);
    return d;
}

struct Data {
    std::string description;  // what was read, for the log
    HostMatrix x;
    Targets y;  // empty when the source has none (predict)
    // Text's train split: the held-out windows, which validate each epoch (no rows: none).
    HostMatrix validationX;
    Targets validationY;
};

namespace data_detail {

inline HostMatrix firstRows(HostMatrix m, long n) {
    if (n <= 0 || n >= m.rows) return m;
    m.data.resize(size_t(n) * size_t(m.cols));
    return HostMatrix(int(n), m.cols, std::move(m.data));
}

// Class labels as the model's loss wants them: labels for softmax
// cross-entropy, one-hot rows of its outputs for a loss on values.
inline Targets classTargets(std::vector<int> labels, const Model& model) {
    if (model.options().loss.labels()) return Targets(std::move(labels));
    HostMatrix oneHot(int(labels.size()), model.outputSize());
    for (size_t r = 0; r < labels.size(); ++r) oneHot(int(r), labels[r]) = 1.0f;
    return Targets(std::move(oneHot));
}

}  // namespace data_detail

// A text file's bytes for a model of an input [context] of token ids trained
// with the sequence loss: the train split is o.windows random windows (one
// epoch's by default; the compile seed's), each drawn afresh, and the held-out
// last 10% cut into windows to validate on; the test split is those windows.
inline Data loadText(const DataOptions& o, const Model& model) {
    const std::string file = o.data.substr(5);
    const Shape3 in = model.inputShape();
    if (in.height != 1 || in.width != 1 || model.options().loss.kind != LossKind::SequenceCrossEntropy)
        throw ArgumentError("--data " + o.data +
                            ": text trains a model of an input [context] (token ids) with the loss "
                            "sequence_softmax_cross_entropy");
    TextOptions t;
    t.context = in.channels;
    t.seed = model.options().seed;
    const TextData text(readFile(file, "text"), t);
    if (o.windows > std::numeric_limits<int>::max())
        throw ArgumentError("--data " + o.data + ": " + std::to_string(o.windows) + " windows are too many (at most " +
                            std::to_string(std::numeric_limits<int>::max()) + ")");
    const bool train = o.split == "train";
    TextWindows w = train ? text.trainWindows(0, int(o.windows)) : text.validationWindows();
    if (w.x.rows == 0) throw ArgumentError("--data " + o.data + ": no held-out windows");
    Data d;
    d.description = file + " (text: " + std::to_string(text.trainBytes()) + " bytes to train on, " +
                    std::to_string(text.validationBytes()) + " held out; " + std::to_string(w.x.rows) + " " + o.split +
                    " windows of " + std::to_string(t.context) + " bytes)";
    d.x = data_detail::firstRows(std::move(w.x), o.limit);
    d.y = Targets(data_detail::firstRows(std::move(w.y), o.limit));
    if (train) {
        TextWindows v = text.validationWindows();
        d.validationX = std::move(v.x);
        d.validationY = Targets(std::move(v.y));
    }
    return d;
}

// Reads the data for `model`: labels must name one of its outputs (softmax
// cross-entropy) and a CSV's label column must give one value per output
// otherwise. `needTargets` false (predict): a CSV has no label column unless
// one is named, and --images needs no --labels.
inline Data loadData(const DataOptions& o, const Model& model, bool needTargets) {
    using namespace data_detail;
    if (isText(o.data)) return loadText(o, model);
    const bool classes = model.options().loss.labels();
    const int outputs = model.outputSize();
    Data d;
    const bool csv = !o.data.empty() && isCsv(o.data);
    if (csv) {
        CsvOptions c;
        c.header = o.header;
        c.labelColumn = !o.labelColumn.empty() ? o.labelColumn : needTargets ? "-1" : "";
        if (o.labelColumn == "none") c.labelColumn = "";
        if (needTargets && c.labelColumn.empty())
            throw UsageError("--label-column none: training and evaluating need a label column");
        c.classLabels = classes;
        c.numClasses = classes ? outputs : 0;
        c.scale = o.scale.value_or(1.0f);
        c.limit = o.limit;
        CsvData t = loadCsvFile(o.data, c);
        if (t.labelColumn >= 0 && !classes && outputs != 1)
            throw FormatError("CSV " + o.data + ": the label column gives one value per row, but the model has " +
                              std::to_string(outputs) + " outputs (a loss on values needs one target per output)");
        d.description = o.data + " (CSV" + (t.header.empty() ? "" : " with a header") +
                        (t.labelColumn >= 0 ? ", label column " + std::to_string(t.labelColumn) +
                                                  (t.header.empty() ? "" : " '" + t.header[size_t(t.labelColumn)] + "'")
                                            : ", no label column") +
                        ")";
        d.x = std::move(t.x);
        if (t.labelColumn >= 0) d.y = classes ? Targets(std::move(t.labels)) : Targets(std::move(t.values));
        return d;
    }
    std::string images = o.images, labels = o.labels;
    if (!o.data.empty()) {
        const bool fashion = o.data == "fashion-mnist";
        const std::string dir = fashion ? kFashionMnistDir : o.data;  // a directory: dataOptions checked
        const std::string prefix = o.split == "train" ? "train" : "t10k";
        images = idx_detail::findIdxFile(dir, prefix + "-images-idx3-ubyte");
        labels = idx_detail::findIdxFile(dir, prefix + "-labels-idx1-ubyte");
        d.description = (fashion ? "fashion-mnist " : "") + o.split + " split, " + images;
    } else {
        if (needTargets && labels.empty()) throw UsageError("--images needs --labels here (the targets)");
        d.description = images;
    }
    // Both headers are checked, against the model and each other, before
    // either file's values are read or inflated: a file that lies about its
    // size (a gzip bomb) or does not fit the model costs its header only.
    IdxOptions io;
    io.role = IdxRole::Images;
    io.valuesPerItem = uint64_t(model.inputSize());
    const Shape3 in = model.inputShape();
    const bool flat = in.height == 1 && in.width == 1;
    io.valuesFor = "the model (input " + (flat ? "[" + std::to_string(in.channels) + "]" : in.str()) + ")";
    IdxReader imageReader(images, io);
    std::optional<IdxReader> labelReader;
    if (!labels.empty()) {
        IdxOptions lo;
        lo.role = IdxRole::Labels;
        lo.items = imageReader.items();
        lo.itemsFrom = images + " has " + std::to_string(imageReader.items()) + " images";
        labelReader.emplace(labels, lo);
    }
    // Classes beyond the model's outputs are an error; a loss on values gets one-hot rows of its outputs.
    const IdxArray ia = imageReader.read();
    if (!labelReader) {  // predict: makeDataset's checks of the images, with labels of zeros
        const IdxArray zeros{ia.source, IdxType::U8, {ia.dims[0]}, std::vector<uint8_t>(ia.dims[0], 0)};
        Dataset ds = makeDataset(ia, zeros, 1);
        d.x = firstRows(std::move(ds.images), o.limit);
    } else {
        Dataset ds = makeDataset(ia, labelReader->read(), outputs);
        d.x = firstRows(std::move(ds.images), o.limit);
        ds.labels.resize(size_t(d.x.rows));
        d.y = classTargets(std::move(ds.labels), model);
    }
    if (o.scale) {  // makeDataset scales by 1/255; another scale applies to the raw values
        std::vector<float> raw = ia.toFloats(*o.scale);
        raw.resize(d.x.data.size());
        d.x.data = std::move(raw);
    }
    return d;
}

}  // namespace gltrain::cli
