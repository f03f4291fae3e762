/* SPDX-License-Identifier: Apache-2.0 */
// The dtype list, the dtype visitor and codec_of(): which traits a dtype id
// names and which coded layout a (dtype, mode) frame uses. Header-only and
// host/device; every backend dispatches through these, so a new dtype or
// codec is a compile error wherever a case is missing instead of a silent
// fallback to another dtype's kernel.
//
// Mechanism: visit_dtype() switches over the enumerators of the enum class
// Dtype with no default, and the build turns -Wswitch into an error
// (cmake/SplitzipWarnings.cmake), so an enumerator without a case does not
// compile. The static_asserts below tie the switch to DtypeList, from which
// the count, the id range and the geometry table are generated. An id read
// from a frame or an argument is checked with dtype_id_valid() first;
// visit_dtype() of an invalid id visits nothing and returns false.
#pragma once

#include <cstdint>

#include "core/dtype_traits.h"
#include "core/fp8_e4m3.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

template <class... Ts>
struct DtypeList {
  static constexpr uint32_t kCount = sizeof...(Ts);
};
// In id order: ids are 1..kDtypeCount (FORMAT.md 2).
using AllDtypes = DtypeList<Bf16Traits, Fp16Traits, Fp32Traits, Fp8E5M2Traits, Fp8E4M3Traits>;
inline constexpr uint32_t kDtypeCount = AllDtypes::kCount;

constexpr SZ_HD bool dtype_id_valid(uint32_t dtype_id) { return dtype_id >= 1 && dtype_id <= kDtypeCount; }

// The nvcc pragma: a host-only callable (a kernel launch) passed to these
// host/device templates is fine when they are only instantiated on the host.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// Calls f(Traits{}) for the dtype's traits; returns false (nothing called)
// for an invalid id.
template <class F>
constexpr SZ_HD bool visit_dtype(uint32_t dtype_id, F&& f) {
  switch (static_cast<Dtype>(dtype_id)) {
    case Dtype::bf16: f(Bf16Traits{}); return true;
    case Dtype::fp16: f(Fp16Traits{}); return true;
    case Dtype::fp32: f(Fp32Traits{}); return true;
    case Dtype::fp8_e5m2: f(Fp8E5M2Traits{}); return true;
    case Dtype::fp8_e4m3: f(Fp8E4M3Traits{}); return true;
  }
  return false;
}
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
constexpr SZ_HD bool visit_dtype(Dtype d, F&& f) {
  return visit_dtype(static_cast<uint32_t>(d), static_cast<F&&>(f));
}

// ---- the dtype table, generated from the traits ----
struct DtypeGeometry {
  uint32_t bytes;       // bytes per element
  uint32_t exp_bits;    // 8, 5 or 4
  uint32_t res_bytes;   // k: residual byte-part bytes per element (nibble and capacity layouts)
  uint32_t res_high;    // 0 or 3: bits in the packed 3-bit part
};
template <class T>
constexpr SZ_HD DtypeGeometry geometry_of_traits() {
  return {T::kBytes, T::kExpBits, T::kResBytes, T::kResHighBits};
}
// Zeros for an invalid id.
constexpr SZ_HD DtypeGeometry geometry_of(uint32_t dtype_id) {
  DtypeGeometry g{0, 0, 0, 0};
  visit_dtype(dtype_id, [&](auto t) { g = geometry_of_traits<decltype(t)>(); });
  return g;
}

// ---- codecs ----
// The coded layouts (FORMAT.md 4.2-4.7). invalid: no layout takes the pair.
enum class Codec : uint8_t { nibble, e4m3, capacity, invalid };
inline constexpr uint32_t kCodecCount = 3;  // the valid ones, in enum order
inline constexpr uint32_t kDtypeE4M3 = Fp8E4M3Traits::kId;

// The one place that says which layout a frame uses: header byte 49 (the
// mode; 0 in v1) and the dtype. Mode 0 is the nibble layout, or fp8_e4m3's
// own (4.7); mode 1 is the capacity layout (4.6; fp8_e4m3 with its own split,
// 4.6.7, from format v3). Parsing refuses a header whose pair is invalid, and
// compress refuses such arguments.
constexpr SZ_HD Codec codec_of(uint32_t dtype_id, uint32_t mode) {
  if (!dtype_id_valid(dtype_id)) return Codec::invalid;
  const bool e4m3 = dtype_id == kDtypeE4M3;
  if (mode == static_cast<uint32_t>(Mode::fast)) return e4m3 ? Codec::e4m3 : Codec::nibble;
  if (mode == static_cast<uint32_t>(Mode::capacity)) return Codec::capacity;
  return Codec::invalid;
}
constexpr SZ_HD Codec codec_of(Dtype d, Mode m) {
  return codec_of(static_cast<uint32_t>(d), static_cast<uint32_t>(m));
}
// The mode byte of a codec's frames.
constexpr SZ_HD uint32_t mode_of(Codec c) {
  switch (c) {
    case Codec::nibble: return static_cast<uint32_t>(Mode::fast);
    case Codec::e4m3: return static_cast<uint32_t>(Mode::fast);
    case Codec::capacity: return static_cast<uint32_t>(Mode::capacity);
    case Codec::invalid: return 0xFFu;
  }
  return 0xFFu;
}
constexpr SZ_HD bool codec_takes(Codec c, uint32_t dtype_id) { return codec_of(dtype_id, mode_of(c)) == c; }

