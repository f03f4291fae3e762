// The bytes of a frame outside streams 1..6, written and checked the same way
// by every backend: the block checks (stream 7), zero gaps (rule 14), the
// header, output limits (rules 12-13) and the content checksum (rule 19).
// Header-only and host/device.
#pragma once

#include <cstdint>

#include "core/codec_args.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/layout.h"

namespace splitzip {

// Stream 7: the low 32 bits of each block hash, little-endian.
SZ_HD void write_block_checks(uint8_t* out, const uint64_t* hashes, uint64_t count) {
  for (uint64_t b = 0; b < count; ++b) store_le32(out + 4 * b, static_cast<uint32_t>(hashes[b]));
}

SZ_HD void zero_ranges(uint8_t* frame, const Gap* gaps, int k) {
  for (int g = 0; g < k; ++g)
    for (uint64_t i = 0; i < gaps[g].size; ++i) frame[gaps[g].off + i] = 0;
}

SZ_HD bool ranges_zero(const uint8_t* frame, const Gap* gaps, int k) {
  for (int g = 0; g < k; ++g)
    if (!bytes_zero(frame + gaps[g].off, gaps[g].size)) return false;
  return true;
}

// The zero gaps of any frame (stored, mode 0, mode 1).
SZ_HD int frame_gaps(const FrameHeader& h, Gap gaps[7]) {
  return h.stored()                ? stored_gaps(h.dtype, h.n_elems, h.n_checks(), gaps)
         : h.mode == kModeCapacity ? capacity_gaps(capacity_layout_of(h), gaps)
                                   : coded_gaps(layout_of(h), gaps);
}

// Offset of stream 7 (block checks) in any frame.
SZ_HD uint64_t check_off_of(const FrameHeader& h) {
  return h.stored()                ? stored_check_off(h.dtype, h.n_elems)
         : h.mode == kModeCapacity ? capacity_layout_of(h).check_off
                                   : layout_of(h).check_off;
}

// Rule 14 on the bytes around the streams (gaps and stored padding).
SZ_HD bool frame_gaps_zero(const uint8_t* frame, const FrameHeader& h) {
  Gap gaps[7];
  return ranges_zero(frame, gaps, frame_gaps(h, gaps));
}

// Rules 12-13 for one frame whose header parsed. limit_left: output bytes
// still allowed (kNoBlock: none beyond capacity).
SZ_HD Status check_output_room(const FrameHeader& h, uint64_t capacity, uint64_t limit_left, bool have_dst) {
  const uint64_t out = h.decoded_bytes();
  if (out > limit_left) return Status::limit_exceeded;
  if (out > capacity || (!have_dst && out > 0)) return Status::dst_too_small;
  return Status::ok;
}

// Rule 19 for a v2 frame from the block hashes of the decoded output: the
// first block whose check differs, else the frame checksum.
SZ_HD Status verify_block_hashes(const FrameHeader& h, const uint8_t* frame, const uint64_t* hashes,
                                 uint64_t* corrupt_block) {
  const uint64_t count = h.n_checks();
  const uint64_t check_off = check_off_of(h);
  for (uint64_t b = 0; b < count; ++b) {
    if (load_le32(frame + check_off + 4 * b) != static_cast<uint32_t>(hashes[b])) {
      *corrupt_block = b;
      return Status::checksum_mismatch;
    }
  }
  if (combine_block_hashes(hashes, count) != h.content_checksum) return Status::checksum_mismatch;
  return Status::ok;
}

}  // namespace splitzip
