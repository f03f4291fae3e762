/* SPDX-License-Identifier: Apache-2.0 */
// Kokkos exponent histogram for dynamic calibration (FORMAT.md 3): each
// index counts a block into a private table, then adds its non-zero bins to
// the shared one with atomics. Counts are exact, so the order of the adds
// does not matter.
#pragma once

#include "backends/kokkos/kokkos_views.h"
#include "core/reference.h"

namespace splitzip {
namespace kokkos_impl {

inline constexpr uint64_t kHistogramBlock = 4096;  // elements per index

template <class T, class ExecSpace>
struct CountExponents {
  ConstBytes<ExecSpace> src;
  U64s<ExecSpace> bins;
  uint64_t n;

  KOKKOS_INLINE_FUNCTION void operator()(const Index blk) const {
    uint32_t local[1u << T::kExpBits];
    for (uint32_t e = 0; e < (1u << T::kExpBits); ++e) local[e] = 0;
    const uint64_t begin = static_cast<uint64_t>(blk) * kHistogramBlock;
    const uint64_t end = n - begin < kHistogramBlock ? n : begin + kHistogramBlock;
    for (uint64_t i = begin; i < end; ++i) ++local[T::exponent(load_elem<T>(src, i))];
    for (uint32_t e = 0; e < (1u << T::kExpBits); ++e)
      if (local[e] != 0) Kokkos::atomic_add(&bins(e), uint64_t{local[e]});
  }
};

template <class T, class ExecSpace>
Status histogram_typed(const ExecSpace& space, const void* src_p, uint64_t n, uint64_t counts[256]) {
  const ConstBytes<ExecSpace> src(static_cast<const uint8_t*>(src_p), n * T::kBytes);
  U64s<ExecSpace> bins(Kokkos::view_alloc(Kokkos::WithoutInitializing, "splitzip::exponent_bins"), 256);
  Kokkos::deep_copy(space, bins, uint64_t{0});
  Kokkos::parallel_for("splitzip::kokkos::histogram",
                       Range<ExecSpace>(space, 0, static_cast<Index>((n + kHistogramBlock - 1) / kHistogramBlock)),
                       CountExponents<T, ExecSpace>{src, bins, n});
  const Kokkos::View<uint64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> out(counts, 256);
  Kokkos::deep_copy(space, out, bins);
  space.fence();
  return Status::ok;
}

// counts[256] (host memory) is overwritten with the exponent counts of src.
template <class ExecSpace>
Status histogram(const ExecSpace& space, Dtype dtype, const void* src, uint64_t n, uint64_t counts[256]) {
  if (counts == nullptr || (src == nullptr && n > 0) || n > kMaxElems) return Status::invalid_argument;
  Status s = Status::invalid_argument;
  visit_dtype(dtype, [&](auto t) { s = histogram_typed<decltype(t)>(space, src, n, counts); });
  return s;
}

}  // namespace kokkos_impl
}  // namespace splitzip
