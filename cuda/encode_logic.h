/* SPDX-License-Identifier: Apache-2.0 */
// Per-thread encode steps of the CUDA kernels, host+device so the CPU tests
// run them by looping over tiles and thread indices (tests/cuda). The
// kernels in encode.cu only add tile scheduling, barriers, the block scan
// and the decoupled look-back around these.
//
// Tile pipeline (one CTA, tile of kTileElems elements, see plan.h):
//   1. enc_group for every group: dense transform, streams 1-3 written at
//      their final offsets, raw exponents and a 16-bit escape mask kept in
//      shared memory (the input is read exactly once);
//   2. enc_rake_sum / block scan / enc_rake_write: exclusive escape prefix
//      of every group in element order;
//   3. look-back: escapes of all earlier tiles of the buffer;
//   4. enc_scatter: escape positions straight into stream 5, exponents into
//      staging (stream 6's offset depends on the total E), in element order,
//      so the result is deterministic; enc_chunk_counts: stream 4.
#pragma once

#include <cstdint>

#include "cuda/plan.h"
#include "cuda/vec_io.h"

namespace splitzip {
namespace cuda_detail {

// Lookup value of an exponent outside the codebook (bit 7 set, low nibble 0:
// the escape's fixed code 0 of FORMAT.md 3).
constexpr uint8_t kEscapeCode = 0x80;

// Code of exponent e under (cb, count), or kEscapeCode.
SZ_HD uint8_t code_of(const uint8_t cb[16], uint32_t count, uint32_t e) {
  for (uint32_t c = 0; c < count; ++c)
    if (cb[c] == e) return static_cast<uint8_t>(c);
  return kEscapeCode;
}

SZ_HD uint32_t popc32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__popc(x));
#else
  return static_cast<uint32_t>(__builtin_popcount(x));
#endif
}
SZ_HD uint32_t ctz32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__ffs(static_cast<int>(x)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctz(x));
#endif
}

struct EncShared {
  uint8_t exps[kTileElems];               // raw exponent of every tile element
  uint16_t mask[kGroupsPerTile];          // escape bits of each group
  uint16_t pre[kGroupsPerTile + 8];       // exclusive escape prefix per group; [2048] = tile total
  uint8_t lut[256];                       // exponent -> code, or kEscapeCode
};

// Element i of a 16-element group held as little-endian 32-bit words.
template <class T>
SZ_HD uint32_t group_elem(const uint32_t* w, uint32_t i) {
  if (T::kBytes == 4) return w[i];
  if (T::kBytes == 2) return (w[i >> 1] >> ((i & 1u) * 16u)) & 0xFFFFu;
  return (w[i >> 2] >> ((i & 3u) * 8u)) & 0xFFu;
}

SZ_HD void enc_build_lut(const EncPlan& p, uint32_t t, EncShared& sh) {
  for (uint32_t e = t; e < 256; e += kThreads) sh.lut[e] = code_of(p.cb, p.cb_count, e);
}

// Step 1, split in a load and a transform half so a thread can have several
// groups' loads in flight (the compiler cannot hoist loads above the stores
// of an earlier group: src and dst could alias as far as it knows).
template <class T>
struct EncIn {
  uint32_t w[4 * T::kBytes];  // 16 elements, little-endian words
  uint64_t first;             // element index of the group's first element
  uint32_t valid;             // elements in the buffer, 0..16 (0: past the end)
};

// Groups whose loads a thread issues before the first transform (enc_tile):
// 4 x 16 B in flight per thread for every dtype (fp8 4 groups of 16 B,
// bf16/fp16 2 groups of 32 B, fp32 one group of 64 B).
template <class T>
constexpr uint32_t enc_groups_in_flight() {
  return T::kBytes >= 4 ? 1u : 4u / T::kBytes;
}
static_assert(kRounds % 4 == 0, "rounds split into batches of up to 4 groups");

