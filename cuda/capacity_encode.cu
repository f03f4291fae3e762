// SPDX-License-Identifier: Apache-2.0
// Capacity-mode encode (FORMAT.md 4.6): count -> plan -> write, one CTA per
// exponent block in the count and write kernels (grid-stride). Design and
// per-thread steps: cuda/capacity_logic.h.
#include <cuda_runtime.h>

// device_primitives.cuh first: it names ::cuda (libcu++) before splitzip::cuda exists.
#include "cuda/checksum.cuh"
#include "cuda/device_primitives.cuh"
#include "cuda/capacity_launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

struct CapWs {
  CapEncCtl* ctl;
  CapBlockRec* recs;
  uint64_t* hashes;
};
__device__ __forceinline__ CapWs cap_ws(const CapEncArgs& a) {
  return {reinterpret_cast<CapEncCtl*>(a.ws), reinterpret_cast<CapBlockRec*>(a.ws + a.lay.recs_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off)};
}

struct CountShared {
  uint32_t counts[256];
  uint32_t bits[kCapStreams];
  CapTable table;
  CapMergeScratch merge;  // package-merge work arrays: shared, not local memory
  HashShared hash;
};

// Histogram, code lengths, stream sizes and the block's checksum blocks.
template <class T>
__global__ void __launch_bounds__(kCapEncThreads) cap_count_kernel(CapEncArgs a) {
  __shared__ __align__(16) CountShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  const uint64_t nb = cap_blocks(a.n);
  for (uint64_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const uint32_t m = static_cast<uint32_t>(cap_block_len(a.n, b));
    const uint8_t* bsrc = a.src + (b << kCapBlockLog2) * T::kBytes;
    for (uint32_t e = t; e < 256; e += kCapEncThreads) sh.counts[e] = 0;
    if (t < kCapStreams) sh.bits[t] = 0;
    __syncthreads();
    for (uint32_t j = t; j < m; j += kCapEncThreads) atomicAdd(&sh.counts[cap_exp<T>(bsrc, j)], 1u);
    __syncthreads();
    if (t == 0) cap_code_lengths(sh.counts, &sh.table, &sh.merge);  // the one rule (core/capacity/format.h)
    __syncthreads();
    if (sh.table.symbols > 1) atomicAdd(&sh.bits[t % kCapStreams], cap_stream_bits_part<T>(bsrc, m, sh.table.len, t));
    __syncthreads();
    if (t == 0) cap_finish_rec(w.recs[b], sh.table, sh.bits);
    if (a.checksum) {
      const uint64_t bytes = a.n * T::kBytes;
      const uint64_t b0 = (b << kCapBlockLog2) * T::kBytes;
      cta_block_hashes(a.src, bytes, b0, b0 + uint64_t{m} * T::kBytes, w.hashes, sh.hash);
    }
    __syncthreads();
  }
}

struct PlanShared {
  uint64_t scratch[kWarps + 1];
  FrameHeader h;
  CapEncCtl ctl;
  HashShared hash;
};

// Offsets, decision, frame checksum, header, index, stream 7, gaps.
__global__ void __launch_bounds__(kThreads) cap_plan_kernel(CapEncArgs a, uint64_t* d_size, Status* d_status) {
  __shared__ __align__(16) PlanShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  const uint64_t nb = cap_blocks(a.n);
  const uint64_t n_checks = a.lay.hashes_bound;
  uint64_t carry = 0;
  for (uint64_t base = 0; base < nb; base += kThreads) {
    const uint64_t b = base + t;
    uint64_t total = 0;
    const uint64_t ex = block_excl_scan64(b < nb ? w.recs[b].size : 0, sh.scratch, &total);
    if (b < nb) w.recs[b].off = carry + ex;
    carry += total;
  }
  if (t == 0) {
    cap_decide(a, n_checks, carry, &sh.ctl, &sh.h);
    *w.ctl = sh.ctl;
  }
  __syncthreads();
  if (sh.ctl.status != static_cast<int32_t>(Status::ok)) {
    if (t == 0) {
      *d_status = static_cast<Status>(sh.ctl.status);
      *d_size = 0;
    }
    return;
  }
  const uint64_t c = a.checksum ? cta_xxh3_64(reinterpret_cast<const uint8_t*>(w.hashes), 8 * n_checks, sh.hash) : 0;
  const uint64_t check_off = check_off_of(sh.h);
  for (uint64_t k = t; k < n_checks; k += kThreads) write_block_checks(a.dst + check_off + 4 * k, w.hashes + k, 1);
  if (!sh.ctl.stored)
    for (uint64_t b = t; b < nb; b += kThreads) store_le32(a.dst + sh.ctl.L.index_off + 4 * b, static_cast<uint32_t>(w.recs[b].size));
  if (t == 0) {
    FrameHeader h = sh.h;
    h.content_checksum = c;
    Gap gaps[7];
    zero_ranges(a.dst, gaps, frame_gaps(h, gaps));
    write_header(h, a.dst);
    *d_size = h.frame_size;
    *d_status = Status::ok;
  }
}

struct WriteShared {
  CapBlockRec rec;
  CapTable tab;  // shared, not a thread's local memory
  uint16_t code[256];
  uint32_t words[kCapEncWarps][kCapStreamWords];
  CapEncCtl ctl;
};

