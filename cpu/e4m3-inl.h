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
#include "cpu/simd-inl.h"
#include "cpu/xxh3-inl.h"
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

// Codes of groups [g, g + Lanes/8) as bytes in element order. 16 elements
// are 6 packed bytes (FORMAT.md 2's LSB-first 3-bit packing, as the nibble
// codec's 3-bit parts): one load per block and Unpack3, no gather, where
// the 16-byte block loads stay inside stream 3 (4 groups after the last).
HWY_INLINE EV8 CodesAt(const uint8_t* codes, uint64_t g, uint64_t n) {
  const E8 d8;
  if (g + hn::Lanes(d8) / 8 + 4 <= n / 8) return Unpack3(LoadBlocks<6>(d8, codes + 3 * g));
  return hn::BitCast(d8, SpreadCodes(LoadCodeWords(codes, g, n)));
}

#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX3 && defined(__GNUC__)
// AVX3 with VBMI and VBMI2 (Ice Lake on): byte permutes, bit-field
// multishifts and byte expand/compress make the group loops a few
// instructions per 64 bytes. The plain AVX3 loops stay for CPUs without
// them and for tests (cpu::set_e4m3_vbmi2).
#define SPLITZIP_E4M3_VBMI2 1
#define SPLITZIP_VBMI2_ATTR \
  __attribute__((target("avx2,bmi,bmi2,popcnt,avx512f,avx512vl,avx512dq,avx512bw,avx512vbmi,avx512vbmi2")))

// Qword i of a 64-byte vector: bytes 3i..3i+2 (codes) / 4i..4i+3 (residual
// nibbles) of the source, for the multishifts below.
alignas(64) static constexpr uint8_t kE4M3CodeIdx[64] = {
    0,  1,  2,  2,  2,  2,  2,  2,  3,  4,  5,  5,  5,  5,  5,  5,  6,  7,  8,  8,  8,  8,
    8,  8,  9,  10, 11, 11, 11, 11, 11, 11, 12, 13, 14, 14, 14, 14, 14, 14, 15, 16, 17, 17,
    17, 17, 17, 17, 18, 19, 20, 20, 20, 20, 20, 20, 21, 22, 23, 23, 23, 23, 23, 23};
alignas(64) static constexpr uint8_t kE4M3ResIdx[64] = {
    0,  1,  2,  3,  3,  3,  3,  3,  4,  5,  6,  7,  7,  7,  7,  7,  8,  9,  10, 11, 11, 11,
    11, 11, 12, 13, 14, 15, 15, 15, 15, 15, 16, 17, 18, 19, 19, 19, 19, 19, 20, 21, 22, 23,
    23, 23, 23, 23, 24, 25, 26, 27, 27, 27, 27, 27, 28, 29, 30, 31, 31, 31, 31, 31};
// The inverse of kE4M3CodeIdx: packed byte 3i + k is byte k of qword i.
alignas(64) static constexpr uint8_t kE4M3PackIdx[64] = {
    0,  1,  2,  8,  9,  10, 16, 17, 18, 24, 25, 26, 32, 33, 34, 40, 41, 42, 48, 49, 50, 56,
    57, 58, 0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};

struct VbmiDecodeState {
  uint64_t g, kb, bad;
  bool overrun;
};

// Groups from st->g while 8 more fit below gend. A vector's escapes are
// expanded from escb into its marker bytes; more markers than esc_avail
// stops the loop with overrun (escb has 64 readable bytes past them).
SPLITZIP_VBMI2_ATTR HWY_NOINLINE void E4M3DecodeVbmi(const uint8_t* res, const uint8_t* codes, const uint8_t* escb,
                                                     uint64_t gend, const uint8_t tab16[16], uint32_t count,
                                                     uint64_t esc_avail, uint8_t* dst, VbmiDecodeState* st) {
  const __m512i tab = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab16)));
  const __m512i cidx = _mm512_load_si512(kE4M3CodeIdx);
  const __m512i ridx = _mm512_load_si512(kE4M3ResIdx);
  const __m512i cshift = _mm512_set1_epi64(0x15120F0C09060300ll);  // bit offsets 0, 3, .., 21
  const __m512i rshift = _mm512_set1_epi64(0x1C1814100C080400ll);  // 0, 4, .., 28
  const __m512i seven = _mm512_set1_epi8(7), k0F = _mm512_set1_epi8(0x0F), k8 = _mm512_set1_epi8(8);
  const __m512i cnt = _mm512_set1_epi8(static_cast<char>(count));
  uint64_t g = st->g, kb = st->kb, bad = st->bad;
  for (; g + 8 <= gend; g += 8) {
    const __m512i cw = _mm512_maskz_loadu_epi8(0xFFFFFFull, codes + 3 * g);
    const __m512i c = _mm512_and_si512(_mm512_multishift_epi64_epi8(cshift, _mm512_permutexvar_epi8(cidx, cw)), seven);
    const __m512i rw = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(res + 4 * g)));
    const __m512i r = _mm512_and_si512(_mm512_multishift_epi64_epi8(rshift, _mm512_permutexvar_epi8(ridx, rw)), k0F);
    const __mmask64 m = _mm512_cmpeq_epi8_mask(c, seven);
    bad |= _mm512_mask_cmpge_epu8_mask(~m, c, cnt);  // rule 18
    // Markers look up 0 in tab; their exponents come from escb.
    const __m512i e = _mm512_or_si512(_mm512_shuffle_epi8(tab, c), _mm512_maskz_expandloadu_epi8(m, escb + kb));
    // sign | exponent << 3 | mantissa (no bit leaves its byte in the 16-bit shifts).
    const __m512i se = _mm512_or_si512(e, _mm512_slli_epi16(_mm512_and_si512(r, k8), 1));
    _mm512_storeu_si512(dst + 8 * g, _mm512_or_si512(_mm512_andnot_si512(k8, r), _mm512_slli_epi16(se, 3)));
    kb += static_cast<uint64_t>(__builtin_popcountll(m));
    if (kb > esc_avail) {
      st->overrun = true;
      break;
    }
  }
  st->g = g;
  st->kb = kb;
  st->bad = bad;
}

