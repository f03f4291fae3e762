// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/decode-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/decode_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/decode-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace splitzip {
namespace cpu {

HWY_EXPORT(DecodeRange);
HWY_EXPORT(DecodeTarget);

uint32_t decode_range(Dtype dtype, const ConstStreams& s, uint64_t begin, uint64_t end,
                      const DecodeTables& t, const EscapeList& esc, const OutputTap& tap, void* dst) {
  return HWY_DYNAMIC_DISPATCH(DecodeRange)(dtype, s, begin, end, t, esc, tap, dst);
}

int64_t decode_target() { return HWY_DYNAMIC_DISPATCH(DecodeTarget)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
