/* SPDX-License-Identifier: Apache-2.0 */
// 16/8-byte loads and stores for the kernels' hot paths, with a byte-wise
// form for unaligned or partial groups. On the host (CPU emulation of the
// kernels) the same calls use memcpy, so both builds run one code path.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype_traits.h"

// Loop unrolling hints for device code only (host compilers warn on them).
#if defined(__CUDA_ARCH__)
#define SZ_UNROLL _Pragma("unroll")
#define SZ_NO_UNROLL _Pragma("unroll 1")
#else
#define SZ_UNROLL
#define SZ_NO_UNROLL
#endif

namespace splitzip {
namespace cuda_detail {

// p must be 16-byte aligned.
SZ_HD void load16(const uint8_t* p, uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  std::memcpy(w, p, 16);
#endif
}

SZ_HD void store16(uint8_t* p, const uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#else
  std::memcpy(p, w, 16);
#endif
}

// Streaming forms (ld.global.cs / st.global.cs: "accessed once", evict
// first) for data a kernel reads or writes exactly once and nothing re-reads
// from cache: the input of an encode without checksum, the coded streams,
// the frame of a decode, a decode's output when it is not hashed. Where the
// same kernel re-reads the bytes from L2 (block checksums), the plain forms
// keep them resident. Same bytes either way; on the host both are memcpy.
SZ_HD void load16_cs(const uint8_t* p, uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  std::memcpy(w, p, 16);
#endif
}
SZ_HD void store16_cs(uint8_t* p, const uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  __stcs(reinterpret_cast<uint4*>(p), make_uint4(w[0], w[1], w[2], w[3]));
#else
  std::memcpy(p, w, 16);
#endif
}
SZ_HD void store8_cs(uint8_t* p, uint64_t v) {
#if defined(__CUDA_ARCH__)
  __stcs(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  std::memcpy(p, &v, 8);
#endif
}
SZ_HD uint64_t load8_cs(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldcs(reinterpret_cast<const unsigned long long*>(p));
#else
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
#endif
}
// Either form by a run-time flag (uniform across the CTA: a plan flag).
SZ_HD void load16_hint(const uint8_t* p, uint32_t w[4], bool stream) {
  if (stream) load16_cs(p, w);
  else load16(p, w);
}
SZ_HD void store16_hint(uint8_t* p, const uint32_t w[4], bool stream) {
  if (stream) store16_cs(p, w);
  else store16(p, w);
}

// p must be 8-byte aligned.
SZ_HD uint64_t load8(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const unsigned long long*>(p);
#else
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
#endif
}

SZ_HD void store8(uint8_t* p, uint64_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<unsigned long long*>(p) = v;
#else
  std::memcpy(p, &v, 8);
#endif
}

// p must be 2-byte aligned.
SZ_HD void store2(uint8_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(v);
#else
  const uint16_t h = static_cast<uint16_t>(v);
  std::memcpy(p, &h, 2);
#endif
}

// Byte permute (PTX prmt, default mode): result byte n = byte (s >> 4n) & 7 of
// the 8 bytes {b:a}. Selector nibbles here never set their high bit, where
// the hardware's sign-replicate mode would differ from this definition.
SZ_HD uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, s);
#else
  const uint64_t x = (uint64_t{b} << 32) | a;
  uint32_t r = 0;
  for (uint32_t n = 0; n < 4; ++n) r |= static_cast<uint32_t>((x >> (8u * ((s >> (4u * n)) & 7u))) & 0xFFu) << (8u * n);
  return r;
#endif
}

// Little-endian byte-wise forms for partial or unaligned groups: the first
// `count` bytes of a kWords-word register array. Every array index is a
// compile-time constant, so the array stays in registers.
template <uint32_t kWords>
SZ_HD void load_bytes(const uint8_t* p, uint32_t count, uint32_t (&w)[kWords]) {
  SZ_UNROLL
  for (uint32_t k = 0; k < kWords; ++k) {
    uint32_t v = 0;
    SZ_UNROLL
    for (uint32_t b = 0; b < 4; ++b)
      if (4 * k + b < count) v |= uint32_t{p[4 * k + b]} << (8u * b);
    w[k] = v;
  }
}
template <uint32_t kWords>
SZ_HD void store_bytes(uint8_t* p, uint32_t count, const uint32_t (&w)[kWords]) {
  SZ_UNROLL
  for (uint32_t k = 0; k < kWords; ++k) {
    SZ_UNROLL
    for (uint32_t b = 0; b < 4; ++b)
      if (4 * k + b < count) p[4 * k + b] = static_cast<uint8_t>(w[k] >> (8u * b));
  }
}
SZ_HD uint64_t load_bytes64(const uint8_t* p, uint32_t count) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < count; ++i) v |= uint64_t{p[i]} << (8u * i);
  return v;
}
SZ_HD void store_bytes64(uint8_t* p, uint32_t count, uint64_t v) {
  for (uint32_t i = 0; i < count; ++i) p[i] = static_cast<uint8_t>(v >> (8u * i));
}

}  // namespace cuda_detail
}  // namespace splitzip
