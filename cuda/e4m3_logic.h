/* SPDX-License-Identifier: Apache-2.0 */
// Per-thread steps of the CUDA kernels for coded fp8_e4m3 frames (FORMAT.md
// 4.7), host+device so the CPU emulator (tests/cuda) runs them. The element
// rules and the 8-element group coding are core/fp8_e4m3.h's (one rule, one
// place); a kernel group of 16 elements is two of its groups (tile starts
// are multiples of 16, so a kernel group never splits a format group).
//
// Encode tile (same pipeline as the other dtypes, encode_logic.h):
//   1. e4m3_enc_group: streams 1 and 3 at their final offsets; the group's
//      escape exponents, compacted in element order, at sh.exps[16g ..] and
//      their count as a low-bit mask in sh.mask[g] (the rake sums popcounts);
//   2. rake / block scan / look-back as for the other dtypes;
//   3. e4m3_enc_scatter: exponents into staging at their global index (no
//      positions, no stream 4); the copy phase packs them two per byte
//      (e4m3_copy_unit) once E, hence stream 6's offset, is known.
// Decode tile:
//   1. e4m3_dec_rake_count: markers (code 7) per group over a thread's rake
//      segment, rule 18 on every code; block scan -> exclusive marker
//      prefix per group (e4m3_dec_rake_write); the tile total is the
//      look-back aggregate. The side-stream index of a group is this prefix
//      plus the frame's earlier tiles' markers: no positions are stored.
//   2. e4m3_dec_group: the two format groups, escapes read at that index
//      (rule 17 on each).
#pragma once

#include <cstdint>

#include "core/fp8_e4m3.h"
#include "cuda/decode_logic.h"
#include "cuda/encode_logic.h"

