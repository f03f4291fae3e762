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
#if HWY_ARCH_X86
#include <immintrin.h>
#endif

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
// With two whole groups after them (n elements in all), one gather of
// 8-byte words at byte offsets 3i, masked to 24 bits; otherwise 4-byte loads
// and the last group's 3 bytes one by one (the byte after it may lie past
// stream 3).
HWY_INLINE hn::Vec<E64> LoadCodeWords(const uint8_t* codes, uint64_t g, uint64_t n) {
  const E64 d;
  const size_t k = hn::Lanes(d);
  const uint8_t* p = codes + 3 * g;
  if (g + k + 2 <= n / 8) {
    const hn::RebindToSigned<E64> di;
    const auto offsets = hn::Mul(hn::Iota(di, 0), hn::Set(di, 3));
    return hn::And(hn::GatherOffset(d, reinterpret_cast<const uint64_t*>(p), offsets), hn::Set(d, 0xFFFFFFull));
  }
  HWY_ALIGN uint64_t w[hn::MaxLanes(E64())];
  for (size_t i = 0; i + 1 < k; ++i, p += 3) {
    uint32_t x;
    std::memcpy(&x, p, 4);
    w[i] = x & 0xFFFFFFu;
  }
  w[k - 1] = p[0] | (uint64_t{p[1]} << 8) | (uint64_t{p[2]} << 16);
  return hn::Load(d, w);
}

// Per-bin counts of a 16-value histogram in byte lanes: lookup j adds one to
// the low nibble of a byte for value 2j, to the high nibble for 2j + 1.
alignas(16) static constexpr uint8_t kE4M3PairOneHot[8][16] = {
    {1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16}};

// Residual nibbles of a vector, two per byte (element 2j low), in the low
// half's bytes.
HWY_INLINE hn::Vec<EH8> PackResiduals(EV8 v) {
  const E8 d8;
  const E16 d16;
  const EH8 dh;
  const EV8 sign = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, v))), hn::Set(d8, 0x08));
  const auto r16 = hn::BitCast(d16, hn::Or(sign, hn::And(v, hn::Set(d8, 0x07))));
  const auto packed = hn::Or(hn::And(r16, hn::Set(d16, 0x000F)), hn::And(hn::ShiftRight<4>(r16), hn::Set(d16, 0x00F0)));
  const EV8 p8 = hn::BitCast(d8, packed);
  return hn::LowerHalf(dh, hn::ConcatEven(d8, p8, p8));
}

// The dynamic codebook's pass: adds the exponent counts of the groups to
// counts[0..16) and, when res is non-null, writes their stream 1 (it does
// not depend on the codebook). Counters are nibbles in byte lanes, summed
// into 64-bit lanes every 15 vectors, before a nibble can overflow.
void E4M3HistogramResidual(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, uint8_t* res,
                           uint64_t counts[16]) {
  const E8 d8;
  const E16 d16;
  const E64 d64;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  const uint64_t vecs = (gend - g0) / G;
  EV8 lut[8];
  for (size_t j = 0; j < 8; ++j) lut[j] = hn::LoadDup128(d8, kE4M3PairOneHot[j]);
  hn::Vec<E64> wide[16];
  for (auto& w : wide) w = hn::Zero(d64);
  const EV8 k0F = hn::Set(d8, 0x0F);
  for (uint64_t k0 = 0; k0 < vecs; k0 += 15) {
    const uint64_t k1 = vecs - k0 < 15 ? vecs : k0 + 15;
    EV8 acc[8];
    for (auto& a : acc) a = hn::Zero(d8);
    for (uint64_t k = k0; k < k1; ++k) {
      const uint64_t g = g0 + k * G;
      const EV8 v = hn::LoadU(d8, src + 8 * g);
      if (res != nullptr) hn::StoreU(PackResiduals(v), dh, res + 4 * g);
      const EV8 e = ExponentsOf(v);
      for (size_t j = 0; j < 8; ++j) acc[j] = hn::Add(acc[j], hn::TableLookupBytes(lut[j], e));
    }
    for (size_t j = 0; j < 8; ++j) {
      const EV8 lo = hn::And(acc[j], k0F);
      const EV8 hi = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, acc[j]))), k0F);
      wide[2 * j] = hn::Add(wide[2 * j], hn::SumsOf8(lo));
      wide[2 * j + 1] = hn::Add(wide[2 * j + 1], hn::SumsOf8(hi));
    }
  }
  for (uint32_t b = 0; b < 16; ++b) counts[b] += hn::GetLane(hn::SumOfLanes(d64, wide[b]));
  const uint64_t gv = g0 + vecs * G;
  for (uint64_t i = 8 * gv; i < n && i < 8 * (g0 + gn); ++i) ++counts[Fp8E4M3Traits::exponent(src[i])];
  if (res != nullptr) {
    for (uint64_t g = gv; g < g0 + gn; ++g) {  // the groups' residual bytes, as e4m3_encode_group writes them
      const uint32_t m = e4m3_group_len(n, g);
      uint32_t rw = 0;
      for (uint32_t j = 0; j < m; ++j) rw |= Fp8E4M3Traits::residual(src[8 * g + j]) << (4u * j);
      for (uint32_t b = 0; b < (4u * m + 7u) / 8u; ++b) res[4 * g + b] = static_cast<uint8_t>(rw >> (8u * b));
    }
  }
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

