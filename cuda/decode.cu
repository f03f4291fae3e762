// SPDX-License-Identifier: Apache-2.0
// Decode kernels: setup (header rules 1-13 on the device, tile and hash
// prefixes) -> main (persistent CTAs: counts + look-back, dense decode,
// escape patch in the same tile after a barrier, then the v2 block hashes of
// the tile's output) -> [fp8 only: block hashes] -> finalize (rule 14
// padding, rule 15 sum, rule 19: first corrupt block and frame checksum,
// status per frame).
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/checksum.cuh"
#include "cuda/decode_logic.h"
#include "cuda/e4m3_logic.h"
#include "cuda/device_primitives.cuh"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

struct WsPtrs {
  Control* ctrl;
  DecPlan* plans;
  DecTally* tally;
  uint64_t* states;
  uint64_t* hashes;
};
__device__ __forceinline__ WsPtrs ws_ptrs(uint8_t* ws, const WorkspaceLayout& lay) {
  return {reinterpret_cast<Control*>(ws), reinterpret_cast<DecPlan*>(ws + lay.plans_off),
          reinterpret_cast<DecTally*>(ws + lay.tally_off), reinterpret_cast<uint64_t*>(ws + lay.states_off),
          reinterpret_cast<uint64_t*>(ws + lay.hashes_off)};
}

// One CTA: rules 1-13 for every frame, then tiles numbered in frame order
// (one main kernel serves every dtype), tallies, tile states and the ticket
// cleared.
__global__ void __launch_bounds__(kThreads) dec_setup_kernel(DecSetupArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const WsPtrs w = ws_ptrs(a.ws, a.lay);
  uint64_t hash_carry = 0, tile_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    DecPlan p{};
    if (b < a.count) {
      DecItem it{};
      if (a.items == nullptr) {
        it.src = static_cast<const uint8_t*>(a.src);
        it.src_size = a.src_size;
        it.dst = static_cast<uint8_t*>(a.dst);
        it.dst_capacity = a.dst_capacity;
      } else {
        const cuda::DecompressItem di = a.items[b];
        it.src = static_cast<const uint8_t*>(di.src);
        it.src_size = di.src_size;
        it.dst = static_cast<uint8_t*>(di.dst);
        it.dst_capacity = di.dst_capacity;
      }
      plan_decode(it, a.limit, a.verify, &p);
    }
    const bool live = b < a.count && p.status == static_cast<int32_t>(Status::ok);
    const uint64_t checks = live ? p.n_checks : 0;
    const uint64_t tiles = live ? p.tiles : 0;
    uint64_t tot_checks = 0, tot_tiles = 0;
    const uint64_t eh = block_excl_scan64(checks, scratch, &tot_checks);
    const uint64_t et = block_excl_scan64(tiles, scratch, &tot_tiles);
    if (b < a.count) {
      p.hash_off = hash_carry + eh;
      p.tile_begin = tile_carry + et;
      if (!live) p.tiles = 0;
      // A frame past the workspace's sizing fails alone; its tile range
      // stays reserved (a hole the main kernel skips).
      if (p.hash_off + checks > a.lay.hashes_bound || p.tile_begin + p.tiles > a.lay.tiles_bound) {
        p.status = static_cast<int32_t>(Status::invalid_argument);
        p.tiles = 0;
      }
      w.plans[b] = p;
      w.tally[b].escapes_seen = 0;
      w.tally[b].err = kNoError;
    }
    hash_carry += tot_checks;
    tile_carry += tot_tiles;
  }
  const uint64_t total = tile_carry < a.lay.tiles_bound ? tile_carry : a.lay.tiles_bound;
  if (threadIdx.x == 0) {
    w.ctrl->ticket = 0;
    w.ctrl->total_tiles = total;
    w.ctrl->count = a.count;
  }
  for (uint64_t i = threadIdx.x; i < total; i += kThreads) w.states[i] = 0;
}

struct DecMainShared {
  DecShared tile;
  HashShared hash;
  DecPlan plan;
  uint32_t scratch[kWarps + 1];
  uint64_t ticket;
  uint64_t buffer;
  uint64_t excl;
  uint32_t patch;  // 1: escapes of this tile are in range and their counts valid
};

// Not inlined: the hash loop's registers (a lane's 8 keys, 8 deltas) then
// do not add to the tile loop's allocation at the 64-register cap.
__device__ __noinline__ void dec_tile_hashes(const uint8_t* data, uint64_t bytes, uint64_t b0, uint64_t b1,
                                             uint64_t* hashes, HashShared& sh) {
  cta_block_hashes(data, bytes, b0, b1, hashes, sh);
}

