// SPDX-License-Identifier: Apache-2.0
// Encode kernels: setup (plans, tile/staging/hash prefixes) -> main (single
// read of the input, persistent CTAs, decoupled look-back, v2 block hashes
// of the tile's checksum blocks) -> finalize (frame checksum, stored/coded
// decision, header, gaps, stream 7) -> copy (escape exponents, or the input
// for a stored frame). Every step is stream-ordered; nothing
// returns to the host.
#include <cuda_runtime.h>

#include "cuda/checksum.cuh"
#include "cuda/device_primitives.cuh"
#include "cuda/encode_logic.h"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

struct WsPtrs {
  Control* ctrl;
  EncPlan* plans;
  EncTally* tally;
  uint64_t* states;
  uint64_t* hashes;
  uint8_t* stage;
};
__device__ __forceinline__ WsPtrs ws_ptrs(uint8_t* ws, const WorkspaceLayout& lay) {
  return {reinterpret_cast<Control*>(ws), reinterpret_cast<EncPlan*>(ws + lay.plans_off),
          reinterpret_cast<EncTally*>(ws + lay.tally_off), reinterpret_cast<uint64_t*>(ws + lay.states_off),
          reinterpret_cast<uint64_t*>(ws + lay.hashes_off), ws + lay.stage_off};
}

// One CTA: plans every buffer, prefixes of tiles and staging, clears the
// tile states and the ticket of this call.
__global__ void __launch_bounds__(kThreads) enc_setup_kernel(EncSetupArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const WsPtrs w = ws_ptrs(a.ws, a.lay);
  uint64_t tile_carry = 0, stage_carry = 0, hash_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    EncPlan p{};
    uint64_t tiles = 0, stage = 0, checks = 0;
    if (b < a.count) {
      EncItem it{};
      Codebook cb = a.cb;
      bool index_ok = true;
      if (a.items == nullptr) {
        it.src = static_cast<const uint8_t*>(a.src);
        it.dst = static_cast<uint8_t*>(a.dst);
        it.n = a.n;
        it.capacity = a.capacity;
        if (a.codebooks != nullptr) cb = a.codebooks[0];  // device-side codebook (dynamic top-16)
      } else {
        const cuda::CompressItem ci = a.items[b];
        it.src = static_cast<const uint8_t*>(ci.src);
        it.dst = static_cast<uint8_t*>(ci.dst);
        it.n = ci.n_elems;
        it.capacity = ci.dst_capacity;
        index_ok = a.codebooks != nullptr && ci.codebook < a.n_codebooks;
        if (index_ok) cb = a.codebooks[ci.codebook];
      }
      uint8_t entries[16];
      for (int i = 0; i < 16; ++i) entries[i] = cb.entries[i];
      it.cb = entries;
      it.cb_count = cb.count;
      it.cb_dtype = static_cast<uint32_t>(cb.dtype);
      plan_encode(it, a.dtype, a.chunk_log2, a.flags, &p);
      if (!index_ok) {
        p.status = static_cast<int32_t>(Status::bad_codebook);
        p.tiles = 0;
      }
      tiles = p.tiles;
      stage = stage_need(p);
      checks = p.n_checks;
    }
    uint64_t tot_tiles = 0, tot_stage = 0, tot_checks = 0;
    const uint64_t et = block_excl_scan64(tiles, scratch, &tot_tiles);
    const uint64_t es = block_excl_scan64(stage, scratch, &tot_stage);
    const uint64_t eh = block_excl_scan64(checks, scratch, &tot_checks);
    if (b < a.count) {
      p.tile_begin = tile_carry + et;
      p.stage_off = stage_carry + es;
      p.hash_off = hash_carry + eh;
      // Buffers past the workspace's sizing fail alone; their tile range
      // stays reserved (a hole the main kernel skips).
      if (p.tile_begin + p.tiles > a.lay.tiles_bound || p.stage_off + stage > a.lay.stage_bytes ||
          p.hash_off + checks > a.lay.hashes_bound) {
        p.status = static_cast<int32_t>(Status::invalid_argument);
        p.tiles = 0;
      }
      w.plans[b] = p;
      w.tally[b].escapes = 0;
    }
    tile_carry += tot_tiles;
    stage_carry += tot_stage;
    hash_carry += tot_checks;
  }
  const uint64_t total = tile_carry < a.lay.tiles_bound ? tile_carry : a.lay.tiles_bound;
  if (threadIdx.x == 0) {
    w.ctrl->ticket = 0;
    w.ctrl->total_tiles = total;
    w.ctrl->total_units = 0;
    w.ctrl->count = a.count;
  }
  for (uint64_t i = threadIdx.x; i < total; i += kThreads) w.states[i] = 0;
}

struct EncMainShared {
  EncShared tile;
  HashShared hash;
  EncPlan plan;
  uint32_t scratch[kWarps + 1];
  uint64_t ticket;
  uint64_t buffer;
  uint64_t excl;
};

