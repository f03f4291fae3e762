/* SPDX-License-Identifier: Apache-2.0 */
// The golden cases and their committed frames, one set per format version:
// tests/golden/v2/ (what encoders write now: every backend's encode output
// must equal these bytes) and tests/golden/v1/ (frames of format v1, which
// every decoder must still read). Each set: cases.txt, frames.txt, sz/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

namespace splitzip::test {

struct GoldenCase {
  std::string name;  // unique, also the .sz file name stem
  synth::Generator generator = synth::Generator::gaussian_kv;
  uint64_t seed = 0;
  Dtype dtype = Dtype::bf16;
  uint64_t n = 0;
  uint32_t chunk_log2 = kDefaultChunkLog2;
  // "dynamic" (no codebook: top-16 of the input), "body" (synthetic body
  // codebook) or "body:K" (its first K entries).
  std::string codebook = "dynamic";
  bool checksum = false;
  synth::Params params;  // escape_rate / shift; params.codebook unused here
};

inline constexpr const char* kGoldenV1 = "v1";
inline constexpr const char* kGoldenV2 = "v2";  // the current format

// golden_dir()/<set>.
std::string golden_set_dir(const std::string& set = kGoldenV2);

// Parses <set>/cases.txt. *error gets a message on a malformed file.
std::vector<GoldenCase> golden_cases(std::string* error = nullptr, const std::string& set = kGoldenV2);

// The case's input bytes and its compress options. The codebook, if any,
// is stored in *storage, which must outlive the options.
std::vector<uint8_t> golden_input(const GoldenCase& c);
CompressOptions golden_options(const GoldenCase& c, Codebook* storage);

struct GoldenFrame {
  std::string name;
  uint64_t size = 0;
  uint64_t hash = 0;  // xxh64 of the frame
};
// Parses <set>/frames.txt; *ok = false when missing or malformed.
std::vector<GoldenFrame> golden_frames(bool* ok = nullptr, const std::string& set = kGoldenV2);
std::string format_golden_frames(const std::vector<GoldenFrame>& frames, const std::string& set = kGoldenV2);

// Path of the committed .sz file of a case (it may not exist: only the
// smaller frames are committed whole; frames.txt pins every frame).
std::string golden_sz_path(const std::string& name, const std::string& set = kGoldenV2);

}  // namespace splitzip::test