namespace splitzip {
namespace cuda_detail {

// Format groups (8 elements) of a buffer of n elements.
SZ_HD uint64_t e4m3_groups8(uint64_t n) { return (n + 7u) / 8u; }

// Encode LUT: code_of[e] for e < 16 in sh.lut[0..16) (thread 0).
SZ_HD void e4m3_enc_build_lut(const EncPlan& p, uint32_t t, EncShared& sh) {
  if (t == 0) e4m3_code_table(p.cb, p.cb_count, sh.lut);
}

// Step 1 for kernel group g of the tile at tile_first.
SZ_HD void e4m3_enc_group(const EncPlan& p, uint64_t tile_first, uint32_t g, EncShared& sh) {
  const uint64_t first = tile_first + uint64_t{g} * kGroupElems;
  if (first >= p.n) {
    sh.mask[g] = 0;
    return;
  }
  uint8_t* res = p.dst + p.L.res_off;
  uint8_t* codes = p.dst + p.L.code_off;
  uint8_t* esc = sh.exps + g * kGroupElems;
  const uint64_t g8 = first / 8u;
  uint32_t k = e4m3_encode_group(p.src, p.n, g8, sh.lut, res, codes, esc);
  if (g8 + 1 < e4m3_groups8(p.n)) k += e4m3_encode_group(p.src, p.n, g8 + 1, sh.lut, res, codes, esc + k);
  sh.mask[g] = static_cast<uint16_t>((1u << k) - 1u);  // k escapes: popcount k
}

// Step 3 for group g: its escapes at global indices tile_excl + pre[g] ...
SZ_HD void e4m3_enc_scatter(const EncPlan& p, uint32_t g, uint64_t tile_excl, const EncShared& sh, uint8_t* stage) {
  const uint32_t k = popc32(sh.mask[g]);
  const uint64_t base = tile_excl + sh.pre[g];
  uint8_t* exps = stage + p.stage_off;
  for (uint32_t j = 0; j < k; ++j)
    if (base + j < p.budget) exps[base + j] = sh.exps[g * kGroupElems + j];  // past the budget: stored
}

// Copy phase: stream-6 bytes [unit * kCopyUnitBytes, +kCopyUnitBytes) of
// out_bytes = ceil(E/2), packed from one staged exponent per escape (a
// padding high nibble is 0). Thread t of nthreads.
SZ_HD void e4m3_copy_unit(const uint8_t* stage, uint8_t* to, uint64_t out_bytes, uint64_t escapes, uint64_t unit,
                          uint32_t t, uint32_t nthreads) {
  const uint64_t begin = unit * kCopyUnitBytes;
  const uint64_t end = begin + kCopyUnitBytes < out_bytes ? begin + kCopyUnitBytes : out_bytes;
  for (uint64_t o = begin + t; o < end; o += nthreads) {
    const uint32_t lo = stage[2 * o];
    const uint32_t hi = 2 * o + 1 < escapes ? stage[2 * o + 1] : 0u;
    to[o] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// The copy phase's move for one unit, whatever the copy kind.
SZ_HD void enc_copy_any(const EncTally& t, const uint8_t* from, uint8_t* to, uint64_t unit, uint32_t th,
                        uint32_t nthreads) {
  if (t.copy_kind == kCopyEscNibbles) e4m3_copy_unit(from, to, t.copy_bytes, t.escapes, unit, th, nthreads);
  else copy_unit(from, to, t.copy_bytes, unit, th, nthreads);
}

// The encode tables of a buffer's plan (the main loop builds them when the
// buffer changes).
SZ_HD void enc_build_tables(const EncPlan& p, uint32_t t, EncShared& sh) {
  if (codec_of(p.dtype, mode_of(Codec::e4m3)) == Codec::e4m3) e4m3_enc_build_lut(p, t, sh);
  else enc_build_lut(p, t, sh);
}

// Decode: code_of[] of the frame's codebook (thread 0), for rule 17.
SZ_HD void e4m3_dec_build(const DecPlan& p, uint32_t t, DecShared& sh) {
  if (t == 0) e4m3_code_table(p.h.codebook, p.h.codebook_count, sh.e4m3_code_of);
}

// Markers of kernel group g (0 past the end); rule 18 noted on every code.
SZ_HD uint32_t e4m3_dec_group_markers(const DecPlan& p, uint64_t tile_first, uint32_t g, int32_t& err) {
  const uint64_t n = p.h.n_elems;
  const uint64_t first = tile_first + uint64_t{g} * kGroupElems;
  if (first >= n) return 0;
  const uint8_t* codes = p.src + p.L.code_off;
  const uint64_t g8 = first / 8u;
  bool bad = false;
  uint32_t k = e4m3_group_markers(codes, n, g8, p.h.codebook_count, &bad);
  if (g8 + 1 < e4m3_groups8(n)) k += e4m3_group_markers(codes, n, g8 + 1, p.h.codebook_count, &bad);
  if (bad) note_error(err, Status::bad_code);
  return k;
}

// Step 1a: thread t's rake segment (kRakeGroups consecutive groups): each
// group's markers into sh.e4m3_pre, their sum returned.
SZ_HD uint32_t e4m3_dec_rake_count(const DecPlan& p, uint64_t tile_first, uint32_t t, DecShared& sh, int32_t& err) {
  uint32_t s = 0;
  for (uint32_t k = 0; k < kRakeGroups; ++k) {
    const uint32_t g = t * kRakeGroups + k;
    const uint32_t m = e4m3_dec_group_markers(p, tile_first, g, err);
    sh.e4m3_pre[g] = static_cast<uint16_t>(m);
    s += m;
  }
  return s;
}

// Step 1b: excl = markers of all earlier segments (block scan); counts ->
// exclusive prefix; [kGroupsPerTile] = the tile total.
SZ_HD void e4m3_dec_rake_write(uint32_t t, uint32_t excl, DecShared& sh) {
  uint32_t run = excl;
  for (uint32_t k = 0; k < kRakeGroups; ++k) {
    const uint32_t g = t * kRakeGroups + k;
    const uint32_t m = sh.e4m3_pre[g];
    sh.e4m3_pre[g] = static_cast<uint16_t>(run);
    run += m;
  }
  if (t == kThreads - 1) sh.e4m3_pre[kGroupsPerTile] = static_cast<uint16_t>(run);
}

SZ_HD uint32_t e4m3_dec_tile_total(const DecShared& sh) { return sh.e4m3_pre[kGroupsPerTile]; }

// Step 2 for group g; tile_excl = markers of the frame's earlier tiles (the
// caller checked that the tile's escapes lie inside stream 6).
SZ_HD void e4m3_dec_group(const DecPlan& p, uint64_t tile_first, uint32_t g, uint64_t tile_excl,
                          const DecShared& sh, int32_t& err) {
  const uint64_t n = p.h.n_elems;
  const uint64_t first = tile_first + uint64_t{g} * kGroupElems;
  if (first >= n) return;
  const uint8_t* res = p.src + p.L.res_off;
  const uint8_t* codes = p.src + p.L.code_off;
  const uint8_t* esc = p.src + p.L.exp_off;
  const uint64_t g8 = first / 8u;
  uint64_t k = tile_excl + sh.e4m3_pre[g];
  bool bad_escape = false, unused = false;
  e4m3_decode_group(res, codes, esc, n, g8, p.h.codebook, sh.e4m3_code_of, k, p.dst, &bad_escape);
  if (g8 + 1 < e4m3_groups8(n)) {
    k += e4m3_group_markers(codes, n, g8, p.h.codebook_count, &unused);
    e4m3_decode_group(res, codes, esc, n, g8 + 1, p.h.codebook, sh.e4m3_code_of, k, p.dst, &bad_escape);
  }
  if (bad_escape) note_error(err, Status::bad_escape_value);
}

}  // namespace cuda_detail
}  // namespace splitzip
