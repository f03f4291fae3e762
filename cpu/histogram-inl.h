/* SPDX-License-Identifier: Apache-2.0 */
// Per-target exponent histogram for dynamic top-16 calibration: vectors
// extract the exponent bytes of a block into L1, then either byte-table
// lookups count a 16-exponent window (KV data sits almost entirely in one) or four
// interleaved scalar tables count everything.
#if defined(SPLITZIP_CPU_HISTOGRAM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_HISTOGRAM_INL_H_
#undef SPLITZIP_CPU_HISTOGRAM_INL_H_
#else
#define SPLITZIP_CPU_HISTOGRAM_INL_H_
#endif

#include <cstring>
#include <type_traits>

#include "core/codec.h"
#include "cpu/kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/simd-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

// Elements per block: the exponent buffer stays in L1.
constexpr uint64_t kHistBlock = 4096;
// Input bytes ahead of the extraction that it prefetches: between blocks
// the counter issues no loads, so the hardware prefetchers fall behind
// (1-4 KiB ahead measured, 4 KiB the best; docs/DESIGN.md, section 6).
constexpr uint64_t kHistPrefetch = 4096;

#if HWY_TARGET != HWY_SCALAR
// Exponent bytes of the Lanes(D8) elements at p (prefetching ahead).
template <class Traits>
HWY_INLINE V8 ExponentVector(const uint8_t* p) {
  const D8 d8;
  const D16 d16;
  const D32 d32;
  const size_t N = hn::Lanes(d8);
  for (size_t q = 0; q < N * Traits::kBytes; q += 64) hwy::Prefetch(p + kHistPrefetch + q);
  if constexpr (Traits::kBytes == 1) {
    return hn::And(hn::BitCast(d8, hn::ShiftRight<2>(hn::BitCast(d16, hn::LoadU(d8, p)))), hn::Set(d8, 0x1F));
  } else if constexpr (Traits::kBytes == 2) {
    const V8 b0 = hn::LoadU(d8, p);
    const V8 b1 = hn::LoadU(d8, p + N);
    if constexpr (Traits::kExpBits == 8) {  // bf16: high byte of v << 1
      return hn::ConcatOdd(d8, hn::BitCast(d8, hn::ShiftLeft<1>(hn::BitCast(d16, b1))),
                           hn::BitCast(d8, hn::ShiftLeft<1>(hn::BitCast(d16, b0))));
    } else {  // fp16: bits 6..2 of the high byte
      const V8 h = hn::ConcatOdd(d8, b1, b0);
      return hn::And(hn::BitCast(d8, hn::ShiftRight<2>(hn::BitCast(d16, h))), hn::Set(d8, 0x1F));
    }
  } else {  // fp32: byte 3 of v << 1
    hn::Vec<D16> hi[4];
    for (size_t q = 0; q < 4; ++q)
      hi[q] = hn::BitCast(d16, hn::ShiftLeft<1>(hn::BitCast(d32, hn::LoadU(d8, p + q * N))));
    return hn::ConcatOdd(d8, hn::BitCast(d8, hn::ConcatOdd(d16, hi[3], hi[2])),
                         hn::BitCast(d8, hn::ConcatOdd(d16, hi[1], hi[0])));
  }
}
#endif

// Exponent bytes of elements [i0, i0 + len) into out (len <= kHistBlock).
template <class Traits>
HWY_INLINE void ExtractExponents(const uint8_t* src, uint64_t i0, uint64_t len, uint8_t* out) {
  uint64_t k = 0;
#if HWY_TARGET != HWY_SCALAR
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  for (; k + N <= len; k += N) hn::StoreU(ExponentVector<Traits>(src + (i0 + k) * Traits::kBytes), d8, out + k);
#endif
  for (; k < len; ++k)
    out[k] = static_cast<uint8_t>(Traits::exponent(load_bits<Traits>(src + (i0 + k) * Traits::kBytes)));
}

// Start of the 16-exponent window of h[256] with the largest sum (the
// lowest such start), and that sum.
template <class T>
HWY_INLINE uint32_t BestWindow(const T* h, uint64_t* in_window) {
  uint64_t sum = 0, best = 0;
  uint32_t best_base = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    sum += h[b];
    if (b >= 16) sum -= h[b - 16];
    if (b >= 15 && sum > best) {
      best = sum;
      best_base = b - 15;
    }
  }
  *in_window = best;
  return best_base;
}

