/* SPDX-License-Identifier: Apache-2.0 */
// The capacity-mode golden vectors, for every backend's tests:
// tests/golden/capacity (cases.txt: inputs; frames.txt: size and XXH3-64 of
// each committed frame; sz/: the smaller frames whole) and
// tests/golden-errors/capacity (LIST, NAME.bin, NAME.expect).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

struct CapacityGoldenCase {
  std::string name, gen;  // gen: tests/support/synthetic.h name, "zeros", "kv:FILE" or "kv_e4m3:FILE" (bf16 cast)
  uint64_t seed = 0;
  Dtype dtype = Dtype::bf16;
  uint64_t n = 0;
  bool checksum = false;
};

std::string capacity_golden_dir();         // golden_dir()/capacity
// The format v3 set of fp8_e4m3 in mode 1 (FORMAT.md 4.6.7): golden_dir()/v3_fp8cap,
// the same files; the readers below take either directory.
std::string capacity_golden_v3_fp8cap_dir();
std::vector<std::string> capacity_golden_dirs();  // both
std::string capacity_golden_errors_dir();  // golden_dir()/../golden-errors/capacity

// cases.txt; *ok = false when missing or malformed.
std::vector<CapacityGoldenCase> capacity_golden_cases(bool* ok = nullptr, const std::string& dir = capacity_golden_dir());
// The case's input bytes (n elements of its dtype).
std::vector<uint8_t> capacity_golden_input(const CapacityGoldenCase& c, bool* ok = nullptr);
// The frames.txt line of a frame: "NAME SIZE XXH3-64-HEX".
std::string capacity_golden_line(const std::string& name, const std::vector<uint8_t>& frame);
// frames.txt: case name -> its line; empty when missing.
std::map<std::string, std::string> capacity_golden_frames(const std::string& dir = capacity_golden_dir());

struct CapacityErrorVector {
  std::string name;
  std::vector<uint8_t> bytes;
  std::string status;  // status_name() the .expect file requires
};
// Every vector of LIST; *ok = false when a file is missing or malformed.
std::vector<CapacityErrorVector> capacity_error_vectors(bool* ok = nullptr);

}  // namespace splitzip::test
