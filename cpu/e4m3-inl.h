/* SPDX-License-Identifier: Apache-2.0 */
// Per-target fp8_e4m3 kernels (FORMAT.md 4.7) over whole 8-element format
// groups: one vector of Lanes(D8) bytes is Lanes/8 groups. Encode: the
// 4-bit exponent of every byte looked up in a 16-entry code table (one byte
// shuffle; code 7 = escape marker), residual nibbles packed two per byte,
// 3-bit codes packed 8 per 24 bits by shift-merges inside 64-bit lanes,
// escape exponents appended in element order. Decode: the inverse (24-bit
// words spread to 8 code bytes, one shuffle for the exponents), markers
// patched from the side stream in element order. A buffer's last group
// when partial, and the groups left after the last whole vector, go
// through the format core's scalar group kernels (core/fp8_e4m3.h), as does
// everything on HWY_SCALAR.
#if defined(SPLITZIP_CPU_E4M3_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_E4M3_INL_H_
#undef SPLITZIP_CPU_E4M3_INL_H_
#else
#define SPLITZIP_CPU_E4M3_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "core/fp8_e4m3.h"
#include "cpu/kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Groups [g0, g1) the vector loop may take: whole groups only (a partial
// last group goes to the scalar kernel).
inline uint64_t e4m3_full_end(uint64_t n, uint64_t g0, uint64_t gn) {
  const uint64_t full = n / 8;
  return g0 + gn < full ? g0 + gn : (full > g0 ? full : g0);
}

#if HWY_TARGET != HWY_SCALAR

using E8 = hn::ScalableTag<uint8_t>;
using E16 = hn::Repartition<uint16_t, E8>;
using E64 = hn::Repartition<uint64_t, E8>;
using EH8 = hn::Half<E8>;
using EV8 = hn::Vec<E8>;

// Exponent (bits 6..3) of each byte. The shift runs on 16-bit lanes; the
// mask drops the bits that crossed from the neighbouring byte.
HWY_INLINE EV8 ExponentsOf(EV8 v) {
  const E8 d8;
  const E16 d16;
  return hn::And(hn::BitCast(d8, hn::ShiftRight<3>(hn::BitCast(d16, v))), hn::Set(d8, 0x0F));
}

// 8 code bytes (each < 8) per 64-bit lane -> their 24-bit packing in bits 0..23.
HWY_INLINE hn::Vec<E64> PackCodes(hn::Vec<E64> x) {
  const E64 d;
  x = hn::Or(hn::And(x, hn::Set(d, 0x00FF00FF00FF00FFull)), hn::ShiftRight<5>(hn::And(x, hn::Set(d, 0xFF00FF00FF00FF00ull))));
  x = hn::Or(hn::And(x, hn::Set(d, 0x0000FFFF0000FFFFull)), hn::ShiftRight<10>(hn::And(x, hn::Set(d, 0xFFFF0000FFFF0000ull))));
  return hn::Or(hn::And(x, hn::Set(d, 0xFFFFFFFFull)), hn::ShiftRight<20>(hn::And(x, hn::Set(d, 0xFFFFFFFF00000000ull))));
}

// The inverse: 24 bits per 64-bit lane -> 8 code bytes.
HWY_INLINE hn::Vec<E64> SpreadCodes(hn::Vec<E64> x) {
  const E64 d;
  x = hn::Or(hn::And(x, hn::Set(d, 0xFFFull)), hn::ShiftLeft<20>(hn::And(x, hn::Set(d, 0xFFF000ull))));
  x = hn::Or(hn::And(x, hn::Set(d, 0x0000003F0000003Full)), hn::ShiftLeft<10>(hn::And(x, hn::Set(d, 0x00000FC000000FC0ull))));
  return hn::Or(hn::And(x, hn::Set(d, 0x0007000700070007ull)), hn::ShiftLeft<5>(hn::And(x, hn::Set(d, 0x0038003800380038ull))));
}

