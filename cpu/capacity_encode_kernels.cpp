// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/capacity_encode-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/capacity_encode_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/capacity_encode-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace splitzip {
namespace cpu {

HWY_EXPORT(CapPackRows);
HWY_EXPORT(CapPackRowsSet);
HWY_EXPORT(CapSplitCountBf16);
HWY_EXPORT(CapSplitCountFp16);
HWY_EXPORT(CapSplitCountFp32);
HWY_EXPORT(CapSplitCountE5m2);
HWY_EXPORT(CapCountBytes);

void cap_pack_rows(const uint8_t* exps, uint32_t rows, const uint32_t cl[256], uint32_t first, uint32_t last,
                   CapWriters* w) {
  HWY_DYNAMIC_DISPATCH(CapPackRows)(exps, rows, cl, first, last, w);
}

void cap_pack_rows_set(const uint8_t* exps, uint32_t rows, const uint32_t* cl, uint32_t mask, CapWriters* w) {
  HWY_DYNAMIC_DISPATCH(CapPackRowsSet)(exps, rows, cl, mask, w);
}

void cap_split_count_bf16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next) {
  HWY_DYNAMIC_DISPATCH(CapSplitCountBf16)(in, m, res, exps, stream, counts, window, pf_next);
}

void cap_split_count_fp16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* high, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next) {
  HWY_DYNAMIC_DISPATCH(CapSplitCountFp16)(in, m, res, high, exps, stream, counts, window, pf_next);
}

void cap_split_count_fp32(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next) {
  HWY_DYNAMIC_DISPATCH(CapSplitCountFp32)(in, m, res, exps, stream, counts, window, pf_next);
}

void cap_split_count_e5m2(const uint8_t* in, uint64_t m, uint8_t* high, uint8_t* exps, uint64_t counts[256],
                          int32_t* window, const uint8_t* pf_next) {
  HWY_DYNAMIC_DISPATCH(CapSplitCountE5m2)(in, m, high, exps, counts, window, pf_next);
}

void cap_count_bytes(const uint8_t* p, uint64_t m, uint64_t counts[256]) {
  HWY_DYNAMIC_DISPATCH(CapCountBytes)(p, m, counts);
}

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
