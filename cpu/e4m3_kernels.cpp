// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/e4m3-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/e4m3_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/e4m3-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace splitzip {
namespace cpu {

HWY_EXPORT(E4M3CountEscapes);
HWY_EXPORT(E4M3EncodeGroups);
HWY_EXPORT(E4M3CountMarkers);
HWY_EXPORT(E4M3DecodeGroups);
HWY_EXPORT(E4M3Target);

uint64_t e4m3_count_escapes(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16]) {
  return HWY_DYNAMIC_DISPATCH(E4M3CountEscapes)(src, n, g0, gn, code_of);
}
uint64_t e4m3_encode_groups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                            uint8_t* res, uint8_t* codes, uint8_t* esc) {
  return HWY_DYNAMIC_DISPATCH(E4M3EncodeGroups)(src, n, g0, gn, code_of, res, codes, esc);
}
uint64_t e4m3_count_markers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count,
                            bool* bad_code) {
  return HWY_DYNAMIC_DISPATCH(E4M3CountMarkers)(codes, n, g0, gn, count, bad_code);
}
void e4m3_decode_groups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, uint64_t n, uint64_t g0,
                        uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index,
                        uint8_t* dst, bool* bad_escape) {
  HWY_DYNAMIC_DISPATCH(E4M3DecodeGroups)(res, codes, esc, n, g0, gn, cb, code_of, esc_index, dst, bad_escape);
}
int64_t e4m3_target() { return HWY_DYNAMIC_DISPATCH(E4M3Target)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
