/* SPDX-License-Identifier: Apache-2.0 */
// The frame header (FORMAT.md 4.1), codebook rules (section 3, rule 9) and
// header validation (rules 1-11), header-only and host/device. Every backend
// and every entry point parses and writes headers through these functions.
#pragma once

#include <cstdint>

#include "core/capacity/format.h"
#include "core/hash.h"
#include "core/layout.h"
#include "core/le_bytes.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

inline constexpr uint8_t kFlagStored = 1u << 0;
inline constexpr uint8_t kFlagChecksum = 1u << 1;
inline constexpr uint8_t kFlagTensor = 1u << 2;  // v2: tensor descriptor after the payload (FORMAT.md 4.8)
inline constexpr uint8_t kFlagTables = 1u << 3;  // v3: mode 1 with a named table set (FORMAT.md 4.9)
inline constexpr uint8_t kFlagsKnown = kFlagStored | kFlagChecksum;
inline constexpr uint64_t kTensorFixedBytes = 32;            // section bytes before the dims
inline constexpr uint64_t kMaxTensorSection = uint64_t{1} << 25;
inline constexpr uint32_t kHeaderCheckOffset = 52;
inline constexpr uint8_t kModeNibble = 0;  // v2 byte 49: the 4-bit code of FORMAT.md 4.2
static_assert(kModeNibble == mode_of(Codec::nibble) && kModeCapacity == mode_of(Codec::capacity),
              "header mode bytes are codec_of()'s");

struct FrameHeader {
  uint8_t version = 2;          // frame_version(): 3 only for v3 features
  uint8_t dtype = 0;
  uint8_t flags = 0;
  uint8_t chunk_log2 = kDefaultChunkLog2;
  uint8_t mode = kModeNibble;   // v2 only
  uint8_t block_log2 = 0;       // v2: kChecksumBlockLog2 with CHECKSUM, else 0
  uint64_t n_elems = 0;
  uint64_t escape_count = 0;   // mode 1: exp_bytes, the size of stream 9 (FORMAT.md 4.6)
  uint64_t frame_size = 0;
  uint8_t codebook[16] = {};
  uint8_t codebook_count = 0;
  uint64_t content_checksum = 0;
  SZ_HD bool stored() const { return (flags & kFlagStored) != 0; }
  SZ_HD bool has_checksum() const { return (flags & kFlagChecksum) != 0; }
  SZ_HD bool has_tensor() const { return (flags & kFlagTensor) != 0; }
  SZ_HD bool has_tables() const { return (flags & kFlagTables) != 0; }
  // With TABLES: the set's id, header bytes 32..39 (FORMAT.md 4.9).
  SZ_HD uint64_t tables_id() const { return load_le64(codebook); }
  SZ_HD void set_tables_id(uint64_t id) { store_le64(codebook, id); }
  // Entries of stream 7: the v2 block checks.
  SZ_HD uint64_t n_checks() const {
    return version >= 2 && has_checksum() ? checksum_blocks(n_elems * geometry_of(dtype).bytes) : 0;
  }
  SZ_HD uint64_t decoded_bytes() const { return n_elems * geometry_of(dtype).bytes; }
};

// The version an encoder writes (V3 rule 1, FORMAT.md 12): the lowest that
// expresses the frame. 3 for the v3 features (a TABLES frame), else 2.
SZ_HD uint8_t frame_version(uint32_t dtype_id, uint32_t mode, uint8_t flags) {
  (void)dtype_id;
  (void)mode;
  return (flags & kFlagTables) != 0 ? 3 : 2;
}

// ---- codebook rules ----
// Rule 9 on raw codebook bytes.
SZ_HD Status check_codebook(uint32_t dtype_id, const uint8_t cb[16], uint32_t count) {
  if (!dtype_id_valid(dtype_id) || count < 1 || count > codebook_limit(dtype_id)) return Status::bad_codebook;
  const uint32_t limit = exponent_limit(dtype_id);
  uint32_t seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t i = 0; i < 16; ++i) {
    const uint32_t e = cb[i];
    if (i >= count) {
      if (e != 0) return Status::bad_codebook;
      continue;
    }
    if (e >= limit || (seen[e >> 5] >> (e & 31u)) & 1u) return Status::bad_codebook;
    seen[e >> 5] |= 1u << (e & 31u);
  }
  return Status::ok;
}

