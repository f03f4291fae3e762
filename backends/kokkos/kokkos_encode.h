/* SPDX-License-Identifier: Apache-2.0 */
// Kokkos encoder: streams 1..6 of a coded frame (FORMAT.md 4.2); the rest
// of the frame is kokkos_frame.h's.
//
//   1. one index per 8 elements writes streams 1..3 and
//      adds its escapes to its chunk's count          (parallel_for, atomic_add)
//   2. exclusive scan of the counts -> escape offsets (parallel_scan)
//   3. one team per chunk writes its count and scatters its escapes in
//      position order; chunks without escapes return
//      at once                                        (team parallel_scan)
//
// Every write has a fixed place, so the bytes do not depend on the execution
// space, team size or thread count. The execution space instance is the first
// argument and carries the stream, as in kokkos-kernels.
#pragma once

#include "backends/kokkos/kokkos_views.h"
#include "core/codec_args.h"

namespace splitzip {
namespace kokkos_impl {

// offsets(c) = counts(0) + ... + counts(c-1); the total comes back to the host.
template <class ExecSpace>
struct ExclusiveScan {
  U64s<ExecSpace> counts, offsets;
  using value_type = uint64_t;
  KOKKOS_INLINE_FUNCTION void operator()(const Index c, uint64_t& sum, const bool final) const {
    if (final) offsets(c) = sum;
    sum += counts(c);
  }
};

// Streams 1..3 for elements 8g .. 8g+7: one 3-byte word of 3-bit parts and
// four code bytes, so no two indices share an output byte. The same pass
// counts escapes per chunk (a chunk holds whole groups of 8): integer adds,
// so their order does not matter.
template <class T, class ExecSpace>
struct WriteOctets {
  ConstBytes<ExecSpace> src;
  Bytes<ExecSpace> frame;
  U64s<ExecSpace> counts;
  uint64_t n, res_off, high_off, code_off;
  uint32_t chunk_log2;
  CodeMap map;

  KOKKOS_INLINE_FUNCTION void operator()(const Index g) const {
    const uint64_t base = static_cast<uint64_t>(g) * 8u;
    const uint32_t m = n - base < 8u ? static_cast<uint32_t>(n - base) : 8u;
    uint8_t code[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint32_t r[8];
    uint32_t escapes = 0;
    for (uint32_t j = 0; j < m; ++j) {
      const typename T::Bits v = load_elem<T>(src, base + j);
      r[j] = T::residual(v);
      const uint8_t c = map.code[T::exponent(v)];
      code[j] = c == kEscape ? uint8_t{0} : c;  // escapes take the fixed code 0
      escapes += c == kEscape ? 1u : 0u;
    }
    if (escapes != 0) Kokkos::atomic_add(&counts(base >> chunk_log2), uint64_t{escapes});
    for (uint32_t p = 0; 2u * p < m; ++p)
      frame(code_off + 4u * static_cast<uint64_t>(g) + p) = pack_nibbles(code[2 * p], code[2 * p + 1]);
    store_residual_octet<T>(frame.data() + res_off, frame.data() + high_off, static_cast<uint64_t>(g), m, r);
  }
};

template <class T, class ExecSpace>
struct WriteEscapes {
  ConstBytes<ExecSpace> src;
  Bytes<ExecSpace> frame;
  U64s<ExecSpace> counts, offsets;
  uint64_t n, first_chunk, count_off, pos_off, exp_off;
  uint32_t chunk_log2;
  CodeMap map;