// Adds the counts of exps[0, len) to counts with four interleaved tables,
// and returns the start of the 16-exponent window holding most of them.
HWY_INLINE uint32_t CountScalar(const uint8_t* exps, uint64_t len, uint64_t counts[256],
                                uint64_t* in_window) {
  uint32_t h[4][256];
  std::memset(h, 0, sizeof h);
  uint64_t k = 0;
  for (; k + 8 <= len; k += 8) {
    uint64_t w;
    std::memcpy(&w, exps + k, 8);
    ++h[0][w & 0xFF];
    ++h[1][(w >> 8) & 0xFF];
    ++h[2][(w >> 16) & 0xFF];
    ++h[3][(w >> 24) & 0xFF];
    ++h[0][(w >> 32) & 0xFF];
    ++h[1][(w >> 40) & 0xFF];
    ++h[2][(w >> 48) & 0xFF];
    ++h[3][w >> 56];
  }
  for (; k < len; ++k) ++h[0][exps[k]];
  uint32_t block[256];
  for (int b = 0; b < 256; ++b) {
    block[b] = h[0][b] + h[1][b] + h[2][b] + h[3][b];
    counts[b] += block[b];
  }
  return BestWindow(block, in_window);
}

#if HWY_TARGET != HWY_SCALAR
// kPairOneHot[j][x]: element x of the window adds 1 to the low nibble of
// byte counter j when x == 2j, to its high nibble when x == 2j + 1.
alignas(16) static constexpr uint8_t kPairOneHot[8][16] = {
    {1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 16}};

// Counts the exponents (from vec/tail) that lie in [base, base+16)
// into counts; values outside the window go to counts one by one. Returns
// how many were outside. Each vector costs eight byte-table lookups: lookup
// j adds one to a 4-bit counter per byte for bins 2j and 2j+1 (values
// outside the window look up 0); the nibbles are summed into 64-bit lanes
// every 15 vectors, before a nibble can overflow.
// vec(k): the exponents of vector k; tail(i): the exponent of element i
// (the len % N elements past the last whole vector). The histogram reads
// them straight from the input: no pass through an exponent buffer.
template <class Vec, class Tail>
HWY_INLINE uint64_t CountWindow(const Vec& vec, const Tail& tail, uint64_t len, uint32_t base,
                                uint64_t counts[256]) {
  const D8 d8;
  const D16 d16;
  const D64 d64;
  const size_t N = hn::Lanes(d8);
  const uint64_t vecs = len / N;
  const V8 vbase = hn::Set(d8, static_cast<uint8_t>(base));
  const V8 k15 = hn::Set(d8, 15);
  const V8 k0F = hn::Set(d8, 0x0F);
  V8 lut[8];
  for (size_t j = 0; j < 8; ++j) lut[j] = hn::LoadDup128(d8, kPairOneHot[j]);
  hn::Vec<D64> wide[16];
  for (auto& w : wide) w = hn::Zero(d64);
  uint64_t outside = 0;
  for (uint64_t k0 = 0; k0 < vecs; k0 += 15) {
    const uint64_t k1 = vecs - k0 < 15 ? vecs : k0 + 15;
    V8 acc[8];
    for (auto& a : acc) a = hn::Zero(d8);
    for (uint64_t k = k0; k < k1; ++k) {
      const V8 e = vec(k);
      const V8 x = hn::Sub(e, vbase);
      const auto out_mask = hn::Ne(hn::SaturatedSub(x, k15), hn::Zero(d8));  // outside the window
      if (HWY_UNLIKELY(!hn::AllFalse(d8, out_mask))) {
        alignas(HWY_MAX_BYTES) uint8_t lanes[HWY_MAX_BYTES];
        hn::Store(e, d8, lanes);
        for (uint64_t m = MaskBits(out_mask); m != 0; m &= m - 1) {
          ++counts[lanes[static_cast<size_t>(__builtin_ctzll(m))]];
          ++outside;
        }
      }
      const V8 idx = WindowIndex(x);
      for (size_t j = 0; j < 8; ++j) acc[j] = hn::Add(acc[j], hn::TableLookupBytesOr0(lut[j], idx));
    }
    for (size_t j = 0; j < 8; ++j) {
      const V8 lo = hn::And(acc[j], k0F);
      const V8 hi = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, acc[j]))), k0F);
      wide[2 * j] = hn::Add(wide[2 * j], hn::SumsOf8(lo));
      wide[2 * j + 1] = hn::Add(wide[2 * j + 1], hn::SumsOf8(hi));
    }
  }
  for (uint32_t b = 0; b < 16; ++b) counts[base + b] += hn::GetLane(hn::SumOfLanes(d64, wide[b]));
  for (uint64_t i = vecs * N; i < len; ++i) ++counts[tail(i)];
  return outside;
}
#endif

