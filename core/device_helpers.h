// Host+device versions of the frame-layer helpers a GPU needs on its own:
// XXH64, header write/parse (FORMAT.md 4.1, rules 1-11), the escape budget
// (FORMAT.md 4.4) and codebook lookups. They mirror core/header.cpp and
// core/xxh64.cpp bit for bit; tests/cuda checks them against those on the CPU.
// No CUDA headers: plain g++ compiles this too.
#pragma once

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/header.h"
#include "core/layout.h"

namespace splitzip {
namespace hd {

// ---- little-endian bytes (any alignment) ----
SZ_HD uint32_t le16(const uint8_t* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
SZ_HD uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
SZ_HD uint64_t le64(const uint8_t* p) { return uint64_t{le32(p)} | (uint64_t{le32(p + 4)} << 32); }
SZ_HD void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
SZ_HD void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
SZ_HD void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// ---- XXH64 (seed 0 in the format) ----
struct Xxh {
  static constexpr uint64_t P1 = 0x9E3779B185EBCA87ull;
  static constexpr uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
  static constexpr uint64_t P3 = 0x165667B19E3779F9ull;
  static constexpr uint64_t P4 = 0x85EBCA77C2B2AE63ull;
  static constexpr uint64_t P5 = 0x27D4EB2F165667C5ull;
};
SZ_HD uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
SZ_HD uint64_t xxh_round(uint64_t acc, uint64_t input) {
  acc += input * Xxh::P2;
  acc = rotl64(acc, 31);
  return acc * Xxh::P1;
}
SZ_HD uint64_t xxh_merge(uint64_t acc, uint64_t v) {
  acc ^= xxh_round(0, v);
  return acc * Xxh::P1 + Xxh::P4;
}
// Initial value of lane l (0..3) of the 32-byte stripe accumulators.
SZ_HD uint64_t xxh_lane_init(uint32_t lane, uint64_t seed) {
  switch (lane) {
    case 0: return seed + Xxh::P1 + Xxh::P2;
    case 1: return seed + Xxh::P2;
    case 2: return seed;
    default: return seed - Xxh::P1;
  }
}
// Combines the four lane accumulators after all full stripes (size >= 32).
SZ_HD uint64_t xxh_combine(const uint64_t v[4]) {
  uint64_t h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
  for (int i = 0; i < 4; ++i) h = xxh_merge(h, v[i]);
  return h;
}
// The tail (size mod 32 bytes at p) and the avalanche. h is the combined
// lanes (or seed + P5 when size < 32); size is the whole input's length.
SZ_HD uint64_t xxh_finish(uint64_t h, const uint8_t* p, uint64_t size) {
  h += size;
  uint64_t remaining = size & 31u;
  while (remaining >= 8) {
    h ^= xxh_round(0, le64(p));
    h = rotl64(h, 27) * Xxh::P1 + Xxh::P4;
    p += 8;
    remaining -= 8;
  }
  if (remaining >= 4) {
    h ^= uint64_t{le32(p)} * Xxh::P1;
    h = rotl64(h, 23) * Xxh::P2 + Xxh::P3;
    p += 4;
    remaining -= 4;
  }
  while (remaining > 0) {
    h ^= uint64_t{*p} * Xxh::P5;
    h = rotl64(h, 11) * Xxh::P1;
    ++p;
    --remaining;
  }
  h ^= h >> 33;
  h *= Xxh::P2;
  h ^= h >> 29;
  h *= Xxh::P3;
  h ^= h >> 32;
  return h;
}
// One lane over all full stripes: the GPU runs the four lanes in four
// threads, since each lane is an independent serial chain.
SZ_HD uint64_t xxh_lane(const uint8_t* p, uint64_t size, uint32_t lane, uint64_t seed) {
  uint64_t acc = xxh_lane_init(lane, seed);
  const uint64_t stripes = size >> 5;
  for (uint64_t s = 0; s < stripes; ++s) acc = xxh_round(acc, le64(p + 32 * s + 8 * lane));
  return acc;
}
SZ_HD uint64_t xxh64(const uint8_t* p, uint64_t size, uint64_t seed = 0) {
  uint64_t h;
  if (size >= 32) {
    uint64_t v[4];
    for (uint32_t l = 0; l < 4; ++l) v[l] = xxh_lane(p, size, l, seed);
    h = xxh_combine(v);
  } else {
    h = seed + Xxh::P5;
  }
  return xxh_finish(h, p + (size & ~uint64_t{31}), size);
}

// ---- header (FORMAT.md 4.1) ----
constexpr uint32_t kHeaderCheckOffset = 52;

SZ_HD uint32_t header_check(const uint8_t b[64]) {
  uint8_t tmp[64];
  for (int i = 0; i < 64; ++i) tmp[i] = b[i];
  for (int i = 0; i < 4; ++i) tmp[kHeaderCheckOffset + i] = 0;
  return static_cast<uint32_t>(xxh64(tmp, 64, 0));
}

// The 64 header bytes of h, header_check included (= write_header()).
SZ_HD void write_header(const FrameHeader& h, uint8_t out[64]) {
  for (int i = 0; i < 64; ++i) out[i] = 0;
  out[0] = 0x53;  // "SZKV"
  out[1] = 0x5A;
  out[2] = 0x4B;
  out[3] = 0x56;
  out[4] = h.version;
  out[5] = h.dtype;
  out[6] = h.flags;
  out[7] = h.chunk_log2;
  put64(out + 8, h.n_elems);
  put64(out + 16, h.escape_count);
  put64(out + 24, h.frame_size);
  for (int i = 0; i < 16; ++i) out[32 + i] = h.codebook[i];
  out[48] = h.codebook_count;
  put64(out + 56, h.content_checksum);
  put32(out + kHeaderCheckOffset, header_check(out));
}

// FORMAT.md 9 rule 9 on raw codebook bytes (validate_codebook()).
SZ_HD Status check_codebook(uint32_t dtype_id, const uint8_t cb[16], uint32_t count) {
  if (count < 1 || count > 16) return Status::bad_codebook;
  const uint32_t limit = geometry_of(dtype_id).exp_bits == 5 ? 32u : 256u;
  uint32_t seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t i = 0; i < 16; ++i) {
    const uint32_t e = cb[i];
    if (i >= count) {
      if (e != 0) return Status::bad_codebook;
      continue;
    }
    if (e >= limit) return Status::bad_codebook;
    if (seen[e >> 5] & (1u << (e & 31u))) return Status::bad_codebook;
    seen[e >> 5] |= 1u << (e & 31u);
  }
  return Status::ok;
}

SZ_HD uint64_t frame_size_of(const FrameHeader& h) {
  if (h.flags & kFlagStored) return stored_frame_size(h.dtype, h.n_elems);
  return coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count).frame_size;
}

// Rules 1-11 in order (= parse_header()). src_size may exceed the frame.
SZ_HD Status parse_header(const uint8_t* b, uint64_t src_size, FrameHeader* out) {
  if (src_size < 64) return Status::truncated;                                     // 1
  if (b[0] != 0x53 || b[1] != 0x5A || b[2] != 0x4B || b[3] != 0x56) return Status::bad_magic;  // 2
  if (b[4] != kFormatVersion) return Status::unsupported_version;                  // 3
  if (le32(b + kHeaderCheckOffset) != header_check(b)) return Status::header_corrupt;  // 4
  FrameHeader h;
  h.version = b[4];
  h.dtype = b[5];
  h.flags = b[6];
  h.chunk_log2 = b[7];
  h.n_elems = le64(b + 8);
  h.escape_count = le64(b + 16);
  h.frame_size = le64(b + 24);
  for (int i = 0; i < 16; ++i) h.codebook[i] = b[32 + i];
  h.codebook_count = b[48];
  h.content_checksum = le64(b + 56);
  if (h.dtype < 1 || h.dtype > 4) return Status::bad_dtype;                        // 5
  if ((h.flags & ~kFlagsKnown) != 0 || b[49] != 0 || b[50] != 0 || b[51] != 0)
    return Status::reserved_bits;                                                  // 6
  if (h.chunk_log2 < kMinChunkLog2 || h.chunk_log2 > kMaxChunkLog2) return Status::bad_chunk_size;  // 7
  if (h.n_elems > kMaxElems || h.escape_count > h.n_elems) return Status::bad_header;  // 8
  if (!(h.flags & kFlagChecksum) && h.content_checksum != 0) return Status::bad_header;
  if (h.flags & kFlagStored) {
    if (h.escape_count != 0 || h.codebook_count != 0) return Status::bad_header;
    for (int i = 0; i < 16; ++i)
      if (h.codebook[i] != 0) return Status::bad_header;
  } else {
    const Status s = check_codebook(h.dtype, h.codebook, h.codebook_count);      // 9
    if (s != Status::ok) return s;
  }
  if (h.frame_size != frame_size_of(h)) return Status::size_mismatch;              // 10
  if (src_size < h.frame_size) return Status::truncated;                           // 11
  *out = h;
  return Status::ok;
}

// ---- escape budget (FORMAT.md 4.4, = max_escapes()) ----
// Largest E <= n whose coded frame is smaller than the stored frame and at
// most `capacity` bytes; kNoEscapeBudget when even E = 0 does not qualify.
SZ_HD uint64_t escape_budget(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t capacity) {
  if (geometry_of(dtype_id).bytes == 0 || n == 0 || n > kMaxElems) return kNoEscapeBudget;
  const uint64_t stored = stored_frame_size(dtype_id, n);
  const uint64_t limit = capacity < stored - 1 ? capacity : stored - 1;
  if (coded_layout(dtype_id, n, chunk_log2, 0).frame_size > limit) return kNoEscapeBudget;
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (coded_layout(dtype_id, n, chunk_log2, mid).frame_size <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Upper bound of escape_budget() for any n' <= n of a dtype, linear so a
// host can size staging for a whole batch from its element total: a coded
// frame spends at least n*(k + high/8 + 1/2) + 3E payload bytes and must stay
// below 64 + n*bytes + 15.
SZ_HD uint64_t escape_budget_bound(uint32_t dtype_id, uint64_t n) {
  const DtypeGeometry g = geometry_of(dtype_id);
  if (g.bytes == 0) return 0;
  // 8 * (bytes - k - 1/2) - high = eighths of a byte left per element.
  const uint64_t eighths = 8u * (g.bytes - g.res_bytes) - 4u - g.res_high;
  return (n * eighths / 8u + 15u) / 3u + 1u;
}

// ---- codebook lookup ----
constexpr uint8_t kEscapeCode = 0x80;

// Code of exponent e under (cb, count), or kEscapeCode.
SZ_HD uint8_t code_of(const uint8_t cb[16], uint32_t count, uint32_t e) {
  for (uint32_t c = 0; c < count && c < 16; ++c)
    if (cb[c] == e) return static_cast<uint8_t>(c);
  return kEscapeCode;
}

// Top-16 calibration of a histogram (FORMAT.md 3, = Histogram::codebook()):
// count descending, ties by smaller exponent, non-zero counts only.
SZ_HD void top16_codebook(const uint64_t counts[256], uint32_t dtype_id, Codebook* out) {
  Codebook cb;
  cb.dtype = static_cast<Dtype>(dtype_id);
  cb.count = 0;
  for (int i = 0; i < 16; ++i) cb.entries[i] = 0;
  uint32_t taken[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint32_t k = 0; k < 16; ++k) {
    int best = -1;
    for (uint32_t e = 0; e < 256; ++e) {
      if ((taken[e >> 5] >> (e & 31u)) & 1u) continue;
      if (counts[e] == 0) continue;
      if (best < 0 || counts[e] > counts[best]) best = static_cast<int>(e);
    }
    if (best < 0) break;
    taken[best >> 5] |= 1u << (best & 31);
    cb.entries[k] = static_cast<uint8_t>(best);
    cb.count = static_cast<uint8_t>(k + 1);
  }
  *out = cb;
}

}  // namespace hd
}  // namespace splitzip
