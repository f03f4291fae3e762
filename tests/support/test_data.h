/* SPDX-License-Identifier: Apache-2.0 */
// Bundled real KV data (data/kv/stories260k) for tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

// $SPLITZIP_DATA_DIR if set and non-empty, else the source tree's copy.
std::string data_dir();
// $SPLITZIP_GOLDEN_DIR if set and non-empty, else tests/golden.
std::string golden_dir();

// Whole file as bytes; empty vector and *ok = false when missing.
std::vector<uint8_t> read_file(const std::string& path, bool* ok = nullptr);
bool write_file(const std::string& path, const std::vector<uint8_t>& bytes);
// A bundled data file by name, e.g. "layer02_k.bf16".
std::vector<uint8_t> load_data_file(const std::string& name, bool* ok = nullptr);

// The bundled bf16 files (layer00_k.bf16 ... layer04_v.bf16) and f32 ones.
std::vector<std::string> bf16_data_files();
std::vector<std::string> f32_data_files();

// A real input in dtype: bf16 files as they are, fp32 from layer02_*.f32,
// fp16 and fp8_e5m2 converted from layer02_*.f32 (round to nearest even).
struct RealInput {
  std::string name;  // e.g. "layer02_k.f32->fp16"
  Dtype dtype;
  uint64_t n;
  std::vector<uint8_t> bytes;
};
std::vector<RealInput> real_inputs(Dtype dtype);

// The v2 content checksum of `bytes` bytes, written from FORMAT.md with
// libxxhash directly (not the format core): XXH3-64 of each 2^16-byte block,
// then XXH3-64 of those hashes as u64 little-endian. *checks (optional)
// gets the low 32 bits of each block hash (stream 7).
uint64_t expected_content_checksum(const void* data, uint64_t bytes, std::vector<uint32_t>* checks = nullptr);

}  // namespace splitzip::test
