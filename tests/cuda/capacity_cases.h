/* SPDX-License-Identifier: Apache-2.0 */
// The golden cases of the capacity mode (tests/golden/capacity/cases.txt)
// and their inputs, for the CUDA tests (emulated and on a GPU).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {

struct CapCase {
  std::string name, gen;
  uint64_t seed = 0;
  Dtype dtype = Dtype::bf16;
  uint64_t n = 0;
  bool checksum = false;
};

inline std::vector<CapCase> cap_cases() {
  bool ok = false;
  const auto bytes = read_file(golden_dir() + "/capacity/cases.txt", &ok);
  EXPECT_TRUE(ok);
  std::istringstream is(std::string(bytes.begin(), bytes.end()));
  std::vector<CapCase> out;
  std::string line;
  while (std::getline(is, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    CapCase c;
    std::string dt;
    int ck = 0;
    ls >> c.name >> c.gen >> c.seed >> dt >> c.n >> ck;
    EXPECT_TRUE(parse_dtype(dt.c_str(), &c.dtype)) << line;
    c.checksum = ck != 0;
    out.push_back(c);
  }
  return out;
}

inline std::vector<uint8_t> cap_input(const CapCase& c) {
  if (c.gen == "zeros") return std::vector<uint8_t>(c.n * dtype_bytes(c.dtype), 0);
  if (c.gen.rfind("kv:", 0) == 0) {
    bool ok = false;
    auto b = load_data_file(c.gen.substr(3), &ok);
    EXPECT_TRUE(ok);
    b.resize(std::min<uint64_t>(b.size(), c.n * dtype_bytes(c.dtype)));
    return b;
  }
  synth::Generator g;
  EXPECT_TRUE(synth::parse_generator(c.gen.c_str(), &g)) << c.gen;
  return synth::generate(g, c.dtype, c.n, c.seed, {});
}

}  // namespace splitzip::test