template <class T>
__device__ __forceinline__ void dec_tile(DecMainShared& s, const WsPtrs& w, uint64_t tile, uint64_t local) {
  const uint32_t t = threadIdx.x;
  const DecPlan& plan = s.plan;
  const uint64_t tile_first = local << kTileLog2;
  int32_t err = kNoError;

  const uint32_t sum = dec_counts_sum(plan, tile_first, t, s.tile, err);
  const uint32_t ex = block_excl_scan(sum, s.scratch);
  dec_counts_write(t, ex, s.tile);
  const bool counts_bad = __syncthreads_or(err != kNoError);
  const uint32_t agg = dec_tile_total(s.tile);
  if (t == 0) lookback_publish(w.states, tile, plan.tile_begin, agg);

  // Loads of several groups in flight per thread before the first store
  // (dec_groups_in_flight: why two, not four).
  constexpr uint32_t kInFlight = dec_groups_in_flight<T>();
  static_assert(kRounds % kInFlight == 0, "rounds split into batches");
SZ_NO_UNROLL
  for (uint32_t r = 0; r < kRounds; r += kInFlight) {
    DecIn<T> in[kInFlight];
SZ_UNROLL
    for (uint32_t k = 0; k < kInFlight; ++k) dec_load<T>(plan, tile_first, (r + k) * kThreads + t, in[k]);
SZ_UNROLL
    for (uint32_t k = 0; k < kInFlight; ++k) dec_store<T>(plan, (r + k) * kThreads + t, in[k], s.tile, err);
  }
  __syncthreads();  // codes in shared memory; dense output visible to the block
  if (t < 32) {
    const uint64_t excl = lookback_resolve(w.states, tile, plan.tile_begin, agg);
    if (t == 0) {
      s.excl = excl;
      const uint64_t E = plan.h.escape_count;
      s.patch = !counts_bad && excl <= E && agg <= E - excl;
      if (local + 1 == plan.tiles) w.tally[s.buffer].escapes_seen = excl + agg;
    }
  }
  __syncthreads();
  if (s.patch) {
    const uint64_t excl = s.excl;
    for (uint32_t j = t; j < agg; j += kThreads) dec_patch<T>(plan, tile_first, j, excl, s.tile, err);
  } else if (t == 0 && !counts_bad) {
    note_error(err, Status::bad_escape_counts);  // escapes past E
  }
  if (err != kNoError) atomicMin(&w.tally[s.buffer].err, err);
}

// fp8_e4m3 (FORMAT.md 4.7): marker prefix per group (rake of per-group
// marker counts, block scan), look-back over the frame's earlier tiles,
// then every group decodes with its escapes read at that index.
__device__ __forceinline__ void dec_tile_e4m3(DecMainShared& s, const WsPtrs& w, uint64_t tile, uint64_t local) {
  const uint32_t t = threadIdx.x;
  const DecPlan& plan = s.plan;
  const uint64_t tile_first = local << kTileLog2;
  int32_t err = kNoError;
  const uint32_t sum = e4m3_dec_rake_count(plan, tile_first, t, s.tile, err);
  const uint32_t ex = block_excl_scan(sum, s.scratch);
  e4m3_dec_rake_write(t, ex, s.tile);
  __syncthreads();
  const uint32_t agg = e4m3_dec_tile_total(s.tile);
  if (t < 32) {
    if (t == 0) lookback_publish(w.states, tile, plan.tile_begin, agg);
    __syncwarp();
    const uint64_t excl = lookback_resolve(w.states, tile, plan.tile_begin, agg);
    if (t == 0) {
      s.excl = excl;
      const uint64_t E = plan.h.escape_count;
      s.patch = excl <= E && agg <= E - excl;  // the tile's escapes lie inside stream 6
      if (local + 1 == plan.tiles) w.tally[s.buffer].escapes_seen = excl + agg;
    }
  }
  __syncthreads();
  if (s.patch) {
    const uint64_t excl = s.excl;
SZ_NO_UNROLL
    for (uint32_t r = 0; r < kRounds; ++r) e4m3_dec_group(plan, tile_first, r * kThreads + t, excl, s.tile, err);
  } else if (t == 0) {
    note_error(err, Status::bad_escape_counts);  // markers past E
  }
  if (err != kNoError) atomicMin(&w.tally[s.buffer].err, err);
}

