// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/capacity-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/capacity_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/capacity-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace splitzip {
namespace cpu {

HWY_EXPORT(CapDecodeRows);
HWY_EXPORT(CapDecodeRowsSet);
HWY_EXPORT(CapTranspose);
HWY_EXPORT(CapTransposeJoinBf16);
HWY_EXPORT(CapTransposeJoinBf16Hashed);
HWY_EXPORT(CapJoinFp16);
HWY_EXPORT(CapJoinFp32);
HWY_EXPORT(CapJoinE5m2);
HWY_EXPORT(CapSteps);
HWY_EXPORT(CapacityTarget);

bool cap_decode_rows(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint64_t* consumed,
                     CapPrefetch* pf) {
  return HWY_DYNAMIC_DISPATCH(CapDecodeRows)(in, lk, lens, consumed, pf);
}

bool cap_decode_rows_set(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint32_t mask,
                         uint64_t* consumed, CapPrefetch* pf) {
  return HWY_DYNAMIC_DISPATCH(CapDecodeRowsSet)(in, lk, lens, mask, consumed, pf);
}

void cap_transpose(const uint8_t* rows, size_t stride, uint32_t n16, uint8_t* exps) {
  HWY_DYNAMIC_DISPATCH(CapTranspose)(rows, stride, n16, exps);
}

void cap_transpose_join_bf16(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res, uint8_t* out,
                             bool stream) {
  HWY_DYNAMIC_DISPATCH(CapTransposeJoinBf16)(rows, stride, n16, res, out, stream);
}

uint32_t cap_transpose_join_bf16_hashed(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res,
                                        uint8_t* out, bool stream, uint64_t* hashes, bool last) {
  return HWY_DYNAMIC_DISPATCH(CapTransposeJoinBf16Hashed)(rows, stride, n16, res, out, stream, hashes, last);
}

void cap_join_fp16(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* high,
                   const uint8_t* high_end, uint8_t* out, bool stream) {
  HWY_DYNAMIC_DISPATCH(CapJoinFp16)(exps, count, res, high, high_end, out, stream);
}

void cap_join_fp32(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* res_end, uint8_t* out,
                   bool stream) {
  HWY_DYNAMIC_DISPATCH(CapJoinFp32)(exps, count, res, res_end, out, stream);
}

void cap_join_e5m2(const uint8_t* exps, uint32_t count, const uint8_t* high, const uint8_t* high_end, uint8_t* out,
                   bool stream) {
  HWY_DYNAMIC_DISPATCH(CapJoinE5m2)(exps, count, high, high_end, out, stream);
}

void cap_steps(const uint32_t* multi, uint8_t* steps) { HWY_DYNAMIC_DISPATCH(CapSteps)(multi, steps); }

int64_t capacity_target() { return HWY_DYNAMIC_DISPATCH(CapacityTarget)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
