// SPDX-License-Identifier: Apache-2.0
// Encode: ONE cooperative kernel per call (enc_fused_kernel<T>), three
// phases separated by two grid-wide barriers:
//   setup    CTA 0 plans every buffer (prefixes of tiles, staging, hashes
//            and copy units); every CTA clears its share of the tile
//            states. A buffer with no tiles is finalized here.
//   main     persistent CTAs take tiles in increasing order from a ticket:
//            single read of the input, decoupled look-back, v2 block hashes
//            of the tile's checksum blocks. The CTA that finishes a
//            buffer's last outstanding tile (per-buffer done counter)
//            finalizes that buffer: frame checksum over its block hashes,
//            stored/coded decision, header, gaps, stream 7.
//   copy     escape exponents staging -> stream 6, or the input -> payload
//            of a stored frame, spread over all CTAs.
// Why a grid barrier at all: the workspace needs no initialisation (public
// contract), so the ticket and the tile states must be reset by this call
// before any CTA uses them; inside one launch that ordering needs every CTA
// resident, i.e. a cooperative launch (grid <= SMs x occupancy, which the
// persistent grid already is). The second barrier orders the stored copy
// after every coded write of the same buffer. Nothing returns to the host.
#include <cooperative_groups.h>
#include <type_traits>
#include <cuda_runtime.h>

#include "cuda/checksum.cuh"
#include "cuda/device_primitives.cuh"
#include "cuda/e4m3_logic.h"
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

struct EncMainShared {
  EncShared tile;
  HashShared hash;
  EncPlan plan;
  uint32_t scratch[kWarps + 1];
  uint64_t scratch64[kWarps + 1];
  uint64_t ticket;
  uint64_t buffer;
  uint64_t excl;
  uint64_t check_off;
  uint32_t last;
};

// Setup phase, CTA 0: plans every buffer, prefixes of tiles, staging, block
// hashes and copy units, clears the tallies and the ticket; finalizes the
// buffers without tiles (bad items, n = 0, stored without checksum).
// Not inlined (like enc_finalize_last): cold paths with their own register
// allocation, so their demand does not spill the tile loop's registers.
__device__ __noinline__ void enc_setup(const EncSetupArgs& a, const WsPtrs& w, uint64_t* sizes, Status* statuses,
                          uint64_t* scratch) {
  uint64_t tile_carry = 0, stage_carry = 0, hash_carry = 0, unit_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t b = base + threadIdx.x;
    EncPlan p{};
    uint64_t tiles = 0, stage = 0, checks = 0, units = 0;
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
      units = enc_units_bound(p);
    }
    uint64_t tot_tiles = 0, tot_stage = 0, tot_checks = 0, tot_units = 0;
    const uint64_t et = block_excl_scan64(tiles, scratch, &tot_tiles);
    const uint64_t es = block_excl_scan64(stage, scratch, &tot_stage);
    const uint64_t eh = block_excl_scan64(checks, scratch, &tot_checks);
    const uint64_t eu = block_excl_scan64(units, scratch, &tot_units);
    if (b < a.count) {
      p.tile_begin = tile_carry + et;
      p.stage_off = stage_carry + es;
      p.hash_off = hash_carry + eh;
      p.units_begin = unit_carry + eu;
      // Buffers past the workspace's sizing fail alone; their tile range
      // stays reserved (a hole the main phase skips).
      if (p.tile_begin + p.tiles > a.lay.tiles_bound || p.stage_off + stage > a.lay.stage_bytes ||
          p.hash_off + checks > a.lay.hashes_bound) {
        p.status = static_cast<int32_t>(Status::invalid_argument);
        p.tiles = 0;
      }
      w.plans[b] = p;
      EncTally t{};
      // No tiles: no block hashes (n = 0 when checksummed), so the frame
      // checksum is XXH3 of an empty hash array.
      if (p.tiles == 0)
        enc_finalize_buffer(p, t, dev::xxh3_64(reinterpret_cast<const uint8_t*>(w.hashes + p.hash_off), 8 * p.n_checks),
                            sizes + b, statuses + b);
      w.tally[b] = t;
    }
    tile_carry += tot_tiles;
    stage_carry += tot_stage;
    hash_carry += tot_checks;
    unit_carry += tot_units;
  }
  if (threadIdx.x == 0) {
    w.ctrl->ticket = 0;
    w.ctrl->total_tiles = tile_carry < a.lay.tiles_bound ? tile_carry : a.lay.tiles_bound;
    w.ctrl->total_units = unit_carry;
    w.ctrl->count = a.count;
  }
}

