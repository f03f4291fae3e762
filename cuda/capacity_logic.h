/* SPDX-License-Identifier: Apache-2.0 */
// Capacity mode (FORMAT.md 4.6) on the GPU: the per-thread steps of the
// kernels in capacity_encode.cu / capacity_decode.cu, host+device so the CPU
// emulator (tests/cuda/capacity_emulator.cpp) runs exactly these. The table
// rules (package-merge lengths, canonical codes, decode table, block and
// stream checks) are core/capacity/format.h's; nothing here restates them.
//
// One buffer or a batch (items in device memory); blocks of all buffers
// are numbered globally, a block's buffer found by cap_owner.
//
// Encode, four launches:
//   setup  one CTA, a thread per buffer: argument checks, each buffer's
//          range of block records and hashes (prefix sums).
//   count  CTA per exponent block: histogram (shared atomics), code lengths
//          (cap_code_lengths, one thread), the bits of each of the 32
//          streams (8 threads per stream, shared atomics) -> the block's
//          byte size; the block's v2 checksum blocks (2^16 elements hold
//          whole 64 KiB checksum blocks for every dtype).
//   plan   CTA per buffer: block offsets (scan), exp_bytes, mode 1 or
//          stored (FORMAT.md 4.4), frame checksum over the block hashes,
//          header, index, stream 7, zero gaps; size and status out.
//   write  CTA per exponent block: residual streams 1-2, the table and
//          stream sizes, each stream packed by one warp (prefix sum of code
//          lengths over the lanes, bits OR-ed into shared words), or the
//          block's bytes of a stored frame.
// Decode, four or five launches:
//   setup  one CTA, a thread per frame: rules 1-13, gaps (rule 14), check
//          a, each frame's range of block offsets and hashes; frames that
//          are not mode 1 are left to the mode-0 kernels.
//   index  CTA per frame: block offsets from the index (scan), check b.
//   blocks one warp per exponent block: checks c-e, the 4096-entry decode
//          table in shared memory (one symbol per lane), stream s decoded
//          by lane s (checks f-g) and each element rebuilt and stored as it
//          is decoded (lanes write 32 consecutive elements per step).
//   [hash] v2 block hashes of the outputs (verification only).
//   final  CTA per frame: first failing block's status, rule 19, outputs
//          (overriding the mode-0 kernels' for the frames it handles).
//
// Table sets (FORMAT.md 4.9): the host copies the set into a CapSetDev in
// device memory; the setup kernel builds its T tables' codes (encode) or
// decode tables (decode) there, a thread per table. The count kernel picks
// each block's kind by the normative rule (shared iff every symbol has a
// code in its stream's table), the write kernel writes the kind byte and
// codes a shared block's stream s with table s mod T; the blocks kernel
// reads the kind and decodes a shared block's lane s with that table.
#pragma once

#include <cstdint>

#include "core/capacity/format.h"
#include "core/capacity/tables.h"
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

// ---- table sets (FORMAT.md 4.9) ----

// A set in device memory: the caller's tables (copied by the host), then
// what the setup kernel builds from them. Allocated for T decode tables
// only (cap_set_dev_bytes).
struct CapSetDev {
  CapTables tables;
  uint32_t cl[kCapMaxTables][256];              // encode: code | len << 16 of table t
  uint16_t lut[kCapMaxTables][kCapTableSize];   // decode: table t's cap_decode_table
};
SZ_HD uint64_t cap_set_dev_bytes(uint32_t count) {
  return sizeof(CapSetDev) - uint64_t{kCapMaxTables - count} * kCapTableSize * sizeof(uint16_t);
}

// Encode setup kernel, thread t < T: table t's canonical codes (4.6.3).
SZ_HD void cap_set_codes(CapSetDev* d, uint32_t t) {
  CapTable tab;
  cap_tables_table(d->tables, t, &tab);
  uint16_t code[256];
  cap_codes(tab, code);
  for (uint32_t e = 0; e < 256; ++e) d->cl[t][e] = code[e] | (uint32_t{tab.len[e]} << 16);
}