template <class T>
SZ_HD void enc_load(const EncPlan& p, uint64_t tile_first, uint32_t g, EncIn<T>& in) {
  in.first = tile_first + uint64_t{g} * kGroupElems;
  in.valid = 0;
  if (in.first >= p.n) return;
  const uint64_t left = p.n - in.first;
  in.valid = left < kGroupElems ? static_cast<uint32_t>(left) : kGroupElems;
  const uint8_t* s = p.src + in.first * T::kBytes;
  // Read once, unless the tile's checksum pass re-reads it from L2.
  const bool stream = !(p.flags & kPlanChecksum);
  if (in.valid == kGroupElems && (p.flags & kPlanSrcAligned)) {
SZ_UNROLL
    for (uint32_t k = 0; k < T::kBytes; ++k) load16_hint(s + 16 * k, in.w + 4 * k, stream);
  } else {
    load_bytes(s, in.valid * T::kBytes, in.w);
  }
}

// bf16, full group: two elements per 32-bit word (lo = even element).
// Residual byte = sign(bit 15) << 7 | mantissa(bits 0..6); exponent = bits 7..14.
SZ_HD void enc_transform_bf16_full(const EncPlan& p, uint32_t g, const EncIn<Bf16Traits>& in, EncShared& sh) {
  uint32_t res[4], ex[4], cw[4];
  SZ_UNROLL
  for (uint32_t k = 0; k < 4; ++k) {
    const uint32_t wa = in.w[2 * k], wb = in.w[2 * k + 1];
    const uint32_t ra = (wa & 0x007F007Fu) | ((wa >> 8) & 0x00800080u);  // residuals at bytes 0, 2
    const uint32_t rb = (wb & 0x007F007Fu) | ((wb >> 8) & 0x00800080u);
    res[k] = byte_perm(ra, rb, 0x6420);  // elements 4k..4k+3
    const uint32_t ea = (wa >> 7) & 0x00FF00FFu, eb = (wb >> 7) & 0x00FF00FFu;
    const uint32_t e4 = byte_perm(ea, eb, 0x6420);
    ex[k] = e4;
    cw[k] = uint32_t{sh.lut[e4 & 0xFFu]} | (uint32_t{sh.lut[(e4 >> 8) & 0xFFu]} << 8) |
            (uint32_t{sh.lut[(e4 >> 16) & 0xFFu]} << 16) | (uint32_t{sh.lut[e4 >> 24]} << 24);
  }
  uint32_t mask = 0, y[4];
  SZ_UNROLL
  for (uint32_t k = 0; k < 4; ++k) {
    // Escape flags (bit 7 of each code byte) -> 4 mask bits; the multiply
    // gathers bits 0, 8, 16, 24 into bits 24..27 without carries.
    mask |= ((((cw[k] & 0x80808080u) >> 7) * 0x01020408u) >> 24) << (4 * k);
    const uint32_t x = cw[k] & 0x0F0F0F0Fu;  // escape code byte 0x80 -> code 0
    y[k] = x | (x >> 4);                     // bytes 0, 2 = two packed nibbles each
  }
  const uint64_t codes = uint64_t{byte_perm(y[0], y[1], 0x6420)} | (uint64_t{byte_perm(y[2], y[3], 0x6420)} << 32);
  uint8_t* d = p.dst;
  if (p.flags & kPlanDstAligned) {
    store16_cs(d + p.L.res_off + in.first, res);  // coded streams: written once, never re-read
    store8_cs(d + p.L.code_off + in.first / 2, codes);
  } else {
    store_bytes(d + p.L.res_off + in.first, 16, res);
    store_bytes64(d + p.L.code_off + in.first / 2, 8, codes);
  }
  store16(sh.exps + g * kGroupElems, ex);
  sh.mask[g] = static_cast<uint16_t>(mask);
}

