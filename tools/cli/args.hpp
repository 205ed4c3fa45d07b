// Command-line arguments of one gltrain subcommand: options declared up front
// (--name VALUE, --name=VALUE, or a flag), positionals in order. Anything
// unknown, missing or malformed is a UsageError naming the option, which the
// program reports with exit status 2.
#pragma once
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
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
    // An integer in [lo, hi]. The text is parsed whole in 64 bits and checked
    // before the caller narrows it (to an int, say): a value out of range is a
    // usage error naming the flag, the value and the range, never a wrapped one.
    long long integer(const std::string& name, long long def, long long lo,
                      long long hi = std::numeric_limits<int>::max()) const {
        if (!has(name)) return def;
        const std::string v = value(name);
        const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
        char* end = nullptr;
        errno = 0;
        // strtoll skips leading blanks and takes a '+': neither is an integer here.
        const long long n =
            v.empty() || std::isspace((unsigned char)v[0]) || v[0] == '+' ? 0 : std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || std::isspace((unsigned char)v[0]) || v[0] == '+' || *end != '\0')
            throw UsageError(name + ": expected an integer from " + range + ", got '" + v + "'");
        if (errno == ERANGE || n < lo || n > hi) throw UsageError(name + ": " + v + " is out of range (" + range + ")");
        return n;
    }
    // A finite number that a float holds (the library computes in float): one
    // beyond +-FLT_MAX would become Inf.
    double number(const std::string& name, double def) const {
        if (!has(name)) return def;
        const std::string v = value(name);
        char* end = nullptr;
        errno = 0;
        const double d = v.empty() || std::isspace((unsigned char)v[0]) ? 0.0 : std::strtod(v.c_str(), &end);
        if (v.empty() || std::isspace((unsigned char)v[0]) || *end != '\0' || std::isnan(d))
            throw UsageError(name + ": expected a number, got '" + v + "'");
        const double max = std::numeric_limits<float>::max();
        if (!(std::fabs(d) <= max))  // Inf, or strtod's ERANGE overflow
            throw UsageError(name + ": " + v + " is out of range (-3.4e38 to 3.4e38)");
        return d;
    }
    // One of `choices`.
    std::string choice(const std::string& name, const std::string& def,
                       std::initializer_list<const char*> choices) const {
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
