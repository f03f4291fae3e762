/* SPDX-License-Identifier: Apache-2.0 */
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

// Rule 19, block b: its entry of stream 7 (at checks) against the block
// hash of the decoded output. Decoders may test blocks in any order and
// keep the lowest that fails.
SZ_HD bool block_check_ok(const uint8_t* checks, const uint64_t* hashes, uint64_t b) {
  return load_le32(checks + 4 * b) == static_cast<uint32_t>(hashes[b]);
}

// Rule 19's verdict for a v2 frame: first_bad, the lowest block whose check
// failed (kNoBlock: none); combined, combine_block_hashes of the output.
SZ_HD Status content_status(const FrameHeader& h, uint64_t first_bad, uint64_t combined) {
  return first_bad == kNoBlock && combined == h.content_checksum ? Status::ok : Status::checksum_mismatch;
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
  const uint8_t* checks = frame + check_off_of(h);
  for (uint64_t b = 0; b < count; ++b) {
    if (!block_check_ok(checks, hashes, b)) {
      *corrupt_block = b;
      return content_status(h, b, 0);
    }
  }
  return content_status(h, kNoBlock, combine_block_hashes(hashes, count));
}

}  // namespace splitzip

namespace splitzip {

// ---- the steps every compress_frame shares ----
struct FramePlan {
  uint32_t dtype_id;
  uint64_t bytes;     // original bytes
  uint64_t n_checks;  // stream 7 entries (0 without checksum)
  uint64_t budget;    // escape budget of FORMAT.md 4.4; kNoEscapeBudget: store
};

// escape_budget() of the last arguments it was asked, kept: the pages of a
// batch share them, and each search computes ~15 layouts.
struct BudgetMemo {
  uint32_t dtype_id = 0, chunk_log2 = 0;
  uint64_t n = 0, capacity = 0, n_checks = 0, budget = 0;
  bool valid = false;
  uint64_t get(uint32_t d, uint64_t n_, uint32_t log2, uint64_t cap, uint64_t checks) {
    if (!valid || d != dtype_id || n_ != n || log2 != chunk_log2 || cap != capacity || checks != n_checks) {
      budget = escape_budget(d, n_, log2, cap, checks);
      dtype_id = d;
      n = n_;
      chunk_log2 = log2;
      capacity = cap;
      n_checks = checks;
      valid = true;
    }
    return budget;
  }
};

// Sizes the frame before any byte moves; DST_TOO_SMALL when neither form fits.
// memo: optional, reused from frame to frame by one thread.
inline Status plan_frame(const CompressArgs& a, FramePlan* p, BudgetMemo* memo = nullptr) {
  const Status s = check_compress_args(a);
  if (s != Status::ok) return s;
  p->dtype_id = static_cast<uint32_t>(a.dtype);
  p->bytes = a.n * geometry_of(p->dtype_id).bytes;
  p->n_checks = a.checksum ? checksum_blocks(p->bytes) : 0;
  p->budget = memo != nullptr ? memo->get(p->dtype_id, a.n, a.chunk_log2, a.capacity, p->n_checks)
                              : escape_budget(p->dtype_id, a.n, a.chunk_log2, a.capacity, p->n_checks);
  if (a.mode == Mode::fast && p->budget == kNoEscapeBudget &&
      stored_frame_size(p->dtype_id, a.n, p->n_checks) > a.capacity)
    return Status::dst_too_small;
  return Status::ok;
}

// The header fields of a coded (mode 0) frame once its streams are written.
inline void set_coded_fields(FrameHeader* h, uint64_t escapes, const Codebook& cb) {
  h->escape_count = escapes;
  for (int i = 0; i < 16; ++i) h->codebook[i] = cb.entries[i];
  h->codebook_count = cb.count;
}

// A stored fallback after the escapes overflowed: it must fit too.
inline Status plan_stored(const CompressArgs& a, const FramePlan& p, FrameHeader* h) {
  if (stored_frame_size(p.dtype_id, a.n, p.n_checks) > a.capacity) return Status::dst_too_small;
  h->flags |= kFlagStored;
  h->escape_count = 0;
  h->codebook_count = 0;
  for (int i = 0; i < 16; ++i) h->codebook[i] = 0;
  return Status::ok;
}

// The closing steps once the payload is written: frame_size, stream 7 and
// the content checksum from the block hashes (with CHECKSUM), zero gaps, the
// header. hashes may be null without CHECKSUM.
SZ_HD void finish_frame(FrameHeader& h, uint8_t* frame, const uint64_t* hashes) {
  h.frame_size = frame_size_of(h);
  if (h.has_checksum()) {
    write_block_checks(frame + check_off_of(h), hashes, h.n_checks());
    h.content_checksum = combine_block_hashes(hashes, h.n_checks());
  }
  Gap gaps[7];
  zero_ranges(frame, gaps, frame_gaps(h, gaps));
  write_header(h, frame);
}

// ---- the steps every decompress_frame shares ----
// Argument checks, rules 1-11 on the 64 header bytes at `header` (a copy for
// device-resident frames), rules 12-13.
SZ_HD Status open_frame(const DecompressArgs& a, const uint8_t* header, FrameHeader* h) {
  Status s = check_decompress_args(a);
  if (s == Status::ok) s = parse_header(header, a.src_size, h);
  if (s == Status::ok) s = check_output_room(*h, a.capacity, a.max_output ? a.max_output : kNoBlock, a.dst != nullptr);
  return s;
}

// open_frame plus rule 14 outside the streams, for a frame in host memory.
inline Status open_host_frame(const DecompressArgs& a, FrameHeader* h) {
  const auto* f = static_cast<const uint8_t*>(a.src);
  Status s = open_frame(a, f, h);
  if (s == Status::ok && !frame_gaps_zero(f, *h)) s = Status::bad_padding;
  return s;
}

// Rule 19 on host-readable output, for decoders that do not hash in their
// coding pass: v1 XXH64 over the whole output, v2 block hashes.
inline Status check_content_host(const FrameHeader& h, const uint8_t* frame, const uint8_t* out,
                                 uint64_t* corrupt_block) {
  if (!h.has_checksum()) return Status::ok;
  const uint64_t bytes = h.decoded_bytes();
  if (h.version == 1) return hash_xxh64(out, bytes) == h.content_checksum ? Status::ok : Status::checksum_mismatch;
  const uint64_t count = h.n_checks();
  uint64_t local[64];
  uint64_t* hashes = count <= 64 ? local : new uint64_t[count];
  for (uint64_t b = 0; b < count; ++b) hashes[b] = block_hash(out, bytes, b);
  const Status s = verify_block_hashes(h, frame, hashes, corrupt_block);
  if (hashes != local) delete[] hashes;
  return s;
}

}  // namespace splitzip
