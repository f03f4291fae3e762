// SPDX-License-Identifier: Apache-2.0
// Scalar reference of the fp8_e4m3 coded layout (FORMAT.md 4.7), written
// element by element from the text (it does not use the group helpers of
// core/fp8_e4m3.h that the backends call, so it checks them).
#include <cstring>

#include "core/frame_rules.h"
#include "core/reference.h"

namespace splitzip {
namespace {

uint32_t exponent_of(uint8_t v) { return (v >> 3) & 15u; }
uint32_t residual_of(uint8_t v) { return ((v >> 7) << 3) | (v & 7u); }
uint8_t join_of(uint32_t e, uint32_t r) { return static_cast<uint8_t>(((r >> 3) << 7) | (e << 3) | (r & 7u)); }

void put_bits(uint8_t* s, uint64_t bit, uint32_t value, uint32_t width) {
  for (uint32_t b = 0; b < width; ++b, ++bit)
    if ((value >> b) & 1u) s[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
}
uint32_t get_bits(const uint8_t* s, uint64_t bit, uint32_t width) {
  uint32_t v = 0;
  for (uint32_t b = 0; b < width; ++b, ++bit) v |= uint32_t{(s[bit >> 3] >> (bit & 7)) & 1u} << b;
  return v;
}

}  // namespace

Status reference_e4m3_encode(const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget, uint64_t n_checks,
                             uint8_t* f, uint64_t* escapes_out) {
  int code_of[16];
  for (int e = 0; e < 16; ++e) code_of[e] = 7;
  for (uint32_t c = 0; c < cb.count; ++c) code_of[cb.entries[c]] = static_cast<int>(c);
  uint64_t escapes = 0;
  for (uint64_t i = 0; i < n; ++i) escapes += code_of[exponent_of(src[i])] == 7;
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(5, n, kDefaultChunkLog2, escapes, n_checks);
  std::memset(f + L.res_off, 0, L.res_size);
  std::memset(f + L.code_off, 0, L.code_size);
  std::memset(f + L.exp_off, 0, L.exp_size);
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t e = exponent_of(src[i]);
    const uint32_t c = static_cast<uint32_t>(code_of[e]);
    put_bits(f + L.res_off, 4 * i, residual_of(src[i]), 4);  // stream 1: nibble i
    put_bits(f + L.code_off, 3 * i, c, 3);                   // stream 3: 3-bit code i
    if (c == 7) put_bits(f + L.exp_off, 4 * k++, e, 4);      // stream 6: escape k, element order
  }
  *escapes_out = escapes;
  return Status::ok;
}

// Rules 14 (in-stream padding), 15, 17, 18 in that order, then the values.
Status reference_e4m3_decode(const FrameHeader& h, const uint8_t* f, uint8_t* dst) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  if (!stream_padding_ok(f, L)) return Status::bad_padding;  // 14
  uint64_t markers = 0;
  for (uint64_t i = 0; i < n; ++i) markers += get_bits(f + L.code_off, 3 * i, 3) == 7;
  if (markers != h.escape_count) return Status::bad_escape_counts;  // 15
  bool in_codebook[16] = {};
  for (uint32_t c = 0; c < h.codebook_count; ++c) in_codebook[h.codebook[c]] = true;
  for (uint64_t k = 0; k < h.escape_count; ++k)
    if (in_codebook[get_bits(f + L.exp_off, 4 * k, 4)]) return Status::bad_escape_value;  // 17
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t c = get_bits(f + L.code_off, 3 * i, 3);
    if (c != 7 && c >= h.codebook_count) return Status::bad_code;  // 18
  }
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t c = get_bits(f + L.code_off, 3 * i, 3);
    const uint32_t e = c == 7 ? get_bits(f + L.exp_off, 4 * k++, 4) : h.codebook[c];
    dst[i] = join_of(e, get_bits(f + L.res_off, 4 * i, 4));
  }
  return Status::ok;
}

}  // namespace splitzip
