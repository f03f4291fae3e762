/* SPDX-License-Identifier: Apache-2.0 */
// The format's hashes, one call for host and device: host code uses the
// maintained libxxhash, device code the implementation in xxh_device.h (which
// tests check against libxxhash).
#pragma once

#include <cstdint>

#include "core/xxh_device.h"
#if !defined(__CUDA_ARCH__)
#include <xxhash.h>
// libxxhash's runtime-dispatched XXH3 (AVX2/AVX-512 where the CPU has them):
// the plain entry point is its SSE2 build (docs/DESIGN.md, section 1).
#if (defined(__x86_64__) || defined(_M_X64)) && __has_include(<xxh_x86dispatch.h>)
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define SZ_HOST_XXH3 XXH3_64bits_dispatch
#define SZ_HOST_XXH3_UPDATE XXH3_64bits_update_dispatch
#else
#define SZ_HOST_XXH3 XXH3_64bits
#define SZ_HOST_XXH3_UPDATE XXH3_64bits_update
#endif
#endif

namespace splitzip {

// XXH3-64, seed 0, default secret (format v2).
SZ_HD uint64_t hash_xxh3(const void* p, uint64_t n) {
#if defined(__CUDA_ARCH__)
  return dev::xxh3_64(static_cast<const uint8_t*>(p), n);
#else
  return SZ_HOST_XXH3(p, static_cast<size_t>(n));
#endif
}

// XXH64, seed 0 (format v1).
SZ_HD uint64_t hash_xxh64(const void* p, uint64_t n) {
#if defined(__CUDA_ARCH__)
  return dev::xxh64(static_cast<const uint8_t*>(p), n);
#else
  return XXH64(p, static_cast<size_t>(n), 0);
#endif
}

// ---- v2 content checksum (FORMAT.md 4.5) ----
// The original bytes are cut into blocks of 2^kChecksumBlockLog2 bytes (the
// last may be shorter); each block's XXH3-64 is its block hash. The frame
// carries the low 32 bits of each block hash (checks stream) and, in the
// header, XXH3-64 of all block hashes as little-endian u64s.
inline constexpr uint32_t kChecksumBlockLog2 = 16;
inline constexpr uint64_t kChecksumBlockBytes = uint64_t{1} << kChecksumBlockLog2;

SZ_HD uint64_t checksum_blocks(uint64_t bytes) {
  return (bytes + kChecksumBlockBytes - 1) >> kChecksumBlockLog2;
}

// Length of checksum block b of `bytes` original bytes.
SZ_HD uint64_t check_block_len(uint64_t bytes, uint64_t b) {
  const uint64_t off = b << kChecksumBlockLog2;
  return bytes - off < kChecksumBlockBytes ? bytes - off : kChecksumBlockBytes;
}

// Hash of block b of `bytes` original bytes at p.
SZ_HD uint64_t block_hash(const uint8_t* p, uint64_t bytes, uint64_t b) {
  return hash_xxh3(p + (b << kChecksumBlockLog2), check_block_len(bytes, b));
}

// content_checksum from the block hashes (hosts and devices are little-endian).
SZ_HD uint64_t combine_block_hashes(const uint64_t* hashes, uint64_t count) {
  return hash_xxh3(hashes, 8 * count);
}

}  // namespace splitzip
