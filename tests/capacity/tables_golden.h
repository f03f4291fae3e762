/* SPDX-License-Identifier: Apache-2.0 */
// Golden vectors of table-set frames (FORMAT.md 4.9, format v3):
// tests/golden/v3_tables (the sets as .szct, frames.txt, the smaller frames
// as .sz) and tests/golden-errors/v3_tables (faulted frames and their
// status). Shared by the reference test (test_tables.cpp) and the CPU test.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/capacity/tables.h"
#include "core/hash.h"
#include "core/reference.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace tables_golden {

struct Case {
  const char* name;
  synth::Generator gen;
  uint64_t seed;
  Dtype dtype;
  uint64_t n;
  uint32_t T;
  bool checksum;
  uint64_t calib_seed;  // the set's sample: gen with this seed, 70000 elements
};

// calib_seed == seed: the set is calibrated on the input (shared blocks);
// otherwise on other data (some blocks fall back to their own tables).
inline std::vector<Case> cases() {
  using G = synth::Generator;
  return {
      {"bf16_t1_small", G::gaussian_kv, 1, Dtype::bf16, 1000, 1, false, 1},
      {"bf16_t2_odd33", G::gaussian_kv, 4, Dtype::bf16, 33, 2, true, 4},
      {"bf16_t32_page", G::gaussian_kv, 2, Dtype::bf16, 16384, 32, true, 2},
      {"bf16_t8_fallback", G::gaussian_kv, 3, Dtype::bf16, 3 * 65536 + 7, 8, false, 9},
      {"fp16_t4_blocks", G::gaussian_kv, 5, Dtype::fp16, 65537, 4, true, 5},
      {"fp32_t16_small", G::gaussian_kv, 6, Dtype::fp32, 3000, 16, false, 6},
      {"fp8_t2_small", G::gaussian_kv, 7, Dtype::fp8_e5m2, 5001, 2, true, 7},
      {"bf16_t1_special", G::special_values, 8, Dtype::bf16, 5000, 1, false, 8},
      {"e4m3_t4_small", G::gaussian_kv, 9, Dtype::fp8_e4m3, 7003, 4, true, 9},  // whole-byte symbols (4.6.7)
  };
}

inline std::string dir() { return test::golden_dir() + "/v3_tables"; }
inline std::string errors_dir() { return test::golden_dir() + "/../golden-errors/v3_tables"; }

inline std::vector<uint8_t> input(const Case& c) { return synth::generate(c.gen, c.dtype, c.n, c.seed, {}); }

inline CapTables set_of(const Case& c) {
  const auto sample = synth::generate(c.gen, c.dtype, 70000, c.calib_seed, {});
  const void* bufs[1] = {sample.data()};
  const uint64_t n[1] = {70000};
  CapTables ts;
  cap_tables_from_samples(c.dtype, c.T, bufs, n, 1, &ts);
  return ts;
}

inline std::vector<uint8_t> set_bytes(const CapTables& ts) {
  std::vector<uint8_t> b(cap_tables_serialized_size(ts));
  cap_tables_serialize(ts, b.data());
  return b;
}

inline std::string line(const std::string& name, const std::vector<uint8_t>& frame) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %llu %016llx", name.c_str(), static_cast<unsigned long long>(frame.size()),
                static_cast<unsigned long long>(hash_xxh3(frame.data(), frame.size())));
  return buf;
}

// Golden-error vectors: a fault of a case's frame and the status every
// decoder gives with the case's set (given = false: no set given).
struct Fault {
  const char* name;
  const char* base;  // a case name
  uint64_t at;       // offset from stream 9's start (kBlk) or absolute
  bool in_blocks;
  uint8_t value;     // the byte written
  bool given;
  Status want;
};

inline std::vector<Fault> faults() {
  return {
      {"missing_set", "fp16_t4_blocks", 0, true, 1, false, Status::missing_tables},
      {"kind_2", "bf16_t32_page", 0, true, 2, true, Status::bad_code},
      {"kind_own_on_shared_block", "bf16_t32_page", 0, true, 0, true, Status::bad_codebook},
      {"stream0_size_grows", "bf16_t1_small", 1, true, 0xFF, true, Status::bad_code},
  };
}

}  // namespace tables_golden
}  // namespace splitzip
