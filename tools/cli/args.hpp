// Command-line arguments of one gltrain subcommand: options declared up front
// (--name VALUE, --name=VALUE, or a flag), positionals in order. Anything
// unknown, missing or malformed is a UsageError naming the option, which the
// program reports with exit status 2.
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gltrain::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct OptionSpec {
    const char* name;  // with the dashes: "--epochs"
    bool takesValue;
};

class Args {
public:
    Args(const std::vector<std::string>& argv, std::initializer_list<OptionSpec> options) : specs_(options) {
        bool optionsEnded = false;
        for (size_t i = 0; i < argv.size(); ++i) {
            const std::string& a = argv[i];
            if (optionsEnded || a.size() < 2 || a[0] != '-' || a == "-") {
                positional_.push_back(a);
                continue;
            }
            if (a == "--") {
                optionsEnded = true;
                continue;
            }
            const size_t eq = a.find('=');
            const std::string name = a.substr(0, eq);
            const OptionSpec* spec = find(name);
            if (!spec) throw UsageError("unknown option '" + name + "'");
            if (values_.count(name)) throw UsageError(name + " is given twice");
            if (!spec->takesValue) {
                if (eq != std::string::npos) throw UsageError(name + " takes no value");
                values_[name] = "";
            } else if (eq != std::string::npos) {
                values_[name] = a.substr(eq + 1);
            } else {
                if (i + 1 >= argv.size()) throw UsageError(name + " needs a value");
                values_[name] = argv[++i];
            }
        }
    }

    const std::vector<std::string>& positional() const { return positional_; }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    std::string value(const std::string& name, const std::string& def = "") const {
        auto it = values_.find(name);
        return it == values_.end() ? def : it->second;
    }
    // An integer >= lo.
    long integer(const std::string& name, long def, long lo) const {
        if (!has(name)) return def;
        const std::string v = value(name);
        char* end = nullptr;
        errno = 0;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno == ERANGE || n < lo)
            throw UsageError(name + ": expected " + (lo == 1 ? std::string("a positive integer") : "an integer >= " + std::to_string(lo)) +
                             ", got '" + v + "'");
        return n;
    }
    // A finite number.
    double number(const std::string& name, double def) const {
        if (!has(name)) return def;
        const std::string v = value(name);
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !std::isfinite(d)) throw UsageError(name + ": expected a number, got '" + v + "'");
        return d;
    }
    // One of `choices`.
    std::string choice(const std::string& name, const std::string& def, std::initializer_list<const char*> choices) const {
        if (!has(name)) return def;
        const std::string v = value(name);
        std::string list;
        for (const char* c : choices) {
            if (v == c) return v;
            list += (list.empty() ? "" : ", ") + std::string(c);
        }
        throw UsageError(name + ": expected one of " + list + ", got '" + v + "'");
    }

private:
    const OptionSpec* find(const std::string& name) const {
        for (const OptionSpec& s : specs_)
            if (name == s.name) return &s;
        return nullptr;
    }
    std::vector<OptionSpec> specs_;
    std::map<std::string, std::string> values_;
    std::vector<std::string> positional_;
};

}  // namespace gltrain::cli
