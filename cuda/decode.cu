// Decode kernels: setup (header rules 1-13 on the device, tile prefix) ->
// main (persistent CTAs: counts + look-back, dense decode, escape patch in
// the same tile after a barrier) -> finalize (rule 14 padding, rule 15 sum,
// status per frame) -> optional checksum verify (rule 19).
#include <cuda_runtime.h>

#include "cuda/checksum.cuh"
#include "cuda/decode_logic.h"
#include "cuda/device_primitives.cuh"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

struct WsPtrs {
  Control* ctrl;
  DecPlan* plans;
  uint64_t* ord;
  uint64_t* states;
};
__device__ __forceinline__ WsPtrs ws_ptrs(uint8_t* ws, const WorkspaceLayout& lay) {
  return {reinterpret_cast<Control*>(ws), reinterpret_cast<DecPlan*>(ws + lay.plans_off),
          reinterpret_cast<uint64_t*>(ws + lay.ord_off), reinterpret_cast<uint64_t*>(ws + lay.states_off)};
}

// One CTA: rules 1-13 for every frame, then tiles numbered dtype-major (see
// Control), tile states and tickets cleared.
__global__ void __launch_bounds__(kThreads) dec_setup_kernel(DecSetupArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const WsPtrs w = ws_ptrs(a.ws, a.lay);
  for (uint64_t b = threadIdx.x; b < a.count; b += kThreads) {
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
    DecPlan p;
    plan_decode(it, a.max_output_bytes, a.verify, &p);
    w.plans[b] = p;  // read back below by the same thread
  }
  uint64_t tile_base = 0, ord_base = 0;
  for (uint32_t d = 1; d <= 4; ++d) {
    if (threadIdx.x == 0) {
      w.ctrl->dtype_tiles[d - 1] = tile_base;
      w.ctrl->dtype_ord[d - 1] = ord_base;
    }
    const uint64_t rounds = (a.count + kThreads - 1) / kThreads;
    for (uint64_t r = 0; r < rounds; ++r) {
      const uint64_t b = r * kThreads + threadIdx.x;
      const bool mine = b < a.count && w.plans[b].h.dtype == d && w.plans[b].tiles > 0 &&
                        w.plans[b].status == static_cast<int32_t>(Status::ok);
      const uint64_t tiles = mine ? w.plans[b].tiles : 0;
      uint64_t tot_tiles = 0, tot_frames = 0;
      const uint64_t et = block_excl_scan64(tiles, scratch, &tot_tiles);
      const uint64_t ef = block_excl_scan64(mine ? 1 : 0, scratch, &tot_frames);
      if (mine) {
        DecPlan& p = w.plans[b];
        p.tile_begin = tile_base + et;
        // A frame past the workspace's sizing fails alone; its tile range
        // stays reserved (a hole the main kernel skips).
        if (p.tile_begin + p.tiles > a.lay.tiles_bound) {
          p.status = static_cast<int32_t>(Status::invalid_argument);
          p.tiles = 0;
        }
        w.ord[ord_base + ef] = b;
      }
      tile_base += tot_tiles;
      ord_base += tot_frames;
    }
  }
  if (threadIdx.x == 0) {
    w.ctrl->dtype_tiles[4] = tile_base;
    w.ctrl->dtype_ord[4] = ord_base;
    for (int d = 0; d < 4; ++d) w.ctrl->dtype_ticket[d] = 0;
    w.ctrl->count = a.count;
  }
  const uint64_t total = tile_base < a.lay.tiles_bound ? tile_base : a.lay.tiles_bound;
  for (uint64_t i = threadIdx.x; i < total; i += kThreads) w.states[i] = 0;
}

struct DecMainShared {
  DecShared tile;
  DecPlan plan;
  uint32_t scratch[kWarps + 1];
  uint64_t ticket;
  uint64_t buffer;
  uint64_t excl;
  uint32_t patch;  // 1: escapes of this tile are in range and their counts valid
};

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

  // Several groups' loads in flight per thread (one for fp32: 64-byte groups
  // and 64 registers).
  constexpr uint32_t kInFlight = T::kBytes == 4 ? 1 : 2;
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
      if (local + 1 == plan.tiles) w.plans[s.buffer].escapes_seen = excl + agg;
    }
  }
  __syncthreads();
  if (s.patch) {
    const uint64_t excl = s.excl;
    for (uint32_t j = t; j < agg; j += kThreads) dec_patch<T>(plan, tile_first, j, excl, s.tile, err);
  } else if (t == 0 && !counts_bad) {
    note_error(err, Status::bad_escape_counts);  // escapes past E
  }
  if (err != kNoError) atomicMin(&w.plans[s.buffer].err, err);
}

