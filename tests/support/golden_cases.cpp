// SPDX-License-Identifier: Apache-2.0
#include "tests/support/golden_cases.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tests/support/test_data.h"

namespace splitzip::test {

namespace {

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtoull(s.c_str(), &end, 0);
  return end != nullptr && *end == '\0';
}

bool parse_params(const std::string& s, synth::Params* p) {
  if (s == "-") return true;
  std::stringstream ss(s);
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) return false;
    const std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
    char* end = nullptr;
    if (key == "escape_rate") {
      p->escape_rate = std::strtod(val.c_str(), &end);
    } else if (key == "shift") {
      p->shift = static_cast<int>(std::strtol(val.c_str(), &end, 10));
    } else {
      return false;
    }
    if (end == nullptr || *end != '\0') return false;
  }
  return true;
}

}  // namespace

std::string golden_set_dir(const std::string& set) { return golden_dir() + "/" + set; }

std::vector<GoldenCase> golden_cases(std::string* error, const std::string& set) {
  std::vector<GoldenCase> out;
  bool ok = false;
  const auto text = read_file(golden_set_dir(set) + "/cases.txt", &ok);
  if (!ok) {
    if (error) *error = "cannot read " + golden_set_dir(set) + "/cases.txt";
    return {};
  }
  std::stringstream in(std::string(text.begin(), text.end()));
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ls(line);
    std::string name, gen, seed, dtype, n, chunk, cb, checksum, params;
    if (!(ls >> name >> gen >> seed >> dtype >> n >> chunk >> cb >> checksum >> params)) {
      if (error) *error = "cases.txt line " + std::to_string(line_no) + ": expected 9 columns";
      return {};
    }
    GoldenCase c;
    c.name = name;
    uint64_t chunk_v = 0;
    const bool good = synth::parse_generator(gen.c_str(), &c.generator) && parse_u64(seed, &c.seed) &&
                      parse_dtype(dtype.c_str(), &c.dtype) && parse_u64(n, &c.n) &&
                      parse_u64(chunk, &chunk_v) && (checksum == "0" || checksum == "1") &&
                      (cb == "dynamic" || cb == "body" || cb.rfind("body:", 0) == 0) &&
                      parse_params(params, &c.params);
    if (!good) {
      if (error) *error = "cases.txt line " + std::to_string(line_no) + ": bad field";
      return {};
    }
    c.chunk_log2 = static_cast<uint32_t>(chunk_v);
    c.codebook = cb;
    c.checksum = checksum == "1";
    out.push_back(c);
  }
  return out;
}

std::vector<uint8_t> golden_input(const GoldenCase& c) {
  synth::Params p = c.params;
  p.codebook = nullptr;
  return synth::generate(c.generator, c.dtype, c.n, c.seed, p);
}

CompressOptions golden_options(const GoldenCase& c, Codebook* storage) {
  CompressOptions o;
  o.chunk_log2 = c.chunk_log2;
  o.checksum = c.checksum;
  if (c.codebook != "dynamic") {
    *storage = synth::body_codebook(c.dtype);
    if (c.codebook.size() > 5) {
      const auto k = static_cast<uint8_t>(std::strtoul(c.codebook.c_str() + 5, nullptr, 10));
      for (uint32_t i = k; i < 16; ++i) storage->entries[i] = 0;
      storage->count = k;
    }
    o.codebook = storage;
  }
  return o;
}

std::vector<GoldenFrame> golden_frames(bool* ok, const std::string& set) {
  std::vector<GoldenFrame> out;
  if (ok) *ok = false;
  bool read_ok = false;
  const auto text = read_file(golden_set_dir(set) + "/frames.txt", &read_ok);
  if (!read_ok) return out;
  std::stringstream in(std::string(text.begin(), text.end()));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ls(line);
    GoldenFrame f;
    std::string size, hash;
    if (!(ls >> f.name >> size >> hash) || !parse_u64(size, &f.size) || !parse_u64("0x" + hash, &f.hash))
      return {};
    out.push_back(f);
  }
  if (ok) *ok = true;
  return out;
}

std::string format_golden_frames(const std::vector<GoldenFrame>& frames, const std::string& set) {
  std::string s =
      "# Committed frames (format " + set + ") of tests/golden/" + set +
      "/cases.txt: name, frame size, xxh64 (hex) of the frame.\n"
      "# Regenerate: see tests/golden/README.md. Any difference fails the golden test.\n";
  char buf[64];
  for (const auto& f : frames) {
    std::snprintf(buf, sizeof buf, " %" PRIu64 " %016" PRIx64 "\n", f.size, f.hash);
    s += f.name + buf;
  }
  return s;
}

std::string golden_sz_path(const std::string& name, const std::string& set) {
  return golden_set_dir(set) + "/sz/" + name + ".sz";
}

}  // namespace splitzip::test
