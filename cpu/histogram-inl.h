/* SPDX-License-Identifier: Apache-2.0 */
// Per-target exponent histogram for dynamic top-16 calibration: vectors
// extract the exponent bytes of a block into L1, then either byte compares
// count a 16-exponent window (KV data sits almost entirely in one) or four
// interleaved scalar tables count everything.
#if defined(SPLITZIP_CPU_HISTOGRAM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_HISTOGRAM_INL_H_
#undef SPLITZIP_CPU_HISTOGRAM_INL_H_
#else
#define SPLITZIP_CPU_HISTOGRAM_INL_H_
#endif

#include <cstring>

#include "cpu/kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

// Elements per block: the exponent buffer stays in L1.
constexpr uint64_t kHistBlock = 4096;

// Exponent bytes of elements [i0, i0 + len) into out (len <= kHistBlock).
template <class Traits>
HWY_INLINE void ExtractExponents(const uint8_t* src, uint64_t i0, uint64_t len, uint8_t* out) {
  uint64_t k = 0;
#if HWY_TARGET != HWY_SCALAR
  const D8 d8;
  const D16 d16;
  const D32 d32;
  const size_t N = hn::Lanes(d8);
  for (; k + N <= len; k += N) {
    const uint8_t* p = src + (i0 + k) * Traits::kBytes;
    V8 e;
    if constexpr (Traits::kBytes == 1) {
      e = hn::And(hn::BitCast(d8, hn::ShiftRight<2>(hn::BitCast(d16, hn::LoadU(d8, p)))),
                  hn::Set(d8, 0x1F));
    } else if constexpr (Traits::kBytes == 2) {
      const V8 b0 = hn::LoadU(d8, p);
      const V8 b1 = hn::LoadU(d8, p + N);
      if constexpr (Traits::kExpBits == 8) {  // bf16: high byte of v << 1
        e = hn::ConcatOdd(d8, hn::BitCast(d8, hn::ShiftLeft<1>(hn::BitCast(d16, b1))),
                          hn::BitCast(d8, hn::ShiftLeft<1>(hn::BitCast(d16, b0))));
      } else {  // fp16: bits 6..2 of the high byte
        const V8 h = hn::ConcatOdd(d8, b1, b0);
        e = hn::And(hn::BitCast(d8, hn::ShiftRight<2>(hn::BitCast(d16, h))), hn::Set(d8, 0x1F));
      }
    } else {  // fp32: byte 3 of v << 1
      hn::Vec<D16> hi[4];
      for (size_t q = 0; q < 4; ++q)
        hi[q] = hn::BitCast(d16, hn::ShiftLeft<1>(hn::BitCast(d32, hn::LoadU(d8, p + q * N))));
      e = hn::ConcatOdd(d8, hn::BitCast(d8, hn::ConcatOdd(d16, hi[3], hi[2])),
                        hn::BitCast(d8, hn::ConcatOdd(d16, hi[1], hi[0])));
    }
    hn::StoreU(e, d8, out + k);
  }
#endif
  for (; k < len; ++k)
    out[k] = static_cast<uint8_t>(Traits::exponent(load_bits<Traits>(src + (i0 + k) * Traits::kBytes)));
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
  uint64_t sum = 0, best = 0;
  uint32_t best_base = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    sum += block[b];
    if (b >= 16) sum -= block[b - 16];
    if (b >= 15 && sum > best) {
      best = sum;
      best_base = b - 15;
    }
  }
  *in_window = best;
  return best_base;
}

