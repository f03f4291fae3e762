// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/pipeline.h"
#include "tools/cli/progress.h"

namespace szcli {

std::vector<OptSpec> input_option_specs() {
  return {{"dtype", 0, true}, {"format", 0, true}, {"tensor", 0, true}};
}

std::vector<OptSpec> coding_option_specs() {
  return {{"codebook", 0, true},   {"backend", 0, true}, {"checksum", 0, false},   {"no-checksum", 0, false},
          {"chunk-log2", 0, true}, {"mode", 0, true},    {"frame-size", 0, true}, {kLevelOption, 0, true},
          {"tables", 0, true}};
}

splitzip::Mode coding_mode_option(const Args& a, const char* command) {
  const std::string pre = std::string(command) + (*command ? ": " : "");
  bool from_mode = false;
  splitzip::Mode mode = splitzip::Mode::fast;
  if (const std::string* m = a.value("mode")) {
    if (*m == "capacity") mode = splitzip::Mode::capacity;
    else if (*m != "fast") fail(kExitUsage, pre + "--mode must be fast or capacity");
    from_mode = true;
  }
  // zstd's levels, the last one given: low levels are the fast mode (zstd's
  // default is -3, splitzip's is fast), higher ones the smaller capacity mode.
  std::string level;
  splitzip::Mode by_level = mode;
  for (const std::string& w : a.values(kLevelOption)) {
    if (w == "--ultra") continue;  // zstd needs it for -20..-22; here it changes nothing
    uint64_t n = 1;
    if (w.rfind("--fast", 0) == 0) {
      if (w.size() > 6 && (!parse_u64(w.substr(7), &n) || n == 0))
        fail(kExitUsage, pre + "'" + w + "': --fast takes a positive number, as in zstd");
      by_level = splitzip::Mode::fast;
    } else if (!parse_u64(w.substr(1), &n) || n < 1 || n > 22) {
      fail(kExitUsage, pre + "level '" + w + "' is not 1..22 (-1..-3 = --mode fast, -4..-22 = --mode capacity)");
    } else {
      by_level = n <= 3 ? splitzip::Mode::fast : splitzip::Mode::capacity;
    }
    level = w;
  }
  if (level.empty()) return mode;
  const char* name = by_level == splitzip::Mode::capacity ? "capacity" : "fast";
  if (from_mode && by_level != mode)
    fail(kExitUsage, pre + "'" + level + "' (--mode " + name + ") and --mode " + *a.value("mode") + " conflict");
  return by_level;
}

std::vector<OptSpec> output_option_specs() {
  return {{"threads", 'T', true}, {"output", 'o', true}, {"stdout", 'c', false}, {"sync", 0, false},
          {"no-sync", 0, false},  {"force", 'f', false}, {"keep", 'k', false},   {"rm", 0, false}};
}

void add_specs(std::vector<OptSpec>& a, const std::vector<OptSpec>& b) { a.insert(a.end(), b.begin(), b.end()); }

InputOptions input_options(const Args& a) {
  InputOptions o;
  o.hint.given = a.dtype(&o.hint.dtype);
  if (const std::string* f = a.value("format")) o.format = *f;
  if (const std::string* t = a.value("tensor")) o.tensor = *t;
  return o;
}

bool handle_help(const Args& a, const char* usage) {
  if (!a.has("help")) return false;
  std::fputs(usage, stdout);
  return true;
}

void quiet_option(const Args& a, const char* command) {
  if (!a.has("quiet")) return;
  if (a.has("verbose")) fail(kExitUsage, std::string(command) + ": -q and -v conflict");
  set_progress_quiet(true);
}

int threads_option(const Args& a) {
  const uint64_t t = a.u64("threads", 0);
  if (t > 4096) fail(kExitUsage, "--threads must be at most 4096");
  return static_cast<int>(t);
}

uint32_t coder_threads_option(const Args& a) {
  const uint64_t t = a.u64("threads", 1);
  if (t > 256) fail(kExitUsage, "--threads must be at most 256");
  return t == 0 ? std::min<uint32_t>(online_cpus(), 256) : static_cast<uint32_t>(t);
}

splitzip::Codebook load_codebook_file(const std::string& path) {
  InputBytes b = InputBytes::open(path);
  splitzip::Codebook cb;
  const splitzip::Status s = splitzip::codebook_deserialize(b.data(), b.size(), &cb);
  check_status(s, path + ": not a valid codebook file");
  return cb;
}

splitzip::TableSet load_tables_file(const std::string& path) {
  InputBytes b = InputBytes::open(path);
  splitzip::TableSet t;
  check_status(splitzip::TableSet::from_bytes(b.data(), b.size(), &t),
               path + ": not a valid table set file (make one with `splitzip calibrate --mode capacity`)");
  return t;
}

std::vector<splitzip::TableSet> load_tables_files(const Args& a) {
  std::vector<splitzip::TableSet> sets;
  for (const std::string& p : a.values("tables")) sets.push_back(load_tables_file(p));
  return sets;
}

splitzip::Mode tables_mode_option(const Args& a, const char* command, bool have_tables) {
  const splitzip::Mode m = coding_mode_option(a, command);
  if (!have_tables) return m;
  if (a.values("tables").size() > 1)
    fail(kExitUsage, std::string(command) + ": compression takes one --tables set");
  const bool explicit_mode = a.value("mode") != nullptr || !a.values(kLevelOption).empty();
  if (explicit_mode && m != splitzip::Mode::capacity)
    fail(kExitUsage, std::string(command) + ": --tables codes the capacity mode; it conflicts with the fast mode");
  return splitzip::Mode::capacity;
}

std::string tables_id_text(uint64_t id) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  return hex;
}

std::string missing_tables_hint(uint64_t id) {
  return "table set " + tables_id_text(id) +
         ": pass its file with --tables FILE (the one `splitzip calibrate --mode capacity` wrote for this data)";
}

std::string codebook_text(const splitzip::Codebook& cb) {
  std::string s = std::string(splitzip::dtype_name(cb.dtype)) + " [" + std::to_string(cb.count) + "]:";
  for (unsigned i = 0; i < cb.count && i < 16; ++i) s += " " + std::to_string(cb.entries[i]);
  return s;
}

}  // namespace szcli
