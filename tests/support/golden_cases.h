/* SPDX-License-Identifier: Apache-2.0 */
// The golden cases (tests/golden/cases.txt) and their committed frames
// (tests/golden/frames.txt). Every backend's tests iterate the same list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/synthetic.h"
#include "splitzip/splitzip.hpp"

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

// Parses cases.txt. *error gets a message on a malformed file.
std::vector<GoldenCase> golden_cases(std::string* error = nullptr);

// The case's input bytes and its compress options. The codebook, if any,
// is stored in *storage, which must outlive the options.
std::vector<uint8_t> golden_input(const GoldenCase& c);
CompressOptions golden_options(const GoldenCase& c, Codebook* storage);

struct GoldenFrame {
  std::string name;
  uint64_t size = 0;
  uint64_t hash = 0;  // xxh64 of the frame
};
// Parses frames.txt; *ok = false when missing or malformed.
std::vector<GoldenFrame> golden_frames(bool* ok = nullptr);
std::string format_golden_frames(const std::vector<GoldenFrame>& frames);

// Path of the committed .sz file of a case (it may not exist: only a few
// small cases have one).
std::string golden_sz_path(const std::string& name);

}  // namespace splitzip::test