// The encode loop: stream 1 unless res_done, stream 3 (24 bytes a vector,
// stored exactly), the escape exponents compressed to esc + *k.
SPLITZIP_VBMI2_ATTR HWY_NOINLINE uint64_t E4M3EncodeVbmi(const uint8_t* src, uint64_t g, uint64_t gend,
                                                         const uint8_t code_of[16], uint8_t* res, bool res_done,
                                                         uint8_t* codes, uint8_t* esc, uint64_t* k_io) {
  const __m512i tab = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(code_of)));
  const __m512i pidx = _mm512_load_si512(kE4M3PackIdx);
  const __m512i seven = _mm512_set1_epi8(7), k0F = _mm512_set1_epi8(0x0F), k8 = _mm512_set1_epi8(8);
  const __m512i w0F = _mm512_set1_epi16(0x000F), wF0 = _mm512_set1_epi16(0x00F0);
  const __m512i m18 = _mm512_set1_epi16(0x0801), m164 = _mm512_set1_epi32(0x00400001), q12 = _mm512_set1_epi64(0xFFF);
  uint64_t k = *k_io;
  for (; g + 8 <= gend; g += 8) {
    const __m512i v = _mm512_loadu_si512(src + 8 * g);
    const __m512i e = _mm512_and_si512(_mm512_srli_epi16(v, 3), k0F);
    const __m512i c = _mm512_shuffle_epi8(tab, e);
    if (!res_done) {
      // sign (bit 7 -> 3) | mantissa, then two nibbles a byte.
      const __m512i r = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), k8), _mm512_and_si512(v, seven));
      const __m512i p = _mm512_or_si512(_mm512_and_si512(r, w0F), _mm512_and_si512(_mm512_srli_epi16(r, 4), wF0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(res + 4 * g), _mm512_cvtepi16_epi8(p));
    }
    // 8 codes of a qword -> 24 bits: pairs (6 bits), quads (12), then 24.
    const __m512i p32 = _mm512_madd_epi16(_mm512_maddubs_epi16(c, m18), m164);
    const __m512i p64 = _mm512_or_si512(_mm512_and_si512(p32, q12), _mm512_srli_epi64(p32, 20));
    _mm512_mask_storeu_epi8(codes + 3 * g, 0xFFFFFFull, _mm512_permutexvar_epi8(pidx, p64));
    const __mmask64 m = _mm512_cmpeq_epi8_mask(c, seven);
    _mm512_storeu_si512(esc + k, _mm512_maskz_compress_epi8(m, e));
    k += static_cast<uint64_t>(__builtin_popcountll(m));
  }
  *k_io = k;
  return g;
}
#endif  // VBMI2

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
                          uint8_t* res, bool res_done, uint8_t* codes, uint8_t* esc, bool vbmi) {
  const E8 d8;
  const E64 d64;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  const EV8 tab = hn::LoadDup128(d8, code_of);
  const EV8 seven = hn::Set(d8, 7);
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  HWY_ALIGN uint64_t words[hn::MaxLanes(E64())];
  uint64_t g = g0, k = 0;
#ifdef SPLITZIP_E4M3_VBMI2
  if (vbmi) g = E4M3EncodeVbmi(src, g, gend, code_of, res, res_done, codes, esc, &k);
#else
  (void)vbmi;
#endif
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
  const EV8 seven = hn::Set(d8, 7), one = hn::Set(d8, 1), cnt = hn::Set(d8, static_cast<uint8_t>(count));
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  EV8 bad = hn::Zero(d8);
  uint64_t g = g0, k = 0;
  for (; g + G <= gend; g += G) {
    const EV8 c = CodesAt(codes, g, n);
    const auto m = hn::Eq(c, seven);
    k += hn::CountTrue(d8, m);
    // Rule 18: a code >= count that is not the marker.
    bad = hn::Or(bad, hn::IfThenZeroElse(m, hn::SaturatedSub(hn::Add(c, one), cnt)));
  }
  if (!hn::AllTrue(d8, hn::Eq(bad, hn::Zero(d8)))) *bad_code = true;
  for (; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}


// Decodes groups [g0, g0 + gn) and checks their codes (rule 18: *bad_code)
// in one pass. escb: the escape exponents from esc_index on, one per byte,
// esc_avail of them and Lanes(E8) + 64 readable bytes past (rule 17 is the
// caller's). Returns the markers decoded, or kE4M3Overrun when the groups
// hold more than esc_avail (rule 15 fails; dst is then partly written).
uint64_t E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb, uint64_t n,
                          uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint32_t count,
                          uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code, bool vbmi) {
  const E8 d8;
  const E16 d16;
  const EH8 dh;
  const size_t N = hn::Lanes(d8), G = N / 8;
  // Code -> exponent; the marker (7) and invalid codes look up 0 (rule 18
  // is checked below; markers take the escape stream's).
  HWY_ALIGN uint8_t t[16] = {};
  for (int c = 0; c < 7; ++c) t[c] = cb[c];
  const EV8 tab = hn::LoadDup128(d8, t);
  const EV8 seven = hn::Set(d8, 7), one = hn::Set(d8, 1), cnt = hn::Set(d8, static_cast<uint8_t>(count));
  const uint64_t gend = e4m3_full_end(n, g0, gn);
  uint64_t g = g0, kb = 0;
  EV8 badv = hn::Zero(d8);  // non-zero lanes: code + 1 > count
  bool bad = false;
#ifdef SPLITZIP_E4M3_VBMI2
  if (vbmi) {
    VbmiDecodeState st{g, 0, 0, false};
    E4M3DecodeVbmi(res, codes, escb, gend, t, count, esc_avail, dst, &st);
    if (st.overrun) return kE4M3Overrun;
    g = st.g;
    kb = st.kb;
    if (st.bad != 0) *bad_code = true;
  }
#else
  (void)vbmi;
#endif
  for (; g + G <= gend; g += G) {
    const EV8 c = CodesAt(codes, g, n);
    const EV8 e = hn::TableLookupBytes(tab, c);
    const auto m = hn::Eq(c, seven);
    badv = hn::Or(badv, hn::IfThenZeroElse(m, hn::SaturatedSub(hn::Add(c, one), cnt)));
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
        uint64_t x, w8;
        std::memcpy(&x, escb + kb, 8);
        std::memcpy(&w8, o + 8 * q, 8);
        w8 |= _pdep_u64(x, spread) << 3;
        std::memcpy(o + 8 * q, &w8, 8);
        kb += static_cast<uint64_t>(__builtin_popcountll(mb));
      }
#else
      for (size_t b = 0; b < (N + 63) / 64; ++b) {
        uint64_t x;
        std::memcpy(&x, bits + 8 * b, 8);
        for (; x != 0; x &= x - 1) o[64 * b + static_cast<size_t>(__builtin_ctzll(x))] |= static_cast<uint8_t>(escb[kb++] << 3);
      }
#endif
      if (kb > esc_avail) return kE4M3Overrun;  // the reads above stayed in escb's slack
    }
  }
  if (!hn::AllTrue(d8, hn::Eq(badv, hn::Zero(d8)))) bad = true;
  for (; g < g0 + gn; ++g) {
    const uint64_t k = e4m3_group_markers(codes, n, g, count, &bad);
    if (kb + k > esc_avail) return kE4M3Overrun;
    bool unused = false;  // rule 17 is the caller's
    e4m3_decode_group(res, codes, esc, n, g, cb, code_of, esc_index + kb, dst, &unused);
    kb += k;
  }
  if (bad) *bad_code = true;
  return kb;
}

