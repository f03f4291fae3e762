/* SPDX-License-Identifier: Apache-2.0 */
// Kokkos decoder: streams 1..6 -> values, with rules 14-18 (FORMAT.md 9).
//
//   1. in-stream padding bits                            (parallel_reduce)
//   2. chunk counts vs chunk lengths, scan to offsets    (parallel_reduce, parallel_scan)
//   3. one index per 8 elements rebuilds values, flags
//      codes >= codebook_count                           (parallel_reduce)
//   4. one team per chunk checks its escapes             (team parallel_reduce)
//   5. one team per chunk patches escape exponents       (team parallel_for)
//
// Every check sets a rule bit and the lowest failing rule is reported, which
// is what the reference does. Escapes are patched only when the whole frame is
// valid, so patches never race on a duplicated position.
#pragma once

#include "backends/kokkos/kokkos_encode.h"
#include "backends/kokkos/kokkos_views.h"
#include "core/header.h"

namespace splitzip {
namespace kokkos_impl {

// Rule 14 inside streams 2 and 3 (core stream_padding_ok); the frame layer
// checks the gaps.
template <class ExecSpace>
struct CheckPadding {
  ConstBytes<ExecSpace> frame;
  FrameLayout L;

  KOKKOS_INLINE_FUNCTION void operator()(const Index, uint32_t& mask) const {
    if (!stream_padding_ok(frame.data(), L)) mask |= kBadPadding;
  }
};

// Rule 15, first half: reads each chunk's count and checks it fits.
template <class ExecSpace>
struct ReadCounts {
  ConstBytes<ExecSpace> frame;
  U64s<ExecSpace> counts;
  uint64_t n, count_off;
  uint32_t chunk_log2;

  KOKKOS_INLINE_FUNCTION void operator()(const Index ci, uint32_t& mask) const {
    const auto c = static_cast<uint64_t>(ci);
    const uint64_t k = load_u16(frame, count_off + 2u * c);
    counts(c) = k;
    if (k > chunk_length(n, chunk_log2, c)) mask |= kBadEscapeCounts;
  }
};

template <class T, class ExecSpace>
struct DecodeOctets {
  ConstBytes<ExecSpace> frame;
  Bytes<ExecSpace> dst;
  uint64_t n, res_off, high_off, code_off;
  DecodeTable table;

  KOKKOS_INLINE_FUNCTION void operator()(const Index g, uint32_t& mask) const {
    const uint64_t base = static_cast<uint64_t>(g) * 8u;
    const uint32_t m = n - base < 8u ? static_cast<uint32_t>(n - base) : 8u;
    uint32_t r[8];
    load_residual_octet<T>(frame.data() + res_off, frame.data() + high_off, static_cast<uint64_t>(g), m, r);
    for (uint32_t j = 0; j < m; ++j) {
      const uint64_t i = base + j;
      const uint32_t byte = frame(code_off + 4u * static_cast<uint64_t>(g) + j / 2u);
      const uint32_t c = (byte >> (4u * (j & 1u))) & 0xFu;
      if (c >= table.count) mask |= kBadCode;
      store_elem<T>(dst, i, T::join(table.entry[c], r[j]));
    }
  }
};

// Rules 16 and 17 for the escapes of one chunk (rule 15 already holds).
template <class ExecSpace>
struct CheckEscapes {
  ConstBytes<ExecSpace> frame;
  U64s<ExecSpace> counts, offsets;
  uint64_t n, first_chunk, code_off, pos_off, exp_off;
  uint32_t chunk_log2;
  DecodeTable table;

  using member_type = typename Teams<ExecSpace>::member_type;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team, uint32_t& mask) const {
    const uint64_t c = first_chunk + static_cast<uint64_t>(team.league_rank());
    const uint64_t begin = c << chunk_log2;
    const uint64_t len = chunk_length(n, chunk_log2, c);
    const uint64_t first = offsets(c);
    uint32_t local = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, static_cast<Index>(counts(c))),
        [&](const Index k, uint32_t& m) {
          const uint64_t e = first + static_cast<uint64_t>(k);
          const uint64_t p = load_u16(frame, pos_off + 2u * e);
          if (p >= len || (k > 0 && p <= load_u16(frame, pos_off + 2u * (e - 1)))) m |= kBadEscapePosition;
          if (p < len && nibble_at(frame.data() + code_off, begin + p) != 0) m |= kBadEscapeValue;
          const uint32_t x = frame(exp_off + e);
          bool in_codebook = false;
          for (uint32_t q = 0; q < table.count; ++q) in_codebook = in_codebook || table.entry[q] == x;
          if (x >= table.exp_limit || in_codebook) m |= kBadEscapeValue;
        },
        Kokkos::BOr<uint32_t>(local));
    mask |= local;  // every team member holds the team result; OR is idempotent
  }
};

