// SPDX-License-Identifier: Apache-2.0
// Block-level scan, decoupled look-back and tile scheduling for the
// persistent kernels. Device only.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "cuda/plan.h"
#include "cuda/vec_io.h"

namespace splitzip {
namespace cuda_detail {

// ---- block scan (kThreads threads, all must call) ----
// Exclusive prefix of v over the block; *total gets the block sum.
__device__ __forceinline__ uint32_t block_excl_scan(uint32_t v, uint32_t* scratch /*kWarps + 1*/,
                                                    uint32_t* total = nullptr) {
  const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  uint32_t incl = v;
SZ_UNROLL
  for (uint32_t d = 1; d < 32; d <<= 1) {
    const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl += y;
  }
  __syncthreads();  // scratch may still be read by a previous scan
  if (lane == 31) scratch[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const uint32_t w = lane < kWarps ? scratch[lane] : 0u;
    uint32_t wi = w;
SZ_UNROLL
    for (uint32_t d = 1; d < kWarps; d <<= 1) {
      const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, wi, d);
      if (lane >= d) wi += y;
    }
    __syncwarp();
    if (lane < kWarps) scratch[lane] = wi - w;
    if (lane == kWarps - 1) scratch[kWarps] = wi;
  }
  __syncthreads();
  if (total != nullptr) *total = scratch[kWarps];
  return scratch[warp] + incl - v;
}

// 64-bit version for the setup kernels' prefixes.
__device__ __forceinline__ uint64_t block_excl_scan64(uint64_t v, uint64_t* scratch /*kWarps + 1*/,
                                                      uint64_t* total = nullptr) {
  const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  uint64_t incl = v;
SZ_UNROLL
  for (uint32_t d = 1; d < 32; d <<= 1) {
    const uint64_t y = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl += y;
  }
  __syncthreads();
  if (lane == 31) scratch[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const uint64_t w = lane < kWarps ? scratch[lane] : 0u;
    uint64_t wi = w;
SZ_UNROLL
    for (uint32_t d = 1; d < kWarps; d <<= 1) {
      const uint64_t y = __shfl_up_sync(0xFFFFFFFFu, wi, d);
      if (lane >= d) wi += y;
    }
    __syncwarp();
    if (lane < kWarps) scratch[lane] = wi - w;
    if (lane == kWarps - 1) scratch[kWarps] = wi;
  }
  __syncthreads();
  if (total != nullptr) *total = scratch[kWarps];
  return scratch[warp] + incl - v;
}

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v) {
SZ_UNROLL
  for (uint32_t d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  return v;
}

// ---- decoupled look-back over tile states ----
// A state word is flag (2 bits) | value (62 bits): 0 = nothing yet,
// aggregate = the tile's own count, inclusive = count through this tile.
constexpr uint64_t kStateAggregate = uint64_t{1} << 62;
constexpr uint64_t kStateInclusive = uint64_t{2} << 62;
constexpr uint64_t kStateValue = (uint64_t{1} << 62) - 1;

__device__ __forceinline__ uint64_t state_load(uint64_t* p) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> a(
      *reinterpret_cast<unsigned long long*>(p));
  return a.load(cuda::memory_order_acquire);
}
__device__ __forceinline__ void state_store(uint64_t* p, uint64_t v) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> a(
      *reinterpret_cast<unsigned long long*>(p));
  a.store(v, cuda::memory_order_release);
}

// One thread: publishes the tile's own count (the buffer's first tile
// publishes its inclusive count right away).
__device__ __forceinline__ void lookback_publish(uint64_t* states, uint64_t tile, uint64_t first,
                                                 uint64_t aggregate) {
  state_store(states + tile, (tile == first ? kStateInclusive : kStateAggregate) | aggregate);
}

// One full warp, after lookback_publish: the count of all earlier tiles of
// the buffer (tiles [first, tile)); lane 0 then publishes the inclusive count.
// Tiles are handed out in increasing order by a ticket, so every tile waited
// on belongs to a running CTA that never waits on this one: no deadlock.
__device__ __forceinline__ uint64_t lookback_resolve(uint64_t* states, uint64_t tile, uint64_t first,
                                                     uint64_t aggregate) {
  const uint32_t lane = threadIdx.x & 31u;
  uint64_t excl = 0;
  if (tile != first) {
    int64_t pred = static_cast<int64_t>(tile) - 1;
    for (;;) {
      const int64_t idx = pred - static_cast<int64_t>(lane);
      uint64_t s = kStateInclusive;  // before the buffer: inclusive 0
      if (idx >= static_cast<int64_t>(first)) {
        s = state_load(states + idx);
        while ((s >> 62) == 0) {
          __nanosleep(64);
          s = state_load(states + idx);
        }
      }
      const uint32_t incl = __ballot_sync(0xFFFFFFFFu, (s >> 62) == 2);
      uint64_t v = s & kStateValue;
      if (incl != 0) {
        const uint32_t k = static_cast<uint32_t>(__ffs(static_cast<int>(incl)) - 1);
        if (lane > k) v = 0;
        excl += warp_sum64(v);
        break;
      }
      excl += warp_sum64(v);
      pred -= 32;
    }
    if (lane == 0) state_store(states + tile, kStateInclusive | (excl + aggregate));
  }
  return excl;
}

// Buffer owning global tile `tile`: the last plan whose tile_begin <= tile
// (plans with no tiles share their successor's tile_begin, so it is never one
// of them).
template <class Plan>
__device__ __forceinline__ uint64_t find_plan(const Plan* plans, uint64_t count, uint64_t tile) {
  uint64_t lo = 0, hi = count;  // first plan with tile_begin > tile
  while (lo < hi) {
    const uint64_t mid = (lo + hi) / 2;
    if (plans[mid].tile_begin <= tile) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

}  // namespace cuda_detail
}  // namespace splitzip
