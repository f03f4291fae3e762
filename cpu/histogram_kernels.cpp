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
  // The SIMD kernels take the nibble codec's dtypes; the other codecs' counts are scalar.
  if (codec_of(dtype, Mode::fast) != Codec::nibble) return add_exponent_counts(dtype, src, n, counts);
  HWY_DYNAMIC_DISPATCH(HistogramRange)(dtype, src, n, counts, warm);
}

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