template <class T, class ExecSpace>
struct PatchEscapes {
  ConstBytes<ExecSpace> frame;
  Bytes<ExecSpace> dst;
  U64s<ExecSpace> counts, offsets;
  uint64_t first_chunk, pos_off, exp_off;
  uint32_t chunk_log2;

  using member_type = typename Teams<ExecSpace>::member_type;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const uint64_t c = first_chunk + static_cast<uint64_t>(team.league_rank());
    const uint64_t begin = c << chunk_log2;
    const uint64_t first = offsets(c);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<Index>(counts(c))), [&](const Index k) {
      const uint64_t e = first + static_cast<uint64_t>(k);
      const uint64_t i = begin + load_u16(frame, pos_off + 2u * e);
      const typename T::Bits v = load_elem<T>(dst, i);
      store_elem<T>(dst, i, T::join(frame(exp_off + e), T::residual(v)));
    });
  }
};

// Rules 14 (in-stream) to 18 of the coded frame `frame_p` with parsed header
// h, and its values into dst_p (both in space memory).
template <class T, class ExecSpace>
Status decode_streams(const ExecSpace& space, const FrameHeader& h, const uint8_t* frame_p, uint8_t* dst_p) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  const uint32_t log2 = h.chunk_log2;

  DecodeTable table{};
  for (uint32_t c = 0; c < 16; ++c) table.entry[c] = h.codebook[c];
  table.count = h.codebook_count;
  table.exp_limit = exponent_limit(static_cast<uint32_t>(T::kId));

  const ConstBytes<ExecSpace> frame(frame_p, L.frame_size);
  const Bytes<ExecSpace> dst(dst_p, n * T::kBytes);
  U64s<ExecSpace> counts(Kokkos::view_alloc(Kokkos::WithoutInitializing, "splitzip::escape_counts"),
                         L.n_chunks);
  U64s<ExecSpace> offsets(Kokkos::view_alloc(Kokkos::WithoutInitializing, "splitzip::escape_offsets"),
                          L.n_chunks);

  uint32_t mask = 0, part = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::check_padding", Range<ExecSpace>(space, 0, n > 0 ? 1 : 0),
                          CheckPadding<ExecSpace>{frame, L},
                          Kokkos::BOr<uint32_t>(part));
  mask |= part;

  part = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::read_counts",
                          Range<ExecSpace>(space, 0, static_cast<Index>(L.n_chunks)),
                          ReadCounts<ExecSpace>{frame, counts, n, L.count_off, log2},
                          Kokkos::BOr<uint32_t>(part));
  mask |= part;
  uint64_t total = 0;
  Kokkos::parallel_scan("splitzip::kokkos::escape_offsets",
                        Range<ExecSpace>(space, 0, static_cast<Index>(L.n_chunks)),
                        ExclusiveScan<ExecSpace>{counts, offsets}, total);
  if (total != h.escape_count) mask |= kBadEscapeCounts;

  part = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::decode_octets",
                          Range<ExecSpace>(space, 0, static_cast<Index>((n + 7u) / 8u)),
                          DecodeOctets<T, ExecSpace>{frame, dst, n, L.res_off, L.high_off, L.code_off, table},
                          Kokkos::BOr<uint32_t>(part));
  mask |= part;

  // Positions are only meaningful once the counts are (rule 15 < 16).
  if ((mask & kBadEscapeCounts) == 0 && h.escape_count > 0) {
    for (uint64_t c0 = 0; c0 < L.n_chunks; c0 += kLeagueBatch) {
      const uint64_t league = L.n_chunks - c0 < kLeagueBatch ? L.n_chunks - c0 : kLeagueBatch;
      part = 0;
      Kokkos::parallel_reduce("splitzip::kokkos::check_escapes",
                              Teams<ExecSpace>(space, static_cast<int>(league), Kokkos::AUTO),
                              CheckEscapes<ExecSpace>{frame, counts, offsets, n, c0, L.code_off, L.pos_off,
                                                      L.exp_off, log2, table},
                              Kokkos::BOr<uint32_t>(part));
      mask |= part;
    }
    if (mask == 0) {
      for (uint64_t c0 = 0; c0 < L.n_chunks; c0 += kLeagueBatch) {
        const uint64_t league = L.n_chunks - c0 < kLeagueBatch ? L.n_chunks - c0 : kLeagueBatch;
        Kokkos::parallel_for("splitzip::kokkos::patch_escapes",
                             Teams<ExecSpace>(space, static_cast<int>(league), Kokkos::AUTO),
                             PatchEscapes<T, ExecSpace>{frame, dst, counts, offsets, c0, L.pos_off, L.exp_off,
                                                        log2});
      }
    }
  }
  space.fence();
  return status_of(mask);
}

}  // namespace kokkos_impl
}  // namespace splitzip