template <class T>
SZ_HD void enc_transform(const EncPlan& p, uint32_t g, const EncIn<T>& in, EncShared& sh) {
  if (in.valid == 0) {
    sh.mask[g] = 0;
    return;
  }
  if constexpr (T::kBytes == 2 && T::kExpBits == 8) {  // bf16
    if (in.valid == kGroupElems) {
      enc_transform_bf16_full(p, g, in, sh);
      return;
    }
  }
  const uint32_t valid = in.valid;
  const uint64_t first = in.first;
  constexpr uint32_t kResWords = T::kResBytes ? 4 * T::kResBytes : 1;
  uint32_t res[kResWords];
SZ_UNROLL
  for (uint32_t k = 0; k < kResWords; ++k) res[k] = 0;
  uint32_t ex[4] = {0, 0, 0, 0};
  uint64_t high = 0, codes = 0;
  uint32_t mask = 0;
SZ_UNROLL
  for (uint32_t i = 0; i < kGroupElems; ++i) {
    const auto v = static_cast<typename T::Bits>(group_elem<T>(in.w, i));
    const uint32_t e = T::exponent(v);
    const uint32_t r = T::residual(v);
    const uint32_t c = i < valid ? sh.lut[e] : 0u;  // padding elements: code 0, no escape
    ex[i >> 2] |= e << (8u * (i & 3u));
    codes |= uint64_t{c & 0xFu} << (4u * i);  // kEscapeCode has a zero low nibble
    mask |= (c >> 7) << i;
    image_put_residual<T>(res, &high, i, r);
  }

  uint8_t* d = p.dst;
  const FrameLayout& L = p.L;
  if (valid == kGroupElems && (p.flags & kPlanDstAligned)) {
    if constexpr (T::kResBytes > 0) {
      SZ_UNROLL
      for (uint32_t k = 0; k < T::kResBytes; ++k)
        store16_cs(d + L.res_off + first * T::kResBytes + 16 * k, res + 4 * k);
    }
    if (T::kResHighBits) {
      uint8_t* h = d + L.high_off + first * 3 / 8;  // 6 bytes, 2-byte aligned
      store2(h, static_cast<uint32_t>(high));
      store2(h + 2, static_cast<uint32_t>(high >> 16));
      store2(h + 4, static_cast<uint32_t>(high >> 32));
    }
    store8_cs(d + L.code_off + first / 2, codes);
  } else {
    if constexpr (T::kResBytes > 0) store_bytes(d + L.res_off + first * T::kResBytes, valid * T::kResBytes, res);
    if (T::kResHighBits) store_bytes64(d + L.high_off + first * 3 / 8, (3 * valid + 7) / 8, high);
    store_bytes64(d + L.code_off + first / 2, (valid + 1) / 2, codes);
  }
  store16(sh.exps + g * kGroupElems, ex);
  sh.mask[g] = static_cast<uint16_t>(mask);
}

// Step 1 for group g of the tile whose first element is tile_first.
template <class T>
SZ_HD void enc_group(const EncPlan& p, uint64_t tile_first, uint32_t g, EncShared& sh) {
  EncIn<T> in;
  enc_load<T>(p, tile_first, g, in);
  enc_transform<T>(p, g, in, sh);
}

// Step 2a: escapes in thread t's rake segment (kRakeGroups consecutive groups).
SZ_HD uint32_t enc_rake_sum(uint32_t t, const EncShared& sh) {
  uint32_t s = 0;
SZ_UNROLL
  for (uint32_t k = 0; k < kRakeGroups; ++k) s += popc32(sh.mask[t * kRakeGroups + k]);
  return s;
}

// Step 2b: excl = escapes of all segments before t (block scan of step 2a).
SZ_HD void enc_rake_write(uint32_t t, uint32_t excl, EncShared& sh) {
  uint32_t run = excl;
SZ_UNROLL
  for (uint32_t k = 0; k < kRakeGroups; ++k) {
    const uint32_t g = t * kRakeGroups + k;
    sh.pre[g] = static_cast<uint16_t>(run);
    run += popc32(sh.mask[g]);
  }
  if (t == kThreads - 1) sh.pre[kGroupsPerTile] = static_cast<uint16_t>(run);
}

// Tile total after step 2 (at most kTileElems = 32768, fits u16).
SZ_HD uint32_t enc_tile_total(const EncShared& sh) { return sh.pre[kGroupsPerTile]; }