#if HWY_TARGET != HWY_SCALAR
// Adds to counts[base + kFirst + v], v < 8, how many of the `vecs` vectors
// at exps hold x = e - base == kFirst + v: eight u8 accumulators in named
// registers, flushed every 128 vectors (at most 128 per lane).
template <uint32_t kFirst>
HWY_INLINE void CountEight(const uint8_t* exps, uint64_t vecs, V8 vbase, uint32_t base, uint64_t counts[256]) {
  const D8 d8;
  const D64 d64;
  const size_t N = hn::Lanes(d8);
  const V8 k0 = hn::Set(d8, kFirst + 0), k1 = hn::Set(d8, kFirst + 1), k2 = hn::Set(d8, kFirst + 2),
           k3 = hn::Set(d8, kFirst + 3), k4 = hn::Set(d8, kFirst + 4), k5 = hn::Set(d8, kFirst + 5),
           k6 = hn::Set(d8, kFirst + 6), k7 = hn::Set(d8, kFirst + 7);
  for (uint64_t k0v = 0; k0v < vecs; k0v += 128) {
    const uint64_t k1v = vecs - k0v < 128 ? vecs : k0v + 128;
    V8 a0 = hn::Zero(d8), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (uint64_t k = k0v; k < k1v; ++k) {
      const V8 x = hn::Sub(hn::Load(d8, exps + k * N), vbase);
      // A true compare is all ones (-1): subtracting it counts one.
      a0 = hn::Sub(a0, hn::VecFromMask(d8, hn::Eq(x, k0)));
      a1 = hn::Sub(a1, hn::VecFromMask(d8, hn::Eq(x, k1)));
      a2 = hn::Sub(a2, hn::VecFromMask(d8, hn::Eq(x, k2)));
      a3 = hn::Sub(a3, hn::VecFromMask(d8, hn::Eq(x, k3)));
      a4 = hn::Sub(a4, hn::VecFromMask(d8, hn::Eq(x, k4)));
      a5 = hn::Sub(a5, hn::VecFromMask(d8, hn::Eq(x, k5)));
      a6 = hn::Sub(a6, hn::VecFromMask(d8, hn::Eq(x, k6)));
      a7 = hn::Sub(a7, hn::VecFromMask(d8, hn::Eq(x, k7)));
    }
    const V8 acc[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    for (uint32_t v = 0; v < 8; ++v)
      counts[base + kFirst + v] += hn::GetLane(hn::SumOfLanes(d64, hn::SumsOf8(acc[v])));
  }
}

// Counts exps[0, len) (64-byte aligned) whose value lies in [base, base+16)
// with byte compares (two passes of eight values); values outside the
// window go to counts one by one. Returns how many were outside.
HWY_INLINE uint64_t CountWindow(const uint8_t* exps, uint64_t len, uint32_t base, uint64_t counts[256]) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  const uint64_t vecs = len / N;
  const V8 vbase = hn::Set(d8, static_cast<uint8_t>(base));
  const V8 k15 = hn::Set(d8, 15);
  uint64_t outside = 0;
  for (uint64_t k = 0; k < vecs; ++k) {
    const V8 over = hn::SaturatedSub(hn::Sub(hn::Load(d8, exps + k * N), vbase), k15);
    const auto out_mask = hn::Ne(over, hn::Zero(d8));  // outside the window
    if (HWY_UNLIKELY(!hn::AllFalse(d8, out_mask))) {
      for (uint64_t m = MaskBits(out_mask); m != 0; m &= m - 1) {
        ++counts[exps[k * N + static_cast<size_t>(__builtin_ctzll(m))]];
        ++outside;
      }
    }
  }
  CountEight<0>(exps, vecs, vbase, base, counts);
  CountEight<8>(exps, vecs, vbase, base, counts);
  for (uint64_t i = vecs * N; i < len; ++i) ++counts[exps[i]];
  return outside;
}
#endif

// Blocks run the scalar counter until one shows that a 16-exponent window
// holds nearly all values (typical of KV data); then the window counter runs
// until a block has too many values outside it.
template <class Traits>
void HistogramTyped(const uint8_t* src, uint64_t n, uint64_t counts[256]) {
  alignas(64) uint8_t exps[kHistBlock];
  int64_t window = -1;  // base of the window counter, -1: scalar
  (void)window;  // HWY_SCALAR has no window counter
  for (uint64_t i = 0; i < n; i += kHistBlock) {
    const uint64_t len = n - i < kHistBlock ? n - i : kHistBlock;
    ExtractExponents<Traits>(src, i, len, exps);
#if HWY_TARGET != HWY_SCALAR
    if (window >= 0) {
      const uint64_t outside = CountWindow(exps, len, static_cast<uint32_t>(window), counts);
      if (outside * 64 > len) window = -1;  // re-pick the window from a scalar block
      continue;
    }
#endif
    uint64_t in_window = 0;
    const uint32_t base = CountScalar(exps, len, counts, &in_window);
    if (in_window * 32 >= len * 31) window = base;
  }
}

void HistogramRange(Dtype dtype, const void* src_v, uint64_t n, uint64_t counts[256]) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  switch (dtype) {
    case Dtype::bf16: HistogramTyped<Bf16Traits>(src, n, counts); break;
    case Dtype::fp16: HistogramTyped<Fp16Traits>(src, n, counts); break;
    case Dtype::fp32: HistogramTyped<Fp32Traits>(src, n, counts); break;
    case Dtype::fp8_e5m2: HistogramTyped<Fp8E5M2Traits>(src, n, counts); break;
    case Dtype::fp8_e4m3: break;  // scalar, before dispatch (histogram_kernels.cpp)
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_HISTOGRAM_INL_H_