template <class T>
__device__ __forceinline__ void enc_tile(EncMainShared& s, const WsPtrs& w, uint64_t tile, uint64_t local) {
  const uint32_t t = threadIdx.x;
  const EncPlan& plan = s.plan;
  const uint64_t tile_first = local << kTileLog2;
  // Two groups' loads in flight per thread before any store.
  static_assert(kRounds % 2 == 0, "rounds are processed in pairs");
SZ_NO_UNROLL
  for (uint32_t r = 0; r < kRounds; r += 2) {
    EncIn<T> a, b;
    enc_load<T>(plan, tile_first, r * kThreads + t, a);
    enc_load<T>(plan, tile_first, (r + 1) * kThreads + t, b);
    enc_transform<T>(plan, r * kThreads + t, a, s.tile);
    enc_transform<T>(plan, (r + 1) * kThreads + t, b, s.tile);
  }
  __syncthreads();
  const uint32_t sum = enc_rake_sum(t, s.tile);
  const uint32_t excl_in_tile = block_excl_scan(sum, s.scratch);
  enc_rake_write(t, excl_in_tile, s.tile);
  __syncthreads();
  if (t < 32) {
    const uint64_t agg = enc_tile_total(s.tile);
    if (t == 0) lookback_publish(w.states, tile, plan.tile_begin, agg);
    __syncwarp();
    const uint64_t excl = lookback_resolve(w.states, tile, plan.tile_begin, agg);
    if (t == 0) {
      s.excl = excl;
      if (local + 1 == plan.tiles) w.tally[s.buffer].escapes = excl + agg;
    }
  }
  __syncthreads();
  const uint64_t excl = s.excl;
SZ_NO_UNROLL
  for (uint32_t r = 0; r < kRounds; ++r) enc_scatter(plan, tile_first, r * kThreads + t, excl, s.tile, w.stage);
  enc_chunk_counts(plan, tile_first, t, s.tile);
}

// Persistent CTAs take tiles in increasing order from a ticket. One
// instantiation per dtype (a batch has one dtype) keeps registers per dtype.
template <class T>
__global__ void __launch_bounds__(kThreads, 4) enc_main_kernel(uint8_t* ws, WorkspaceLayout lay) {
  __shared__ __align__(16) EncMainShared s;
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
      enc_build_lut(s.plan, threadIdx.x, s.tile);
    }
    __syncthreads();
    const uint64_t local = tile - s.plan.tile_begin;
    if (local < s.plan.tiles) {
      if (s.plan.flags & kPlanDense) enc_tile<T>(s, w, tile, local);
      if (s.plan.flags & kPlanChecksum) {
        // The tile's checksum blocks (every block whose first byte is in
        // the tile), while its input is still in L2.
        const uint64_t bytes = s.plan.n * T::kBytes;
        const uint64_t b0 = (local << kTileLog2) * T::kBytes;
        const uint64_t b1 = b0 + kTileElems * T::kBytes < bytes ? b0 + kTileElems * T::kBytes : bytes;
        __syncthreads();
        cta_block_hashes(s.plan.src, bytes, b0, b1, w.hashes + s.plan.hash_off, s.hash);
      }
    }
    __syncthreads();
  }
}

// One CTA: per-buffer decision, header, statuses, copy-unit prefix.
__global__ void __launch_bounds__(kThreads) enc_finalize_kernel(uint8_t* ws, WorkspaceLayout lay,
                                                                uint64_t* sizes, Status* statuses) {
  __shared__ uint64_t scratch[kWarps + 1];
  __shared__ HashShared hs;
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t count = w.ctrl->count;
  // Frame checksums: XXH3 of each buffer's block hashes (whole CTA).
  for (uint64_t b = 0; b < count; ++b) {
    EncPlan& p = w.plans[b];
    if (p.status != static_cast<int32_t>(Status::ok) || !(p.flags & kPlanChecksum)) continue;
    const uint64_t c = cta_xxh3_64(reinterpret_cast<const uint8_t*>(w.hashes + p.hash_off), 8 * p.n_checks, hs);
    if (threadIdx.x == 0) p.checksum = c;
  }
  __syncthreads();
  uint64_t carry = 0;
  for (uint64_t base = 0; base < count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    uint64_t units = 0;
    if (b < count) {
      w.plans[b].escapes = w.tally[b].escapes;  // the main kernel has ended: plans are writable again
      enc_finalize(w.plans[b], sizes + b, statuses + b);
      units = w.plans[b].units;
    }
    uint64_t tot = 0;
    const uint64_t ex = block_excl_scan64(units, scratch, &tot);
    if (b < count) w.plans[b].units_begin = carry + ex;
    carry += tot;
  }
  if (threadIdx.x == 0) w.ctrl->total_units = carry;
  __syncthreads();
  // Stream 7: the low 32 bits of each block hash.
  for (uint64_t b = 0; b < count; ++b) {
    const EncPlan& p = w.plans[b];
    if (p.status != static_cast<int32_t>(Status::ok) || !(p.flags & kPlanChecksum)) continue;
    for (uint64_t k = threadIdx.x; k < p.n_checks; k += kThreads)
      write_block_checks(p.dst + p.check_off + 4 * k, w.hashes + p.hash_off + k, 1);
  }
}

