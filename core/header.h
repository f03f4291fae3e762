// Frame header encode/parse/validate (FORMAT.md 4.1 and rules 1-13).
// Shared by every backend: no backend parses headers on its own.
#pragma once

#include <cstdint>

#include "splitzip/splitzip.hpp"
#include "layout.h"

namespace splitzip {

inline constexpr uint8_t kMagic[4] = {0x53, 0x5A, 0x4B, 0x56};  // "SZKV"
inline constexpr uint8_t kFlagStored = 1u << 0;
inline constexpr uint8_t kFlagChecksum = 1u << 1;
inline constexpr uint8_t kFlagsKnown = kFlagStored | kFlagChecksum;

struct FrameHeader {
  uint8_t version = kFormatVersion;
  uint8_t dtype = 0;
  uint8_t flags = 0;
  uint8_t chunk_log2 = kDefaultChunkLog2;
  uint64_t n_elems = 0;
  uint64_t escape_count = 0;
  uint64_t frame_size = 0;
  uint8_t codebook[16] = {};
  uint8_t codebook_count = 0;
  uint64_t content_checksum = 0;
  bool stored() const { return flags & kFlagStored; }
  bool has_checksum() const { return flags & kFlagChecksum; }
};

// Writes the 64 header bytes, header_check included.
void write_header(const FrameHeader& h, uint8_t out[64]);

// Rules 1-11 of FORMAT.md section 9, in order. src_size may exceed the frame.
Status parse_header(const void* src, uint64_t src_size, FrameHeader* out);

// The frame layout implied by a (valid, coded) header.
FrameLayout layout_of(const FrameHeader& h);

// Largest escape count whose coded frame is smaller than the stored frame and
// fits in capacity; -1 (all ones) when even E = 0 does not qualify.
uint64_t max_escapes(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t capacity);

inline constexpr uint64_t kNoEscapeBudget = ~uint64_t{0};

}  // namespace splitzip
