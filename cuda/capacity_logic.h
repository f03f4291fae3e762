/* SPDX-License-Identifier: Apache-2.0 */
// Capacity mode (FORMAT.md 4.6) on the GPU: the per-thread steps of the
// kernels in capacity_encode.cu / capacity_decode.cu, host+device so the CPU
// emulator (tests/cuda/capacity_emulator.cpp) runs exactly these. The table
// rules (package-merge lengths, canonical codes, decode table, block and
// stream checks) are core/capacity/format.h's; nothing here restates them.
//
// Encode, three launches:
//   count  CTA per exponent block: histogram (shared atomics), code lengths
//          (cap_code_lengths, one thread), the bits of each of the 32
//          streams (8 threads per stream, shared atomics) -> the block's
//          byte size; the block's v2 checksum blocks (2^16 elements hold
//          whole 64 KiB checksum blocks for every dtype).
//   plan   one CTA: block offsets (scan), exp_bytes, mode 1 or stored
//          (FORMAT.md 4.4), frame checksum over the block hashes, header,
//          index, stream 7, zero gaps.
//   write  CTA per exponent block: residual streams 1-2, the table and
//          stream sizes, each stream packed by one warp (prefix sum of code
//          lengths over the lanes, bits OR-ed into shared words), or the
//          block's bytes of a stored frame.
// Decode, three or four launches:
//   setup  one CTA: rules 1-13, gaps (rule 14), check a, the index scan and
//          check b; frames that are not mode 1 are left to the mode-0 kernels.
//   blocks one warp per exponent block: checks c-e, the 4096-entry decode
//          table in shared memory (one symbol per lane), stream s decoded
//          by lane s (checks f-g) and each element rebuilt and stored as it
//          is decoded (lanes write 32 consecutive elements per step).
//   [hash] v2 block hashes of the output (verification only).
//   final  one CTA: first failing block's status, rule 19, outputs.
#pragma once

#include <cstdint>

#include "core/capacity/format.h"
#include "core/codec_args.h"
#include "core/dtype_traits.h"
#include "core/frame_rules.h"
#include "core/header.h"
#include "cuda/plan.h"

#ifdef __CUDACC__
#pragma nv_diagnostic push
#pragma nv_diag_suppress 186  // loops over T::kResBytes, which is 0 for fp8
#endif

