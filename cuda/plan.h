/* SPDX-License-Identifier: Apache-2.0 */
// Per-buffer plans and workspace layout shared by the CUDA kernels and their
// CPU emulation (tests/cuda). Host+device, no CUDA headers.
//
// Work unit: a tile of kTileElems = 2^15 elements, the largest chunk size,
// so a chunk never straddles two tiles. A CTA of kThreads threads processes
// one tile at a time as kGroupsPerTile groups of 16 elements; group g covers
// tile elements [16g, 16g + 16), and round r of thread t is group r*kThreads+t
// (a warp touches 32 consecutive groups: coalesced).
#pragma once

#include <cstdint>

#include "core/codec_args.h"

#include "core/frame_rules.h"
#include "core/header.h"
#include "core/layout.h"

namespace splitzip {
namespace cuda_detail {

constexpr uint32_t kThreads = 256;
constexpr uint32_t kWarps = kThreads / 32;
constexpr uint32_t kGroupElems = 16;
constexpr uint32_t kTileLog2 = 15;
constexpr uint64_t kTileElems = uint64_t{1} << kTileLog2;
constexpr uint32_t kGroupsPerTile = static_cast<uint32_t>(kTileElems / kGroupElems);  // 2048
constexpr uint32_t kRounds = kGroupsPerTile / kThreads;                               // 8
constexpr uint32_t kRakeGroups = kGroupsPerTile / kThreads;  // groups summed per thread in the scan
constexpr uint32_t kMaxChunksPerTile = static_cast<uint32_t>(kTileElems >> kMinChunkLog2);  // 512
constexpr uint32_t kChunksPerThread = kMaxChunksPerTile / kThreads;                        // 2
constexpr uint64_t kCopyUnitBytes = 16384;  // bytes per work unit of the encode copy phase
constexpr int32_t kNoError = 0x7FFFFFFF;   // per-frame error word: min over found rules

static_assert(kGroupsPerTile % kThreads == 0, "tile must split evenly over threads");
static_assert(kMaxChunksPerTile % kThreads == 0, "chunks must split evenly over threads");

// Plan flags.
constexpr uint32_t kPlanChecksum = 1u << 0;     // encode: v2 block checksum (stream 7 + header)
constexpr uint32_t kPlanDense = 1u << 1;        // encode: the dense pass writes coded streams
constexpr uint32_t kPlanSrcAligned = 1u << 2;   // src 16-byte aligned: vector loads
constexpr uint32_t kPlanDstAligned = 1u << 3;   // dst 16-byte aligned: vector stores
constexpr uint32_t kPlanVerify = 1u << 4;       // decode: verify the content checksum
constexpr uint32_t kPlanStored = 1u << 5;       // decode: stored frame

// What the encode copy phase moves for a buffer after the main phase.
// kCopyEscNibbles: a stream 6 of two staged exponents per byte (FORMAT.md 4.7).
enum CopyKind : uint32_t { kCopyNone = 0, kCopyEscapes = 1, kCopyStored = 2, kCopyEscNibbles = 3 };

struct EncPlan {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t n;
  uint64_t capacity;
  uint64_t budget;      // escapes that fit a coded frame; kNoEscapeBudget: store
  uint64_t stage_off;   // this buffer's exponent staging, bytes into the stage area
  uint64_t tile_begin;  // first global tile index
  uint64_t tiles;       // tiles the main kernel visits (dense pass and/or block hashes)
  uint64_t n_checks;    // checksum blocks (0 without kPlanChecksum)
  uint64_t hash_off;    // this buffer's block hashes, u64 index into the hash area
  FrameLayout L;        // coded_layout(E = 0): streams 1..5 offsets do not depend on E
  uint32_t dtype;
  uint32_t chunk_log2;
  uint32_t flags;
  int32_t status;       // Status from planning; ok = still running
  uint8_t cb[16];
  uint32_t cb_count;
  uint32_t copy_kind;
  // Filled by later kernels.
  uint64_t escapes;     // E, by the buffer's last tile
  uint64_t checksum;    // content_checksum (XXH3 of the block hashes) when kPlanChecksum
  uint64_t check_off;   // stream 7 offset once the form is decided
  uint64_t frame_size;
  uint64_t copy_bytes;
  uint64_t units_begin;
  uint64_t units;
};

struct DecPlan {
  const uint8_t* src;
  uint8_t* dst;
  FrameHeader h;
  FrameLayout L;        // coded frames only
  uint64_t out_bytes;   // n * bytes
  uint64_t tile_begin;
  uint64_t tiles;
  uint32_t flags;
  int32_t status;       // rules 1-13 (and argument errors) from planning
  int32_t err;          // rules 14-19: minimum Status value, or kNoError (from the tally at finalize)
  uint32_t pad_;
  uint64_t escapes_seen;  // sum of all per-chunk counts (from the tally at finalize)
  uint64_t n_checks;      // v2 block checks verified (0: none, or v1)
  uint64_t hash_off;      // block hashes of the output, u64 index into the hash area
  uint64_t corrupt_block; // first block whose check differs, or kNoBlock
};

// Shared control block at the start of every workspace.
struct Control {
  uint64_t ticket;       // next tile for the persistent main kernel
  uint64_t total_tiles;
  uint64_t total_units;  // encode: copy units of all buffers (an upper bound, set by the setup phase)
  uint64_t count;        // buffers
};

// What the main phases find out per buffer while they run. Kept apart from
// the plans, which are read-only after setup: a CTA copies a whole plan into
// shared memory while other CTAs are still running, so nothing may write a
// plan after the setup phase (encode: for the rest of the fused kernel,
// including the per-buffer finalize; decode: until the finalize kernel).
struct EncTally {
  uint64_t escapes;     // E, written by the buffer's last tile (by index); 0 once stored
  uint64_t done;        // tiles of the buffer finished (the CTA that completes it finalizes)
  uint64_t copy_bytes;  // set by the buffer's finalize: bytes the copy phase moves
  uint64_t check_off;   // set by the buffer's finalize: stream 7 offset
  uint32_t copy_kind;   // CopyKind, set by the buffer's finalize
  uint32_t pad_;
};
struct DecTally {
  uint64_t escapes_seen;  // sum of all per-chunk counts, by the frame's last tile
  int32_t err;            // atomicMin over the tiles' first failing rules; kNoError
  uint32_t pad_;
};

SZ_HD uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Workspace = Control | plans | tallies | tile states (u64 each) | block
// hashes (u64 each) | exponent staging (encode).
struct WorkspaceLayout {
  uint64_t plans_off;
  uint64_t tally_off;   // EncTally / DecTally per buffer
  uint64_t states_off;
  uint64_t hashes_off;
  uint64_t stage_off;
  uint64_t tiles_bound;
  uint64_t hashes_bound;
  uint64_t stage_bytes;
  uint64_t total;
};

// Checksum blocks of all buffers with `total_bytes` bytes in `count` buffers.
SZ_HD uint64_t hashes_bound(uint64_t total_bytes, uint64_t count) {
  return (total_bytes >> kChecksumBlockLog2) + count;
}

// Tiles of all buffers with `total_elems` elements in `count` buffers.
SZ_HD uint64_t tiles_bound(uint64_t total_elems, uint64_t count) {
  return total_elems / kTileElems + count;
}

SZ_HD WorkspaceLayout encode_workspace(uint32_t dtype_id, uint64_t total_elems, uint64_t count) {
  WorkspaceLayout w{};
  w.plans_off = align_up(sizeof(Control), 256);
  w.tally_off = align_up(w.plans_off + count * sizeof(EncPlan), 256);
  w.states_off = align_up(w.tally_off + count * sizeof(EncTally), 256);
  w.tiles_bound = tiles_bound(total_elems, count);
  w.hashes_off = align_up(w.states_off + w.tiles_bound * 8, 256);
  w.hashes_bound = hashes_bound(total_elems * geometry_of(dtype_id).bytes, count);
  w.stage_off = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  // Every buffer's budget is below its bound; each start is 16-aligned.
  w.stage_bytes = escape_budget_bound(dtype_id, total_elems) + count * 32;
  w.total = align_up(w.stage_off + w.stage_bytes, 256);
  return w;
}

SZ_HD WorkspaceLayout decode_workspace(uint64_t total_dst_bytes, uint64_t count) {
  WorkspaceLayout w{};
  w.plans_off = align_up(sizeof(Control), 256);
  w.tally_off = align_up(w.plans_off + count * sizeof(DecPlan), 256);
  w.states_off = align_up(w.tally_off + count * sizeof(DecTally), 256);
  // n <= dst bytes (one byte per element at least).
  w.tiles_bound = tiles_bound(total_dst_bytes, count);
  w.hashes_off = align_up(w.states_off + w.tiles_bound * 8, 256);
  w.hashes_bound = hashes_bound(total_dst_bytes, count);
  w.stage_off = align_up(w.hashes_off + w.hashes_bound * 8, 256);
  w.stage_bytes = 0;
  w.total = w.stage_off;
  return w;
}

// ---- planning (one buffer; the prefix fields are set by the caller) ----

struct EncItem {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t n;
  uint64_t capacity;
  const uint8_t* cb;    // 16 entries
  uint32_t cb_count;
  uint32_t cb_dtype;    // the codebook's own dtype id
};

// Fills p from the item; p->status says whether it goes on. Tiles, checks
// and the staging budget are set; tile_begin / stage_off / hash_off are the
// caller's prefixes. The codebook is checked only when the buffer can be
// coded (a stored frame does not use it, as in reference_compress, whose
// dynamic codebook of an empty input is empty).
SZ_HD void plan_encode(const EncItem& it, uint32_t dtype_id, uint32_t chunk_log2, uint32_t flags,
                       EncPlan* p) {
  *p = EncPlan{};
  p->src = it.src;
  p->dst = it.dst;
  p->n = it.n;
  p->capacity = it.capacity;
  p->dtype = dtype_id;
  p->chunk_log2 = chunk_log2;
  p->status = static_cast<int32_t>(Status::ok);
  p->budget = kNoEscapeBudget;
  const DtypeGeometry g = geometry_of(dtype_id);
  if (g.bytes == 0 || it.n > kMaxElems || chunk_log2 < kMinChunkLog2 || chunk_log2 > kMaxChunkLog2 ||
      it.dst == nullptr || (it.src == nullptr && it.n > 0) || it.cb == nullptr) {
    p->status = static_cast<int32_t>(Status::invalid_argument);
    return;
  }
  const bool checksum = flags & kPlanChecksum;
  const uint64_t n_checks = checksum ? checksum_blocks(it.n * g.bytes) : 0;
  const uint64_t budget = escape_budget(dtype_id, it.n, chunk_log2, it.capacity, n_checks);
  if (budget == kNoEscapeBudget && stored_frame_size(dtype_id, it.n, n_checks) > it.capacity) {
    p->status = static_cast<int32_t>(Status::dst_too_small);  // neither form fits
    return;
  }
  if (budget != kNoEscapeBudget &&
      (it.cb_dtype != dtype_id || check_codebook(dtype_id, it.cb, it.cb_count) != Status::ok)) {
    p->status = static_cast<int32_t>(Status::bad_codebook);
    return;
  }
  for (int i = 0; i < 16; ++i) p->cb[i] = it.cb[i];
  p->cb_count = it.cb_count;
  uint32_t f = flags & kPlanChecksum;
  if (budget != kNoEscapeBudget) f |= kPlanDense;
  if ((reinterpret_cast<uintptr_t>(it.src) & 15u) == 0) f |= kPlanSrcAligned;
  if ((reinterpret_cast<uintptr_t>(it.dst) & 15u) == 0) f |= kPlanDstAligned;
  p->flags = f;
  p->n_checks = n_checks;
  p->L = coded_layout(dtype_id, it.n, chunk_log2, 0, n_checks);
  p->budget = budget;
  p->tiles = (f & kPlanDense) || n_checks > 0 ? (it.n + kTileElems - 1) >> kTileLog2 : 0;
}

// Bytes of staging a plan needs (16-aligned so copies can use vectors).
SZ_HD uint64_t stage_need(const EncPlan& p) {
  return (p.flags & kPlanDense) ? align_up(p.budget, 16) : 0;
}

struct DecItem {
  const uint8_t* src;
  uint64_t src_size;
  uint8_t* dst;
  uint64_t dst_capacity;
};

// Rules 1-13 for one frame; sets tiles (0 on error). limit: output bytes
// allowed (rule 12), kNoBlock for none.
SZ_HD void plan_decode(const DecItem& it, uint64_t limit, bool verify, DecPlan* p) {
  *p = DecPlan{};
  p->src = it.src;
  p->dst = it.dst;
  p->err = kNoError;
  p->corrupt_block = kNoBlock;
  p->status = static_cast<int32_t>(Status::ok);
  if (it.src == nullptr && it.src_size > 0) {
    p->status = static_cast<int32_t>(Status::invalid_argument);
    return;
  }
  FrameHeader h;
  Status s = parse_header(it.src, it.src_size, &h);
  // Capacity-mode frames (FORMAT.md 4.6) are decoded by the kernels of
  // capacity_decode.cu, which override this status when they run after
  // these. Said on the device, no extra host round trip.
  if (s == Status::ok && h.mode != kModeNibble) s = Status::unsupported_mode;
  if (s != Status::ok) {
    p->status = static_cast<int32_t>(s);
    return;
  }
  p->h = h;
  p->out_bytes = h.decoded_bytes();
  s = check_output_room(h, it.dst_capacity, limit, it.dst != nullptr);  // rules 12-13
  if (s != Status::ok) {
    p->status = static_cast<int32_t>(s);
    return;
  }
  uint32_t f = 0;
  if (h.flags & kFlagStored) f |= kPlanStored;
  if (verify && (h.flags & kFlagChecksum)) f |= kPlanVerify;
  if ((reinterpret_cast<uintptr_t>(it.src) & 15u) == 0) f |= kPlanSrcAligned;
  if ((reinterpret_cast<uintptr_t>(it.dst) & 15u) == 0) f |= kPlanDstAligned;
  p->flags = f;
  if (f & kPlanVerify) p->n_checks = h.n_checks();
  if (!(f & kPlanStored)) p->L = layout_of(h);
  p->tiles = (h.n_elems + kTileElems - 1) >> kTileLog2;
}

}  // namespace cuda_detail
}  // namespace splitzip