// Decode setup kernel, thread t < T: table t's decode table.
SZ_HD void cap_set_lut(CapSetDev* d, uint32_t t) {
  CapTable tab;
  cap_tables_table(d->tables, t, &tab);
  cap_decode_table(tab, d->lut[t]);
}

// ---- encode ----

// A block's kind byte (FORMAT.md 4.9): kCapKindOwn, kCapKindShared, or
// none in a frame without a set.
constexpr uint32_t kCapNoKind = 0xFFFFFFFFu;

// Per exponent block, written by the count kernel, read by plan and write.
struct CapBlockRec {
  uint8_t len[256];               // code lengths (FORMAT.md 4.6.3), 0 = absent
  uint32_t stream_bytes[kCapStreams];
  uint32_t symbols;
  uint32_t table_bytes;           // 0 for a shared block: its sizes follow the kind byte
  uint32_t kind;                  // kCapNoKind without a set
  uint32_t pad_;
  uint64_t size;                  // block bytes in stream 9
  uint64_t off;                   // offset in stream 9 (plan kernel)
};

// Per buffer. The setup kernel fills the item fields and the placement;
// the plan kernel decides the form (status, stored, exp_bytes, frame_size,
// L); the write kernel reads it.
struct CapEncCtl {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t n;
  uint64_t capacity;
  uint64_t block_begin;  // first CapBlockRec of the buffer (global block index)
  uint64_t hash_begin;   // first block hash of the buffer
  uint64_t n_checks;     // checksum blocks (0 without a checksum)
  int32_t status;        // ok: go on; else the buffer's status
  uint32_t stored;       // 1: stored frame (mode 0)
  uint64_t exp_bytes;
  uint64_t frame_size;
  CapLayout L;
};

// Written by the setup kernel: blocks and checks of all buffers (clamped to
// the workspace's bounds), the grid-stride extents of the later kernels.
struct CapTotals {
  uint64_t blocks;
  uint64_t checks;
};

// Encode workspace: CapTotals | CapEncCtl per buffer | first global block
// per buffer (u64, searched by the block kernels) | CapBlockRec per block |
// block hashes (u64). Decode: CapTotals | CapDecCtl per frame | first block
// per frame | first check per frame | block offsets (u64) | block hashes.
struct CapWorkspace {
  uint64_t ctl_off, begins_off, hash_begins_off, recs_off, hashes_off, total;
  uint64_t count, blocks_bound, hashes_bound;
};

// `count` buffers of total_elems elements in all: sum of cap_blocks(n_i) <=
// total / 2^16 + count, and likewise for the 64 KiB checksum blocks.
SZ_HD CapWorkspace cap_encode_workspace(uint32_t dtype_id, uint64_t total_elems, uint64_t count, bool checksum) {
  CapWorkspace w{};
  w.count = count;
  w.blocks_bound = (total_elems >> kCapBlockLog2) + count;
  w.hashes_bound = checksum ? hashes_bound(total_elems * geometry_of(dtype_id).bytes, count) : 0;
  w.ctl_off = align_up(sizeof(CapTotals), 256);
  w.begins_off = align_up(w.ctl_off + count * sizeof(CapEncCtl), 256);
  w.hash_begins_off = w.begins_off;  // encode: the count kernel places hashes by block
  w.recs_off = align_up(w.begins_off + count * 8, 256);
  w.hashes_off = align_up(w.recs_off + w.blocks_bound * sizeof(CapBlockRec), 256);
  w.total = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  return w;
}

// Either a device array of items (batch: cuda::CompressItem, read by the
// setup kernel) or the one item held here (single call, synchronous backend).
struct CapEncArgs {
  const void* items;  // const cuda::CompressItem* (device), or nullptr
  uint64_t count;
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
  CapSetDev* set;    // device memory; null: per-block tables (no TABLES)
  uint64_t set_id;   // set->tables.id, for the header
};