template <class T>
__device__ __forceinline__ void enc_tile(EncMainShared& s, const WsPtrs& w, uint64_t tile, uint64_t local) {
  const uint32_t t = threadIdx.x;
  const EncPlan& plan = s.plan;
  const uint64_t tile_first = local << kTileLog2;
  // enc_groups_in_flight<T>() groups' loads (4 x 16 B) in flight per thread
  // before any store.
  if constexpr (codec_of(T::kId, mode_of(Codec::e4m3)) == Codec::e4m3) {
SZ_NO_UNROLL
    for (uint32_t r = 0; r < kRounds; ++r) e4m3_enc_group(plan, tile_first, r * kThreads + t, s.tile);
  } else {
    constexpr uint32_t kInFlight = enc_groups_in_flight<T>();
SZ_NO_UNROLL
    for (uint32_t r = 0; r < kRounds; r += kInFlight) {
      EncIn<T> in[kInFlight];
SZ_UNROLL
      for (uint32_t k = 0; k < kInFlight; ++k) enc_load<T>(plan, tile_first, (r + k) * kThreads + t, in[k]);
SZ_UNROLL
      for (uint32_t k = 0; k < kInFlight; ++k) enc_transform<T>(plan, (r + k) * kThreads + t, in[k], s.tile);
    }
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
  if constexpr (codec_of(T::kId, mode_of(Codec::e4m3)) == Codec::e4m3) {  // no positions, no stream 4
SZ_NO_UNROLL
    for (uint32_t r = 0; r < kRounds; ++r) e4m3_enc_scatter(plan, r * kThreads + t, excl, s.tile, w.stage);
  } else {
SZ_NO_UNROLL
    for (uint32_t r = 0; r < kRounds; ++r) enc_scatter(plan, tile_first, r * kThreads + t, excl, s.tile, w.stage);
    enc_chunk_counts(plan, tile_first, t, s.tile);
  }
}

// The tile's checksum blocks (every block whose first byte is in the
// tile), while its input is still in L2. Not inlined: the hash loop's
// registers (a lane's 8 keys, 8 deltas) then do not add to the tile loop's.
__device__ __noinline__ void enc_tile_hashes(EncMainShared& s, const WsPtrs& w, uint64_t local, uint32_t elem_bytes) {
  const uint64_t bytes = s.plan.n * elem_bytes;
  const uint64_t b0 = (local << kTileLog2) * elem_bytes;
  const uint64_t b1 = b0 + kTileElems * elem_bytes < bytes ? b0 + kTileElems * elem_bytes : bytes;
  cta_block_hashes(s.plan.src, bytes, b0, b1, w.hashes + s.plan.hash_off, s.hash);
}

// The buffer's last tile is done (every other tile's writes, E and block
// hashes visible after the fence / count / fence sequence): frame checksum,
// decision, header, gaps, stream 7. Whole CTA; once per buffer.
__device__ __noinline__ void enc_finalize_last(EncMainShared& s, const WsPtrs& w, uint64_t* sizes,
                                               Status* statuses) {
  __threadfence();
  const EncPlan& p = s.plan;
  const uint64_t b = s.buffer;
  uint64_t checksum = 0;
  if (p.flags & kPlanChecksum)
    checksum = cta_xxh3_64(reinterpret_cast<const uint8_t*>(w.hashes + p.hash_off), 8 * p.n_checks, s.hash);
  if (threadIdx.x == 0) {
    EncTally t = w.tally[b];
    enc_finalize_buffer(p, t, checksum, sizes + b, statuses + b);
    w.tally[b] = t;
    s.check_off = statuses[b] == Status::ok ? t.check_off : kNoBlock;  // kNoBlock: no frame, no stream 7
  }
  __syncthreads();
  // Stream 7: the low 32 bits of each block hash.
  if ((p.flags & kPlanChecksum) && s.check_off != kNoBlock)
    for (uint64_t k = threadIdx.x; k < p.n_checks; k += kThreads)
      write_block_checks(p.dst + s.check_off + 4 * k, w.hashes + p.hash_off + k, 1);
}

// The tile is done: count it; the CTA completing the buffer finalizes it
// (every other tile's writes, E and block hashes are visible after the
// fence / atomic / fence sequence). Whole CTA.
__device__ __forceinline__ void enc_tile_done(EncMainShared& s, const WsPtrs& w, uint64_t* sizes,
                                              Status* statuses) {
  __threadfence();  // this thread's writes of the tile, device-visible before the count
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long old =
        atomicAdd(reinterpret_cast<unsigned long long*>(&w.tally[s.buffer].done), 1ull);
    s.last = old + 1 == s.plan.tiles ? 1u : 0u;
  }
  __syncthreads();
  if (s.last) enc_finalize_last(s, w, sizes, statuses);
}

