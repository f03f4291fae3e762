// Per-target exponent histogram for dynamic top-16 calibration: vectors
// extract the exponent bytes of a block into L1, then four interleaved
// scalar count tables (no store-to-load chains on a hot bin) count them.
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

template <class Traits>
void HistogramTyped(const uint8_t* src, uint64_t n, uint64_t counts[256]) {
  alignas(64) uint8_t exps[kHistBlock];
  // u32 tables, flushed every 64 blocks (2^18 elements): they never overflow.
  uint32_t h[4][256];
  std::memset(h, 0, sizeof h);
  for (uint64_t i = 0; i < n; i += kHistBlock) {
    const uint64_t len = n - i < kHistBlock ? n - i : kHistBlock;
    ExtractExponents<Traits>(src, i, len, exps);
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
    if ((i / kHistBlock) % 64 == 63 || i + len >= n) {
      for (int b = 0; b < 256; ++b) counts[b] += uint64_t{h[0][b]} + h[1][b] + h[2][b] + h[3][b];
      std::memset(h, 0, sizeof h);
    }
  }
}

void HistogramRange(Dtype dtype, const void* src_v, uint64_t n, uint64_t counts[256]) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  switch (dtype) {
    case Dtype::bf16: HistogramTyped<Bf16Traits>(src, n, counts); break;
    case Dtype::fp16: HistogramTyped<Fp16Traits>(src, n, counts); break;
    case Dtype::fp32: HistogramTyped<Fp32Traits>(src, n, counts); break;
    case Dtype::fp8_e5m2: HistogramTyped<Fp8E5M2Traits>(src, n, counts); break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_HISTOGRAM_INL_H_
