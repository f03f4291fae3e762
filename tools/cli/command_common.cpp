// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/pipeline.h"

namespace szcli {

std::vector<OptSpec> input_option_specs() {
  return {{"dtype", 0, true}, {"format", 0, true}, {"tensor", 0, true}};
}

std::vector<OptSpec> coding_option_specs() {
  return {{"codebook", 0, true},   {"backend", 0, true}, {"checksum", 0, false},  {"no-checksum", 0, false},
          {"chunk-log2", 0, true}, {"mode", 0, true},    {"frame-size", 0, true}};
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

std::string codebook_text(const splitzip::Codebook& cb) {
  std::string s = std::string(splitzip::dtype_name(cb.dtype)) + " [" + std::to_string(cb.count) + "]:";
  for (unsigned i = 0; i < cb.count && i < 16; ++i) s += " " + std::to_string(cb.entries[i]);
  return s;
}

}  // namespace szcli
