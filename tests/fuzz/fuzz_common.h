/* SPDX-License-Identifier: Apache-2.0 */
// Shared pieces of the fuzz targets: input slicing, the "compress case"
// decoded from fuzz bytes, and a failure macro that crashes loudly (libFuzzer
// and the replay driver both treat abort() as a finding).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

#define FUZZ_CHECK(cond, ...)                                                   \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                        \
      std::fprintf(stderr, "\n");                                               \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

namespace szfuzz {

// Hands out fuzz bytes front to back; zeros once they run out.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  uint8_t u8() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  uint32_t u16() { return u8() | (uint32_t{u8()} << 8); }
  uint32_t u32() { return u16() | (u16() << 16); }
  const uint8_t* rest() const { return p_; }
  size_t left() const { return left_; }

 private:
  const uint8_t* p_;
  size_t left_;
};

// One compress call described by fuzz bytes.
//   byte 0: dtype (1 + b % 4)
//   byte 1: chunk_log2 (6 + b % 10)
//   byte 2: bit0 checksum, bit1 user codebook, bit2 keep the codebook
//           unsanitized (may be invalid), bit3 synthesize data, bit4-5 threads
//           (0, 1, 2, 0), bit6 codebook dtype differs from the data dtype
//   byte 3: codebook count (b % 17, 0 only when unsanitized)
//   bytes 4..19: codebook entries
//   synthesized data: u32 n (% 70000), u8 escape rate /256, u32 seed
//   raw data: the rest, whole elements only
struct CompressCase {
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
  uint32_t chunk_log2 = splitzip::kDefaultChunkLog2;
  bool checksum = false;
  bool user_codebook = false;
  bool codebook_raw = false;
  bool codebook_dtype_mismatch = false;
  int threads = 0;
  bool capacity = false;  // compress with Mode::capacity (FORMAT.md 4.6)
  splitzip::Codebook codebook;
  std::vector<uint8_t> data;
  uint64_t n = 0;
};

CompressCase decode_case(const uint8_t* data, size_t size);

// Backends registered and available in this process, in registry order.
std::vector<std::string> available_backends();

}  // namespace szfuzz
