// Stream offsets of a coded frame (FORMAT.md 4.2), host and device.
#pragma once

#include <cstdint>

#include "dtype_traits.h"

namespace splitzip {

SZ_HD uint64_t align16(uint64_t x) { return (x + 15u) & ~uint64_t{15}; }
SZ_HD uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// Per-dtype residual geometry by dtype id (1..4); zeros for an invalid id.
struct DtypeGeometry {
  uint32_t bytes;       // bytes per element
  uint32_t exp_bits;    // 8 or 5
  uint32_t res_bytes;   // k: residual byte-part bytes per element
  uint32_t res_high;    // 0 or 3: bits in the packed 3-bit part
};
SZ_HD DtypeGeometry geometry_of(uint32_t dtype_id) {
  switch (dtype_id) {
    case 1: return {2, 8, 1, 0};
    case 2: return {2, 5, 1, 3};
    case 3: return {4, 8, 3, 0};
    case 4: return {1, 5, 0, 3};
    default: return {0, 0, 0, 0};
  }
}

// Offsets are from the frame start. An absent stream has size 0 and its
// offset equals the next stream's.
struct FrameLayout {
  uint64_t n, n_chunks, escapes;
  uint32_t chunk_log2;
  uint64_t res_off, res_size;        // stream 1: byte part
  uint64_t high_off, high_size;      // stream 2: packed 3-bit part
  uint64_t code_off, code_size;      // stream 3: nibbles
  uint64_t count_off, count_size;    // stream 4: u16 per chunk
  uint64_t pos_off, pos_size;        // stream 5: u16 per escape
  uint64_t exp_off, exp_size;        // stream 6: u8 per escape
  uint64_t frame_size;
};

// Next offset: absent streams add no padding.
SZ_HD uint64_t next_offset(uint64_t off, uint64_t size) {
  return size ? align16(off + size) : off;
}

SZ_HD FrameLayout coded_layout(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2,
                               uint64_t escapes) {
  const DtypeGeometry g = geometry_of(dtype_id);
  FrameLayout L{};
  L.n = n;
  L.chunk_log2 = chunk_log2;
  L.escapes = escapes;
  L.n_chunks = (n + (uint64_t{1} << chunk_log2) - 1) >> chunk_log2;
  uint64_t off = 64;
  L.res_off = off;   L.res_size = n * g.res_bytes;          off = next_offset(off, L.res_size);
  L.high_off = off;  L.high_size = g.res_high ? (3u * n + 7u) / 8u : 0;
  off = next_offset(off, L.high_size);
  L.code_off = off;  L.code_size = (n + 1u) / 2u;           off = next_offset(off, L.code_size);
  L.count_off = off; L.count_size = 2u * L.n_chunks;        off = next_offset(off, L.count_size);
  L.pos_off = off;   L.pos_size = 2u * escapes;             off = next_offset(off, L.pos_size);
  L.exp_off = off;   L.exp_size = escapes;                  off = next_offset(off, L.exp_size);
  L.frame_size = align16(off);
  return L;
}

SZ_HD uint64_t stored_frame_size(uint32_t dtype_id, uint64_t n) {
  return 64u + align16(n * geometry_of(dtype_id).bytes);
}

}  // namespace splitzip