// esc needs room for Lanes(E8) bytes past the groups' escapes (the
// compress store writes whole vectors). res_done: stream 1 is already
// written (E4M3HistogramResidual).
uint64_t E4M3EncodeGroups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                          uint8_t* res, bool res_done, uint8_t* codes, uint8_t* esc) {
  const E8 d8;
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
    if (!res_done) hn::StoreU(PackResiduals(v), dh, res + 4 * g);
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
    // Escape exponents in element order.
    const auto m = hn::Eq(c, seven);
#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
    // Per group, the marker bytes' exponents extracted in order (this
    // Highway's 8-bit CompressStore is slow on AVX2).
    if (!hn::AllFalse(d8, m)) {
      uint8_t bits[(hn::MaxLanes(E8()) + 7) / 8 + 8] = {};
      HWY_ALIGN uint8_t ex[hn::MaxLanes(E8())];
      hn::StoreMaskBits(d8, m, bits);
      hn::Store(e, d8, ex);
      for (size_t q = 0; q < G; ++q) {
        const uint64_t mb = bits[q];
        uint64_t w;
        std::memcpy(&w, ex + 8 * q, 8);
        const uint64_t packed = _pext_u64(w, _pdep_u64(mb, 0x0101010101010101ull) * 0xFF);
        std::memcpy(esc + k, &packed, 8);
        k += static_cast<uint64_t>(__builtin_popcountll(mb));
      }
    }
#else
    k += hn::CompressStore(e, m, d8, esc + k);
#endif
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
    const EV8 c = hn::BitCast(d8, SpreadCodes(LoadCodeWords(codes, g, n)));
    const auto m = hn::Eq(c, seven);
    k += hn::CountTrue(d8, m);
    // Rule 18: a code >= count that is not the marker.
    bad = hn::Or(bad, hn::IfThenZeroElse(m, hn::SaturatedSub(c, limit)));
  }
  if (!hn::AllTrue(d8, hn::Eq(bad, hn::Zero(d8)))) *bad_code = true;
  for (; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}

// escb: the escape exponents from esc_index on, one per byte, with
// Lanes(E8) readable bytes past the last (already checked against rule 17).
void E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb, uint64_t n,
                      uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index,
                      uint8_t* dst, bool* bad_escape) {
  const E8 d8;
  const E16 d16;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  // Code -> exponent; the marker (7) and invalid codes look up 0 (rule 18
  // is checked by E4M3CountMarkers; markers take the escape stream's).
  HWY_ALIGN uint8_t t[16] = {};
  for (int c = 0; c < 7; ++c) t[c] = cb[c];
  const EV8 tab = hn::LoadDup128(d8, t);
  const EV8 seven = hn::Set(d8, 7);
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  uint64_t g = g0, kb = 0;
  for (; g + G <= gend; g += G) {
    const EV8 c = hn::BitCast(d8, SpreadCodes(LoadCodeWords(codes, g, n)));
    const EV8 e = hn::TableLookupBytes(tab, c);
    const auto m = hn::Eq(c, seven);
    // Residual nibbles -> bytes in element order (16-bit promotion keeps it).
    const auto w = hn::PromoteTo(d16, hn::LoadU(dh, res + 4 * g));
    const EV8 r = hn::BitCast(d8, hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(w, hn::Set(d16, 0x00F0)))));
    const EV8 sign = hn::BitCast(d8, hn::ShiftLeft<4>(hn::BitCast(d16, hn::And(r, hn::Set(d8, 0x08)))));
    const EV8 ex = hn::BitCast(d8, hn::ShiftLeft<3>(hn::BitCast(d16, e)));
    uint8_t* o = dst + 8 * g;
    hn::StoreU(hn::Or(hn::Or(sign, ex), hn::And(r, hn::Set(d8, 0x07))), d8, o);
    if (!hn::AllFalse(d8, m)) {  // markers looked up exponent 0: or in the escape stream's
      uint8_t bits[(hn::MaxLanes(E8()) + 7) / 8 + 8] = {};
      hn::StoreMaskBits(d8, m, bits);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
      // Branch-free per group (marker counts vary, so a loop over the set
      // bits mispredicts): deposit the next escapes, in order, into the
      // marker bytes of the group's 64-bit word.
      for (size_t q = 0; q < G; ++q) {
        const uint64_t mb = bits[q];
        const uint64_t spread = _pdep_u64(mb, 0x0101010101010101ull) * 0xFF;
        uint64_t x, w;
        std::memcpy(&x, escb + kb, 8);
        std::memcpy(&w, o + 8 * q, 8);
        w |= _pdep_u64(x, spread) << 3;
        std::memcpy(o + 8 * q, &w, 8);
        kb += static_cast<uint64_t>(__builtin_popcountll(mb));
      }
#else
      for (size_t b = 0; b < (N + 63) / 64; ++b) {
        uint64_t x;
        std::memcpy(&x, bits + 8 * b, 8);
        for (; x != 0; x &= x - 1) o[64 * b + static_cast<size_t>(__builtin_ctzll(x))] |= static_cast<uint8_t>(escb[kb++] << 3);
      }
#endif
    }
  }
  bool unused = false;
  uint64_t k = esc_index + kb;
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
void E4M3HistogramResidual(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, uint8_t* res,
                           uint64_t counts[16]) {
  for (uint64_t i = 8 * g0; i < n && i < 8 * (g0 + gn); ++i) ++counts[Fp8E4M3Traits::exponent(src[i])];
  (void)res;  // the encode pass writes stream 1
}
uint64_t E4M3EncodeGroups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                          uint8_t* res, bool, uint8_t* codes, uint8_t* esc) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_encode_group(src, n, g, code_of, res, codes, esc + k);
  return k;
}
uint64_t E4M3CountMarkers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count, bool* bad_code) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}
void E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t*, uint64_t n,
                      uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index,
                      uint8_t* dst, bool* bad_escape) {
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