// Residual streams, table, stream sizes and the 32 streams (one warp per
// stream at a time), or the block's bytes of a stored frame.
template <class T>
__global__ void __launch_bounds__(kCapEncThreads) cap_write_kernel(CapEncArgs a) {
  __shared__ __align__(16) WriteShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x, lane = t & 31u, warp = t >> 5;
  if (t == 0) sh.ctl = *w.ctl;
  __syncthreads();
  if (sh.ctl.status != static_cast<int32_t>(Status::ok)) return;
  const uint64_t nb = cap_blocks(a.n);
  for (uint64_t b = blockIdx.x; b < nb; b += gridDim.x) {
    const uint32_t m = static_cast<uint32_t>(cap_block_len(a.n, b));
    const uint64_t first = b << kCapBlockLog2;
    if (sh.ctl.stored) {
      const uint64_t begin = first * T::kBytes, end = begin + uint64_t{m} * T::kBytes;
      for (uint64_t i = begin + t; i < end; i += kCapEncThreads) a.dst[64 + i] = a.src[i];
      continue;
    }
    const CapLayout& L = sh.ctl.L;
    for (uint64_t g = first / 8 + t; g < (first + m + 7) / 8; g += kCapEncThreads)
      cap_write_residual_group<T>(a.src, a.n, g, L, a.dst);
    if (t == 0) sh.rec = w.recs[b];
    __syncthreads();
    uint8_t* blk = a.dst + L.blk_off + sh.rec.off;
    if (t == 0) {
      sh.tab = cap_table_of(sh.rec);
      write_cap_table(sh.tab, blk);
      if (sh.tab.symbols > 1) {
        cap_codes(sh.tab, sh.code);  // the one rule (core/capacity/format.h)
        for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + sh.tab.bytes + 2 * s, sh.rec.stream_bytes[s]);
      }
    }
    __syncthreads();
    if (sh.rec.symbols > 1) {
      const uint8_t* bsrc = a.src + first * T::kBytes;
      uint32_t* words = sh.words[warp];
      for (uint32_t s = warp; s < kCapStreams; s += kCapEncWarps) {
        uint64_t off = sh.rec.table_bytes + 2 * kCapStreams;
        for (uint32_t k = 0; k < s; ++k) off += sh.rec.stream_bytes[k];
        const uint32_t z = sh.rec.stream_bytes[s];
        for (uint32_t k = lane; k < (z + 3) / 4 + 1 && k < kCapStreamWords; k += 32) words[k] = 0;
        __syncwarp();
        const uint32_t cnt = cap_stream_len(m, s);
        uint32_t base = 0;
        for (uint32_t c0 = 0; c0 < cnt; c0 += 32) {
          const uint32_t c = c0 + lane;
          uint32_t len = 0, code = 0;
          if (c < cnt) {
            const uint32_t e = cap_exp<T>(bsrc, s + kCapStreams * c);
            len = sh.rec.len[e];
            code = sh.code[e];
          }
          uint32_t incl = len;
SZ_UNROLL
          for (uint32_t d = 1; d < 32; d <<= 1) {
            const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, incl, d);
            if (lane >= d) incl += y;
          }
          if (len) {
            uint32_t wi, v0, v1;
            cap_code_words(base + incl - len, code, len, &wi, &v0, &v1);
            atomicOr(&words[wi], v0);
            if (v1) atomicOr(&words[wi + 1], v1);
          }
          base += __shfl_sync(0xFFFFFFFFu, incl, 31);
        }
        __syncwarp();
        for (uint32_t k = lane; k < z; k += 32) blk[off + k] = cap_word_byte(words, k);
        __syncwarp();
      }
    }
    __syncthreads();
  }
}

uint32_t grid_for(const DeviceInfo& info, uint64_t blocks) {
  const uint64_t cap = static_cast<uint64_t>(info.sms) * 8u;
  const uint64_t g = blocks < cap ? blocks : cap;
  return static_cast<uint32_t>(g > 0 ? g : 1);
}

}  // namespace

Status cap_encode_launches(const DeviceInfo& info, const CapEncArgs& a, CapEncodeLaunches* out) {
  if (info.sms <= 0) return Status::backend_unavailable;
  if (geometry_of(a.dtype).bytes == 0 || a.dtype == kDtypeE4M3 || a.n > kMaxElems) return Status::invalid_argument;
  const uint32_t g = grid_for(info, a.lay.blocks_bound);
  out->count = {g, kCapEncThreads};
  out->plan = {1, kThreads};
  out->write = {g, kCapEncThreads};
  return Status::ok;
}

Status enqueue_capacity_encode(const CapEncArgs& a, uint64_t* d_size, Status* d_status, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  CapEncodeLaunches L;
  if ((s = cap_encode_launches(info, a, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  switch (a.dtype) {
    case 1: cap_count_kernel<Bf16Traits><<<L.count.grid, L.count.block, 0, stream>>>(a); break;
    case 2: cap_count_kernel<Fp16Traits><<<L.count.grid, L.count.block, 0, stream>>>(a); break;
    case 3: cap_count_kernel<Fp32Traits><<<L.count.grid, L.count.block, 0, stream>>>(a); break;
    default: cap_count_kernel<Fp8E5M2Traits><<<L.count.grid, L.count.block, 0, stream>>>(a); break;
  }
  cap_plan_kernel<<<L.plan.grid, L.plan.block, 0, stream>>>(a, d_size, d_status);
  switch (a.dtype) {
    case 1: cap_write_kernel<Bf16Traits><<<L.write.grid, L.write.block, 0, stream>>>(a); break;
    case 2: cap_write_kernel<Fp16Traits><<<L.write.grid, L.write.block, 0, stream>>>(a); break;
    case 3: cap_write_kernel<Fp32Traits><<<L.write.grid, L.write.block, 0, stream>>>(a); break;
    default: cap_write_kernel<Fp8E5M2Traits><<<L.write.grid, L.write.block, 0, stream>>>(a); break;
  }
  return launch_status();
}

}  // namespace cuda_detail
}  // namespace splitzip