struct CapEncItem {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t n;
  uint64_t capacity;
};

// Setup kernel, thread per buffer: the item's argument checks; its blocks
// and checksum blocks (0 when it already failed).
SZ_HD void cap_enc_item(const CapEncItem& it, uint32_t dtype_id, bool checksum, CapEncCtl* c, uint64_t* nb) {
  *c = CapEncCtl{};
  c->src = it.src;
  c->dst = it.dst;
  c->n = it.n;
  c->capacity = it.capacity;
  c->status = static_cast<int32_t>(Status::ok);
  *nb = 0;
  if (it.dst == nullptr || (it.src == nullptr && it.n > 0) || it.n > kMaxElems) {
    c->status = static_cast<int32_t>(Status::invalid_argument);
    return;
  }
  *nb = cap_blocks(it.n);
  c->n_checks = checksum ? checksum_blocks(it.n * geometry_of(dtype_id).bytes) : 0;
}

// Setup kernel, after the scans: the buffer's place in the records and
// hashes. A buffer past the workspace's sizing fails alone; its range stays
// reserved (a hole the block kernels skip).
SZ_HD void cap_enc_place(CapEncCtl* c, uint64_t block_begin, uint64_t hash_begin, uint64_t nb, const CapWorkspace& lay) {
  c->block_begin = block_begin;
  c->hash_begin = hash_begin;
  if (c->status == static_cast<int32_t>(Status::ok) &&
      (block_begin + nb > lay.blocks_bound || hash_begin + c->n_checks > lay.hashes_bound))
    c->status = static_cast<int32_t>(Status::invalid_argument);
}

