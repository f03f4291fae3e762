/* SPDX-License-Identifier: Apache-2.0 */
// Frame geometry (FORMAT.md 4): stream offsets of coded and stored frames,
// the zero gaps between streams, the in-stream padding rule and the escape
// budget. Header-only and host/device: every backend calls these.
#pragma once

#include <cstdint>

#include "core/codec.h"  // the dtype table: geometry_of(), dtype_id_valid()

#include "core/residual.h"  // the 3-bit string's padding rule

namespace splitzip {

SZ_HD uint64_t align16(uint64_t x) { return (x + 15u) & ~uint64_t{15}; }
SZ_HD uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

SZ_HD uint32_t exponent_limit(uint32_t dtype_id) { return 1u << geometry_of(dtype_id).exp_bits; }
// Codebook entries a coded frame of the dtype may use: 16, or 7 for fp8_e4m3
// (3-bit codes, code 7 = escape; FORMAT.md 4.7).
SZ_HD uint32_t codebook_limit(uint32_t dtype_id) { return dtype_id == kDtypeE4M3 ? 7u : 16u; }

// Offsets are from the frame start. An absent stream has size 0 and its
// offset equals the next stream's.
// fp8_e4m3 (FORMAT.md 4.7) uses streams 1 (residual nibbles), 3 (3-bit
// codes), 6 (escape exponent nibbles) and 7; streams 2, 4 and 5 are absent.
struct FrameLayout {
  uint32_t dtype_id;
  uint64_t n, n_chunks, escapes;
  uint32_t chunk_log2;
  uint64_t res_off, res_size;        // stream 1: byte part
  uint64_t high_off, high_size;      // stream 2: packed 3-bit part
  uint64_t code_off, code_size;      // stream 3: nibbles
  uint64_t count_off, count_size;    // stream 4: u16 per chunk
  uint64_t pos_off, pos_size;        // stream 5: u16 per escape
  uint64_t exp_off, exp_size;        // stream 6: u8 per escape
  uint64_t check_off, check_size;    // stream 7 (v2, CHECKSUM): u32 per checksum block
  uint64_t frame_size;
};

// Next offset: absent streams add no padding.
SZ_HD uint64_t next_offset(uint64_t off, uint64_t size) { return size ? align16(off + size) : off; }

// n_checks: checksum blocks recorded in stream 7 (0 for v1 or no checksum).
SZ_HD FrameLayout coded_layout(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t escapes,
                               uint64_t n_checks = 0) {
  const DtypeGeometry g = geometry_of(dtype_id);
  // Every field is assigned below: value-initializing the 152 bytes first
  // compiles to a rep stos, a measurable cost per 16 KiB batch page.
  FrameLayout L;
  L.dtype_id = dtype_id;
  L.n = n;
  L.chunk_log2 = chunk_log2;
  L.escapes = escapes;
  L.n_chunks = (n + (uint64_t{1} << chunk_log2) - 1) >> chunk_log2;
  uint64_t off = 64;
  if (dtype_id == kDtypeE4M3) {
    L.res_off = off;   L.res_size = (n + 1u) / 2u;          off = next_offset(off, L.res_size);
    L.high_off = off;  L.high_size = 0;
    L.code_off = off;  L.code_size = (3u * n + 7u) / 8u;    off = next_offset(off, L.code_size);
    L.count_off = off; L.count_size = 0;
    L.pos_off = off;   L.pos_size = 0;
    L.exp_off = off;   L.exp_size = (escapes + 1u) / 2u;    off = next_offset(off, L.exp_size);
  } else {
  L.res_off = off;   L.res_size = n * g.res_bytes;          off = next_offset(off, L.res_size);
  L.high_off = off;  L.high_size = g.res_high ? (3u * n + 7u) / 8u : 0;
  off = next_offset(off, L.high_size);
  L.code_off = off;  L.code_size = (n + 1u) / 2u;           off = next_offset(off, L.code_size);
  L.count_off = off; L.count_size = 2u * L.n_chunks;        off = next_offset(off, L.count_size);
  L.pos_off = off;   L.pos_size = 2u * escapes;             off = next_offset(off, L.pos_size);
  L.exp_off = off;   L.exp_size = escapes;                  off = next_offset(off, L.exp_size);
  }
  L.check_off = off; L.check_size = 4u * n_checks;          off = next_offset(off, L.check_size);
  L.frame_size = align16(off);
  return L;
}

// Stored frame: header, the original bytes, zero pad, then stream 7.
SZ_HD uint64_t stored_data_end(uint32_t dtype_id, uint64_t n) { return 64u + n * geometry_of(dtype_id).bytes; }
SZ_HD uint64_t stored_check_off(uint32_t dtype_id, uint64_t n) { return align16(stored_data_end(dtype_id, n)); }
SZ_HD uint64_t stored_frame_size(uint32_t dtype_id, uint64_t n, uint64_t n_checks = 0) {
  return stored_check_off(dtype_id, n) + align16(4u * n_checks);
}

// Byte ranges that must be zero (rule 14) outside the streams: the gap after
// each present stream up to the next 16-byte boundary.
struct Gap {
  uint64_t off, size;
};
// The gaps after `count` streams (offs, sizes); absent streams (size 0) have none.
SZ_HD int stream_gaps(const uint64_t* offs, const uint64_t* sizes, int count, Gap* out) {
  int k = 0;
  for (int s = 0; s < count; ++s) {
    if (sizes[s] == 0) continue;
    const uint64_t end = offs[s] + sizes[s];
    if (align16(end) > end) out[k++] = {end, align16(end) - end};
  }
  return k;
}
SZ_HD int coded_gaps(const FrameLayout& L, Gap out[7]) {
  const uint64_t offs[7] = {L.res_off, L.high_off, L.code_off, L.count_off, L.pos_off, L.exp_off, L.check_off};
  const uint64_t sizes[7] = {L.res_size, L.high_size, L.code_size, L.count_size, L.pos_size, L.exp_size,
                             L.check_size};
  return stream_gaps(offs, sizes, 7, out);
}
SZ_HD int stored_gaps(uint32_t dtype_id, uint64_t n, uint64_t n_checks, Gap out[2]) {
  int k = 0;
  const uint64_t end = stored_data_end(dtype_id, n);
  if (align16(end) > end) out[k++] = {end, align16(end) - end};
  const uint64_t cend = stored_check_off(dtype_id, n) + 4u * n_checks;
  if (align16(cend) > cend) out[k++] = {cend, align16(cend) - cend};
  return k;
}
SZ_HD bool bytes_zero(const uint8_t* p, uint64_t n) {
  uint8_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) acc |= p[i];
  return acc == 0;
}