// The 24-bit code words of groups [g, g + k) as 64-bit lanes (k = Lanes/8).
HWY_INLINE hn::Vec<E64> LoadCodeWords(const uint8_t* codes, uint64_t g) {
  const E64 d;
  HWY_ALIGN uint64_t w[hn::MaxLanes(E64())];
  const size_t k = hn::Lanes(d);
  const uint8_t* p = codes + 3 * g;
  for (size_t i = 0; i < k; ++i, p += 3) w[i] = p[0] | (uint64_t{p[1]} << 8) | (uint64_t{p[2]} << 16);
  return hn::Load(d, w);
}

uint64_t E4M3CountEscapes(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16]) {
  const E8 d8;
  const size_t N = hn::Lanes(d8), G = N / 8;
  const EV8 tab = hn::LoadDup128(d8, code_of);
  const EV8 seven = hn::Set(d8, 7);
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  uint64_t g = g0, k = 0;
  for (; g + G <= gend; g += G)
    k += hn::CountTrue(d8, hn::Eq(hn::TableLookupBytes(tab, ExponentsOf(hn::LoadU(d8, src + 8 * g))), seven));
  for (; g < g0 + gn; ++g) k += e4m3_group_escapes(src, n, g, code_of);
  return k;
}

uint64_t E4M3EncodeGroups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                          uint8_t* res, uint8_t* codes, uint8_t* esc) {
  const E8 d8;
  const E16 d16;
  const E64 d64;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  const EV8 tab = hn::LoadDup128(d8, code_of);
  const EV8 seven = hn::Set(d8, 7);
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  HWY_ALIGN uint64_t words[hn::MaxLanes(E64())];
  uint64_t g = g0, k = 0;
  for (; g + G <= gend; g += G) {
    const EV8 v = hn::LoadU(d8, src + 8 * g);
    const EV8 e = ExponentsOf(v);
    const EV8 c = hn::TableLookupBytes(tab, e);
    // Residual r = sign << 3 | mantissa; two per byte, element 2j low.
    const EV8 sign = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, v))), hn::Set(d8, 0x08));
    const auto r16 = hn::BitCast(d16, hn::Or(sign, hn::And(v, hn::Set(d8, 0x07))));
    const auto packed = hn::Or(hn::And(r16, hn::Set(d16, 0x000F)), hn::And(hn::ShiftRight<4>(r16), hn::Set(d16, 0x00F0)));
    const EV8 p8 = hn::BitCast(d8, packed);
    hn::StoreU(hn::LowerHalf(dh, hn::ConcatEven(d8, p8, p8)), dh, res + 4 * g);
    // Codes: 24 bits per group, 3 bytes each.
    hn::Store(PackCodes(hn::BitCast(d64, c)), d64, words);
    uint8_t* cp = codes + 3 * g;
    // 4-byte stores, each 4th byte overwritten by the next group's; the
    // last group stores exactly 3 (the next byte may be another thread's).
    for (size_t i = 0; i + 1 < G; ++i, cp += 3) {
      const uint32_t x = static_cast<uint32_t>(words[i]);
      std::memcpy(cp, &x, 4);
    }
    cp[0] = static_cast<uint8_t>(words[G - 1]);
    cp[1] = static_cast<uint8_t>(words[G - 1] >> 8);
    cp[2] = static_cast<uint8_t>(words[G - 1] >> 16);
    const auto m = hn::Eq(c, seven);
    if (!hn::AllFalse(d8, m)) {
      uint8_t bits[(hn::MaxLanes(E8()) + 7) / 8];
      hn::StoreMaskBits(d8, m, bits);
      const uint8_t* s = src + 8 * g;
      for (size_t b = 0; b < (N + 7) / 8; ++b)
        for (uint32_t x = bits[b]; x != 0; x &= x - 1) esc[k++] = static_cast<uint8_t>((s[8 * b + __builtin_ctz(x)] >> 3) & 15u);
    }
  }
  for (; g < g0 + gn; ++g) k += e4m3_encode_group(src, n, g, code_of, res, codes, esc + k);
  return k;
}

