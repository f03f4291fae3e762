/* SPDX-License-Identifier: Apache-2.0 */
// FP8 E4M3 (dtype 5, FORMAT.md 4.7): the split, and the coded layout's
// per-group kernels, header-only and host/device. A group is 8 elements:
// 4 residual bytes (nibbles), 3 code bytes (3-bit codes) in the frame, so
// groups never share a byte and any thread, SIMD lane group or GPU lane can
// code any group once it knows how many escapes precede it (a prefix count
// of code-7 markers). The reference (core/reference_e4m3.cpp) writes the
// format element by element without these helpers; backends call them.
#pragma once

#include <cstdint>

#include "core/dtype_traits.h"

namespace splitzip {

struct Fp8E4M3Traits {
  static constexpr const char* kName = "fp8_e4m3";
  static constexpr uint32_t kId = 5;
  using Bits = uint8_t;
  static constexpr uint32_t kBytes = 1, kExpBits = 4, kManBits = 3;
  // No byte or 3-bit residual part: its residual nibbles are stream 1 of
  // its own layout (FORMAT.md 4.7).
  static constexpr uint32_t kResBytes = 0, kResHighBits = 0;
  SZ_HD static uint32_t exponent(Bits v) { return (v >> 3) & 0xFu; }
  // residual = sign << 3 | mantissa: one nibble.
  SZ_HD static uint32_t residual(Bits v) { return ((v >> 4) & 0x8u) | (v & 0x7u); }
  SZ_HD static Bits join(uint32_t e, uint32_t r) {
    return static_cast<Bits>(((r & 0x8u) << 4) | ((e & 0xFu) << 3) | (r & 0x7u));
  }
};

// The capacity mode's split of fp8_e4m3 (FORMAT.md 4.6.7): the whole byte is
// the coded symbol and there is no residual stream.
struct Fp8E4M3CapTraits {
  static constexpr const char* kName = "fp8_e4m3";
  static constexpr uint32_t kId = 5;
  using Bits = uint8_t;
  static constexpr uint32_t kBytes = 1, kExpBits = 8, kManBits = 0;
  static constexpr uint32_t kResBytes = 0, kResHighBits = 0;
  SZ_HD static uint32_t exponent(Bits v) { return v; }
  SZ_HD static uint32_t residual(Bits) { return 0; }
  SZ_HD static Bits join(uint32_t e, uint32_t) { return static_cast<Bits>(e); }
};

inline constexpr uint32_t kE4M3Escape = 7;       // code 7: the exponent is in the escape stream
inline constexpr uint32_t kE4M3MaxCodebook = 7;  // codebook entries usable as codes 0..6

// code_of[e] for e < 16: the code of exponent e, kE4M3Escape when absent.
SZ_HD void e4m3_code_table(const uint8_t cb[16], uint32_t count, uint8_t code_of[16]) {
  for (uint32_t e = 0; e < 16; ++e) code_of[e] = static_cast<uint8_t>(kE4M3Escape);
  for (uint32_t c = 0; c < count && c < kE4M3MaxCodebook; ++c) code_of[cb[c] & 15u] = static_cast<uint8_t>(c);
}

// Elements in group g of n elements (1..8).
SZ_HD uint32_t e4m3_group_len(uint64_t n, uint64_t g) {
  const uint64_t left = n - 8u * g;
  return left < 8u ? static_cast<uint32_t>(left) : 8u;
}

// Escapes (code-7 markers) the encoder will write for group g.
SZ_HD uint32_t e4m3_group_escapes(const uint8_t* src, uint64_t n, uint64_t g, const uint8_t code_of[16]) {
  const uint32_t m = e4m3_group_len(n, g);
  uint32_t k = 0;
  for (uint32_t j = 0; j < m; ++j) k += code_of[Fp8E4M3Traits::exponent(src[8u * g + j])] == kE4M3Escape;
  return k;
}

// Writes group g's residual and code bytes (whole bytes: padding bits of a
// short last group are 0) and its escape exponents, in element order, to
// esc[0..k). Returns k.
SZ_HD uint32_t e4m3_encode_group(const uint8_t* src, uint64_t n, uint64_t g, const uint8_t code_of[16],
                                 uint8_t* res, uint8_t* codes, uint8_t* esc) {
  const uint32_t m = e4m3_group_len(n, g);
  uint32_t rw = 0, cw = 0, k = 0;
  for (uint32_t j = 0; j < m; ++j) {
    const uint8_t v = src[8u * g + j];
    const uint32_t e = Fp8E4M3Traits::exponent(v);
    const uint32_t c = code_of[e];
    rw |= Fp8E4M3Traits::residual(v) << (4u * j);
    cw |= c << (3u * j);
    if (c == kE4M3Escape) esc[k++] = static_cast<uint8_t>(e);
  }
  const uint32_t rbytes = (4u * m + 7u) / 8u, cbytes = (3u * m + 7u) / 8u;
  for (uint32_t b = 0; b < rbytes; ++b) res[4u * g + b] = static_cast<uint8_t>(rw >> (8u * b));
  for (uint32_t b = 0; b < cbytes; ++b) codes[3u * g + b] = static_cast<uint8_t>(cw >> (8u * b));
  return k;
}

// Group g's codes as one 24-bit word (bits past the group's elements as stored).
SZ_HD uint32_t e4m3_code_word(const uint8_t* codes, uint64_t n, uint64_t g) {
  const uint32_t cbytes = (3u * e4m3_group_len(n, g) + 7u) / 8u;
  uint32_t w = 0;
  for (uint32_t b = 0; b < cbytes; ++b) w |= uint32_t{codes[3u * g + b]} << (8u * b);
  return w;
}

// Markers in group g; *bad_code set when a code names no codebook entry
// (>= count and != 7).
SZ_HD uint32_t e4m3_group_markers(const uint8_t* codes, uint64_t n, uint64_t g, uint32_t count, bool* bad_code) {
  const uint32_t m = e4m3_group_len(n, g);
  const uint32_t w = e4m3_code_word(codes, n, g);
  uint32_t k = 0;
  for (uint32_t j = 0; j < m; ++j) {
    const uint32_t c = (w >> (3u * j)) & 7u;
    k += c == kE4M3Escape;
    if (c != kE4M3Escape && c >= count) *bad_code = true;
  }
  return k;
}

// Escape exponent number i from the nibble stream.
SZ_HD uint32_t e4m3_escape_at(const uint8_t* esc, uint64_t i) { return (esc[i >> 1] >> ((i & 1u) * 4u)) & 0xFu; }

// Decodes group g into dst[8g ..]; esc_index = escapes before the group.
// Codes were checked (e4m3_group_markers). *bad_escape set when an escape
// exponent is in the codebook (FORMAT.md rule 17).
SZ_HD void e4m3_decode_group(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, uint64_t n, uint64_t g,
                             const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index, uint8_t* dst,
                             bool* bad_escape) {
  const uint32_t m = e4m3_group_len(n, g);
  const uint32_t w = e4m3_code_word(codes, n, g);
  uint32_t rw = 0;
  for (uint32_t b = 0; b < (4u * m + 7u) / 8u; ++b) rw |= uint32_t{res[4u * g + b]} << (8u * b);
  for (uint32_t j = 0; j < m; ++j) {
    const uint32_t c = (w >> (3u * j)) & 7u;
    uint32_t e;
    if (c == kE4M3Escape) {
      e = e4m3_escape_at(esc, esc_index++);
      if (code_of[e] != kE4M3Escape) *bad_escape = true;
    } else {
      e = cb[c];
    }
    dst[8u * g + j] = Fp8E4M3Traits::join(e, (rw >> (4u * j)) & 0xFu);
  }
}

}  // namespace splitzip
