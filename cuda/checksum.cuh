// XXH64 on the device. The hash is four independent serial chains (one per
// 8-byte lane of each 32-byte stripe) joined at the end, so four threads of
// a warp run one chain each; nothing parallelises further. Device only.
#pragma once

#include <cstdint>

#include "core/device_helpers.h"
#include "cuda/vec_io.h"

namespace splitzip {
namespace cuda_detail {

// Lane l (0..3) of the stripe accumulators over all full stripes.
__device__ __forceinline__ uint64_t xxh_lane_dev(const uint8_t* p, uint64_t size, uint32_t lane) {
  uint64_t acc = hd::xxh_lane_init(lane, 0);
  const uint64_t stripes = size >> 5;
  if ((reinterpret_cast<uintptr_t>(p) & 7u) == 0) {
    const uint8_t* q = p + 8 * lane;
    uint64_t s = 0;
    // Loads are independent of the chain: batch them ahead of the rounds.
    for (; s + 8 <= stripes; s += 8) {
      uint64_t v[8];
SZ_UNROLL
      for (int k = 0; k < 8; ++k) v[k] = load8(q + 32 * (s + k));
SZ_UNROLL
      for (int k = 0; k < 8; ++k) acc = hd::xxh_round(acc, v[k]);
    }
    for (; s < stripes; ++s) acc = hd::xxh_round(acc, load8(q + 32 * s));
    return acc;
  }
  for (uint64_t s = 0; s < stripes; ++s) acc = hd::xxh_round(acc, hd::le64(p + 32 * s + 8 * lane));
  return acc;
}

// Whole warp calls; the hash is valid in lane 0.
__device__ __forceinline__ uint64_t warp_xxh64(const uint8_t* p, uint64_t size) {
  const uint32_t lane = threadIdx.x & 31u;
  uint64_t acc = 0;
  if (lane < 4 && size >= 32) acc = xxh_lane_dev(p, size, lane);
  uint64_t v[4];
SZ_UNROLL
  for (int l = 0; l < 4; ++l) v[l] = __shfl_sync(0xFFFFFFFFu, acc, l);
  uint64_t h = 0;
  if (lane == 0) {
    h = size >= 32 ? hd::xxh_combine(v) : hd::Xxh::P5;
    h = hd::xxh_finish(h, p + (size & ~uint64_t{31}), size);
  }
  return h;
}

}  // namespace cuda_detail
}  // namespace splitzip
