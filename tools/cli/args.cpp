// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tools/cli/errors.h"

namespace szcli {

namespace {

std::string prefix(const char* command) { return std::string(command) + ": "; }

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
    : command_(command), specs_(std::move(specs)) {
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (options_done || a == "-" || a.size() < 2 || a[0] != '-') {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a[1] == '-') {
      std::string name = a.substr(2), val;
      const size_t eq = name.find('=');
      const bool inline_val = eq != std::string::npos;
      if (inline_val) {
        val = name.substr(eq + 1);
        name.resize(eq);
      }
      const OptSpec* spec = nullptr;
      for (const auto& s : specs_)
        if (name == s.name) spec = &s;
      if (!spec) fail(kExitUsage, prefix(command_) + "unknown option '--" + name + "' (see --help)");
      if (spec->takes_value && !inline_val) {
        if (i + 1 >= argc) fail(kExitUsage, prefix(command_) + "option '--" + name + "' needs a value");
        val = argv[++i];
      } else if (!spec->takes_value && inline_val) {
        fail(kExitUsage, prefix(command_) + "option '--" + name + "' takes no value");
      }
      given_.emplace_back(spec->name, val);
      continue;
    }
    // Short options; flags may be bundled, a value option ends the bundle.
    for (size_t j = 1; j < a.size(); ++j) {
      const OptSpec* spec = nullptr;
      for (const auto& s : specs_)
        if (s.short_name && s.short_name == a[j]) spec = &s;
      if (!spec) fail(kExitUsage, prefix(command_) + "unknown option '-" + std::string(1, a[j]) + "' (see --help)");
      if (!spec->takes_value) {
        given_.emplace_back(spec->name, "");
        continue;
      }
      std::string val = a.substr(j + 1);
      if (val.empty()) {
        if (i + 1 >= argc) fail(kExitUsage, prefix(command_) + "option '-" + std::string(1, a[j]) + "' needs a value");
        val = argv[++i];
      }
      given_.emplace_back(spec->name, val);
      break;
    }
  }
}

bool Args::has(const char* name) const {
  for (const auto& g : given_)
    if (g.first == name) return true;
  return false;
}

const std::string* Args::value(const char* name) const {
  const std::string* v = nullptr;
  for (const auto& g : given_)
    if (g.first == name) v = &g.second;
  return v;
}

std::vector<std::string> Args::values(const char* name) const {
  std::vector<std::string> out;
  for (const auto& g : given_)
    if (g.first == name) out.push_back(g.second);
  return out;
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
  // Aliases match the raw-file extensions the CLI infers from.
  std::string n = *v;
  if (n == "f16" || n == "float16" || n == "half") n = "fp16";
  else if (n == "f32" || n == "float32" || n == "float") n = "fp32";
  else if (n == "bfloat16") n = "bf16";
  else if (n == "e5m2" || n == "float8_e5m2") n = "fp8_e5m2";
  else if (n == "e4m3" || n == "float8_e4m3fn") n = "fp8_e4m3";
  // vLLM and SGLang store fp8 KV as E4M3, older tools meant E5M2: no guess.
  if (n == "fp8")
    fail(kExitUsage, prefix(command_) + "dtype 'fp8' is ambiguous: use fp8_e4m3 or fp8_e5m2");
  if (!splitzip::parse_dtype(n.c_str(), out))
    fail(kExitUsage, prefix(command_) + "unknown dtype '" + *v + "' (use bf16, fp16, fp32, fp8_e5m2 or fp8_e4m3)");
  return true;
}

}  // namespace szcli