// FORMAT.md 3: count descending, ties by smaller exponent, non-zero counts
// only, at most `limit` (16, or codebook_limit(dtype): 7 for fp8_e4m3).
// Returns the count; entries past it are 0.
SZ_HD uint32_t top_codebook(const uint64_t counts[256], uint8_t entries[16], uint32_t limit) {
  // One pass in exponent order, keeping the best `limit` sorted: a later
  // exponent goes before an entry only with a strictly larger count, so
  // equal counts stay in exponent order.
  // Groups of 8 exponents with no count are skipped on one test: a 16 KiB
  // page has ~16 distinct exponents of 256, and a test per exponent
  // mispredicts around each (a dynamic-codebook batch calls this per page;
  // docs/DESIGN.md, section 6).
  if (limit > 16) limit = 16;
  uint64_t best[16];
  uint32_t k = 0;
  for (uint32_t g = 0; g < 256 && limit > 0; g += 8) {
    uint64_t any = 0;
    for (uint32_t j = 0; j < 8; ++j) any |= counts[g + j];
    if (any == 0) continue;
    for (uint32_t e = g; e < g + 8; ++e) {
      const uint64_t c = counts[e];
      if (c == 0 || (k == limit && c <= best[limit - 1])) continue;
      uint32_t i = k < limit ? k++ : limit - 1;
      for (; i > 0 && best[i - 1] < c; --i) {
        best[i] = best[i - 1];
        entries[i] = entries[i - 1];
      }
      best[i] = c;
      entries[i] = static_cast<uint8_t>(e);
    }
  }
  for (uint32_t i = k; i < 16; ++i) entries[i] = 0;
  return k;
}
SZ_HD uint32_t top16_codebook(const uint64_t counts[256], uint8_t entries[16]) {
  return top_codebook(counts, entries, 16);
}

// ---- header bytes ----
// v1: low 32 bits of XXH64 of the header with the check zeroed; v2: XXH3-64.
SZ_HD uint32_t header_check(const uint8_t b[64]) {
  uint8_t tmp[64];
  for (int i = 0; i < 64; ++i) tmp[i] = b[i];
  for (int i = 0; i < 4; ++i) tmp[kHeaderCheckOffset + i] = 0;
  return static_cast<uint32_t>(b[4] == 1 ? hash_xxh64(tmp, 64) : hash_xxh3(tmp, 64));
}

SZ_HD uint64_t frame_size_of(const FrameHeader& h) {
  if (h.stored()) return stored_frame_size(h.dtype, h.n_elems, h.n_checks());
  if (h.mode == kModeCapacity) return capacity_layout(h.dtype, h.n_elems, h.escape_count, h.n_checks()).frame_size;
  return coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count, h.n_checks()).frame_size;
}

SZ_HD FrameLayout layout_of(const FrameHeader& h) {
  return coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count, h.n_checks());
}

SZ_HD CapLayout capacity_layout_of(const FrameHeader& h) {
  return capacity_layout(h.dtype, h.n_elems, h.escape_count, h.n_checks());
}

// Writes the 64 header bytes, header_check included. Built in a local
// copy whose check field is still zero, so the check hashes it in place (no
// second copy) and the frame's lines are written once (a batch writes one
// header per 16 KiB page).
SZ_HD void write_header(const FrameHeader& h, uint8_t frame[64]) {
  alignas(16) uint8_t out[64];
  for (int i = 0; i < 64; ++i) out[i] = 0;
  out[0] = 0x53;  // "SZKV"
  out[1] = 0x5A;
  out[2] = 0x4B;
  out[3] = 0x56;
  out[4] = h.version;
  out[5] = h.dtype;
  out[6] = h.flags;
  out[7] = h.chunk_log2;
  store_le64(out + 8, h.n_elems);
  store_le64(out + 16, h.escape_count);
  store_le64(out + 24, h.frame_size);
  for (int i = 0; i < 16; ++i) out[32 + i] = h.codebook[i];
  out[48] = h.codebook_count;
  if (h.version >= 2) {
    out[49] = h.mode;
    out[50] = h.block_log2;
  }
  store_le64(out + 56, h.content_checksum);
  store_le32(out + kHeaderCheckOffset,
             static_cast<uint32_t>(h.version == 1 ? hash_xxh64(out, 64) : hash_xxh3(out, 64)));
  for (int i = 0; i < 64; ++i) frame[i] = out[i];
}

