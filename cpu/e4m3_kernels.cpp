// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/e4m3-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/e4m3_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/e4m3-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include <vector>

#include "core/fp8_e4m3.h"

namespace splitzip {
namespace cpu {

HWY_EXPORT(E4M3CountEscapes);
HWY_EXPORT(E4M3HistogramResidual);
HWY_EXPORT(E4M3EncodeGroups);
HWY_EXPORT(E4M3CountMarkers);
HWY_EXPORT(E4M3DecodeGroups);
HWY_EXPORT(E4M3Target);

uint64_t e4m3_count_escapes(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16]) {
  return HWY_DYNAMIC_DISPATCH(E4M3CountEscapes)(src, n, g0, gn, code_of);
}
bool e4m3_histogram_residual(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, uint8_t* res,
                             uint64_t counts[16]) {
  HWY_DYNAMIC_DISPATCH(E4M3HistogramResidual)(src, n, g0, gn, res, counts);
  return res != nullptr && e4m3_target() != HWY_SCALAR;
}
uint64_t e4m3_encode_groups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                            uint8_t* res, bool res_done, uint8_t* codes, uint8_t* esc) {
  return HWY_DYNAMIC_DISPATCH(E4M3EncodeGroups)(src, n, g0, gn, code_of, res, res_done, codes, esc);
}
uint64_t e4m3_count_markers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count,
                            bool* bad_code) {
  return HWY_DYNAMIC_DISPATCH(E4M3CountMarkers)(codes, n, g0, gn, count, bad_code);
}
void e4m3_decode_groups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, uint64_t n, uint64_t g0,
                        uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16], uint64_t esc_index,
                        uint64_t esc_count, uint8_t* dst, bool* bad_escape) {
  // The range's escapes one per byte (the vector loop expands them into the
  // marker lanes), checked against rule 17 here; the buffer is this
  // thread's, grown once.
  thread_local std::vector<uint8_t> escb;
  if (escb.size() < esc_count + 64) escb.resize(esc_count + 64);
  uint8_t bad = 0;
  for (uint64_t i = 0; i < esc_count; ++i) {
    const uint8_t e = static_cast<uint8_t>(e4m3_escape_at(esc, esc_index + i));
    escb[i] = e;
    bad |= static_cast<uint8_t>(code_of[e] != kE4M3Escape);
  }
  if (bad != 0) *bad_escape = true;
  HWY_DYNAMIC_DISPATCH(E4M3DecodeGroups)(res, codes, esc, escb.data(), n, g0, gn, cb, code_of, esc_index, dst,
                                         bad_escape);
}
int64_t e4m3_target() { return HWY_DYNAMIC_DISPATCH(E4M3Target)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