namespace splitzip {
namespace cuda_detail {

constexpr uint32_t kCapEncThreads = 256;  // count / write CTAs: 8 warps
constexpr uint32_t kCapDecThreads = 32;   // decode: one warp per block, lane s = stream s
constexpr uint32_t kCapEncWarps = kCapEncThreads / 32;
constexpr uint32_t kCapStreamWords = 769;  // longest stream: 2048 codes x 12 bits = 768 words, + 1 for the spill
constexpr uint64_t kCapNoError = ~uint64_t{0};

static_assert(kCapStreams == 32, "one warp lane per stream");
static_assert(kCapEncThreads % kCapStreams == 0, "threads split evenly over streams");

// ---- encode ----

// Per exponent block, written by the count kernel, read by plan and write.
struct CapBlockRec {
  uint8_t len[256];               // code lengths (FORMAT.md 4.6.3), 0 = absent
  uint32_t stream_bytes[kCapStreams];
  uint32_t symbols;
  uint32_t table_bytes;
  uint64_t size;                  // block bytes in stream 9
  uint64_t off;                   // offset in stream 9 (plan kernel)
};

struct CapEncCtl {
  int32_t status;    // ok: go on (write kernel); else the call's status
  uint32_t stored;   // 1: stored frame (mode 0)
  uint64_t exp_bytes;
  uint64_t frame_size;
  CapLayout L;
};

// Workspace: CapEncCtl | CapBlockRec per block | block hashes (u64).
struct CapWorkspace {
  uint64_t recs_off, hashes_off, total;
  uint64_t blocks_bound, hashes_bound;
};

SZ_HD CapWorkspace cap_encode_workspace(uint32_t dtype_id, uint64_t n, bool checksum) {
  CapWorkspace w{};
  w.blocks_bound = cap_blocks(n);
  w.hashes_bound = checksum ? checksum_blocks(n * geometry_of(dtype_id).bytes) : 0;
  w.recs_off = align_up(sizeof(CapEncCtl), 256);
  w.hashes_off = align_up(w.recs_off + w.blocks_bound * sizeof(CapBlockRec), 256);
  w.total = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  return w;
}

struct CapEncArgs {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t n;
  uint64_t capacity;
  uint32_t dtype;
  uint32_t chunk_log2;
  uint32_t checksum;
  uint32_t pad_;
  uint8_t* ws;
  CapWorkspace lay;
};

// Element i's exponent (unaligned-safe byte loads: src may have any alignment).
template <class T>
SZ_HD typename T::Bits cap_load(const uint8_t* src, uint64_t i) {
  typename T::Bits v = 0;
  for (uint32_t k = 0; k < T::kBytes; ++k) v |= static_cast<typename T::Bits>(typename T::Bits{src[i * T::kBytes + k]} << (8 * k));
  return v;
}
template <class T>
SZ_HD uint32_t cap_exp(const uint8_t* src, uint64_t i) {
  return T::exponent(cap_load<T>(src, i));
}

// Count kernel, thread t: the code bits of stream t % 32 over its codes
// t / 32, t / 32 + 8, ... (the CTA's 8 parts of each stream add up).
template <class T>
SZ_HD uint32_t cap_stream_bits_part(const uint8_t* blk_src, uint32_t m, const uint8_t len[256], uint32_t t) {
  const uint32_t s = t % kCapStreams, part = t / kCapStreams;
  uint32_t bits = 0;
  for (uint32_t j = s + kCapStreams * part; j < m; j += kCapEncThreads) bits += len[cap_exp<T>(blk_src, j)];
  return bits;
}

// Count kernel, after the stream bits: the block's record fields.
SZ_HD void cap_finish_rec(CapBlockRec& r, const CapTable& t, const uint32_t bits[kCapStreams]) {
  for (uint32_t e = 0; e < 256; ++e) r.len[e] = t.len[e];
  r.symbols = t.symbols;
  r.table_bytes = t.bytes;
  uint64_t size = t.bytes;
  if (t.symbols > 1) {
    size += 2 * kCapStreams;
    for (uint32_t s = 0; s < kCapStreams; ++s) {
      r.stream_bytes[s] = (bits[s] + 7) / 8;
      size += r.stream_bytes[s];
    }
  } else {
    for (uint32_t s = 0; s < kCapStreams; ++s) r.stream_bytes[s] = 0;
  }
  r.size = size;
}

SZ_HD CapTable cap_table_of(const CapBlockRec& r) {
  CapTable t;
  uint32_t first = 255, last = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    t.len[e] = r.len[e];
    if (r.len[e] == 0) continue;
    if (e < first) first = e;
    last = e;
  }
  t.first = first;
  t.last = last;
  t.symbols = r.symbols;
  t.bytes = r.table_bytes;
  return t;
}

// Plan kernel, one thread, once exp_bytes is known: mode 1 or stored as
// the reference decides (FORMAT.md 4.4 / 4.6.1), the capacity rule, the
// header fields (frame_size set; content_checksum is the caller's).
SZ_HD void cap_decide(const CapEncArgs& a, uint64_t n_checks, uint64_t exp_bytes, CapEncCtl* c, FrameHeader* h) {
  *h = make_header(a.dtype, a.n, a.chunk_log2, a.checksum != 0);
  c->exp_bytes = exp_bytes;
  c->status = static_cast<int32_t>(Status::ok);
  c->stored = 1;
  const uint64_t stored = stored_frame_size(a.dtype, a.n, n_checks);
  if (a.n > 0) {
    c->L = capacity_layout(a.dtype, a.n, exp_bytes, n_checks);
    if (c->L.frame_size < stored) {
      c->stored = 0;
      if (c->L.frame_size > a.capacity) c->status = static_cast<int32_t>(Status::dst_too_small);
    }
  }
  if (c->stored) {
    if (stored > a.capacity) c->status = static_cast<int32_t>(Status::dst_too_small);
    h->flags |= kFlagStored;
  } else {
    h->mode = kModeCapacity;
    h->escape_count = exp_bytes;
  }
  h->frame_size = frame_size_of(*h);
  c->frame_size = h->frame_size;
}

// Write kernel: streams 1 and 2 for the 8 elements of group g (3-bit parts
// of 8 elements fill 3 whole bytes, so groups write disjoint bytes).
template <class T>
SZ_HD void cap_write_residual_group(const uint8_t* src, uint64_t n, uint64_t g, const CapLayout& L, uint8_t* f) {
  const uint64_t i0 = g * 8;
  const uint32_t cnt = n - i0 < 8 ? static_cast<uint32_t>(n - i0) : 8u;
  uint32_t hi = 0;
  for (uint32_t k = 0; k < cnt; ++k) {
    const uint32_t r = T::residual(cap_load<T>(src, i0 + k));
    for (uint32_t b = 0; b < T::kResBytes; ++b) f[L.res_off + (i0 + k) * T::kResBytes + b] = static_cast<uint8_t>(r >> (8 * b));
    if (T::kResHighBits) hi |= ((r >> (8 * T::kResBytes)) & 7u) << (3 * k);
  }
  if (T::kResHighBits)
    for (uint32_t b = 0; b < (3 * cnt + 7) / 8; ++b) f[L.high_off + g * 3 + b] = static_cast<uint8_t>(hi >> (8 * b));
}

// Write kernel: the 32-bit words (w, w + 1) a code of `len` bits touches at
// stream bit `pos` (LSB-first, FORMAT.md 4.6.2); the caller ORs them in.
SZ_HD void cap_code_words(uint32_t pos, uint32_t code, uint32_t len, uint32_t* w, uint32_t* v0, uint32_t* v1) {
  const uint64_t bits = uint64_t{code & ((1u << len) - 1)} << (pos & 31u);
  *w = pos >> 5;
  *v0 = static_cast<uint32_t>(bits);
  *v1 = static_cast<uint32_t>(bits >> 32);
}

SZ_HD uint8_t cap_word_byte(const uint32_t* words, uint32_t k) {
  return static_cast<uint8_t>(words[k >> 2] >> (8 * (k & 3u)));
}

// ---- decode ----

struct CapDecCtl {
  FrameHeader h;
  CapLayout L;
  int32_t status;     // setup's status (rules 1-14, a, b); ok: blocks run
  uint32_t handled;   // 1: the frame is mode 1 (these kernels own its outputs)
  uint32_t verify;
  uint32_t pad_;
  uint64_t err;       // min over failing blocks of (block << 8 | status), kCapNoError
  uint64_t n_checks;
};

// What the final kernel reports (read by the synchronous backend).
struct CapDecOut {
  uint64_t size;
  uint64_t consumed;
  uint64_t corrupt_block;
  Status status;
  uint32_t handled;
};

// Workspace: CapDecCtl | block offsets (u64) | block hashes (u64). n * bytes
// <= dst bytes, so the blocks and checks of any frame that fits are bounded.
SZ_HD CapWorkspace cap_decode_workspace(uint64_t dst_bytes) {
  CapWorkspace w{};
  w.blocks_bound = cap_blocks(dst_bytes);
  w.hashes_bound = checksum_blocks(dst_bytes);
  w.recs_off = align_up(sizeof(CapDecCtl), 256);
  w.hashes_off = align_up(w.recs_off + w.blocks_bound * 8, 256);
  w.total = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  return w;
}

struct CapDecArgs {
  const uint8_t* src;
  uint64_t src_size;
  uint8_t* dst;
  uint64_t dst_capacity;
  uint64_t limit;   // rule 12 (kNoBlock: none)
  uint32_t verify;
  uint32_t pad_;
  uint8_t* ws;
  CapWorkspace lay;
};

// Setup kernel, one thread: rules 1-13, gaps (rule 14) and check a. Sets
// handled = 0 for a frame that is not mode 1 (or whose header fails: the
// mode-0 kernels report those when they also run; alone, this reports it).
SZ_HD void cap_dec_plan(const CapDecArgs& a, CapDecCtl* c) {
  c->handled = 1;
  c->err = kCapNoError;
  c->n_checks = 0;
  c->verify = 0;
  FrameHeader h;
  Status s = a.src == nullptr && a.src_size > 0 ? Status::invalid_argument : parse_header(a.src, a.src_size, &h);
  if (s == Status::ok && (h.stored() || h.mode != kModeCapacity)) {
    c->handled = 0;
    s = Status::unsupported_mode;
  }
  if (s == Status::ok) {
    c->h = h;
    c->L = capacity_layout_of(h);
    s = check_output_room(h, a.dst_capacity, a.limit, a.dst != nullptr);  // rules 12-13
  }
  if (s == Status::ok && !frame_gaps_zero(a.src, h)) s = Status::bad_padding;  // rule 14
  if (s == Status::ok && c->L.n_blocks > a.lay.blocks_bound) s = Status::invalid_argument;
  if (s == Status::ok && c->L.high_size > 0) {  // check a
    const uint64_t used_bits = 3u * h.n_elems - 8u * (c->L.high_size - 1);
    if (used_bits < 8 && (a.src[c->L.high_off + c->L.high_size - 1] >> used_bits) != 0) s = Status::bad_padding;
  }
  if (s == Status::ok && a.verify && h.has_checksum()) {
    c->verify = 1;
    c->n_checks = h.n_checks();
    if (c->n_checks > a.lay.hashes_bound) s = Status::invalid_argument;
  }
  c->status = static_cast<int32_t>(s);
}

template <class T>
SZ_HD uint32_t cap_residual(const uint8_t* f, const CapLayout& L, uint64_t n, uint64_t i) {
  uint32_t r = 0;
  for (uint32_t b = 0; b < T::kResBytes; ++b) r |= uint32_t{f[L.res_off + i * T::kResBytes + b]} << (8 * b);
  if (T::kResHighBits) r |= bits3_at(f + L.high_off, n, i) << (8 * T::kResBytes);
  return r;
}

// Element j of block `first` (element index) with exponent e: joined with
// its residual and stored (little-endian, any alignment).
template <class T>
struct CapPut {
  const uint8_t* f;
  const CapLayout* L;
  uint64_t n;
  uint64_t first;
  uint8_t* dst;
  SZ_HD void operator()(uint32_t j, uint32_t e) const {
    const uint64_t i = first + j;
    const typename T::Bits v = T::join(e, cap_residual<T>(f, *L, n, i));
    for (uint32_t k = 0; k < T::kBytes; ++k) dst[i * T::kBytes + k] = static_cast<uint8_t>(v >> (8 * k));
  }
};

// Blocks kernel, lane s of block b (after cap_parse_block and the decode
// table): stream s decoded and its elements stored. Returns checks f-g.
template <class T>
SZ_HD Status cap_dec_lane(const CapDecCtl& c, const uint8_t* blk, const CapTable& t, const uint16_t* table,
                          uint64_t b, uint32_t s, uint8_t* dst, const uint8_t* f) {
  const uint32_t m = static_cast<uint32_t>(cap_block_len(c.h.n_elems, b));
  const CapPut<T> put{f, &c.L, c.h.n_elems, b << kCapBlockLog2, dst};
  if (t.symbols == 1) {
    for (uint32_t j = s; j < m; j += kCapStreams) put(j, t.first);
    return Status::ok;
  }
  const uint8_t* sizes = blk + t.bytes;
  uint64_t off = t.bytes + 2 * kCapStreams;
  for (uint32_t k = 0; k < s; ++k) off += load_le16(sizes + 2 * k);
  return cap_decode_stream(blk + off, load_le16(sizes + 2 * s), s, m, table, put);
}

SZ_HD uint64_t cap_error_word(uint64_t b, Status s) { return (b << 8) | static_cast<uint32_t>(s); }

// Final kernel, one thread, before rule 19: the frame's status from setup
// and the first failing block.
SZ_HD Status cap_dec_status(const CapDecCtl& c) {
  if (c.status != static_cast<int32_t>(Status::ok)) return static_cast<Status>(c.status);
  if (c.err != kCapNoError) return static_cast<Status>(c.err & 0xFFu);
  return Status::ok;
}

}  // namespace cuda_detail
}  // namespace splitzip

#ifdef __CUDACC__
#pragma nv_diagnostic pop
#endif
