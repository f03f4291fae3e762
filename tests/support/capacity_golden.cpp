// SPDX-License-Identifier: Apache-2.0
// Readers of the capacity-mode golden vectors (capacity_golden.h).
#include "tests/support/capacity_golden.h"

#include <algorithm>
#include <sstream>

#include "core/hash.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {

std::string capacity_golden_dir() { return golden_dir() + "/capacity"; }
std::string capacity_golden_v3_fp8cap_dir() { return golden_dir() + "/v3_fp8cap"; }
std::vector<std::string> capacity_golden_dirs() { return {capacity_golden_dir(), capacity_golden_v3_fp8cap_dir()}; }
std::string capacity_golden_errors_dir() { return golden_dir() + "/../golden-errors/capacity"; }

std::vector<CapacityGoldenCase> capacity_golden_cases(bool* ok, const std::string& dir) {
  bool read = false;
  const auto bytes = read_file(dir + "/cases.txt", &read);
  bool good = read;
  std::istringstream is(std::string(bytes.begin(), bytes.end()));
  std::vector<CapacityGoldenCase> out;
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    CapacityGoldenCase c;
    std::string dt;
    int ck = -1;
    ls >> c.name >> c.gen >> c.seed >> dt >> c.n >> ck;
    if (!ls || ck < 0 || ck > 1 || !parse_dtype(dt.c_str(), &c.dtype)) good = false;
    c.checksum = ck == 1;
    out.push_back(c);
  }
  if (ok) *ok = good;
  return out;
}

std::vector<uint8_t> capacity_golden_input(const CapacityGoldenCase& c, bool* ok) {
  if (ok) *ok = true;
  if (c.gen == "zeros") return std::vector<uint8_t>(c.n * dtype_bytes(c.dtype), 0);
  if (c.gen.rfind("kv_e4m3:", 0) == 0) {  // a bundled bf16 file cast to E4M3 at scale 1.0 (as vLLM)
    const auto b = load_data_file(c.gen.substr(8), ok);
    std::vector<uint8_t> out(std::min<uint64_t>(b.size() / 2, c.n));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = synth::f32_to_fp8_e4m3(synth::bf16_to_f32(static_cast<uint16_t>(b[2 * i] | b[2 * i + 1] << 8)));
    return out;
  }
  if (c.gen.rfind("kv:", 0) == 0) {
    auto b = load_data_file(c.gen.substr(3), ok);
    b.resize(std::min<uint64_t>(b.size(), c.n * dtype_bytes(c.dtype)));
    return b;
  }
  synth::Generator g;
  if (!synth::parse_generator(c.gen.c_str(), &g)) {
    if (ok) *ok = false;
    return {};
  }
  return synth::generate(g, c.dtype, c.n, c.seed, {});
}

std::string capacity_golden_line(const std::string& name, const std::vector<uint8_t>& frame) {
  const uint64_t h = hash_xxh3(frame.data(), frame.size());
  std::string hex(16, '0');
  for (int i = 0; i < 16; ++i) hex[15 - i] = "0123456789abcdef"[(h >> (4 * i)) & 15];
  return name + " " + std::to_string(frame.size()) + " " + hex;
}

std::map<std::string, std::string> capacity_golden_frames(const std::string& dir) {
  std::map<std::string, std::string> out;
  bool ok = false;
  const auto bytes = read_file(dir + "/frames.txt", &ok);
  std::istringstream is(std::string(bytes.begin(), bytes.end()));
  std::string line;
  while (std::getline(is, line))
    if (!line.empty() && line[0] != '#') out[line.substr(0, line.find(' '))] = line;
  return out;
}

std::vector<CapacityErrorVector> capacity_error_vectors(bool* ok) {
  const std::string dir = capacity_golden_errors_dir();
  bool good = false;
  const auto list = read_file(dir + "/LIST", &good);
  std::istringstream is(std::string(list.begin(), list.end()));
  std::vector<CapacityErrorVector> out;
  std::string name;
  while (is >> name) {
    CapacityErrorVector v;
    v.name = name;
    bool read = false;
    v.bytes = read_file(dir + "/" + name + ".bin", &read);
    good = good && read;
    const auto ex = read_file(dir + "/" + name + ".expect", &read);
    good = good && read;
    const std::string text(ex.begin(), ex.end());
    const auto at = text.find("status = ");
    if (at == std::string::npos) {
      good = false;
    } else {
      v.status = text.substr(at + 9, text.find('\n', at) - at - 9);
    }
    out.push_back(std::move(v));
  }
  if (ok) *ok = good;
  return out;
}

}  // namespace splitzip::test