// Step 4a for group g: tile_excl = escapes of the buffer's earlier tiles.
SZ_HD void enc_scatter(const EncPlan& p, uint64_t tile_first, uint32_t g, uint64_t tile_excl,
                       const EncShared& sh, uint8_t* stage) {
  uint32_t m = sh.mask[g];
  if (m == 0) return;
  uint64_t k = tile_excl + sh.pre[g];
  const uint64_t chunk_mask = (uint64_t{1} << p.chunk_log2) - 1;
  uint8_t* pos = p.dst + p.L.pos_off;
  uint8_t* exps = stage + p.stage_off;
  const bool aligned = p.flags & kPlanDstAligned;
  while (m != 0) {
    const uint32_t b = ctz32(m);
    m &= m - 1;
    if (k < p.budget) {  // past the budget the buffer is stored: count only
      const uint32_t local = g * kGroupElems + b;
      const uint32_t ppos = static_cast<uint32_t>((tile_first + local) & chunk_mask);
      if (aligned) store2(pos + 2 * k, ppos);
      else store_le16(pos + 2 * k, ppos);
      exps[k] = sh.exps[local];
    }
    ++k;
  }
}

// Step 4b: stream 4 for the chunks of this tile, thread t's share.
SZ_HD void enc_chunk_counts(const EncPlan& p, uint64_t tile_first, uint32_t t, const EncShared& sh) {
  const uint32_t gpc = (1u << p.chunk_log2) / kGroupElems;  // groups per chunk, >= 4
  const uint32_t chunks = kGroupsPerTile / gpc;
  const uint64_t q0 = tile_first >> p.chunk_log2;
  uint8_t* cnt = p.dst + p.L.count_off;
  const bool aligned = p.flags & kPlanDstAligned;
  for (uint32_t c = t; c < chunks; c += kThreads) {
    const uint64_t q = q0 + c;
    if (q >= p.L.n_chunks) break;
    const uint32_t v = uint32_t{sh.pre[(c + 1) * gpc]} - sh.pre[c * gpc];
    if (aligned) store2(cnt + 2 * q, v);
    else store_le16(cnt + 2 * q, v);
  }
}

// ---- dynamic calibration: the top-16 codebook in parallel ----

// Thread e's part of top16_codebook (core/header.h, FORMAT.md 3) computed by
// 256 threads at once: the rank of exponent e in the order "count
// descending, ties by smaller exponent" over the non-zero counts, i.e. the
// entry index top16_codebook gives e, or 16 or more when e is not taken.
// Each rank is distinct, so the threads write disjoint entries; the count
// is min(16, non-zero counts). Same result as the serial selection (CPU
// tests compare them on random and tied histograms).
SZ_HD uint32_t top16_rank(const uint64_t counts[256], uint32_t e) {
  const uint64_t c = counts[e];
  if (c == 0) return 256;
  uint32_t rank = 0;
  for (uint32_t f = 0; f < 256; ++f) rank += (counts[f] > c || (counts[f] == c && f < e)) ? 1u : 0u;
  return rank;
}

// ---- after the main pass: per-buffer decision and byte moves ----

// Decides coded vs stored (FORMAT.md 4.4: coded iff E fits the budget, i.e.
// the coded frame is smaller than the stored one and fits capacity), writes
// the header (p.checksum must hold the content checksum) and the zero gaps,
// sets the stream-7 offset and the copy the copy phase does. Stream 7
// itself is written from the block hashes (write_block_checks).
SZ_HD void enc_finalize(EncPlan& p, uint64_t* out_size, Status* out_status) {
  p.copy_kind = kCopyNone;
  p.copy_bytes = 0;
  p.units = 0;
  p.frame_size = 0;
  if (p.status != static_cast<int32_t>(Status::ok)) {
    *out_status = static_cast<Status>(p.status);
    *out_size = 0;
    return;
  }
  const bool coded = (p.flags & kPlanDense) && p.escapes <= p.budget;
  // The stored fallback of a buffer whose capacity took a coded frame but
  // not the stored one (a capacity below compress_bound, which the Backend
  // path passes): DST_TOO_SMALL, as the reference's plan_stored, and nothing
  // written.
  if (!coded && stored_frame_size(p.dtype, p.n, p.n_checks) > p.capacity) {
    p.escapes = 0;
    *out_status = Status::dst_too_small;
    *out_size = 0;
    return;
  }
  FrameHeader h = make_header(p.dtype, p.n, p.chunk_log2, p.flags & kPlanChecksum);
  Gap gaps[7];
  int k = 0;
  if (coded) {
    h.escape_count = p.escapes;
    for (int i = 0; i < 16; ++i) h.codebook[i] = p.cb[i];
    h.codebook_count = static_cast<uint8_t>(p.cb_count);
    const FrameLayout L = layout_of(h);
    k = coded_gaps(L, gaps);
    p.check_off = L.check_off;
    const bool e4m3 = codec_of(p.dtype, h.mode) == Codec::e4m3;  // stream 6: nibbles (FORMAT.md 4.7)
    p.copy_kind = e4m3 ? kCopyEscNibbles : kCopyEscapes;
    p.copy_bytes = e4m3 ? (p.escapes + 1) / 2 : p.escapes;
  } else {
    h.flags |= kFlagStored;
    k = stored_gaps(p.dtype, p.n, p.n_checks, gaps);
    p.check_off = stored_check_off(p.dtype, p.n);
    p.copy_kind = kCopyStored;
    p.copy_bytes = p.n * geometry_of(p.dtype).bytes;
    p.escapes = 0;
  }
  h.frame_size = frame_size_of(h);
  if (p.flags & kPlanChecksum) h.content_checksum = p.checksum;
  zero_ranges(p.dst, gaps, k);
  write_header(h, p.dst);
  p.frame_size = h.frame_size;
  p.units = (p.copy_bytes + kCopyUnitBytes - 1) / kCopyUnitBytes;
  *out_status = Status::ok;
  *out_size = p.frame_size;
}

