/* SPDX-License-Identifier: Apache-2.0 */
// Scalar encode/decode of an element range: the HWY_SCALAR target and the
// tails of the vector kernels. Same stream rules as the reference, but
// writes whole bytes (no read-modify-write), so ranges owned by different
// threads never touch the same byte.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype_traits.h"
#include "core/residual.h"
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
  for (uint64_t g0 = i0; g0 < i1; g0 += 8) {
    const auto cnt = static_cast<uint32_t>(i1 - g0 < 8 ? i1 - g0 : 8);
    uint32_t r[8];
    for (uint32_t k = 0; k < cnt; ++k) {
      const uint64_t i = g0 + k;
      const typename T::Bits v = load_bits<T>(src + i * T::kBytes);
      const uint32_t e = T::exponent(v);
      r[k] = T::residual(v);
      const uint32_t c1 = t.code1_of[e];
      if (c1 == 0) sink->add(i, e);
      const uint32_t code = c1 ? c1 - 1 : 0;
      if (i & 1) {
        s.codes[i >> 1] = static_cast<uint8_t>(code_lo | (code << 4));
      } else {
        code_lo = code;
      }
    }
    store_residual_octet<T>(s.res, s.high, g0 >> 3, cnt, r);
  }
  if (i1 > i0 && (i1 & 1)) s.codes[(i1 - 1) >> 1] = static_cast<uint8_t>(code_lo);
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
    const typename T::Bits v = T::join(t.exp[c], load_residual<T>(s.res, s.high, i));
    std::memcpy(out + (i - i0) * T::kBytes, &v, sizeof v);
  }
  return max_code;
}

}  // namespace cpu
}  // namespace splitzip
