/* SPDX-License-Identifier: Apache-2.0 */
// Arguments and outcome of one whole-frame call: the contract between the
// public API, the reference oracle and every backend (backends/backend.h).
#pragma once

#include <cstdint>

#include "core/capacity/tables.h"
#include "core/codec.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

inline constexpr uint64_t kNoBlock = ~uint64_t{0};

struct CompressArgs {
  Dtype dtype = Dtype::bf16;
  const void* src = nullptr;      // n elements
  uint64_t n = 0;
  void* dst = nullptr;            // the frame; never written past capacity
  uint64_t capacity = 0;
  const Codebook* codebook = nullptr;  // validated, of dtype; null: dynamic top-16
  uint32_t chunk_log2 = kDefaultChunkLog2;
  bool checksum = false;
  int threads = 0;                // 0: backend default
  void* workspace = nullptr;      // optional, workspace_size() bytes; null: the backend allocates
  uint64_t workspace_size = 0;
  Mode mode = Mode::fast;         // capacity: FORMAT.md 4.6 (codebook, chunk_log2 unused)
  // Capacity only: a parsed table set of dtype (FORMAT.md 4.9); the frame
  // names it and its blocks use it (a v3 frame). null: per-block tables.
  const CapTables* tables = nullptr;
};

struct DecompressArgs {
  const void* src = nullptr;      // one frame at src; src_size may extend past it
  uint64_t src_size = 0;
  void* dst = nullptr;
  uint64_t capacity = 0;
  uint64_t max_output = 0;        // 0: no limit beyond capacity (rule 12)
  bool verify_checksum = true;    // rule 19
  int threads = 0;
  void* workspace = nullptr;
  uint64_t workspace_size = 0;
  // The table sets the caller gives (FORMAT.md 4.9): a TABLES frame naming
  // none of them fails with MISSING_TABLES.
  const CapTables* const* tables = nullptr;
  uint64_t n_tables = 0;
};

struct FrameOutcome {
  Status status = Status::ok;
  uint64_t frame_size = 0;        // bytes written (compress) or consumed (decompress)
  uint64_t decoded_size = 0;      // decompress: bytes written to dst
  uint64_t corrupt_block = kNoBlock;  // CHECKSUM_MISMATCH of a v2 frame: first bad block
};

// Argument checks every compress entry point shares (before any byte moves).
inline Status check_compress_args(const CompressArgs& a) {
  if (!dtype_valid(a.dtype) || a.dst == nullptr || (a.src == nullptr && a.n > 0) || a.n > kMaxElems ||
      a.chunk_log2 < kMinChunkLog2 || a.chunk_log2 > kMaxChunkLog2 ||
      (a.mode != Mode::fast && a.mode != Mode::capacity))
    return Status::invalid_argument;
  // A valid dtype and a valid mode that make no codec: the pair is refused by name.
  if (codec_of(a.dtype, a.mode) == Codec::invalid) return Status::undefined_mode;
  if (a.codebook != nullptr && (validate_codebook(*a.codebook) != Status::ok || a.codebook->dtype != a.dtype))
    return Status::bad_codebook;
  if (a.tables != nullptr) {
    if (a.mode != Mode::capacity) return Status::invalid_argument;  // sets are the capacity mode's
    if (a.tables->dtype != static_cast<uint8_t>(a.dtype)) return Status::bad_codebook;
  }
  return Status::ok;
}

SZ_HD Status check_decompress_args(const DecompressArgs& a) {
  if ((a.src == nullptr && a.src_size > 0) || (a.dst == nullptr && a.capacity > 0) ||
      (a.tables == nullptr && a.n_tables > 0))
    return Status::invalid_argument;
  return Status::ok;
}

}  // namespace splitzip
