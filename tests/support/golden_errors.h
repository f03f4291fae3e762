/* SPDX-License-Identifier: Apache-2.0 */
// The golden error vectors (tests/golden-errors/{v1,v2,capacity}: NAME.bin
// and NAME.expect, format in tests/golden-errors/README.md), read once for
// the reliability suite and the conformance suite.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

struct GoldenErrorVector {
  std::string name;  // set/stem, e.g. "v2/byte_51_set"
  std::vector<uint8_t> bytes;
  std::map<std::string, std::string> keys;  // the .expect file's key = value lines

  // The value of key k, or dflt when absent.
  std::string key(const std::string& k, const std::string& dflt) const;
};

// The vector sets, one directory per format version or mode.
inline constexpr const char* kGoldenErrorSets[] = {"v1", "v2", "capacity", "v3_fp8cap"};

// golden_dir()/../golden-errors
std::string golden_errors_dir();

// Every .expect of every set, sorted by path; *error gets a line per
// problem (a stray file at the top, a missing set or .bin, a bad line).
std::vector<GoldenErrorVector> golden_error_vectors(std::string* error);

// A status by its status_name(); false for an unknown name.
bool parse_status_name(const std::string& name, Status* out);

}  // namespace splitzip::test