// Copy phase: copy units over all CTAs (reserved per buffer by the setup
// phase for the largest copy; units past the buffer's actual copy skip).
__device__ __noinline__ void enc_copy(const WsPtrs& w) {
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
    const EncTally& t = w.tally[lo - 1];
    const uint64_t unit = u - p.units_begin;
    if (t.copy_kind == kCopyNone || unit * kCopyUnitBytes >= t.copy_bytes) continue;  // uniform per CTA
    const uint8_t* from;
    uint8_t* to;
    enc_copy_ends(p, t, w.stage, &from, &to);
    enc_copy_any(t, from, to, unit, threadIdx.x, kThreads);
  }
}

// One instantiation per dtype (a batch has one dtype) keeps registers per
// dtype. Launched cooperatively (grid.sync), grid <= resident CTAs.
template <class T>
__global__ void __launch_bounds__(kThreads, 4)
    enc_fused_kernel(EncSetupArgs a, uint64_t* sizes, Status* statuses) {
  __shared__ __align__(16) EncMainShared s;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const WsPtrs w = ws_ptrs(a.ws, a.lay);
  // ---- setup
  if (blockIdx.x == 0) enc_setup(a, w, sizes, statuses, s.scratch64);
  for (uint64_t i = uint64_t{blockIdx.x} * kThreads + threadIdx.x; i < a.lay.tiles_bound;
       i += uint64_t{gridDim.x} * kThreads)
    w.states[i] = 0;
  grid.sync();
  // ---- main: tiles in ticket order, each buffer finalized by its last CTA
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
      enc_build_tables(s.plan, threadIdx.x, s.tile);
    }
    __syncthreads();
    const uint64_t local = tile - s.plan.tile_begin;
    if (local < s.plan.tiles) {
      if (s.plan.flags & kPlanDense) enc_tile<T>(s, w, tile, local);
      if (s.plan.flags & kPlanChecksum) {
        __syncthreads();
        enc_tile_hashes(s, w, local, T::kBytes);
      }
      enc_tile_done(s, w, sizes, statuses);
    }
    __syncthreads();
  }
  grid.sync();
  // ---- copy
  enc_copy(w);
}

}  // namespace

Status encode_launches(const DeviceInfo& info, const EncSetupArgs& a, uint64_t elems_bound, EncodeLaunches* out) {
  if (info.sms <= 0 || info.enc_ctas_per_sm <= 0 || !info.cooperative) return Status::backend_unavailable;
  const uint32_t bytes = geometry_of(a.dtype).bytes;
  if (bytes == 0 || a.count == 0 || a.count > kMaxBatchCount || elems_bound > kMaxElems) return Status::invalid_argument;
  // Cooperative: every CTA resident at once, so at most SMs x occupancy.
  const uint64_t resident = static_cast<uint64_t>(info.sms) * static_cast<uint64_t>(info.enc_ctas_per_sm);
  const uint64_t grid = a.lay.tiles_bound < resident ? a.lay.tiles_bound : resident;
  out->fused = {static_cast<uint32_t>(grid > 0 ? grid : 1), kThreads};
  return Status::ok;
}

Status enqueue_encode(const EncSetupArgs& a, uint64_t elems_bound, uint64_t* d_sizes,
                      Status* d_statuses, cudaStream_t stream) {
  // Everything that can fail on the host is checked before the launch
  // (device, cooperative support, occupancy, grid shape); a sticky error
  // left by earlier work is reported without enqueuing anything.
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  EncodeLaunches L;
  if ((s = encode_launches(info, a, elems_bound, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  EncSetupArgs args = a;
  void* params[] = {&args, &d_sizes, &d_statuses};
  const void* k = nullptr;  // encode_launches() refused an invalid dtype
  visit_dtype(a.dtype, [&](auto t) { k = reinterpret_cast<const void*>(enc_fused_kernel<decltype(t)>); });
  if (k == nullptr) return Status::invalid_argument;
  const cudaError_t e = cudaLaunchCooperativeKernel(k, dim3(L.fused.grid), dim3(L.fused.block), params, 0, stream);
  // The shape was validated above, so the launch fails only when the
  // context itself broke (device fault, driver gone).
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::device_error;
  }
  return launch_status();
}

// Resident CTAs per SM of the fused kernel (the smallest over dtypes): the
// cooperative grid's bound.
int enc_main_occupancy() {
  int best = 0;
  for (uint32_t id = 1; id <= kDtypeCount; ++id) {
    const void* k = nullptr;
    visit_dtype(id, [&](auto t) { k = reinterpret_cast<const void*>(enc_fused_kernel<decltype(t)>); });
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
