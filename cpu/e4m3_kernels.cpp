// SPDX-License-Identifier: Apache-2.0
// Compiles cpu/e4m3-inl.h once per Highway target and dispatches at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/e4m3_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/e4m3-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include <atomic>

#include "core/fp8_e4m3.h"
#include "cpu/cpu_targets.h"

namespace splitzip {
namespace cpu {

HWY_EXPORT(E4M3CountEscapes);
HWY_EXPORT(E4M3HistogramResidual);
HWY_EXPORT(E4M3EncodeGroups);
HWY_EXPORT(E4M3CountMarkers);
HWY_EXPORT(E4M3DecodeGroups);
HWY_EXPORT(E4M3ExpandEscapes);
HWY_EXPORT(E4M3DecodeGroupsHashed);
HWY_EXPORT(E4M3Target);

namespace {
std::atomic<bool> g_vbmi2_on{true};
bool cpu_has_vbmi2() {
#if HWY_ARCH_X86 && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
  return has;
#else
  return false;
#endif
}
}  // namespace

void set_e4m3_vbmi2(bool on) { g_vbmi2_on.store(on); }
bool e4m3_vbmi2() {
  return g_vbmi2_on.load(std::memory_order_relaxed) && cpu_has_vbmi2() && e4m3_target() == HWY_AVX3;
}

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
  return HWY_DYNAMIC_DISPATCH(E4M3EncodeGroups)(src, n, g0, gn, code_of, res, res_done, codes, esc, e4m3_vbmi2());
}
uint64_t e4m3_count_markers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count,
                            bool* bad_code) {
  return HWY_DYNAMIC_DISPATCH(E4M3CountMarkers)(codes, n, g0, gn, count, bad_code);
}
uint64_t e4m3_decode_groups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                            uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16],
                            uint32_t count, uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code) {
  return HWY_DYNAMIC_DISPATCH(E4M3DecodeGroups)(res, codes, esc, escb, n, g0, gn, cb, code_of, count, esc_index,
                                                esc_avail, dst, bad_code, e4m3_vbmi2());
}
uint64_t e4m3_decode_groups_hashed(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                                   uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16],
                                   const uint8_t code_of[16], uint32_t count, uint64_t esc_index, uint64_t esc_avail,
                                   uint8_t* dst, bool* bad_code, uint64_t* hashes, uint64_t last_end) {
  return HWY_DYNAMIC_DISPATCH(E4M3DecodeGroupsHashed)(res, codes, esc, escb, n, g0, gn, cb, code_of, count, esc_index,
                                                      esc_avail, dst, bad_code, e4m3_vbmi2(), hashes, last_end);
}
bool e4m3_expand_escapes(const uint8_t* esc, uint64_t i0, uint64_t k, const uint8_t code_of[16], uint8_t* escb) {
  return HWY_DYNAMIC_DISPATCH(E4M3ExpandEscapes)(esc, i0, k, code_of, escb);
}
int64_t e4m3_target() { return HWY_DYNAMIC_DISPATCH(E4M3Target)(); }

}  // namespace cpu
}  // namespace splitzip
#endif  // HWY_ONCE
