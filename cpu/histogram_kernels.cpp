// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/histogram-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/histogram_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/histogram-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "core/reference.h"

namespace splitzip {
namespace cpu {

HWY_EXPORT(HistogramRange);

void histogram_range(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256], const WarmOutput* warm) {
  // fp8_e4m3's codec counts with its own fused kernel (cpu/e4m3-inl.h); the SIMD kernels
  // below take the nibble codec's dtypes; other codecs' counts are scalar.
  if (codec_of(dtype, Mode::fast) == Codec::e4m3) {
    e4m3_histogram_residual(static_cast<const uint8_t*>(src), n, 0, (n + 7) / 8, nullptr, counts);
    return;
  }
  if (codec_of(dtype, Mode::fast) != Codec::nibble) return add_exponent_counts(dtype, src, n, counts);
  HWY_DYNAMIC_DISPATCH(HistogramRange)(dtype, src, n, counts, warm);
}

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