// One kernel for every dtype: the dtype comes from the frame's header (its
// plan), and each tile dispatches to the dtype's code. Persistent CTAs take
// tiles in increasing order from the ticket.
template <class T>
__device__ __forceinline__ void dec_tile_and_hash(DecMainShared& s, const WsPtrs& w, uint64_t tile, uint64_t local) {
  // A tile of fp8 is half a checksum block, written by two CTAs: those
  // blocks are hashed by dec_hash_kernel after the main kernel instead.
  constexpr bool kHashInMain = (kTileElems * T::kBytes) % kChecksumBlockBytes == 0;
  if (s.plan.flags & kPlanStored) dec_stored_copy(s.plan, local << kTileLog2, threadIdx.x, kThreads);
  else if constexpr (codec_of(T::kId, mode_of(Codec::e4m3)) == Codec::e4m3) dec_tile_e4m3(s, w, tile, local);
  else dec_tile<T>(s, w, tile, local);
  if (kHashInMain && s.plan.n_checks > 0) {
    // The tile's output is complete and visible to this CTA: hash its
    // checksum blocks (tiles of 2- and 4-byte dtypes hold whole blocks).
    __syncthreads();
    const uint64_t bytes = s.plan.out_bytes;
    const uint64_t b0 = (local << kTileLog2) * T::kBytes;
    const uint64_t b1 = b0 + kTileElems * T::kBytes < bytes ? b0 + kTileElems * T::kBytes : bytes;
    dec_tile_hashes(s.plan.dst, bytes, b0, b1, w.hashes + s.plan.hash_off, s.hash);
  }
}

// The visitor's callable for one tile (a functor: a lambda in the kernel
// makes nvcc treat the __shared__ block as dynamically initialized).
struct DecTileOp {
  DecMainShared* s;
  const WsPtrs* w;
  uint64_t tile, local;
  template <class T>
  __device__ __forceinline__ void operator()(T) const { dec_tile_and_hash<T>(*s, *w, tile, local); }
};

__global__ void __launch_bounds__(kThreads, 4) dec_main_kernel(uint8_t* ws, WorkspaceLayout lay) {
  __shared__ __align__(16) DecMainShared s;
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t total = w.ctrl->total_tiles;
  const uint64_t count = w.ctrl->count;
  uint64_t current = ~uint64_t{0};
  for (;;) {
    if (threadIdx.x == 0) {
      const uint64_t tile = atomicAdd(reinterpret_cast<unsigned long long*>(&w.ctrl->ticket), 1ull);
      s.ticket = tile;
      if (tile < total) s.buffer = find_plan(w.plans, count, tile);
    }
    __syncthreads();
    const uint64_t tile = s.ticket;
    if (tile >= total) break;
    if (s.buffer != current) {
      current = s.buffer;
      if (threadIdx.x == 0) s.plan = w.plans[current];
      __syncthreads();
      dec_build_pairs(s.plan, threadIdx.x, s.tile);
      e4m3_dec_build(s.plan, threadIdx.x, s.tile);
    }
    __syncthreads();
    const uint64_t local = tile - s.plan.tile_begin;
    if (local < s.plan.tiles) {
      // Uniform over the CTA; the plan's header was parsed, so the dtype is valid.
      visit_dtype(s.plan.h.dtype, DecTileOp{&s, &w, tile, local});
    }
    __syncthreads();
  }
}

// Block hashes of frames whose tiles are smaller than a checksum block
// (fp8): CTAs take blocks grid-stride.
__global__ void __launch_bounds__(kThreads) dec_hash_kernel(uint8_t* ws, WorkspaceLayout lay) {
  __shared__ HashShared hs;
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t count = w.ctrl->count;
  for (uint64_t b = 0; b < count; ++b) {
    const DecPlan& p = w.plans[b];
    if (p.status != static_cast<int32_t>(Status::ok) || p.n_checks == 0 ||
        (kTileElems * geometry_of(p.h.dtype).bytes) % kChecksumBlockBytes == 0)
      continue;
    for (uint64_t k = blockIdx.x; k < p.n_checks; k += gridDim.x) {
      const uint64_t h = cta_xxh3_64(p.dst + (k << kChecksumBlockLog2), check_block_len(p.out_bytes, k), hs);
      if (threadIdx.x == 0) w.hashes[p.hash_off + k] = h;
    }
  }
}

