// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/options.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tools/cli/errors.h"

namespace szcli {

namespace {

// "compress: " before a message; nothing for the command-less (zstd-like) mode.
std::string prefix(const char* command) { return *command ? std::string(command) + ": " : std::string(); }

// Every option some splitzip command takes, for the message when one is
// given to a command that does not take it; `hint` says where it belongs.
struct KnownOption {
  char short_name;
  const char* name;
  const char* hint;
};
const KnownOption kKnownOptions[] = {
    {'z', "compress", "use `splitzip compress IN` or `splitzip -z IN`"},
    {'d', "decompress", "use `splitzip decompress IN.sz` or `splitzip -d IN.sz`"},
    {'l', "list", "use `splitzip inspect IN.sz` or `splitzip -l IN.sz`"},
    {'t', "test", "use `splitzip -t IN.sz`"},
    {'r', "recursive", "commands take one input; use `splitzip -r DIR` or `splitzip -d -r DIR`"},
    {'V', "version", "use `splitzip -V`"},
    {'c', "stdout", nullptr},
    {'o', "output", nullptr},
    {'f', "force", nullptr},
    {'k', "keep", nullptr},
    {'q', "quiet", nullptr},
    {'v', "verbose", nullptr},
    {'T', "threads", nullptr},
    {'h', "help", nullptr},
    {0, "rm", nullptr},
    {0, "sync", nullptr},
    {0, "no-sync", nullptr},
    {0, "json", nullptr},
    {0, "max-size", nullptr},
    {0, "backend", nullptr},
    {0, "codebook", nullptr},
    {0, "tables", nullptr},
    {0, "checksum", nullptr},
    {0, "no-checksum", nullptr},
    {0, "chunk-log2", nullptr},
    {0, "mode", nullptr},
    {0, "frame-size", nullptr},
    {0, "dtype", nullptr},
    {0, "format", nullptr},
    {0, "tensor", nullptr},
    {0, "seconds", nullptr},
};

// word: "-x" or "--name" as CLI11 left it unrecognised.
std::string not_taken(const char* command, const std::string& word) {
  const std::string cmd = *command ? command : "splitzip";
  for (const KnownOption& k : kKnownOptions) {
    const std::string long_name = std::string("--") + k.name;
    const bool hit = (k.short_name && word.size() == 2 && word[1] == k.short_name) || word == long_name;
    if (!hit) continue;
    const std::string names = k.short_name ? std::string("-") + k.short_name + " (" + long_name + ")" : long_name;
    return prefix(command) + "option " + names + " is not taken by " + cmd +
           (k.hint ? std::string("; ") + k.hint : std::string()) + " (see --help)";
  }
  return prefix(command) + "unknown option '" + word + "' (see --help)";
}

// zstd's level words: -N (digits, perhaps followed by bundled short flags,
// as in -19f), --fast, --fast=N, --ultra. *rest gets "-f" for -19f.
bool level_word(const std::string& w, std::string* level, std::string* rest) {
  if (w == "--ultra" || w == "--fast" || w.rfind("--fast=", 0) == 0) {
    *level = w;
    rest->clear();
    return true;
  }
  if (w.size() < 2 || w[0] != '-' || w[1] < '0' || w[1] > '9') return false;
  size_t i = 1;
  while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
  for (size_t j = i; j < w.size(); ++j)
    if (!((w[j] >= 'a' && w[j] <= 'z') || (w[j] >= 'A' && w[j] <= 'Z'))) return false;
  *level = w.substr(0, i);
  *rest = i < w.size() ? "-" + w.substr(i) : std::string();
  return true;
}

}  // namespace

bool parse_u64(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool parse_size(const std::string& text, uint64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  uint64_t base = 0;
  if (!parse_u64(text.substr(0, digits), &base)) return false;
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GIB") shift = 30;
  else if (suffix == "T" || suffix == "TIB") shift = 40;
  else return false;
  if (shift && base > (UINT64_MAX >> shift)) return false;
  *out = base << shift;
  return true;
}

Args::Args(const char* command, std::vector<OptSpec> specs, int argc, char** argv, int first)
    : command_(command), specs_(std::move(specs)), app_(std::make_unique<CLI::App>("", command)) {
  CLI::App& app = *app_;
  app.set_help_flag();      // each command prints its own usage text for -h/--help
  app.allow_extras();       // unknown options are reported below, in our words
  std::vector<CLI::Option*> opts;
  bool takes_level = false;
  for (const OptSpec& s : specs_) {
    if (!std::strcmp(s.name, kLevelOption)) {
      takes_level = true;
      opts.push_back(nullptr);
      continue;
    }
    std::string names = "--" + std::string(s.name);
    if (s.short_name) names = std::string("-") + s.short_name + "," + names;
    CLI::Option* o = s.takes_value ? app.add_option(names) : app.add_flag(names);
    // Options may repeat: value() is the last one, values() all of them.
    o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    if (!s.takes_value) o->disable_flag_override();
    opts.push_back(o);
  }
  app.add_option("inputs", positional_)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // CLI11 skips argv[0]: argv[first - 1] (the command word) stands in for it.
  // Words after "--" are inputs, whatever they look like; CLI11 sees the rest.
  // Level words are taken out here (CLI11 would read -3 as a value).
  std::vector<const char*> av{command};
  std::vector<std::string> after_marker, levels;
  std::vector<std::string> rests;  // stable storage for the flags of -19f
  rests.reserve(static_cast<size_t>(argc));
  auto wants_value = [&](const char* prev) {  // prev is an option still waiting for its value
    const std::string p = prev;
    for (const OptSpec& s : specs_) {
      if (!s.takes_value || !std::strcmp(s.name, kLevelOption)) continue;
      if (p == std::string("--") + s.name) return true;
      if (s.short_name && p.size() >= 2 && p[0] == '-' && p[1] != '-' && p.back() == s.short_name) return true;
    }
    return false;
  };
  for (int i = first; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      after_marker.assign(argv + i + 1, argv + argc);
      break;
    }
    std::string level, rest;
    if (!(i > first && wants_value(argv[i - 1])) && level_word(argv[i], &level, &rest)) {
      if (!takes_level)
        fail(kExitUsage, prefix(command_) + "'" + level + "' is a compression level, which " +
                             (*command_ ? command_ : "this operation") +
                             " does not take (splitzip compress: -1..-3 = --mode fast, -4..-22 = --mode capacity)");
      levels.push_back(level);
      if (!rest.empty()) {
        rests.push_back(rest);
        av.push_back(rests.back().c_str());
      }
      continue;
    }
    av.push_back(argv[i]);
  }
  try {
    app.parse(static_cast<int>(av.size()), av.data());
  } catch (const CLI::ArgumentMismatch& e) {
    // The old messages, from CLI11's "NAME was given a disallowed flag
    // override" and "--NAME: 1 required ... missing".
    const std::string m = e.what();
    const size_t colon = m.find(':'), space = m.find(' ');
    if (m.find("flag override") != std::string::npos && space != std::string::npos)
      fail(kExitUsage, prefix(command_) + "option '--" + m.substr(0, space) + "' takes no value");
    if (m.rfind("-", 0) == 0 && colon != std::string::npos && m.find("missing") != std::string::npos)
      fail(kExitUsage, prefix(command_) + "option '" + m.substr(0, colon) + "' needs a value");
    fail(kExitUsage, prefix(command_) + m + " (see --help)");
  } catch (const CLI::ParseError& e) {
    fail(kExitUsage, prefix(command_) + e.what() + " (see --help)");
  }
  for (const std::string& extra : app.remaining()) {
    if (extra.size() > 1 && extra[0] == '-') fail(kExitUsage, not_taken(command_, extra.substr(0, extra.find('='))));
    positional_.push_back(extra);
  }
  positional_.insert(positional_.end(), after_marker.begin(), after_marker.end());
  given_.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (!opts[i]) {
      given_[i] = levels;
    } else if (specs_[i].takes_value) {
      given_[i] = opts[i]->results();
    } else {
      given_[i].assign(opts[i]->count(), std::string());
    }
  }
}

