/* SPDX-License-Identifier: Apache-2.0 */
// Scalar encode/decode of an element range: the HWY_SCALAR target and the
// tails of the vector kernels. Same stream rules as the reference, but
// writes whole bytes (no read-modify-write), so ranges owned by different
// threads never touch the same byte.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype_traits.h"
#include "cpu/kernels.h"

#if defined(__GNUC__)
#define SPLITZIP_NOINLINE __attribute__((noinline))
#else
#define SPLITZIP_NOINLINE
#endif

namespace splitzip {
namespace cpu {

template <class T>
inline typename T::Bits load_bits(const uint8_t* p) {
  typename T::Bits v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Records the escapes flagged in m (bit k: element first + k) of one
// 64-element word that lies inside one chunk; exponents re-read from src.
template <class T>
SPLITZIP_NOINLINE void record_escape_word(const uint8_t* src, uint64_t m, uint64_t first,
                                                  EscapeSink* sink) {
  // At most 64 (counted in the loop: this file is built for the baseline
  // target, where __builtin_popcountll is a libgcc call).
  sink->reserve_more(64);
  uint16_t* pos = sink->pos.data() + sink->size;
  uint8_t* exp = sink->exp.data() + sink->size;
  const auto base = static_cast<uint16_t>(first & ((uint64_t{1} << sink->chunk_log2) - 1));
  uint32_t k = 0;
  for (; m != 0; m &= m - 1, ++k) {
    const unsigned bit = static_cast<unsigned>(__builtin_ctzll(m));
    *pos++ = static_cast<uint16_t>(base + bit);
    *exp++ = static_cast<uint8_t>(T::exponent(load_bits<T>(src + (first + bit) * T::kBytes)));
  }
  sink->size += k;
  sink->bump_count(first >> sink->chunk_log2, k);
}

// Elements [i0, i1); i0 is a multiple of 8 (3-bit groups and code bytes
// start on byte boundaries).
template <class T>
void encode_scalar(const uint8_t* src, uint64_t i0, uint64_t i1, const EncodeTables& t,
                   const Streams& s, EscapeSink* sink) {
  uint32_t code_lo = 0;     // pending low nibble of a code byte
  uint32_t acc3 = 0;        // pending 3-bit parts of the current group of 8
  for (uint64_t i = i0; i < i1; ++i) {
    const typename T::Bits v = load_bits<T>(src + i * T::kBytes);
    const uint32_t e = T::exponent(v);
    const uint32_t r = T::residual(v);
    for (uint32_t b = 0; b < T::kResBytes; ++b)
      s.res[i * T::kResBytes + b] = static_cast<uint8_t>(r >> (8 * b));
    if (T::kResHighBits) {
      acc3 |= ((r >> (8 * T::kResBytes)) & 7u) << (3 * (i & 7));
      if ((i & 7) == 7) {
        uint8_t* p = s.high + 3 * (i >> 3);
        p[0] = static_cast<uint8_t>(acc3);
        p[1] = static_cast<uint8_t>(acc3 >> 8);
        p[2] = static_cast<uint8_t>(acc3 >> 16);
        acc3 = 0;
      }
    }
    const uint32_t c1 = t.code1_of[e];
    if (c1 == 0) sink->add(i, e);
    const uint32_t code = c1 ? c1 - 1 : 0;
    if (i & 1) {
      s.codes[i >> 1] = static_cast<uint8_t>(code_lo | (code << 4));
    } else {
      code_lo = code;
    }
  }
  if (i1 > i0 && (i1 & 1)) s.codes[(i1 - 1) >> 1] = static_cast<uint8_t>(code_lo);
  if (T::kResHighBits && (i1 & 7) && i1 > i0) {
    // Last partial group: ceil(3k/8) bytes, unused high bits zero.
    const uint64_t k = i1 & 7;
    uint8_t* p = s.high + 3 * (i1 >> 3);
    const uint64_t bytes = (3 * k + 7) / 8;
    for (uint64_t b = 0; b < bytes; ++b) p[b] = static_cast<uint8_t>(acc3 >> (8 * b));
  }
}

// Replaces the exponent of element i at base with e (escape patch).
template <class T>
inline void patch_bits(uint8_t* base, uint64_t i, uint32_t e) {
  typename T::Bits v;
  std::memcpy(&v, base + i * T::kBytes, sizeof v);
  v = T::join(e, T::residual(v));
  std::memcpy(base + i * T::kBytes, &v, sizeof v);
}

// Elements [i0, i1) to out (element i at out + (i - i0) * bytes). Returns
// the largest code seen.
template <class T>
uint32_t decode_scalar(const ConstStreams& s, uint64_t i0, uint64_t i1, const DecodeTables& t,
                       uint8_t* out) {
  uint32_t max_code = 0;
  for (uint64_t i = i0; i < i1; ++i) {
    const uint32_t c = (s.codes[i >> 1] >> ((i & 1) * 4)) & 0xFu;
    max_code = c > max_code ? c : max_code;
    uint32_t r = 0;
    for (uint32_t b = 0; b < T::kResBytes; ++b) r |= uint32_t{s.res[i * T::kResBytes + b]} << (8 * b);
    if (T::kResHighBits) {
      const uint64_t bit = 3 * i;
      uint32_t w = s.high[bit >> 3];
      // The second byte exists whenever the 3 bits straddle it.
      if ((bit & 7) > 5) w |= uint32_t{s.high[(bit >> 3) + 1]} << 8;
      r |= ((w >> (bit & 7)) & 7u) << (8 * T::kResBytes);
    }
    const typename T::Bits v = T::join(t.exp[c], r);
    std::memcpy(out + (i - i0) * T::kBytes, &v, sizeof v);
  }
  return max_code;
}

}  // namespace cpu
}  // namespace splitzip