// The buffer (frame) that global block g belongs to: the last one whose
// first block is <= g (begins ascending, begins[0] = 0; empty ranges share
// their successor's start, so the one that owns g is the last).
SZ_HD uint64_t cap_owner(const uint64_t* begins, uint64_t count, uint64_t g) {
  uint64_t lo = 0, hi = count;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (begins[mid] <= g) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

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

// Count kernel with a set, thread t: the bits of stream t % 32 over its
// codes t / 32, t / 32 + 8, ... with table (t % 32) mod T; *misfit = 1
// when one of them has no code there (the block then has its own table:
// the kind rule of FORMAT.md 4.9, as cap_block_fits_set).
template <class T>
SZ_HD uint32_t cap_set_bits_part(const uint8_t* blk_src, uint32_t m, const CapTables& ts, uint32_t t,
                                 uint32_t* misfit) {
  const uint32_t s = t % kCapStreams, part = t / kCapStreams;
  const uint8_t* len = ts.len[cap_table_of_stream(ts, s)];
  uint32_t bits = 0;
  *misfit = 0;
  for (uint32_t j = s + kCapStreams * part; j < m; j += kCapEncThreads) {
    const uint32_t l = len[cap_exp<T>(blk_src, j)];
    if (l == 0) *misfit = 1;
    bits += l;
  }
  return bits;
}

// Count kernel, after the stream bits: the block's record fields. kind:
// kCapNoKind, or kCapKindOwn in a TABLES frame (one more byte).
SZ_HD void cap_finish_rec(CapBlockRec& r, const CapTable& t, const uint32_t bits[kCapStreams],
                          uint32_t kind = kCapNoKind) {
  for (uint32_t e = 0; e < 256; ++e) r.len[e] = t.len[e];
  r.symbols = t.symbols;
  r.table_bytes = t.bytes;
  r.kind = kind;
  for (uint32_t s = 0; s < kCapStreams; ++s) r.stream_bytes[s] = t.symbols > 1 ? cap_stream_bytes(bits[s]) : 0;
  r.size = cap_block_bytes(t, r.stream_bytes) + (kind == kCapNoKind ? 0u : 1u);
}

// The same for a shared block (FORMAT.md 4.9): the kind byte, the 32
// sizes, the streams of the set's codes.
SZ_HD void cap_finish_shared_rec(CapBlockRec& r, const uint32_t bits[kCapStreams]) {
  r.symbols = 0;
  r.table_bytes = 0;
  r.kind = kCapKindShared;
  r.size = kCapSharedHeaderBytes;
  for (uint32_t s = 0; s < kCapStreams; ++s) r.size += r.stream_bytes[s] = cap_stream_bytes(bits[s]);
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

// Plan kernel, one thread per buffer, once exp_bytes is known: mode 1 or
// stored as the reference decides (FORMAT.md 4.4 / 4.6.1), the capacity
// rule, the header fields (frame_size set; content_checksum is the
// caller's). Sets status, stored, exp_bytes, L and frame_size of c.
SZ_HD void cap_decide(const CapEncArgs& a, uint64_t exp_bytes, CapEncCtl* c, FrameHeader* h) {
  *h = make_header(a.dtype, c->n, a.chunk_log2, a.checksum != 0);
  c->exp_bytes = exp_bytes;
  c->status = static_cast<int32_t>(Status::ok);
  c->stored = 1;
  const uint64_t stored = stored_frame_size(a.dtype, c->n, c->n_checks);
  if (c->n > 0) {
    c->L = capacity_layout(a.dtype, c->n, exp_bytes, c->n_checks);
    if (c->L.frame_size < stored) {
      c->stored = 0;
      if (c->L.frame_size > c->capacity) c->status = static_cast<int32_t>(Status::dst_too_small);
    }
  }
  if (c->stored) {
    if (stored > c->capacity) c->status = static_cast<int32_t>(Status::dst_too_small);
    h->flags |= kFlagStored;
  } else {
    h->mode = kModeCapacity;
    h->version = frame_version(h->dtype, h->mode, h->flags);
    h->escape_count = exp_bytes;
    if (a.set != nullptr) set_tables_fields(h, a.set_id);  // FORMAT.md 4.9
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
  uint32_t r[8];
  for (uint32_t k = 0; k < cnt; ++k) r[k] = T::residual(cap_load<T>(src, i0 + k));
  store_residual_octet<T>(f + L.res_off, f + L.high_off, g, cnt, r);
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

// Per frame. Setup fills it (rules 1-14, check a, placement); the index
// kernel may set status (check b); the blocks kernel lowers err (atomics).
struct CapDecCtl {
  FrameHeader h;
  CapLayout L;
  const uint8_t* src;
  uint8_t* dst;
  uint64_t block_begin;  // first block offset of the frame (global index)
  uint64_t hash_begin;   // first block hash of the frame
  int32_t status;     // setup's status (rules 1-14, a, b); ok: blocks run
  uint32_t handled;   // 1: these kernels own the frame's outputs (mode 1, or a header that fails)
  uint32_t verify;
  uint32_t tables;    // 1: a TABLES frame, decoded with the call's set (FORMAT.md 4.9)
  uint64_t err;       // min over failing blocks of (block << 8 | status), kCapNoError
  uint64_t n_checks;
};

// What the final kernel reports per frame into a CapDecOut array (the
// synchronous backend reads it).
struct CapDecOut {
  uint64_t size;
  uint64_t consumed;
  uint64_t corrupt_block;
  Status status;
  uint32_t handled;
};

// Where the final kernel writes. out (optional): every frame's CapDecOut.
// sizes / statuses (optional, with corrupt optional): the public outputs of
// decompress_async, written only for frames these kernels handle, so they
// override what the mode-0 kernels wrote before them in the stream.
struct CapDecDest {
  CapDecOut* out;
  uint64_t* sizes;
  Status* statuses;
  uint64_t* corrupt;
};

// n * bytes <= dst bytes (rule 13), so the blocks and checks of the frames
// that fit are bounded by total_dst_bytes / 2^16 + count.
SZ_HD CapWorkspace cap_decode_workspace(uint64_t total_dst_bytes, uint64_t count) {
  CapWorkspace w{};
  w.count = count;
  w.blocks_bound = (total_dst_bytes >> kCapBlockLog2) + count;
  w.hashes_bound = hashes_bound(total_dst_bytes, count);
  w.ctl_off = align_up(sizeof(CapTotals), 256);
  w.begins_off = align_up(w.ctl_off + count * sizeof(CapDecCtl), 256);
  w.hash_begins_off = align_up(w.begins_off + count * 8, 256);
  w.recs_off = align_up(w.hash_begins_off + count * 8, 256);
  w.hashes_off = align_up(w.recs_off + w.blocks_bound * 8, 256);
  w.total = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  return w;
}

// Either a device array of items (cuda::DecompressItem) or the one frame
// held here.
struct CapDecArgs {
  const void* items;  // const cuda::DecompressItem* (device), or nullptr
  uint64_t count;
  const uint8_t* src;
  uint64_t src_size;
  uint8_t* dst;
  uint64_t dst_capacity;
  uint64_t limit;   // rule 12 (kNoBlock: none)
  uint32_t verify;
  uint32_t pad_;
  uint8_t* ws;
  CapWorkspace lay;
  CapSetDev* set;  // device memory; null: none given (a TABLES frame is MISSING_TABLES)
};

struct CapDecItem {
  const uint8_t* src;
  uint64_t src_size;
  uint8_t* dst;
  uint64_t dst_capacity;
};

// Setup kernel, thread per frame: rules 1-13, gaps (rule 14), the set
// (check 0 of FORMAT.md 4.9) and check a.
// handled = 0 for a frame that is not mode 1 (the mode-0 kernels own it); a
// header that fails is handled (same status as the mode-0 kernels: the
// rules are core/header.h's), so alone this decoder reports it too.
// nb / nc: the frame's blocks and checks to place (0 once it failed).
// set: the call's set (device memory, or null); a TABLES frame naming
// another id or dtype is MISSING_TABLES.
SZ_HD void cap_dec_plan(const CapDecItem& it, uint64_t limit, bool verify, const CapTables* set, CapDecCtl* c,
                        uint64_t* nb, uint64_t* nc) {
  *c = CapDecCtl{};
  c->src = it.src;
  c->dst = it.dst;
  c->handled = 1;
  c->err = kCapNoError;
  *nb = 0;
  *nc = 0;
  FrameHeader h;
  Status s = it.src == nullptr && it.src_size > 0 ? Status::invalid_argument : parse_header(it.src, it.src_size, &h);
  if (s == Status::ok && (h.stored() || h.mode != kModeCapacity)) {
    c->handled = 0;
    s = Status::unsupported_mode;
  }
  if (s == Status::ok) {
    c->h = h;
    c->L = capacity_layout_of(h);
    s = check_output_room(h, it.dst_capacity, limit, it.dst != nullptr);  // rules 12-13
  }
  if (s == Status::ok && !frame_gaps_zero(it.src, h)) s = Status::bad_padding;  // rule 14
  if (s == Status::ok) {  // check 0 of 4.9
    const CapTables* sets[1] = {set};
    const CapTables* found = nullptr;
    s = cap_frame_set(sets, set != nullptr ? 1 : 0, h.has_tables(), h.tables_id(), h.dtype, &found);
    c->tables = found != nullptr ? 1u : 0u;
  }
  if (s == Status::ok && !cap_high_padding_ok(it.src, c->L)) s = Status::bad_padding;  // check a
  if (s == Status::ok && verify && h.has_checksum()) {
    c->verify = 1;
    c->n_checks = h.n_checks();
  }
  c->status = static_cast<int32_t>(s);
  if (s == Status::ok) {
    *nb = c->L.n_blocks;
    *nc = c->n_checks;
  }
}

// Setup kernel, after the scans: the frame's place in the offsets and
// hashes; past the workspace's sizing it fails alone (its range a hole).
SZ_HD void cap_dec_place(CapDecCtl* c, uint64_t block_begin, uint64_t hash_begin, uint64_t nb, const CapWorkspace& lay) {
  c->block_begin = block_begin;
  c->hash_begin = hash_begin;
  if (c->status == static_cast<int32_t>(Status::ok) &&
      (block_begin + nb > lay.blocks_bound || hash_begin + c->n_checks > lay.hashes_bound))
    c->status = static_cast<int32_t>(Status::invalid_argument);
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
    const typename T::Bits v = T::join(e, load_residual<T>(f + L->res_off, f + L->high_off, i));
    for (uint32_t k = 0; k < T::kBytes; ++k) dst[i * T::kBytes + k] = static_cast<uint8_t>(v >> (8 * k));
  }
};

// Blocks kernel, lane s of block b (after cap_parse_block and the decode
// table): stream s decoded and its elements stored. Returns checks f-g.
template <class T>
SZ_HD Status cap_dec_lane(const CapDecCtl& c, const uint8_t* blk, const CapTable& t, const uint16_t* table,
                          uint64_t b, uint32_t s) {
  uint8_t* dst = c.dst;
  const uint8_t* f = c.src;
  const uint32_t m = static_cast<uint32_t>(cap_block_len(c.h.n_elems, b));
  const CapPut<T> put{f, &c.L, c.h.n_elems, b << kCapBlockLog2, dst};
  if (t.symbols == 1) {
    for (uint32_t j = s; j < m; j += kCapStreams) put(j, t.first);
    return Status::ok;
  }
  return cap_decode_stream(blk + cap_stream_at(blk, t, s), cap_stream_size(blk, t, s), s, m, table, put);
}

// Blocks kernel, lane 0: where block b's own bytes start and what it is.
// A TABLES frame (c.tables): checks c0 and e1 of FORMAT.md 4.9 (kind
// byte; a shared block's 32 sizes fill it), *shared = 1 for kind 1, and
// *body = 1 (after the kind byte); else, and for kind 0, checks c-e of
// 4.6.5 on the bytes from *body into *t.
SZ_HD Status cap_dec_open(const CapDecCtl& c, const uint8_t* blk, uint64_t size, CapTable* t, uint32_t* body,
                          uint32_t* shared) {
  *body = 0;
  *shared = 0;
  if (c.tables) {
    if (size < 1 || blk[0] > kCapKindShared) return Status::bad_code;  // c0
    *body = 1;
    if (blk[0] == kCapKindShared) {  // e1
      *shared = 1;
      if (size < kCapSharedHeaderBytes) return Status::bad_code;
      const uint64_t end = 1 + cap_stream_offset_by(0, kCapStreams, [&](uint32_t k) { return load_le16(blk + 1 + 2 * k); });
      return end == size ? Status::ok : Status::bad_code;
    }
  }
  return cap_parse_block(blk + *body, size - *body, cap_symbol_limit(c.h.dtype), t);
}

// Blocks kernel, lane s of a shared block b (after cap_dec_open; body: the
// bytes after its kind byte): stream s decoded with table s mod T of the
// set (set: its decode tables, cap_set_lut), its elements stored. Checks f-g.
template <class T>
SZ_HD Status cap_dec_shared_lane(const CapDecCtl& c, const uint8_t* body, const CapSetDev& set, uint64_t b,
                                 uint32_t s) {
  const uint32_t m = static_cast<uint32_t>(cap_block_len(c.h.n_elems, b));
  const CapPut<T> put{c.src, &c.L, c.h.n_elems, b << kCapBlockLog2, c.dst};
  const uint64_t off = cap_stream_offset_by(0, s, [&](uint32_t k) { return load_le16(body + 2 * k); });
  return cap_decode_stream(body + off, load_le16(body + 2 * s), s, m, set.lut[cap_table_of_stream(set.tables, s)],
                           put);
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