Args::~Args() = default;

const OptSpec* Args::spec(const char* name) const {
  for (const auto& s : specs_)
    if (!std::strcmp(s.name, name)) return &s;
  return nullptr;
}

bool Args::has(const char* name) const {
  const OptSpec* s = spec(name);
  return s && !given_[static_cast<size_t>(s - specs_.data())].empty();
}

const std::string* Args::value(const char* name) const {
  const OptSpec* s = spec(name);
  if (!s) return nullptr;
  const auto& v = given_[static_cast<size_t>(s - specs_.data())];
  return v.empty() ? nullptr : &v.back();
}

std::vector<std::string> Args::values(const char* name) const {
  const OptSpec* s = spec(name);
  return s ? given_[static_cast<size_t>(s - specs_.data())] : std::vector<std::string>{};
}

uint64_t Args::u64(const char* name, uint64_t fallback) const {
  const std::string* v = value(name);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_u64(*v, &out))
    fail(kExitUsage, prefix(command_) + "--" + name + " expects a non-negative integer, got '" + *v + "'");
  return out;
}

double Args::seconds(const char* name, double fallback) const {
  const std::string* v = value(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || errno != 0 || !std::isfinite(d) || d <= 0 || d > 3600)
    fail(kExitUsage, prefix(command_) + "--" + name + " expects seconds in (0, 3600], got '" + *v + "'");
  return d;
}

uint64_t Args::size(const char* name, uint64_t fallback) const {
  const std::string* v = value(name);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_size(*v, &out))
    fail(kExitUsage, prefix(command_) + "--" + name + " expects a size like 1048576, 512M or 64G, got '" + *v + "'");
  return out;
}

bool Args::dtype(splitzip::Dtype* out) const {
  const std::string* v = value("dtype");
  if (!v) return false;
  *out = parse_dtype_option(command_, *v);
  return true;
}

splitzip::Dtype parse_dtype_option(const char* command, const std::string& text) {
  // Aliases match the raw-file extensions the CLI infers from.
  std::string n = text;
  if (n == "f16" || n == "float16" || n == "half") n = "fp16";
  else if (n == "f32" || n == "float32" || n == "float") n = "fp32";
  else if (n == "bfloat16") n = "bf16";
  else if (n == "e5m2" || n == "float8_e5m2") n = "fp8_e5m2";
  else if (n == "e4m3" || n == "float8_e4m3fn") n = "fp8_e4m3";
  // vLLM and SGLang store fp8 KV as E4M3, older tools meant E5M2: no guess.
  if (n == "fp8") fail(kExitUsage, prefix(command) + "dtype 'fp8' is ambiguous: use fp8_e4m3 or fp8_e5m2");
  splitzip::Dtype d{};
  if (!splitzip::parse_dtype(n.c_str(), &d))
    fail(kExitUsage, prefix(command) + "unknown dtype '" + text + "' (use bf16, fp16, fp32, fp8_e5m2 or fp8_e4m3)");
  return d;
}

}  // namespace szcli
