/* SPDX-License-Identifier: Apache-2.0 */
// Streams 1 and 2 (FORMAT.md 4.2, the same in mode 1): element i's residual
// r keeps its low 8 * kResBytes bits as little-endian bytes at
// res + i * kResBytes (stream 1) and its top 3 bits (kResHighBits) at bits
// 3i..3i+2 of an LSB-first bit string (stream 2). Header-only and
// host/device: the reference and every backend's scalar steps call these;
// loops that move whole vectors stay the backends' own.
#pragma once

#include <cstdint>

#include "core/dtype_traits.h"

namespace splitzip {

// ---- the 3-bit string ----

// Element i's 3 bits. The second byte is read only when the bits straddle
// it, and then it lies inside the string.
SZ_HD uint32_t load_bits3(const uint8_t* packed, uint64_t i) {
  const uint64_t bit = 3u * i;
  uint32_t w = packed[bit >> 3];
  if ((bit & 7u) > 5u) w |= uint32_t{packed[(bit >> 3) + 1]} << 8;
  return (w >> (bit & 7u)) & 7u;
}

// ORs element i's 3 bits into a string whose bytes were zeroed.
SZ_HD void or_bits3(uint8_t* packed, uint64_t i, uint32_t v) {
  const uint64_t bit = 3u * i;
  packed[bit >> 3] |= static_cast<uint8_t>(v << (bit & 7u));
  if ((bit & 7u) > 5u) packed[(bit >> 3) + 1] |= static_cast<uint8_t>(v >> (8u - (bit & 7u)));
}

// Rule 14 inside a 3-bit string of n elements in `size` bytes: the unused
// high bits of its last byte are zero.
SZ_HD bool bits3_padding_ok(const uint8_t* packed, uint64_t size, uint64_t n) {
  if (size == 0) return true;
  const uint64_t used = 3u * n - 8u * (size - 1);  // 1..8 bits of the last byte
  return used >= 8 || (packed[size - 1] >> used) == 0;
}

// ---- one element ----

template <class T>
SZ_HD uint32_t res_high3(uint32_t r) {
  return (r >> (8u * T::kResBytes)) & 7u;
}
template <class T>
SZ_HD uint32_t res_join(uint32_t byte_part, uint32_t high3) {
  return byte_part | (high3 << (8u * T::kResBytes));
}

template <class T>
SZ_HD void store_res_bytes(uint8_t* res, uint64_t i, uint32_t r) {
  if constexpr (T::kResBytes > 0)
    for (uint32_t b = 0; b < T::kResBytes; ++b) res[i * T::kResBytes + b] = static_cast<uint8_t>(r >> (8u * b));
}
template <class T>
SZ_HD uint32_t load_res_bytes(const uint8_t* res, uint64_t i) {
  uint32_t r = 0;
  if constexpr (T::kResBytes > 0)
    for (uint32_t b = 0; b < T::kResBytes; ++b) r |= uint32_t{res[i * T::kResBytes + b]} << (8u * b);
  return r;
}

// Element i's residual into streams 1-2 at res / high; stream 2's bytes
// were zeroed (its bits are ORed in).
template <class T>
SZ_HD void store_residual(uint8_t* res, uint8_t* high, uint64_t i, uint32_t r) {
  store_res_bytes<T>(res, i, r);
  if constexpr (T::kResHighBits != 0) or_bits3(high, i, res_high3<T>(r));
}
template <class T>
SZ_HD uint32_t load_residual(const uint8_t* res, const uint8_t* high, uint64_t i) {
  uint32_t r = load_res_bytes<T>(res, i);
  if constexpr (T::kResHighBits != 0) r = res_join<T>(r, load_bits3(high, i));
  return r;
}

// ---- a group of 8 elements (its 3-bit parts fill 3 whole bytes: a 24-bit
// little-endian word, the same as pext with mask 0x0707070707070707) ----

// Elements 8g .. 8g + cnt - 1 (cnt <= 8, residuals r[0..cnt)): their bytes
// of streams 1-2 written whole, so groups never share a byte (parallel
// writers) and a last partial group leaves zero padding bits.
template <class T>
SZ_HD void store_residual_octet(uint8_t* res, uint8_t* high, uint64_t g, uint32_t cnt, const uint32_t r[8]) {
  uint32_t w = 0;
  for (uint32_t k = 0; k < cnt; ++k) {
    store_res_bytes<T>(res, 8u * g + k, r[k]);
    w |= res_high3<T>(r[k]) << (3u * k);
  }
  if constexpr (T::kResHighBits != 0)
    for (uint32_t b = 0; b < (3u * cnt + 7u) / 8u; ++b) high[3u * g + b] = static_cast<uint8_t>(w >> (8u * b));
}
template <class T>
SZ_HD void load_residual_octet(const uint8_t* res, const uint8_t* high, uint64_t g, uint32_t cnt, uint32_t r[8]) {
  uint32_t w = 0;
  if constexpr (T::kResHighBits != 0)
    for (uint32_t b = 0; b < (3u * cnt + 7u) / 8u; ++b) w |= uint32_t{high[3u * g + b]} << (8u * b);
  for (uint32_t k = 0; k < cnt; ++k) r[k] = res_join<T>(load_res_bytes<T>(res, 8u * g + k), (w >> (3u * k)) & 7u);
}

// ---- a group held in registers ----
// The streams' bytes of a group starting at a multiple of 8 elements, as
// little-endian words: element k's byte part at byte k * kResBytes of
// res_words, its 3-bit part at bit 3k of high.
template <class T>
SZ_HD void image_put_residual(uint32_t* res_words, uint64_t* high, uint32_t k, uint32_t r) {
  if constexpr (T::kResBytes > 0)
#if defined(__CUDA_ARCH__)
#pragma unroll  // word indices known at compile time: the image stays in registers
#endif
    for (uint32_t b = 0; b < T::kResBytes; ++b) {
      const uint32_t x = k * T::kResBytes + b;
      res_words[x >> 2] |= ((r >> (8u * b)) & 0xFFu) << (8u * (x & 3u));
    }
  if constexpr (T::kResHighBits != 0) *high |= uint64_t{res_high3<T>(r)} << (3u * k);
}
template <class T>
SZ_HD uint32_t image_residual(const uint32_t* res_words, uint64_t high, uint32_t k) {
  uint32_t r = 0;
  if constexpr (T::kResBytes > 0)
#if defined(__CUDA_ARCH__)
#pragma unroll  // word indices known at compile time: the image stays in registers
#endif
    for (uint32_t b = 0; b < T::kResBytes; ++b) {
      const uint32_t x = k * T::kResBytes + b;
      r |= ((res_words[x >> 2] >> (8u * (x & 3u))) & 0xFFu) << (8u * b);
    }
  if constexpr (T::kResHighBits != 0) r = res_join<T>(r, static_cast<uint32_t>(high >> (3u * k)) & 7u);
  return r;
}

}  // namespace splitzip
