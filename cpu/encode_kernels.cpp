// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/encode-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/encode_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/encode-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace splitzip {
namespace cpu {

HWY_EXPORT(EncodeRange);
HWY_EXPORT(EncodeTarget);

uint64_t encode_range(Dtype dtype, const void* src, uint64_t begin, uint64_t end,
                      const EncodeTables& t, const Streams& s, EscapeSink* sink, uint64_t* hashes,
                      uint64_t total) {
  return HWY_DYNAMIC_DISPATCH(EncodeRange)(dtype, src, begin, end, t, s, sink, hashes, total);
}

int64_t encode_target() { return HWY_DYNAMIC_DISPATCH(EncodeTarget)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
