/* SPDX-License-Identifier: Apache-2.0 */
// Per-thread decode steps of the CUDA kernels, host+device (see
// encode_logic.h for why). Tile pipeline (one CTA per tile):
//   1. dec_counts_sum / block scan / dec_counts_write: stream-4 counts of the
//      tile's chunks, checked against chunk lengths (rule 15), turned into
//      per-chunk escape offsets; their sum is the tile's look-back aggregate,
//      published before the dense work so later tiles resolve early;
//   2. dec_group for every group: dense decode (codebook exponent + residual
//      streams), 16-byte output stores, code bytes kept in shared memory for
//      the rule-17 check, rule 18 checked on every code;
//   3. look-back: escapes of the frame's earlier tiles (must stay <= E);
//   4. dec_patch for each escape of the tile: rules 16-17, then overwrite the
//      exponent of the element written in step 2 (after a block barrier).
// Rule 14 (padding) and the sum-equals-E part of rule 15 are checked once per
// frame by dec_finalize. Each thread keeps the lowest failing rule it saw;
// the kernel reduces them per frame, so a frame with one fault reports that
// fault's rule like the reference does.
#pragma once

#include <cstdint>

#include "cuda/encode_logic.h"
#include "cuda/plan.h"
#include "cuda/vec_io.h"