// Rules 1-11 of FORMAT.md section 9, in order. src_size may exceed the frame.
SZ_HD Status parse_header(const uint8_t* b, uint64_t src_size, FrameHeader* out) {
  if (src_size < 64) return Status::truncated;                                              // 1
  if (b == nullptr || out == nullptr) return Status::invalid_argument;
  if (b[0] != 0x53 || b[1] != 0x5A || b[2] != 0x4B || b[3] != 0x56) return Status::bad_magic;  // 2
  if (b[4] < kMinFormatVersion || b[4] > kFormatVersion) return Status::unsupported_version;  // 3
  if (load_le32(b + kHeaderCheckOffset) != header_check(b)) return Status::header_corrupt;   // 4
  FrameHeader h;
  h.version = b[4];
  h.dtype = b[5];
  h.flags = b[6];
  h.chunk_log2 = b[7];
  h.n_elems = load_le64(b + 8);
  h.escape_count = load_le64(b + 16);
  h.frame_size = load_le64(b + 24);
  for (int i = 0; i < 16; ++i) h.codebook[i] = b[32 + i];
  h.codebook_count = b[48];
  h.mode = h.version >= 2 ? b[49] : 0;
  h.block_log2 = h.version >= 2 ? b[50] : 0;
  h.content_checksum = load_le64(b + 56);
  if (!dtype_id_valid(h.dtype) || (h.version == 1 && codec_of(h.dtype, 0) != Codec::nibble))
    return Status::bad_dtype;  // 5: v1 frames are nibble frames (v2 adds fp8_e4m3)
  const bool reserved_bytes = h.version == 1 ? (b[49] | b[50] | b[51]) != 0 : b[51] != 0;
  const uint8_t known = h.version >= 3   ? static_cast<uint8_t>(kFlagsKnown | kFlagTensor | kFlagTables)
                        : h.version == 2 ? static_cast<uint8_t>(kFlagsKnown | kFlagTensor)
                                         : kFlagsKnown;
  if ((h.flags & ~known) != 0 || reserved_bytes) return Status::reserved_bits;               // 6
  if (h.chunk_log2 < kMinChunkLog2 || h.chunk_log2 > kMaxChunkLog2) return Status::bad_chunk_size;  // 7
  if (h.n_elems > kMaxElems) return Status::bad_header;                                      // 8
  // 4.4: encoders store empty input, so a coded frame (mode 0 or 1) of 0 elements is invalid.
  if (!h.stored() && h.n_elems == 0) return Status::bad_header;
  if (h.mode != kModeCapacity && h.escape_count > h.n_elems) return Status::bad_header;
  if (!h.has_checksum() && h.content_checksum != 0) return Status::bad_header;
  if (h.version >= 2 && h.block_log2 != (h.has_checksum() ? kChecksumBlockLog2 : 0u)) return Status::bad_header;
  const Codec codec = codec_of(h.dtype, h.mode);
  if (codec == Codec::invalid) return Status::bad_header;  // an unknown mode, or fp8_e4m3 in mode 1 (4.7)
  // v3 (FORMAT.md 12): a frame is written in the lowest version that expresses it.
  if (h.version >= 2 && h.version != frame_version(h.dtype, h.mode, h.flags)) return Status::bad_header;
  if (h.has_tables() && codec != Codec::capacity) return Status::bad_header;  // 4.9: mode 1 only
  if (codec == Codec::capacity) {  // FORMAT.md 4.6: never stored, no codebook, coded < stored
    if (h.stored() || h.codebook_count != 0) return Status::bad_header;
    for (int i = h.has_tables() ? 8 : 0; i < 16; ++i)  // 4.9: bytes 32..39 name the set
      if (h.codebook[i] != 0) return Status::bad_header;
    if (!capacity_sizes_ok(h.dtype, h.n_elems, h.escape_count, h.n_checks())) return Status::bad_header;
  } else if (h.stored()) {
    if (h.escape_count != 0 || h.codebook_count != 0) return Status::bad_header;
    for (int i = 0; i < 16; ++i)
      if (h.codebook[i] != 0) return Status::bad_header;
  } else {
    const Status s = check_codebook(h.dtype, h.codebook, h.codebook_count);                  // 9
    if (s != Status::ok) return s;
  }
  // 10; with TENSOR the descriptor section (FORMAT.md 4.8) follows the payload.
  const uint64_t payload = frame_size_of(h);
  if (h.has_tensor() ? (h.frame_size < payload + kTensorFixedBytes || h.frame_size - payload > kMaxTensorSection ||
                        (h.frame_size & 15u) != 0)
                     : h.frame_size != payload)
    return Status::size_mismatch;
  if (src_size < h.frame_size) return Status::truncated;                                      // 11
  *out = h;
  return Status::ok;
}

// A mode-1 frame that names a table set (FORMAT.md 4.9): flag, id, version.
SZ_HD void set_tables_fields(FrameHeader* h, uint64_t id) {
  h->flags |= kFlagTables;
  h->set_tables_id(id);
  h->version = frame_version(h->dtype, h->mode, h->flags);
}

// Header of a v2 frame the encoders write (a TABLES frame sets its flag,
// id and version 3: frame_version).
SZ_HD FrameHeader make_header(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, bool checksum) {
  FrameHeader h;
  h.version = frame_version(dtype_id, kModeNibble, h.flags);
  h.dtype = static_cast<uint8_t>(dtype_id);
  h.flags = checksum ? kFlagChecksum : 0;
  h.chunk_log2 = static_cast<uint8_t>(chunk_log2);
  h.block_log2 = checksum ? static_cast<uint8_t>(kChecksumBlockLog2) : 0;
  h.n_elems = n;
  return h;
}

}  // namespace splitzip