__global__ void __launch_bounds__(kThreads) enc_copy_kernel(uint8_t* ws, WorkspaceLayout lay) {
  const WsPtrs w = ws_ptrs(ws, lay);
  const uint64_t total = w.ctrl->total_units;
  const uint64_t count = w.ctrl->count;
  for (uint64_t u = blockIdx.x; u < total; u += gridDim.x) {
    // Last plan with units_begin <= u (zero-unit plans share their successor's).
    uint64_t lo = 0, hi = count;
    while (lo < hi) {
      const uint64_t mid = (lo + hi) / 2;
      if (w.plans[mid].units_begin <= u) lo = mid + 1;
      else hi = mid;
    }
    const EncPlan& p = w.plans[lo - 1];
    const uint8_t* from;
    uint8_t* to;
    enc_copy_ends(p, w.stage, &from, &to);
    copy_unit(from, to, p.copy_bytes, u - p.units_begin, threadIdx.x, kThreads);
  }
}

}  // namespace

Status encode_launches(const DeviceInfo& info, const EncSetupArgs& a, uint64_t elems_bound, EncodeLaunches* out) {
  if (info.sms <= 0 || info.enc_ctas_per_sm <= 0) return Status::backend_unavailable;
  const uint32_t bytes = geometry_of(a.dtype).bytes;
  if (bytes == 0 || a.count == 0 || a.count > kMaxBatchCount || elems_bound > kMaxElems) return Status::invalid_argument;
  const uint64_t resident = static_cast<uint64_t>(info.sms) * static_cast<uint64_t>(info.enc_ctas_per_sm);
  const uint64_t main_grid = a.lay.tiles_bound < resident ? a.lay.tiles_bound : resident;
  const uint64_t units_bound = elems_bound * bytes / kCopyUnitBytes + a.count;
  const uint64_t copy_cap = static_cast<uint64_t>(info.sms) * 8;
  const uint64_t copy_grid = units_bound < copy_cap ? units_bound : copy_cap;
  out->setup = {1, kThreads};
  out->main = {static_cast<uint32_t>(main_grid > 0 ? main_grid : 1), kThreads};
  out->finalize = {1, kThreads};
  out->copy = {static_cast<uint32_t>(copy_grid > 0 ? copy_grid : 1), kThreads};
  return Status::ok;
}

Status enqueue_encode(const EncSetupArgs& a, uint64_t elems_bound, uint64_t* d_sizes,
                      Status* d_statuses, cudaStream_t stream) {
  // Everything that can fail on the host is checked before the first launch
  // (device, occupancy, grid shapes); a sticky error left by earlier work is
  // reported without enqueuing anything.
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  EncodeLaunches L;
  if ((s = encode_launches(info, a, elems_bound, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  enc_setup_kernel<<<L.setup.grid, L.setup.block, 0, stream>>>(a);
  switch (a.dtype) {
    case 1: enc_main_kernel<Bf16Traits><<<L.main.grid, L.main.block, 0, stream>>>(a.ws, a.lay); break;
    case 2: enc_main_kernel<Fp16Traits><<<L.main.grid, L.main.block, 0, stream>>>(a.ws, a.lay); break;
    case 3: enc_main_kernel<Fp32Traits><<<L.main.grid, L.main.block, 0, stream>>>(a.ws, a.lay); break;
    default: enc_main_kernel<Fp8E5M2Traits><<<L.main.grid, L.main.block, 0, stream>>>(a.ws, a.lay); break;
  }
  enc_finalize_kernel<<<L.finalize.grid, L.finalize.block, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses);
  enc_copy_kernel<<<L.copy.grid, L.copy.block, 0, stream>>>(a.ws, a.lay);
  // The shapes were validated above, so a launch can fail here only when the
  // context itself broke (device fault, driver gone) between two launches.
  return launch_status();
}

// Resident CTAs per SM of the main kernel (the smallest over dtypes).
int enc_main_occupancy() {
  int best = 0;
  const void* kernels[4] = {reinterpret_cast<const void*>(enc_main_kernel<Bf16Traits>),
                            reinterpret_cast<const void*>(enc_main_kernel<Fp16Traits>),
                            reinterpret_cast<const void*>(enc_main_kernel<Fp32Traits>),
                            reinterpret_cast<const void*>(enc_main_kernel<Fp8E5M2Traits>)};
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