  using member_type = typename Teams<ExecSpace>::member_type;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const uint64_t c = first_chunk + static_cast<uint64_t>(team.league_rank());
    const uint64_t begin = c << chunk_log2;
    const auto len = static_cast<Index>(chunk_length(n, chunk_log2, c));
    const uint64_t escapes = counts(c);
    const uint64_t first = offsets(c);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      store_u16(frame, count_off + 2u * c, static_cast<uint32_t>(escapes));
    });
    if (escapes == 0) return;  // same value for the whole team
    // Rank of each escape inside its chunk = exclusive scan of escape flags.
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, len),
                          [&](const Index j, uint64_t& rank, const bool final) {
                            const uint64_t i = begin + static_cast<uint64_t>(j);
                            const uint32_t e = T::exponent(load_elem<T>(src, i));
                            if (map.code[e] != kEscape) return;
                            if (final) {
                              store_u16(frame, pos_off + 2u * (first + rank), static_cast<uint32_t>(j));
                              frame(exp_off + first + rank) = static_cast<uint8_t>(e);
                            }
                            rank += 1;
                          });
  }
};

// Streams 1..6 of a coded frame at `frame` (space memory) with codebook
// `cb`; escape_overflow when more than `budget` escapes (streams 1..3 are
// written then, for the stored frame to overwrite). n_checks places stream 7 for the layout; the frame layer
// (kokkos_frame.h) writes it.
template <class T, class ExecSpace>
Status encode_streams(const ExecSpace& space, const uint8_t* src_p, uint64_t n, uint32_t chunk_log2,
                      const Codebook& cb, uint64_t budget, uint64_t n_checks, uint8_t* frame_p,
                      uint64_t* escapes_out) {
  const uint64_t n_chunks = (n + (uint64_t{1} << chunk_log2) - 1) >> chunk_log2;

  CodeMap map;
  for (uint32_t e = 0; e < 256; ++e) map.code[e] = kEscape;
  for (uint32_t c = 0; c < cb.count; ++c) map.code[cb.entries[c]] = static_cast<uint8_t>(c);

  const ConstBytes<ExecSpace> src(src_p, n * T::kBytes);
  U64s<ExecSpace> counts("splitzip::escape_counts", n_chunks);  // zeroed
  U64s<ExecSpace> offsets(Kokkos::view_alloc(Kokkos::WithoutInitializing, "splitzip::escape_offsets"),
                          n_chunks);

  // Streams 1..3 sit at the same offsets whatever E is, and the E = 0 frame
  // fits the capacity (escape_budget), so they are written in the counting
  // pass; on ESCAPE_OVERFLOW the stored frame, which is larger, overwrites
  // every byte written here.
  const FrameLayout L0 = coded_layout(static_cast<uint32_t>(T::kId), n, chunk_log2, 0, n_checks);
  Kokkos::parallel_for("splitzip::kokkos::write_octets",
                       Range<ExecSpace>(space, 0, static_cast<Index>((n + 7u) / 8u)),
                       WriteOctets<T, ExecSpace>{src, Bytes<ExecSpace>(frame_p, L0.frame_size), counts, n,
                                                 L0.res_off, L0.high_off, L0.code_off, chunk_log2, map});
  uint64_t escapes = 0;
  Kokkos::parallel_scan("splitzip::kokkos::escape_offsets",
                        Range<ExecSpace>(space, 0, static_cast<Index>(n_chunks)),
                        ExclusiveScan<ExecSpace>{counts, offsets}, escapes);
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(static_cast<uint32_t>(T::kId), n, chunk_log2, escapes, n_checks);
  const Bytes<ExecSpace> frame(frame_p, L.frame_size);
  for (uint64_t c0 = 0; c0 < n_chunks; c0 += kLeagueBatch) {
    const uint64_t league = n_chunks - c0 < kLeagueBatch ? n_chunks - c0 : kLeagueBatch;
    Kokkos::parallel_for("splitzip::kokkos::write_escapes",
                         Teams<ExecSpace>(space, static_cast<int>(league), Kokkos::AUTO),
                         WriteEscapes<T, ExecSpace>{src, frame, counts, offsets, n, c0, L.count_off, L.pos_off,
                                                    L.exp_off, chunk_log2, map});
  }
  space.fence();
  *escapes_out = escapes;
  return Status::ok;
}

}  // namespace kokkos_impl
}  // namespace splitzip
