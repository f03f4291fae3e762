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
  for (const OptSpec& s : specs_) {
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
  std::vector<const char*> av{command};
  std::vector<std::string> after_marker;
  for (int i = first; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      after_marker.assign(argv + i + 1, argv + argc);
      break;
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
    if (extra.size() > 1 && extra[0] == '-')
      fail(kExitUsage, prefix(command_) + "unknown option '" + extra.substr(0, extra.find('=')) + "' (see --help)");
    positional_.push_back(extra);
  }
  positional_.insert(positional_.end(), after_marker.begin(), after_marker.end());
  given_.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].takes_value) {
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