// The fused kernel's per-buffer finalize, run once per buffer by the CTA
// that finished the buffer's last outstanding tile (or by the setup phase
// for a buffer with no tiles): the plan is a private copy (plans stay
// read-only while other CTAs run), E comes from the tally, the outcome goes
// back to the tally for the copy phase. `checksum`: the frame checksum.
SZ_HD void enc_finalize_buffer(const EncPlan& plan, EncTally& tally, uint64_t checksum, uint64_t* out_size,
                               Status* out_status) {
  EncPlan p = plan;
  p.escapes = tally.escapes;
  p.checksum = checksum;
  enc_finalize(p, out_size, out_status);
  tally.escapes = p.escapes;
  tally.copy_kind = p.copy_kind;
  tally.copy_bytes = p.copy_bytes;
  tally.check_off = p.check_off;
}

// Copy units reserved for a buffer by the setup phase, before E is known:
// enough for the stored fallback (n * bytes >= any escape count).
SZ_HD uint64_t enc_units_bound(const EncPlan& p) {
  if (p.status != static_cast<int32_t>(Status::ok)) return 0;
  return (p.n * geometry_of(p.dtype).bytes + kCopyUnitBytes - 1) / kCopyUnitBytes;
}

// Source and destination of the finalize copy.
SZ_HD void enc_copy_ends(const EncPlan& p, const EncTally& t, const uint8_t* stage, const uint8_t** from,
                         uint8_t** to) {
  if (t.copy_kind == kCopyEscapes || t.copy_kind == kCopyEscNibbles) {
    *from = stage + p.stage_off;
    *to = p.dst + coded_layout(p.dtype, p.n, p.chunk_log2, t.escapes, p.n_checks).exp_off;
  } else {
    *from = p.src;
    *to = p.dst + 64;
  }
}

// Bytes [unit * kCopyUnitBytes, +kCopyUnitBytes) of a copy, thread t of
// nthreads. 16-byte vectors when both ends are aligned.
SZ_HD void copy_unit(const uint8_t* from, uint8_t* to, uint64_t total, uint64_t unit, uint32_t t,
                     uint32_t nthreads) {
  const uint64_t begin = unit * kCopyUnitBytes;
  const uint64_t end = begin + kCopyUnitBytes < total ? begin + kCopyUnitBytes : total;
  const bool aligned = ((reinterpret_cast<uintptr_t>(from) | reinterpret_cast<uintptr_t>(to)) & 15u) == 0;
  uint64_t done = begin;
  if (aligned) {
    const uint64_t vec_end = begin + (end - begin) / 16 * 16;
    for (uint64_t o = begin + 16u * t; o < vec_end; o += 16u * nthreads) {
      uint32_t w[4];
      load16_cs(from + o, w);  // staging or input: read once here; frame bytes: written once
      store16_cs(to + o, w);
    }
    done = vec_end;
  }
  for (uint64_t o = done + t; o < end; o += nthreads) to[o] = from[o];
}

}  // namespace cuda_detail
}  // namespace splitzip
