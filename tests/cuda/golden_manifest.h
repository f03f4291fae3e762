/* SPDX-License-Identifier: Apache-2.0 */
// GPU-produced golden frames (tests/golden/gpu): the case list the GPU
// generator runs, the MANIFEST.txt format, and the CPU-side check that each
// frame equals the CPU reference encoder's frame for the same input,
// codebook, chunk size and checksum flag.
//
// MANIFEST.txt: one frame per line, '#' starts a comment:
//   name dtype n chunk_log2 checksum(0/1) codebook source frame_file
// codebook: 32 hex digits (the 16 entries) ':' count, e.g. 7f7e...:16
// source:   data:<file>@<first>        elements of a bundled data file
//           f32data:<file>@<first>     a bundled .f32 file converted to dtype
//           synth:<generator>:<seed>:<escape_rate>:<shift>
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

struct GpuGoldenCase {
  std::string name;
  Dtype dtype = Dtype::bf16;
  uint64_t n = 0;
  uint32_t chunk_log2 = kDefaultChunkLog2;
  bool checksum = false;
  Codebook codebook{};
  // Codebook rule used by the generator: "dynamic" (top-16 of the input,
  // top-7 for fp8_e4m3), "body" (synth::body_codebook), "body:K" (its first
  // K entries) or "e4m3:DIGITS" (fp8_e4m3 entries, one digit each).
  std::string codebook_rule = "dynamic";
  std::string source;
  std::string frame_file;
};

// The cases the GPU generator writes (real KV, escape-rich, special values,
// edge sizes, every dtype); their codebooks are filled by resolve_codebook().
std::vector<GpuGoldenCase> gpu_golden_cases();

// The case's input bytes; empty with *error set when the source is bad.
std::vector<uint8_t> gpu_golden_input(const GpuGoldenCase& c, std::string* error);

// Sets c->codebook from c->codebook_rule and the input.
bool resolve_codebook(GpuGoldenCase* c, const std::vector<uint8_t>& input, std::string* error);

std::string manifest_line(const GpuGoldenCase& c);
// Parses MANIFEST.txt text; *error names the first bad line.
bool parse_manifest(const std::string& text, std::vector<GpuGoldenCase>* out, std::string* error);

// Verifies every frame listed in dir/MANIFEST.txt against the CPU reference.
// *verified counts the frames that matched; *failures lists mismatches.
// Returns false when the manifest is missing or unreadable.
bool verify_gpu_golden(const std::string& dir, uint64_t* verified, std::vector<std::string>* failures);

}  // namespace splitzip::test