// The capacity mode's split of a dtype (FORMAT.md 4.6, 4.6.7): what its
// block coder codes per element (exponent) and what goes to streams 1-2
// (residual). The dtype's own split, except fp8_e4m3: the whole byte.
template <class T>
struct CapSplit {
  using type = T;
};
template <>
struct CapSplit<Fp8E4M3Traits> {
  using type = Fp8E4M3CapTraits;
};
template <class T>
using cap_split_t = typename CapSplit<T>::type;

// Zeros for an invalid id; exp_bits: bits of the coded symbol (8 for fp8_e4m3).
constexpr SZ_HD DtypeGeometry cap_geometry(uint32_t dtype_id) {
  DtypeGeometry g{0, 0, 0, 0};
  visit_dtype(dtype_id, [&](auto t) { g = geometry_of_traits<cap_split_t<decltype(t)>>(); });
  return g;
}
// Symbol values a mode-1 block table may name (FORMAT.md 4.6.5 d): 32 or 256.
constexpr SZ_HD uint32_t cap_symbol_limit(uint32_t dtype_id) { return 1u << cap_geometry(dtype_id).exp_bits; }

namespace codec_detail {
// A functor, not a lambda: nvcc would give a lambda here host/device
// attributes that cannot call a device-only f.
template <Codec C, class F>
struct IfTaken {
  F& f;
  bool& taken;
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <class T>
  constexpr SZ_HD void operator()(T t) const {
    if constexpr (codec_takes(C, T::kId)) {
      if constexpr (C == Codec::capacity) f(cap_split_t<T>{});  // the codec's own split (4.6.7)
      else f(t);
      taken = true;
    }
  }
};
}  // namespace codec_detail

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// Calls f(Traits{}) when codec C takes the dtype; f is instantiated only for
// those traits, so a codec's kernels need not compile for other dtypes.
// Codec::capacity passes the capacity split (cap_split_t).
template <Codec C, class F>
constexpr SZ_HD bool visit_codec_dtype(uint32_t dtype_id, F&& f) {
  bool taken = false;
  visit_dtype(dtype_id, codec_detail::IfTaken<C, F>{f, taken});
  return taken;
}

template <Codec C>
struct CodecTag {
  static constexpr Codec kCodec = C;
};
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// Calls f(CodecTag<c>{}); false (nothing called) for Codec::invalid.
template <class F>
constexpr SZ_HD bool visit_codec(Codec c, F&& f) {
  switch (c) {
    case Codec::nibble: f(CodecTag<Codec::nibble>{}); return true;
    case Codec::e4m3: f(CodecTag<Codec::e4m3>{}); return true;
    case Codec::capacity: f(CodecTag<Codec::capacity>{}); return true;
    case Codec::invalid: return false;
  }
  return false;
}

// ---- compile-time checks: the switch and the list agree ----
namespace codec_detail {
template <class T>
constexpr bool visits_as() {
  bool same = false;
  visit_dtype(T::kId, [&](auto t) { same = decltype(t)::kId == T::kId && sizeof(typename decltype(t)::Bits) == T::kBytes; });
  return same;
}
template <uint32_t I, class... Ts>
struct ListOk;
template <uint32_t I>
struct ListOk<I> {
  static constexpr bool value = true;
};
template <uint32_t I, class T, class... Ts>
struct ListOk<I, T, Ts...> {
  static constexpr bool value = T::kId == I && visits_as<T>() && ListOk<I + 1, Ts...>::value;
};
template <class L>
struct AllOk;
template <class... Ts>
struct AllOk<DtypeList<Ts...>> {
  static constexpr bool value = ListOk<1, Ts...>::value;
};
}  // namespace codec_detail
static_assert(codec_detail::AllOk<AllDtypes>::value,
              "AllDtypes must list ids 1..N in order, each reached by visit_dtype()");
static_assert(!dtype_id_valid(0) && !dtype_id_valid(kDtypeCount + 1), "dtype ids are 1..kDtypeCount");
static_assert(static_cast<uint32_t>(Codec::invalid) == kCodecCount, "Codec::invalid follows the codecs");

}  // namespace splitzip