// Frames of dtype T only (one launch per dtype, so each is compiled for
// its own registers). Persistent CTAs take the dtype's tiles in increasing
// order from its ticket.
template <class T, uint32_t kDtype>
__global__ void __launch_bounds__(kThreads, 4) dec_main_kernel(uint8_t* ws, WorkspaceLayout lay) {
  __shared__ __align__(16) DecMainShared s;
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t first = w.ctrl->dtype_tiles[kDtype - 1];
  const uint64_t end_all = w.ctrl->dtype_tiles[kDtype];
  const uint64_t end = end_all < lay.tiles_bound ? end_all : lay.tiles_bound;
  const uint64_t ord_first = w.ctrl->dtype_ord[kDtype - 1];
  const uint64_t ord_end = w.ctrl->dtype_ord[kDtype];
  uint64_t current = ~uint64_t{0};
  for (;;) {
    if (threadIdx.x == 0) {
      const uint64_t tile =
          first + atomicAdd(reinterpret_cast<unsigned long long*>(&w.ctrl->dtype_ticket[kDtype - 1]), 1ull);
      s.ticket = tile;
      if (tile < end) {
        // Last frame (in ord order) whose tile_begin <= tile.
        uint64_t lo = ord_first, hi = ord_end;
        while (lo < hi) {
          const uint64_t mid = (lo + hi) / 2;
          if (w.plans[w.ord[mid]].tile_begin <= tile) lo = mid + 1;
          else hi = mid;
        }
        s.buffer = w.ord[lo - 1];
      }
    }
    __syncthreads();
    const uint64_t tile = s.ticket;
    if (tile >= end) break;
    if (s.buffer != current) {
      current = s.buffer;
      if (threadIdx.x == 0) s.plan = w.plans[current];
      __syncthreads();
      dec_build_pairs(s.plan, threadIdx.x, s.tile);
    }
    __syncthreads();
    const uint64_t local = tile - s.plan.tile_begin;
    if (local < s.plan.tiles) {
      if (s.plan.flags & kPlanStored) dec_stored_copy(s.plan, local << kTileLog2, threadIdx.x, kThreads);
      else dec_tile<T>(s, w, tile, local);
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreads) dec_finalize_kernel(uint8_t* ws, WorkspaceLayout lay,
                                                                uint64_t* sizes, Status* statuses) {
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t count = w.ctrl->count;
  for (uint64_t b = threadIdx.x; b < count; b += kThreads) dec_finalize(w.plans[b], sizes + b, statuses + b);
}

// One warp per frame: rule 19 on frames that passed everything else.
__global__ void dec_checksum_kernel(uint8_t* ws, WorkspaceLayout lay, uint64_t* sizes, Status* statuses) {
  const WsPtrs w = ws_ptrs(ws, lay);
  DecPlan& p = w.plans[blockIdx.x];
  if (p.status != static_cast<int32_t>(Status::ok) || !(p.flags & kPlanVerify)) return;
  const uint64_t h = warp_xxh64(p.dst, p.out_bytes);
  if (threadIdx.x == 0) {
    p.checksum = h;
    if (h != p.h.content_checksum) {
      p.status = static_cast<int32_t>(Status::checksum_mismatch);
      statuses[blockIdx.x] = Status::checksum_mismatch;
      sizes[blockIdx.x] = 0;
    }
  }
}

}  // namespace

Status enqueue_decode(const DecSetupArgs& a, uint64_t* d_sizes, Status* d_statuses, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  const uint64_t resident = static_cast<uint64_t>(info.sms) * static_cast<uint64_t>(info.dec_ctas_per_sm);
  const uint64_t main_grid = a.lay.tiles_bound < resident ? a.lay.tiles_bound : resident;

  dec_setup_kernel<<<1, kThreads, 0, stream>>>(a);
  if ((s = launch_status()) != Status::ok) return s;
  // One launch per dtype; a launch with no frames of its dtype ends at its
  // first ticket.
  const auto grid = static_cast<unsigned>(main_grid > 0 ? main_grid : 1);
  dec_main_kernel<Bf16Traits, 1><<<grid, kThreads, 0, stream>>>(a.ws, a.lay);
  dec_main_kernel<Fp16Traits, 2><<<grid, kThreads, 0, stream>>>(a.ws, a.lay);
  dec_main_kernel<Fp32Traits, 3><<<grid, kThreads, 0, stream>>>(a.ws, a.lay);
  dec_main_kernel<Fp8E5M2Traits, 4><<<grid, kThreads, 0, stream>>>(a.ws, a.lay);
  if ((s = launch_status()) != Status::ok) return s;
  dec_finalize_kernel<<<1, kThreads, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses);
  if ((s = launch_status()) != Status::ok) return s;
  if (a.verify) {
    dec_checksum_kernel<<<static_cast<unsigned>(a.count), 32, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses);
    if ((s = launch_status()) != Status::ok) return s;
  }
  return Status::ok;
}

// Resident CTAs per SM of the main kernel (the smallest over dtypes).
int dec_main_occupancy() {
  int best = 0;
  const void* kernels[4] = {reinterpret_cast<const void*>(dec_main_kernel<Bf16Traits, 1>),
                            reinterpret_cast<const void*>(dec_main_kernel<Fp16Traits, 2>),
                            reinterpret_cast<const void*>(dec_main_kernel<Fp32Traits, 3>),
                            reinterpret_cast<const void*>(dec_main_kernel<Fp8E5M2Traits, 4>)};
  for (const void* k : kernels) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kThreads, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    best = best == 0 || n < best ? n : best;
  }
  return best;
}

}  // namespace cuda_detail
}  // namespace splitzip