// Rules 14-15 per frame (one thread each), then rule 19 on the frames that
// passed everything else: v2, the first block whose stream-7 check differs
// from the output's block hash, else the frame checksum over the block
// hashes (whole CTA); v1, XXH64 of the output (warp 0).
__global__ void __launch_bounds__(kThreads) dec_finalize_kernel(uint8_t* ws, WorkspaceLayout lay,
                                                                uint64_t* sizes, Status* statuses,
                                                                uint64_t* corrupt_blocks) {
  __shared__ HashShared hs;
  __shared__ unsigned long long first_bad;
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t count = w.ctrl->count;
  for (uint64_t b = threadIdx.x; b < count; b += kThreads) {
    DecPlan& p = w.plans[b];  // the main kernel has ended: plans are writable again
    p.escapes_seen = w.tally[b].escapes_seen;
    p.err = w.tally[b].err;
    dec_finalize(p, sizes + b, statuses + b);
    if (corrupt_blocks != nullptr) corrupt_blocks[b] = kNoBlock;
  }
  __syncthreads();
  for (uint64_t b = 0; b < count; ++b) {
    DecPlan& p = w.plans[b];
    if (p.status != static_cast<int32_t>(Status::ok) || !(p.flags & kPlanVerify)) continue;
    bool bad = false;
    if (p.h.version == 1) {
      uint64_t h = 0;
      if (threadIdx.x < 32) h = warp_xxh64(p.dst, p.out_bytes);
      if (threadIdx.x == 0) hs.result = h;
      __syncthreads();
      bad = hs.result != p.h.content_checksum;
    } else {
      const uint64_t* hashes = w.hashes + p.hash_off;
      if (threadIdx.x == 0) first_bad = kNoBlock;
      __syncthreads();
      const uint8_t* checks = p.src + (p.h.stored() ? stored_check_off(p.h.dtype, p.h.n_elems) : p.L.check_off);
      for (uint64_t k = threadIdx.x; k < p.n_checks; k += kThreads)
        if (!block_check_ok(checks, hashes, k)) atomicMin(&first_bad, k);
      const uint64_t c = cta_xxh3_64(reinterpret_cast<const uint8_t*>(hashes), 8 * p.n_checks, hs);  // barrier
      bad = content_status(p.h, first_bad, c) != Status::ok;
      if (threadIdx.x == 0) {
        p.corrupt_block = first_bad;
        if (corrupt_blocks != nullptr) corrupt_blocks[b] = first_bad;
      }
    }
    if (bad && threadIdx.x == 0) {
      p.status = static_cast<int32_t>(Status::checksum_mismatch);
      statuses[b] = Status::checksum_mismatch;
      sizes[b] = 0;
    }
    __syncthreads();
  }
}

}  // namespace

Status decode_launches(const DeviceInfo& info, const DecSetupArgs& a, DecodeLaunches* out) {
  if (info.sms <= 0 || info.dec_ctas_per_sm <= 0) return Status::backend_unavailable;
  if (a.count == 0 || a.count > kMaxBatchCount) return Status::invalid_argument;
  const uint64_t resident = static_cast<uint64_t>(info.sms) * static_cast<uint64_t>(info.dec_ctas_per_sm);
  const uint64_t main_grid = a.lay.tiles_bound < resident ? a.lay.tiles_bound : resident;
  out->setup = {1, kThreads};
  out->main = {static_cast<uint32_t>(main_grid > 0 ? main_grid : 1), kThreads};
  // Grid from host arguments only (capturable): at most one CTA per checksum
  // block the workspace can hold, capped at the resident count.
  const uint64_t hash_grid = a.lay.hashes_bound < resident ? a.lay.hashes_bound : resident;
  out->hash = {a.verify ? static_cast<uint32_t>(hash_grid > 0 ? hash_grid : 1) : 0u, kThreads};
  out->finalize = {1, kThreads};
  return Status::ok;
}

Status enqueue_decode(const DecSetupArgs& a, uint64_t* d_sizes, Status* d_statuses, uint64_t* d_corrupt,
                      cudaStream_t stream) {
  // Validated before the first launch (see enqueue_encode).
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  DecodeLaunches L;
  if ((s = decode_launches(info, a, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  dec_setup_kernel<<<L.setup.grid, L.setup.block, 0, stream>>>(a);
  dec_main_kernel<<<L.main.grid, L.main.block, 0, stream>>>(a.ws, a.lay);
  if (L.hash.grid > 0) dec_hash_kernel<<<L.hash.grid, L.hash.block, 0, stream>>>(a.ws, a.lay);
  dec_finalize_kernel<<<L.finalize.grid, L.finalize.block, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses, d_corrupt);
  return launch_status();
}

// Resident CTAs per SM of the main kernel.
int dec_main_occupancy() {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dec_main_kernel, kThreads, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace cuda_detail
}  // namespace splitzip
