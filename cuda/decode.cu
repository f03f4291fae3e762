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
  uint64_t* states;
};
__device__ __forceinline__ WsPtrs ws_ptrs(uint8_t* ws, const WorkspaceLayout& lay) {
  return {reinterpret_cast<Control*>(ws), reinterpret_cast<DecPlan*>(ws + lay.plans_off),
          reinterpret_cast<uint64_t*>(ws + lay.states_off)};
}

__global__ void __launch_bounds__(kThreads) dec_setup_kernel(DecSetupArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const WsPtrs w = ws_ptrs(a.ws, a.lay);
  uint64_t carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    DecPlan p{};
    uint64_t tiles = 0;
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
      plan_decode(it, a.max_output_bytes, a.verify, &p);
      tiles = p.tiles;
    }
    uint64_t tot = 0;
    const uint64_t ex = block_excl_scan64(tiles, scratch, &tot);
    if (b < a.count) {
      p.tile_begin = carry + ex;
      if (p.tile_begin + p.tiles > a.lay.tiles_bound) {
        p.status = static_cast<int32_t>(Status::invalid_argument);
        p.tiles = 0;
      }
      w.plans[b] = p;
    }
    carry += tot;
  }
  const uint64_t total = carry < a.lay.tiles_bound ? carry : a.lay.tiles_bound;
  if (threadIdx.x == 0) {
    w.ctrl->ticket = 0;
    w.ctrl->total_tiles = total;
    w.ctrl->total_units = 0;
    w.ctrl->count = a.count;
  }
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

SZ_NO_UNROLL
  for (uint32_t r = 0; r < kRounds; r += 2) {
    DecIn<T> a, b;
    dec_load<T>(plan, tile_first, r * kThreads + t, a);
    dec_load<T>(plan, tile_first, (r + 1) * kThreads + t, b);
    dec_store<T>(plan, r * kThreads + t, a, s.tile, err);
    dec_store<T>(plan, (r + 1) * kThreads + t, b, s.tile, err);
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

__global__ void __launch_bounds__(kThreads, 3) dec_main_kernel(uint8_t* ws, WorkspaceLayout lay) {
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
    }
    __syncthreads();
    const uint64_t local = tile - s.plan.tile_begin;
    if (local < s.plan.tiles) {
      if (s.plan.flags & kPlanStored) {
        dec_stored_copy(s.plan, local << kTileLog2, threadIdx.x, kThreads);
      } else {
        switch (s.plan.h.dtype) {
          case 1: dec_tile<Bf16Traits>(s, w, tile, local); break;
          case 2: dec_tile<Fp16Traits>(s, w, tile, local); break;
          case 3: dec_tile<Fp32Traits>(s, w, tile, local); break;
          default: dec_tile<Fp8E5M2Traits>(s, w, tile, local); break;
        }
      }
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
  dec_main_kernel<<<static_cast<unsigned>(main_grid > 0 ? main_grid : 1), kThreads, 0, stream>>>(a.ws, a.lay);
  if ((s = launch_status()) != Status::ok) return s;
  dec_finalize_kernel<<<1, kThreads, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses);
  if ((s = launch_status()) != Status::ok) return s;
  if (a.verify) {
    dec_checksum_kernel<<<static_cast<unsigned>(a.count), 32, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses);
    if ((s = launch_status()) != Status::ok) return s;
  }
  return Status::ok;
}

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
