// Decode kernels: setup (header rules 1-13 on the device, tile and hash
// prefixes) -> main (persistent CTAs: counts + look-back, dense decode,
// escape patch in the same tile after a barrier, then the v2 block hashes of
// the tile's output) -> [fp8 only: block hashes] -> finalize (rule 14
// padding, rule 15 sum, rule 19: first corrupt block and frame checksum,
// status per frame).
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
  uint64_t* hashes;
};
__device__ __forceinline__ WsPtrs ws_ptrs(uint8_t* ws, const WorkspaceLayout& lay) {
  return {reinterpret_cast<Control*>(ws), reinterpret_cast<DecPlan*>(ws + lay.plans_off),
          reinterpret_cast<uint64_t*>(ws + lay.ord_off), reinterpret_cast<uint64_t*>(ws + lay.states_off),
          reinterpret_cast<uint64_t*>(ws + lay.hashes_off)};
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
    plan_decode(it, a.limit, a.verify, &p);
    w.plans[b] = p;  // read back below by the same thread
  }
  // Hash-area prefix of the frames that verify block checks.
  __syncthreads();
  uint64_t hash_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    const uint64_t checks = b < a.count ? w.plans[b].n_checks : 0;
    uint64_t tot = 0;
    const uint64_t ex = block_excl_scan64(checks, scratch, &tot);
    if (b < a.count) {
      DecPlan& p = w.plans[b];
      p.hash_off = hash_carry + ex;
      if (p.hash_off + checks > a.lay.hashes_bound) {
        p.status = static_cast<int32_t>(Status::invalid_argument);
        p.tiles = 0;
      }
    }
    hash_carry += tot;
  }
  __syncthreads();
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
  HashShared hash;
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
  // A tile of fp8 is half a checksum block, written by two CTAs: those
  // blocks are hashed by dec_hash_kernel after the main kernel instead.
  constexpr bool kHashInMain = (kTileElems * T::kBytes) % kChecksumBlockBytes == 0;
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
      if (kHashInMain && s.plan.n_checks > 0) {
        // The tile's output is complete and visible to this CTA: hash its
        // checksum blocks (tiles of 2- and 4-byte dtypes hold whole blocks).
        __syncthreads();
        const uint64_t bytes = s.plan.out_bytes;
        const uint64_t b0 = (local << kTileLog2) * T::kBytes;
        const uint64_t b1 = b0 + kTileElems * T::kBytes < bytes ? b0 + kTileElems * T::kBytes : bytes;
        cta_block_hashes(s.plan.dst, bytes, b0, b1, w.hashes + s.plan.hash_off, s.hash);
      }
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
    dec_finalize(w.plans[b], sizes + b, statuses + b);
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
        if (load_le32(checks + 4 * k) != static_cast<uint32_t>(hashes[k])) atomicMin(&first_bad, k);
      const uint64_t c = cta_xxh3_64(reinterpret_cast<const uint8_t*>(hashes), 8 * p.n_checks, hs);  // barrier
      bad = first_bad != kNoBlock || c != p.h.content_checksum;
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

Status enqueue_decode(const DecSetupArgs& a, uint64_t* d_sizes, Status* d_statuses, uint64_t* d_corrupt,
                      cudaStream_t stream) {
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
  if (a.verify) {
    // Grid from host arguments only (capturable): at most one CTA per
    // checksum block the workspace can hold, capped at the resident count.
    const uint64_t hash_grid = a.lay.hashes_bound < resident ? a.lay.hashes_bound : resident;
    dec_hash_kernel<<<static_cast<unsigned>(hash_grid > 0 ? hash_grid : 1), kThreads, 0, stream>>>(a.ws, a.lay);
    if ((s = launch_status()) != Status::ok) return s;
  }
  dec_finalize_kernel<<<1, kThreads, 0, stream>>>(a.ws, a.lay, d_sizes, d_statuses, d_corrupt);
  return launch_status();
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