// E4M3DecodeGroups on one checksum block (groups from g0, a multiple of
// 8192; 8 * gn whole KiB), 1 KiB at a time, each KiB hashed from L1 right
// after it is written (the block hash into hashes, as block_hash gives it;
// last_end: the output's size when this is its shorter last block).
uint64_t E4M3DecodeGroupsHashed(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                                uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16],
                                uint32_t count, uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code,
                                bool vbmi, uint64_t* hashes, uint64_t last_end) {
  if constexpr (kFusedHash) {
    FusedXxh3 hash(hashes);
    hash.last_end = last_end;
    uint64_t kb = 0;
    for (uint64_t g = g0; g < g0 + gn; g += 128) {
      const uint64_t m = E4M3DecodeGroups(res, codes, esc, escb + kb, n, g, 128, cb, code_of, count, esc_index + kb,
                                          esc_avail - kb, dst, bad_code, vbmi);
      if (m == kE4M3Overrun) return m;
      kb += m;
      hash.FeedBytes(dst + 8 * g, 8 * g, 1024);
    }
    return kb;
  } else {
    const uint64_t kb = E4M3DecodeGroups(res, codes, esc, escb, n, g0, gn, cb, code_of, count, esc_index, esc_avail,
                                         dst, bad_code, vbmi);
    if (kb != kE4M3Overrun) hashes[(8 * g0) >> kChecksumBlockLog2] = block_hash(dst, n, (8 * g0) >> kChecksumBlockLog2);
    return kb;
  }
}