uint64_t E4M3CountMarkers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count, bool* bad_code) {
  const E8 d8;
  const size_t N = hn::Lanes(d8), G = N / 8;
  const EV8 seven = hn::Set(d8, 7), limit = hn::Set(d8, static_cast<uint8_t>(count - 1));
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  EV8 bad = hn::Zero(d8);
  uint64_t g = g0, k = 0;
  for (; g + G <= gend; g += G) {
    const EV8 c = hn::BitCast(d8, SpreadCodes(LoadCodeWords(codes, g)));
    const auto m = hn::Eq(c, seven);
    k += hn::CountTrue(d8, m);
    // Rule 18: a code >= count that is not the marker.
    bad = hn::Or(bad, hn::IfThenZeroElse(m, hn::SaturatedSub(c, limit)));
  }
  if (!hn::AllTrue(d8, hn::Eq(bad, hn::Zero(d8)))) *bad_code = true;
  for (; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}

void E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, uint64_t n, uint64_t g0,
                      uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index, uint8_t* dst,
                      bool* bad_escape) {
  const E8 d8;
  const E16 d16;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  // Code -> exponent; the marker (7) and invalid codes look up 0 (rule 18
  // is checked by E4M3CountMarkers; markers are patched below).
  HWY_ALIGN uint8_t t[16] = {};
  for (int c = 0; c < 7; ++c) t[c] = cb[c];
  const EV8 tab = hn::LoadDup128(d8, t);
  const EV8 seven = hn::Set(d8, 7);
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  uint64_t g = g0, k = esc_index;
  bool bad = false;
  for (; g + G <= gend; g += G) {
    const EV8 c = hn::BitCast(d8, SpreadCodes(LoadCodeWords(codes, g)));
    const EV8 e = hn::TableLookupBytes(tab, c);
    // Residual nibbles -> bytes in element order (16-bit promotion keeps it).
    const auto w = hn::PromoteTo(d16, hn::LoadU(dh, res + 4 * g));
    const EV8 r = hn::BitCast(d8, hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(w, hn::Set(d16, 0x00F0)))));
    const EV8 sign = hn::BitCast(d8, hn::ShiftLeft<4>(hn::BitCast(d16, hn::And(r, hn::Set(d8, 0x08)))));
    const EV8 ex = hn::BitCast(d8, hn::ShiftLeft<3>(hn::BitCast(d16, e)));
    const EV8 out = hn::Or(hn::Or(sign, ex), hn::And(r, hn::Set(d8, 0x07)));
    uint8_t* o = dst + 8 * g;
    hn::StoreU(out, d8, o);
    const auto m = hn::Eq(c, seven);
    if (!hn::AllFalse(d8, m)) {
      uint8_t bits[(hn::MaxLanes(E8()) + 7) / 8];
      hn::StoreMaskBits(d8, m, bits);
      for (size_t b = 0; b < (N + 7) / 8; ++b)
        for (uint32_t x = bits[b]; x != 0; x &= x - 1) {
          const uint32_t ee = e4m3_escape_at(esc, k++);
          bad |= code_of[ee] != kE4M3Escape;
          o[8 * b + __builtin_ctz(x)] |= static_cast<uint8_t>(ee << 3);
        }
    }
  }
  if (bad) *bad_escape = true;
  bool unused = false;
  for (; g < g0 + gn; ++g) {
    e4m3_decode_group(res, codes, esc, n, g, cb, code_of, k, dst, bad_escape);
    k += e4m3_group_markers(codes, n, g, 8, &unused);
  }
}

#else  // HWY_SCALAR: the format core's group kernels.

uint64_t E4M3CountEscapes(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16]) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_escapes(src, n, g, code_of);
  return k;
}
uint64_t E4M3EncodeGroups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                          uint8_t* res, uint8_t* codes, uint8_t* esc) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_encode_group(src, n, g, code_of, res, codes, esc + k);
  return k;
}
uint64_t E4M3CountMarkers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count, bool* bad_code) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}
void E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, uint64_t n, uint64_t g0,
                      uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index, uint8_t* dst,
                      bool* bad_escape) {
  bool unused = false;
  uint64_t k = esc_index;
  for (uint64_t g = g0; g < g0 + gn; ++g) {
    e4m3_decode_group(res, codes, esc, n, g, cb, code_of, k, dst, bad_escape);
    k += e4m3_group_markers(codes, n, g, 8, &unused);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

int64_t E4M3Target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // include guard