namespace splitzip {
namespace cuda_detail {

struct DecShared {
  union {
    uint8_t codes[kTileElems / 2];             // stream-3 bytes of the tile
    uint16_t e4m3_pre[kGroupsPerTile + 8];     // fp8_e4m3: exclusive marker prefix per group (e4m3_logic.h)
  };
  uint32_t coff[kMaxChunksPerTile + 8];     // exclusive escape offset per chunk; [chunks] = total
  // Code byte (two elements) -> cb[lo] | cb[hi] << 16, bit 24 set when either
  // code is >= codebook_count (rule 18). Built per frame (dec_build_pairs).
  uint32_t pairs[256];
  uint8_t e4m3_code_of[16];  // fp8_e4m3: exponent -> code, 7 when absent
};

SZ_HD void dec_build_pairs(const DecPlan& p, uint32_t t, DecShared& sh) {
  for (uint32_t b = t; b < 256; b += kThreads) {
    const uint32_t lo = b & 15u, hi = b >> 4;
    const uint32_t count = p.h.codebook_count;
    sh.pairs[b] = uint32_t{p.h.codebook[lo]} | (uint32_t{p.h.codebook[hi]} << 16) |
                  ((lo >= count || hi >= count) ? (1u << 24) : 0u);
  }
}

SZ_HD void note_error(int32_t& err, Status s) {
  const auto v = static_cast<int32_t>(s);
  if (v < err) err = v;
}

// Chunks of the frame that start in this tile.
SZ_HD uint32_t dec_tile_chunks(const DecPlan& p, uint64_t tile_first) {
  const uint64_t q0 = tile_first >> p.h.chunk_log2;
  const uint64_t left = p.L.n_chunks - q0;
  const uint64_t per_tile = kTileElems >> p.h.chunk_log2;
  return static_cast<uint32_t>(left < per_tile ? left : per_tile);
}

SZ_HD uint64_t chunk_len(const DecPlan& p, uint64_t q) {
  const uint64_t chunk = uint64_t{1} << p.h.chunk_log2;
  return q + 1 < p.L.n_chunks ? chunk : p.h.n_elems - q * chunk;
}

// Step 1a: thread t reads counts of chunks [kChunksPerThread*t, +kChunksPerThread)
// into sh.coff and returns their sum.
SZ_HD uint32_t dec_counts_sum(const DecPlan& p, uint64_t tile_first, uint32_t t, DecShared& sh,
                              int32_t& err) {
  const uint32_t chunks = dec_tile_chunks(p, tile_first);
  const uint64_t q0 = tile_first >> p.h.chunk_log2;
  uint32_t sum = 0;
SZ_UNROLL
  for (uint32_t k = 0; k < kChunksPerThread; ++k) {
    const uint32_t c = t * kChunksPerThread + k;
    uint32_t v = 0;
    if (c < chunks) {
      v = load_le16(p.src + p.L.count_off + 2 * (q0 + c));
      if (v > chunk_len(p, q0 + c)) note_error(err, Status::bad_escape_counts);
    }
    sh.coff[c] = v;
    sum += v;
  }
  return sum;
}

// Step 1b: excl = counts of all earlier threads' chunks (block scan).
SZ_HD void dec_counts_write(uint32_t t, uint32_t excl, DecShared& sh) {
  uint32_t run = excl;
SZ_UNROLL
  for (uint32_t k = 0; k < kChunksPerThread; ++k) {
    const uint32_t c = t * kChunksPerThread + k;
    const uint32_t v = sh.coff[c];
    sh.coff[c] = run;
    run += v;
  }
  if (t == kThreads - 1) sh.coff[kMaxChunksPerTile] = run;
}

SZ_HD uint32_t dec_tile_total(const DecShared& sh) { return sh.coff[kMaxChunksPerTile]; }

// Groups whose loads a thread issues before the first store (dec_tile):
// two (bf16: 2 x 16 B residuals + 2 x 8 B codes), fp32 one (3 x 16 B +
// 8 B). Four spill the 64-register decode kernel several times more, so it
// stays at two until a device run compares them (docs/DESIGN.md, section 8;
// cuda/README.md).
template <class T>
constexpr uint32_t dec_groups_in_flight() {
  return T::kBytes == 4 ? 1u : 2u;
}

// Step 2, split into load and decode halves (see enc_load for why).
template <class T>
struct DecIn {
  uint32_t res[T::kResBytes ? 4 * T::kResBytes : 1];
  uint64_t codes;
  uint64_t high;
  uint64_t first;
  uint32_t valid;  // 0: past the end
};

template <class T>
SZ_HD void dec_load(const DecPlan& p, uint64_t tile_first, uint32_t g, DecIn<T>& in) {
  const uint64_t n = p.h.n_elems;
  in.first = tile_first + uint64_t{g} * kGroupElems;
  in.valid = 0;
  if (in.first >= n) return;
  const uint64_t left = n - in.first;
  const uint32_t valid = left < kGroupElems ? static_cast<uint32_t>(left) : kGroupElems;
  in.valid = valid;
  const bool src_vec = valid == kGroupElems && (p.flags & kPlanSrcAligned);
  const uint8_t* f = p.src;
  const FrameLayout& L = p.L;
  const uint64_t first = in.first;
  in.codes = src_vec ? load8_cs(f + L.code_off + first / 2)  // frame streams 1-3: read once
                     : load_bytes64(f + L.code_off + first / 2, (valid + 1) / 2);
  constexpr uint32_t kResWords = T::kResBytes ? 4 * T::kResBytes : 1;
SZ_UNROLL
  for (uint32_t k = 0; k < kResWords; ++k) in.res[k] = 0;
  if constexpr (T::kResBytes > 0) {
    const uint8_t* r = f + L.res_off + first * T::kResBytes;
    if (src_vec) {
      SZ_UNROLL
      for (uint32_t k = 0; k < T::kResBytes; ++k) load16_cs(r + 16 * k, in.res + 4 * k);
    } else {
      load_bytes(r, valid * T::kResBytes, in.res);
    }
  }
  in.high = 0;
  if (T::kResHighBits) in.high = load_bytes64(f + L.high_off + first * 3 / 8, (3 * valid + 7) / 8);
}

// bf16, full group: element pair j -> one 32-bit output word.
SZ_HD void dec_store_bf16_full(const DecPlan& p, uint32_t g, const DecIn<Bf16Traits>& in, DecShared& sh,
                               int32_t& err) {
  store8(sh.codes + g * (kGroupElems / 2), in.codes);
  uint32_t out[8], flags = 0;
  SZ_UNROLL
  for (uint32_t j = 0; j < 8; ++j) {
    const uint32_t e = sh.pairs[(in.codes >> (8 * j)) & 0xFFu];  // exponents at bytes 0, 2
    flags |= e;
    const uint32_t rs = byte_perm(in.res[j >> 1], 0, (j & 1) ? 0x4342 : 0x4140);  // residuals at bytes 0, 2
    out[j] = ((rs & 0x00800080u) << 8) | ((e & 0x00FF00FFu) << 7) | (rs & 0x007F007Fu);
  }
  if (flags & (1u << 24)) note_error(err, Status::bad_code);
  uint8_t* d = p.dst + in.first * 2;
  if (p.flags & kPlanDstAligned) {
    // Output: streamed out unless the tile's checksum pass re-reads it.
    const bool stream = !(p.flags & kPlanVerify);
    store16_hint(d, out, stream);
    store16_hint(d + 16, out + 4, stream);
  } else {
    store_bytes(d, 32, out);
  }
}

template <class T>
SZ_HD void dec_store(const DecPlan& p, uint32_t g, const DecIn<T>& in, DecShared& sh, int32_t& err) {
  if (in.valid == 0) return;
  if constexpr (T::kBytes == 2 && T::kExpBits == 8) {  // bf16
    if (in.valid == kGroupElems) {
      dec_store_bf16_full(p, g, in, sh, err);
      return;
    }
  }
  const uint32_t valid = in.valid;
  store8(sh.codes + g * (kGroupElems / 2), in.codes);
  const uint32_t count = p.h.codebook_count;
  constexpr uint32_t kOutWords = 4 * T::kBytes;
  uint32_t out[kOutWords];
SZ_UNROLL
  for (uint32_t k = 0; k < kOutWords; ++k) out[k] = 0;
  bool bad_code = false;
SZ_UNROLL
  for (uint32_t i = 0; i < kGroupElems; ++i) {
    const uint32_t c = static_cast<uint32_t>(in.codes >> (4u * i)) & 0xFu;
    bad_code |= (i < valid) & (c >= count);
    const uint32_t v = T::join(p.h.codebook[c], image_residual<T>(in.res, in.high, i));
    if (T::kBytes == 4) out[i] = v;
    else if (T::kBytes == 2) out[i >> 1] |= v << ((i & 1u) * 16u);
    else out[i >> 2] |= v << ((i & 3u) * 8u);
  }
  if (bad_code) note_error(err, Status::bad_code);

  uint8_t* d = p.dst + in.first * T::kBytes;
  if (valid == kGroupElems && (p.flags & kPlanDstAligned)) {
SZ_UNROLL
    for (uint32_t k = 0; k < T::kBytes; ++k) store16_hint(d + 16 * k, out + 4 * k, !(p.flags & kPlanVerify));
  } else {
    store_bytes(d, valid * T::kBytes, out);
  }
}

// Step 2 for group g.
template <class T>
SZ_HD void dec_group(const DecPlan& p, uint64_t tile_first, uint32_t g, DecShared& sh, int32_t& err) {
  DecIn<T> in;
  dec_load<T>(p, tile_first, g, in);
  dec_store<T>(p, g, in, sh, err);
}

// Step 4 for the tile's escape j (0-based within the tile); tile_excl is the
// index of the tile's first escape in streams 5/6.
template <class T>
SZ_HD void dec_patch(const DecPlan& p, uint64_t tile_first, uint32_t j, uint64_t tile_excl,
                     const DecShared& sh, int32_t& err) {
  const uint32_t chunks = dec_tile_chunks(p, tile_first);
  // Chunk c of the tile with coff[c] <= j < coff[c+1].
  uint32_t lo = 0, hi = chunks;  // invariant: coff[lo] <= j, answer < hi
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (sh.coff[mid] <= j) lo = mid;
    else hi = mid;
  }
  const uint32_t c = lo;
  const uint64_t q = (tile_first >> p.h.chunk_log2) + c;
  const uint64_t e = tile_excl + j;
  const uint8_t* f = p.src;
  const uint32_t pos = load_le16(f + p.L.pos_off + 2 * e);
  if (pos >= chunk_len(p, q)) {
    note_error(err, Status::bad_escape_position);
    return;
  }
  if (j > sh.coff[c] && pos <= load_le16(f + p.L.pos_off + 2 * (e - 1))) {
    note_error(err, Status::bad_escape_position);
    return;
  }
  const uint32_t local = (c << p.h.chunk_log2) + pos;
  const uint32_t nib = (sh.codes[local >> 1] >> (4u * (local & 1u))) & 0xFu;
  const uint32_t x = f[p.L.exp_off + e];
  const uint32_t limit = T::kExpBits == 5 ? 32u : 256u;
  if (nib != 0 || x >= limit || code_of(p.h.codebook, p.h.codebook_count, x) != kEscapeCode) {
    note_error(err, Status::bad_escape_value);
    return;
  }
  uint8_t* d = p.dst + (tile_first + local) * T::kBytes;
  const auto v = static_cast<typename T::Bits>(load_bytes64(d, T::kBytes));
  store_bytes64(d, T::kBytes, T::join(x, T::residual(v)));
}

// Stored frame: payload bytes of this tile, thread t of nthreads.
SZ_HD void dec_stored_copy(const DecPlan& p, uint64_t tile_first, uint32_t t, uint32_t nthreads) {
  const uint32_t bytes = geometry_of(p.h.dtype).bytes;
  const uint64_t begin = tile_first * bytes;
  const uint64_t end_e = tile_first + kTileElems < p.h.n_elems ? tile_first + kTileElems : p.h.n_elems;
  const uint64_t end = end_e * bytes;
  const uint8_t* from = p.src + 64;
  uint8_t* to = p.dst;
  uint64_t done = begin;
  if ((p.flags & kPlanSrcAligned) && (p.flags & kPlanDstAligned)) {
    const uint64_t vec_end = begin + (end - begin) / 16 * 16;
    for (uint64_t o = begin + 16u * t; o < vec_end; o += 16u * nthreads) {
      uint32_t w[4];
      load16_cs(from + o, w);
      store16_hint(to + o, w, !(p.flags & kPlanVerify));
    }
    done = vec_end;
  }
  for (uint64_t o = done + t; o < end; o += nthreads) to[o] = from[o];
}

// Rule 14 (zero padding bits and bytes) and the rest of rule 15, once per
// frame after all tiles; writes the frame's status and decoded size.
SZ_HD void dec_finalize(DecPlan& p, uint64_t* out_size, Status* out_status) {
  if (p.status != static_cast<int32_t>(Status::ok)) {
    *out_status = static_cast<Status>(p.status);
    *out_size = 0;
    return;
  }
  int32_t err = p.err;
  const uint8_t* f = p.src;
  if (!frame_gaps_zero(f, p.h)) note_error(err, Status::bad_padding);
  if (!(p.flags & kPlanStored)) {
    if (!stream_padding_ok(f, p.L)) note_error(err, Status::bad_padding);
    const uint64_t seen = p.tiles ? p.escapes_seen : 0;
    if (seen != p.h.escape_count) note_error(err, Status::bad_escape_counts);
  }
  p.err = err;
  if (err != kNoError) {
    p.status = err;
    *out_status = static_cast<Status>(err);
    *out_size = 0;
    return;
  }
  *out_status = Status::ok;
  *out_size = p.out_bytes;
}

}  // namespace cuda_detail
}  // namespace splitzip