// Escapes [i0, i0 + k) of stream 6 (two per byte) into bytes; returns
// whether one of them is a codebook exponent (rule 17).
bool E4M3ExpandEscapes(const uint8_t* esc, uint64_t i0, uint64_t k, const uint8_t code_of[16], uint8_t* escb) {
  const E8 d8;
  const E16 d16;
  const EH8 dh;
  const size_t N = hn::Lanes(d8);
  const EV8 tab = hn::LoadDup128(d8, code_of), seven = hn::Set(d8, 7);
  uint64_t i = 0;
  uint8_t badb = 0;
  if (k > 0 && (i0 & 1) != 0) {  // an odd start: its high nibble alone
    escb[0] = static_cast<uint8_t>(e4m3_escape_at(esc, i0));
    badb |= static_cast<uint8_t>(code_of[escb[0]] != kE4M3Escape);
    i = 1;
  }
  EV8 bad = hn::Zero(d8);
  for (; i + N <= k; i += N) {
    const auto w = hn::PromoteTo(d16, hn::LoadU(dh, esc + (i0 + i) / 2));
    const EV8 x = hn::BitCast(d8, hn::Or(hn::And(w, hn::Set(d16, 0x000F)), hn::ShiftLeft<4>(hn::And(w, hn::Set(d16, 0x00F0)))));
    hn::StoreU(x, d8, escb + i);
    bad = hn::Or(bad, hn::Xor(hn::TableLookupBytes(tab, x), seven));
  }
  for (; i < k; ++i) {
    escb[i] = static_cast<uint8_t>(e4m3_escape_at(esc, i0 + i));
    badb |= static_cast<uint8_t>(code_of[escb[i]] != kE4M3Escape);
  }
  return badb != 0 || !hn::AllTrue(d8, hn::Eq(bad, hn::Zero(d8)));
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
                          uint8_t* res, bool, uint8_t* codes, uint8_t* esc, bool) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_encode_group(src, n, g, code_of, res, codes, esc + k);
  return k;
}
uint64_t E4M3CountMarkers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count, bool* bad_code) {
  uint64_t k = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_markers(codes, n, g, count, bad_code);
  return k;
}
uint64_t E4M3DecodeGroups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t*, uint64_t n,
                          uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint32_t count,
                          uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code, bool) {
  uint64_t kb = 0;
  for (uint64_t g = g0; g < g0 + gn; ++g) {
    const uint64_t k = e4m3_group_markers(codes, n, g, count, bad_code);
    if (kb + k > esc_avail) return kE4M3Overrun;
    bool unused = false;  // rule 17 is the caller's
    e4m3_decode_group(res, codes, esc, n, g, cb, code_of, esc_index + kb, dst, &unused);
    kb += k;
  }
  return kb;
}
uint64_t E4M3DecodeGroupsHashed(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                                uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16],
                                uint32_t count, uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code,
                                bool vbmi, uint64_t* hashes, uint64_t) {
  const uint64_t kb = E4M3DecodeGroups(res, codes, esc, escb, n, g0, gn, cb, code_of, count, esc_index, esc_avail, dst,
                                       bad_code, vbmi);
  if (kb != kE4M3Overrun) hashes[(8 * g0) >> kChecksumBlockLog2] = block_hash(dst, n, (8 * g0) >> kChecksumBlockLog2);
  return kb;
}
bool E4M3ExpandEscapes(const uint8_t* esc, uint64_t i0, uint64_t k, const uint8_t code_of[16], uint8_t* escb) {
  bool bad = false;
  for (uint64_t i = 0; i < k; ++i) {
    escb[i] = static_cast<uint8_t>(e4m3_escape_at(esc, i0 + i));
    bad |= code_of[escb[i]] != kE4M3Escape;
  }
  return bad;
}

#endif  // HWY_TARGET != HWY_SCALAR

#undef SPLITZIP_E4M3_VBMI2
#undef SPLITZIP_VBMI2_ATTR

int64_t E4M3Target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // include guard
