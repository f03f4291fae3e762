/* SPDX-License-Identifier: Apache-2.0 */
// fp8_e4m3 coded streams (FORMAT.md 4.7) in Kokkos: one work item per
// 65536-element unit (8192 groups of 8). Count each unit's escape markers,
// an exclusive scan gives each unit its first escape index (the prefix count
// of code 7; no positions), then each unit codes its groups with the format
// core's group kernels (core/fp8_e4m3.h). Frame, header, gaps and hashes are
// kokkos_frame.h's.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "backends/kokkos/kokkos_views.h"
#include "core/fp8_e4m3.h"
#include "core/header.h"
#include "core/layout.h"

namespace splitzip {
namespace kokkos_impl {

inline constexpr uint64_t kE4M3UnitGroups = 8192;

KOKKOS_INLINE_FUNCTION uint64_t e4m3_unit_groups(uint64_t n, uint64_t u) {
  const uint64_t groups = (n + 7) / 8, first = u * kE4M3UnitGroups;
  return groups - first < kE4M3UnitGroups ? groups - first : kE4M3UnitGroups;
}

struct E4M3Table {
  uint8_t cb[16];
  uint8_t code_of[16];
  uint32_t count;
};

inline E4M3Table e4m3_table(const uint8_t cb[16], uint32_t count) {
  E4M3Table t{};
  for (int i = 0; i < 16; ++i) t.cb[i] = cb[i];
  t.count = count;
  e4m3_code_table(cb, count, t.code_of);
  return t;
}

template <class ExecSpace>
struct E4M3CountEscapes {
  ConstBytes<ExecSpace> src;
  U64s<ExecSpace> counts;  // counts(u + 1)
  uint64_t n;
  E4M3Table t;
  KOKKOS_INLINE_FUNCTION void operator()(Index u) const {
    uint64_t k = 0;
    const uint64_t g0 = static_cast<uint64_t>(u) * kE4M3UnitGroups, gn = e4m3_unit_groups(n, static_cast<uint64_t>(u));
    for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_escapes(src.data(), n, g, t.code_of);
    counts(u + 1) = k;
  }
};

template <class ExecSpace>
struct E4M3EncodeUnits {
  ConstBytes<ExecSpace> src;
  Bytes<ExecSpace> frame;
  Bytes<ExecSpace> esc;  // one byte per escape
  U64s<ExecSpace> first;
  uint64_t n, res_off, code_off;
  E4M3Table t;
  KOKKOS_INLINE_FUNCTION void operator()(Index u) const {
    uint8_t* e = esc.data() + first(u);
    const uint64_t g0 = static_cast<uint64_t>(u) * kE4M3UnitGroups, gn = e4m3_unit_groups(n, static_cast<uint64_t>(u));
    for (uint64_t g = g0; g < g0 + gn; ++g)
      e += e4m3_encode_group(src.data(), n, g, t.code_of, frame.data() + res_off, frame.data() + code_off, e);
  }
};

template <class ExecSpace>
struct E4M3PackEscapes {
  Bytes<ExecSpace> frame;
  Bytes<ExecSpace> esc;
  uint64_t exp_off, escapes;
  KOKKOS_INLINE_FUNCTION void operator()(Index j) const {
    const uint64_t i = 2 * static_cast<uint64_t>(j);
    const uint32_t hi = i + 1 < escapes ? esc(i + 1) : 0u;
    frame(exp_off + static_cast<uint64_t>(j)) = static_cast<uint8_t>(esc(i) | (hi << 4));
  }
};

template <class ExecSpace>
struct E4M3CountMarkers {
  ConstBytes<ExecSpace> frame;
  U64s<ExecSpace> counts;
  uint64_t n, code_off;
  uint32_t count;
  KOKKOS_INLINE_FUNCTION void operator()(Index u, uint32_t& mask) const {
    bool bad = false;
    uint64_t k = 0;
    const uint64_t g0 = static_cast<uint64_t>(u) * kE4M3UnitGroups, gn = e4m3_unit_groups(n, static_cast<uint64_t>(u));
    for (uint64_t g = g0; g < g0 + gn; ++g) k += e4m3_group_markers(frame.data() + code_off, n, g, count, &bad);
    counts(u + 1) = k;
    if (bad) mask |= kBadCode;
  }
};

template <class ExecSpace>
struct E4M3CheckEscapes {
  ConstBytes<ExecSpace> frame;
  uint64_t exp_off;
  E4M3Table t;
  KOKKOS_INLINE_FUNCTION void operator()(Index k, uint32_t& mask) const {
    if (t.code_of[e4m3_escape_at(frame.data() + exp_off, static_cast<uint64_t>(k))] != kE4M3Escape)
      mask |= kBadEscapeValue;
  }
};

template <class ExecSpace>
struct E4M3DecodeUnits {
  ConstBytes<ExecSpace> frame;
  Bytes<ExecSpace> dst;
  U64s<ExecSpace> first;
  uint64_t n, res_off, code_off, exp_off;
  E4M3Table t;
  KOKKOS_INLINE_FUNCTION void operator()(Index u) const {
    bool unused = false;
    uint64_t k = first(u);
    const uint8_t* f = frame.data();
    const uint64_t g0 = static_cast<uint64_t>(u) * kE4M3UnitGroups, gn = e4m3_unit_groups(n, static_cast<uint64_t>(u));
    for (uint64_t g = g0; g < g0 + gn; ++g) {
      e4m3_decode_group(f + res_off, f + code_off, f + exp_off, n, g, t.cb, t.code_of, k, dst.data(), &unused);
      k += e4m3_group_markers(f + code_off, n, g, t.count, &unused);
    }
  }
};

// counts(1..units) -> exclusive prefix in place (counts(0) = 0); returns the total.
template <class ExecSpace>
uint64_t e4m3_prefix(const ExecSpace& space, const U64s<ExecSpace>& counts) {
  const auto host = Kokkos::create_mirror_view(counts);
  Kokkos::deep_copy(space, host, counts);
  space.fence();
  for (size_t u = 1; u < host.extent(0); ++u) host(u) += host(u - 1);
  Kokkos::deep_copy(space, counts, host);
  space.fence();
  return host(host.extent(0) - 1);
}

template <class ExecSpace>
Status e4m3_encode(const ExecSpace& space, const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget,
                   uint64_t n_checks, uint8_t* f, uint64_t* escapes_out) {
  const E4M3Table t = e4m3_table(cb.entries, cb.count);
  const uint64_t units = (n + 8 * kE4M3UnitGroups - 1) / (8 * kE4M3UnitGroups);
  U64s<ExecSpace> first("splitzip::e4m3_first", units + 1);
  const ConstBytes<ExecSpace> in(src, n);
  Kokkos::parallel_for("splitzip::kokkos::e4m3_count", Range<ExecSpace>(space, 0, static_cast<Index>(units)),
                       E4M3CountEscapes<ExecSpace>{in, first, n, t});
  const uint64_t escapes = e4m3_prefix(space, first);
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(kDtypeE4M3, n, kDefaultChunkLog2, escapes, n_checks);
  const Bytes<ExecSpace> frame(f, L.frame_size);
  Kokkos::View<uint8_t*, typename ExecSpace::memory_space> esc("splitzip::e4m3_esc", escapes + 1);
  const Bytes<ExecSpace> esc_u(esc.data(), escapes + 1);
  Kokkos::parallel_for("splitzip::kokkos::e4m3_encode", Range<ExecSpace>(space, 0, static_cast<Index>(units)),
                       E4M3EncodeUnits<ExecSpace>{in, frame, esc_u, first, n, L.res_off, L.code_off, t});
  Kokkos::parallel_for("splitzip::kokkos::e4m3_escapes", Range<ExecSpace>(space, 0, static_cast<Index>(L.exp_size)),
                       E4M3PackEscapes<ExecSpace>{frame, esc_u, L.exp_off, escapes});
  space.fence();
  *escapes_out = escapes;
  return Status::ok;
}

// Rules 14 (in-stream), 15, 17, 18 in order, then the values.
template <class ExecSpace>
Status e4m3_decode(const ExecSpace& space, const FrameHeader& h, const uint8_t* f, uint8_t* dst) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  const ConstBytes<ExecSpace> frame(f, h.frame_size);
  // Rule 14 reads the last byte of each bit-packed stream: bring them to the host.
  uint8_t tail[3] = {0, 0, 0};
  const uint64_t offs[3] = {L.res_off + L.res_size - 1, L.code_off + L.code_size - 1, L.exp_off + L.exp_size - 1};
  const bool present[3] = {L.res_size > 0, L.code_size > 0, L.exp_size > 0};
  for (int i = 0; i < 3; ++i)
    if (present[i])
      Kokkos::deep_copy(space, Kokkos::View<uint8_t, Kokkos::HostSpace>(&tail[i]),
                        Kokkos::subview(frame, offs[i]));
  space.fence();
  if ((n & 1u) && (tail[0] >> 4) != 0) return Status::bad_padding;
  const uint64_t used = 3u * n - 8u * (L.code_size ? L.code_size - 1 : 0);
  if (L.code_size > 0 && used < 8 && (tail[1] >> used) != 0) return Status::bad_padding;
  if ((h.escape_count & 1u) && (tail[2] >> 4) != 0) return Status::bad_padding;
  const uint64_t units = (n + 8 * kE4M3UnitGroups - 1) / (8 * kE4M3UnitGroups);
  U64s<ExecSpace> first("splitzip::e4m3_first", units + 1);
  uint32_t code_mask = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::e4m3_markers", Range<ExecSpace>(space, 0, static_cast<Index>(units)),
                          E4M3CountMarkers<ExecSpace>{frame, first, n, L.code_off, h.codebook_count},
                          Kokkos::BOr<uint32_t>(code_mask));
  if (e4m3_prefix(space, first) != h.escape_count) return Status::bad_escape_counts;  // 15
  const E4M3Table t = e4m3_table(h.codebook, h.codebook_count);
  uint32_t esc_mask = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::e4m3_check_escapes",
                          Range<ExecSpace>(space, 0, static_cast<Index>(h.escape_count)),
                          E4M3CheckEscapes<ExecSpace>{frame, L.exp_off, t}, Kokkos::BOr<uint32_t>(esc_mask));
  if (esc_mask != 0) return Status::bad_escape_value;  // 17
  if (code_mask != 0) return Status::bad_code;         // 18
  Kokkos::parallel_for("splitzip::kokkos::e4m3_decode", Range<ExecSpace>(space, 0, static_cast<Index>(units)),
                       E4M3DecodeUnits<ExecSpace>{frame, Bytes<ExecSpace>(dst, n), first, n, L.res_off, L.code_off,
                                                  L.exp_off, t});
  space.fence();
  return Status::ok;
}

}  // namespace kokkos_impl
}  // namespace splitzip