// Rule 14 inside streams: the high nibble of the last code byte (odd n) and
// the unused high bits of the last 3-bit byte are zero.
SZ_HD bool stream_padding_ok(const uint8_t* frame, const FrameLayout& L) {
  if (L.dtype_id == kDtypeE4M3) {  // residual and escape nibbles, 3-bit codes
    if ((L.n & 1u) && (frame[L.res_off + L.res_size - 1] >> 4) != 0) return false;
    if ((L.escapes & 1u) && (frame[L.exp_off + L.exp_size - 1] >> 4) != 0) return false;
    return bits3_padding_ok(frame + L.code_off, L.code_size, L.n);
  }
  if ((L.n & 1u) && (frame[L.code_off + L.code_size - 1] >> 4) != 0) return false;
  return bits3_padding_ok(frame + L.high_off, L.high_size, L.n);
}

inline constexpr uint64_t kNoEscapeBudget = ~uint64_t{0};

// FORMAT.md 4.4: the largest E <= n whose coded frame is smaller than the
// stored frame and at most `capacity` bytes; kNoEscapeBudget when even E = 0
// does not qualify (then the frame is stored).
SZ_HD uint64_t escape_budget(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t capacity,
                             uint64_t n_checks = 0) {
  if (!dtype_id_valid(dtype_id) || n == 0) return kNoEscapeBudget;
  const uint64_t stored = stored_frame_size(dtype_id, n, n_checks);
  const uint64_t limit = capacity < stored - 1 ? capacity : stored - 1;
  if (coded_layout(dtype_id, n, chunk_log2, 0, n_checks).frame_size > limit) return kNoEscapeBudget;
  // coded_size is non-decreasing in E: binary search the largest E <= n that fits.
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (coded_layout(dtype_id, n, chunk_log2, mid, n_checks).frame_size <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A linear upper bound of escape_budget() for any n' <= n, so a host can size
// escape staging for a whole batch from its element total: a coded frame
// spends at least n*(k + high/8 + 1/2) + 3E payload bytes and stays below the
// stored size.
SZ_HD uint64_t escape_budget_bound(uint32_t dtype_id, uint64_t n) {
  const DtypeGeometry g = geometry_of(dtype_id);
  if (g.bytes == 0) return 0;
  // fp8_e4m3: 7 bits per element + 4 per escape, below 8 per element.
  if (dtype_id == kDtypeE4M3) return n / 4u + 33u;
  const uint64_t eighths = 8u * (g.bytes - g.res_bytes) - 4u - g.res_high;
  return (n * eighths / 8u + 15u) / 3u + 1u;
}

}  // namespace splitzip