// Elements whose exponents pick the first window (a sample: the counts
// themselves come from the blocks).
constexpr uint64_t kWindowSample = 512;

// The window counter starts on the window of the first kWindowSample
// values when it holds nearly all of them (typical of KV data), so even a
// frame of one block runs vectorised; otherwise, and after a block with too
// many values outside the window, blocks run the scalar counter until one
// shows such a window again.
// A call that ends on a window leaves it to the thread's next call of the
// same type, which starts on it without a sample (the sample is a fixed
// ~3000 instructions: as much as counting a third of a 16 KiB page, and a
// batch of pages of one tensor shares its window). The counts are exact
// whatever the window; a stale one costs at most one block of the slower
// outside-window path before the counter re-picks.
template <class Traits>
void HistogramTyped(const uint8_t* src, uint64_t n, uint64_t counts[256], const WarmOutput* warm) {
  alignas(64) uint8_t exps[kHistBlock];
  int64_t window = -1;  // base of the window counter, -1: scalar
  (void)window;  // HWY_SCALAR has no window counter
#if HWY_TARGET != HWY_SCALAR
  static thread_local int64_t t_last_window = -1;
  struct Keep {  // the window this call ends on, however it ends
    int64_t& window;
    ~Keep() { t_last_window = window; }
  } keep{window};
  if (t_last_window >= 0) {
    window = t_last_window;
  } else {
    const uint64_t len = n < kWindowSample ? n : kWindowSample;
    ExtractExponents<Traits>(src, 0, len, exps);
    uint16_t h[256];
    std::memset(h, 0, sizeof h);
    for (uint64_t k = 0; k < len; ++k) ++h[exps[k]];
    uint64_t in_window = 0;
    const uint32_t base = BestWindow(h, &in_window);
    if (len != 0 && in_window * 32 >= len * 31) window = base;
  }
#endif
  for (uint64_t i = 0; i < n; i += kHistBlock) {
    const uint64_t len = n - i < kHistBlock ? n - i : kHistBlock;
    if (warm != nullptr) {  // overlaps the counting below
      for (uint64_t q = 0; q < len; q += 64) hwy::Prefetch(warm->res + i + q);
      for (uint64_t q = 0; q < len / 2; q += 64) hwy::Prefetch(warm->codes + i / 2 + q);
    }
#if HWY_TARGET != HWY_SCALAR
    if (window >= 0) {
      const uint8_t* block = src + i * Traits::kBytes;
      const size_t N = hn::Lanes(D8());
      const auto vec = [&](uint64_t k) { return ExponentVector<Traits>(block + k * N * Traits::kBytes); };
      const auto tail = [&](uint64_t e) {
        return static_cast<uint8_t>(Traits::exponent(load_bits<Traits>(block + e * Traits::kBytes)));
      };
      const uint64_t outside = CountWindow(vec, tail, len, static_cast<uint32_t>(window), counts);
      if (outside * 64 > len) window = -1;  // re-pick the window from a scalar block
      continue;
    }
#endif
    ExtractExponents<Traits>(src, i, len, exps);
    uint64_t in_window = 0;
    const uint32_t base = CountScalar(exps, len, counts, &in_window);
    if (in_window * 32 >= len * 31) window = base;
  }
}

// inline: cpu/capacity_encode-inl.h includes this file too (its window counter).
inline void HistogramRange(Dtype dtype, const void* src_v, uint64_t n, uint64_t counts[256], const WarmOutput* warm) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  // The nibble codec's dtypes (core/codec.h); histogram_range counts the others scalar.
  visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(dtype), [&](auto tr) {
    using T = decltype(tr);
    HistogramTyped<T>(src, n, counts, std::is_same_v<T, Bf16Traits> ? warm : nullptr);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_HISTOGRAM_INL_H_
