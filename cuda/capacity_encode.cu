// SPDX-License-Identifier: Apache-2.0
// Capacity-mode encode (FORMAT.md 4.6) of one buffer or a batch: setup ->
// count -> plan -> write; a CTA per exponent block (of all buffers,
// grid-stride) in the count and write kernels, per buffer in plan. Design
// and per-thread steps: cuda/capacity_logic.h.
#include <cuda_runtime.h>

// device_primitives.cuh first: it names ::cuda (libcu++) before splitzip::cuda exists.
#include "cuda/checksum.cuh"
#include "cuda/device_primitives.cuh"
#include "cuda/capacity_launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

struct CapWs {
  CapTotals* totals;
  CapEncCtl* ctl;
  uint64_t* begins;
  CapBlockRec* recs;
  uint64_t* hashes;
};
__device__ __forceinline__ CapWs cap_ws(const CapEncArgs& a) {
  return {reinterpret_cast<CapTotals*>(a.ws), reinterpret_cast<CapEncCtl*>(a.ws + a.lay.ctl_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.begins_off), reinterpret_cast<CapBlockRec*>(a.ws + a.lay.recs_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off)};
}

__device__ __forceinline__ CapEncItem cap_item(const CapEncArgs& a, uint64_t i) {
  if (a.items == nullptr) return {a.src, a.dst, a.n, a.capacity};
  const cuda::CompressItem ci = static_cast<const cuda::CompressItem*>(a.items)[i];
  return {static_cast<const uint8_t*>(ci.src), static_cast<uint8_t*>(ci.dst), ci.n_elems, ci.dst_capacity};
}

// One CTA: every buffer's checks and its place among the exponent blocks
// and block hashes of all (prefix sums, a round of kThreads buffers at a time).
__global__ void __launch_bounds__(kThreads) cap_setup_kernel(CapEncArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const CapWs w = cap_ws(a);
  uint64_t block_carry = 0, hash_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t i = base + threadIdx.x;
    CapEncCtl c{};
    uint64_t nb = 0;
    if (i < a.count) cap_enc_item(cap_item(a, i), a.dtype, a.checksum != 0, &c, &nb);
    uint64_t tb = 0, th = 0;
    const uint64_t eb = block_excl_scan64(nb, scratch, &tb);
    const uint64_t eh = block_excl_scan64(c.n_checks, scratch, &th);
    if (i < a.count) {
      cap_enc_place(&c, block_carry + eb, hash_carry + eh, nb, a.lay);
      w.ctl[i] = c;
      w.begins[i] = c.block_begin;
    }
    block_carry += tb;
    hash_carry += th;
  }
  // The set's codes (FORMAT.md 4.9), a thread per table: read by the write
  // kernel, after this one in stream order.
  if (a.set != nullptr && threadIdx.x < a.set->tables.count) cap_set_codes(a.set, threadIdx.x);
  if (threadIdx.x == 0) {
    // Blocks past the bound belong to failed buffers only.
    w.totals->blocks = block_carry < a.lay.blocks_bound ? block_carry : a.lay.blocks_bound;
    w.totals->checks = hash_carry < a.lay.hashes_bound ? hash_carry : a.lay.hashes_bound;
  }
}

// The buffer of global block g, its plan cached in shared memory (CTAs walk
// blocks in ascending order, so the owner changes rarely). All threads.
__device__ __forceinline__ void cap_load_owner(const CapWs& w, uint64_t count, uint64_t g, uint64_t* cached,
                                               CapEncCtl* ctl) {
  __syncthreads();  // every thread is done with the previous owner
  if (threadIdx.x == 0) {
    const uint64_t i = cap_owner(w.begins, count, g);
    if (i != *cached) {
      *cached = i;
      *ctl = w.ctl[i];
    }
  }
  __syncthreads();
}

struct CountShared {
  uint32_t counts[256];
  uint32_t bits[kCapStreams];
  uint32_t misfit;  // with a set: some symbol lacks a code in its stream's table
  CapTable table;
  CapMergeScratch merge;  // package-merge work arrays: shared, not local memory
  HashShared hash;
  CapEncCtl ctl;
  uint64_t owner;
};

// Histogram, code lengths, stream sizes and the block's checksum blocks;
// grid-stride over the exponent blocks of all buffers.
template <class T>
__global__ void __launch_bounds__(kCapEncThreads) cap_count_kernel(CapEncArgs a) {
  __shared__ __align__(16) CountShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  const uint64_t total = w.totals->blocks;
  if (t == 0) sh.owner = ~uint64_t{0};
  for (uint64_t g = blockIdx.x; g < total; g += gridDim.x) {
    cap_load_owner(w, a.count, g, &sh.owner, &sh.ctl);
    if (sh.ctl.status != static_cast<int32_t>(Status::ok)) continue;  // a hole (uniform)
    const uint64_t b = g - sh.ctl.block_begin;
    const uint64_t n = sh.ctl.n;
    const uint32_t m = static_cast<uint32_t>(cap_block_len(n, b));
    const uint8_t* bsrc = sh.ctl.src + (b << kCapBlockLog2) * T::kBytes;
    for (uint32_t e = t; e < 256; e += kCapEncThreads) sh.counts[e] = 0;
    if (t < kCapStreams) sh.bits[t] = 0;
    if (t == 0) sh.misfit = 0;
    __syncthreads();
    bool shared_kind = false;
    if (a.set != nullptr) {  // FORMAT.md 4.9: the set's codes where every symbol has one (no histogram)
      uint32_t misfit = 0;
      const uint32_t bits = cap_set_bits_part<T>(bsrc, m, a.set->tables, t, &misfit);
      atomicAdd(&sh.bits[t % kCapStreams], bits);
      if (misfit) atomicOr(&sh.misfit, 1u);
      __syncthreads();
      shared_kind = sh.misfit == 0;  // uniform
      if (shared_kind) {
        if (t == 0) cap_finish_shared_rec(w.recs[g], sh.bits);
      } else if (t < kCapStreams) {
        sh.bits[t] = 0;
      }
      __syncthreads();
    }
    if (!shared_kind) {  // the block's own table
      for (uint32_t j = t; j < m; j += kCapEncThreads) atomicAdd(&sh.counts[cap_exp<T>(bsrc, j)], 1u);
      __syncthreads();
      if (t == 0) cap_code_lengths(sh.counts, &sh.table, &sh.merge);  // the one rule (core/capacity/format.h)
      __syncthreads();
      if (sh.table.symbols > 1) atomicAdd(&sh.bits[t % kCapStreams], cap_stream_bits_part<T>(bsrc, m, sh.table.len, t));
      __syncthreads();
      if (t == 0) cap_finish_rec(w.recs[g], sh.table, sh.bits, a.set != nullptr ? kCapKindOwn : kCapNoKind);
    }
    if (a.checksum) {
      const uint64_t bytes = n * T::kBytes;
      const uint64_t b0 = (b << kCapBlockLog2) * T::kBytes;
      cta_block_hashes(sh.ctl.src, bytes, b0, b0 + uint64_t{m} * T::kBytes, w.hashes + sh.ctl.hash_begin, sh.hash);
    }
  }
}

struct PlanShared {
  uint64_t scratch[kWarps + 1];
  FrameHeader h;
  CapEncCtl ctl;
  HashShared hash;
};

// CTA per buffer (grid-stride): offsets, decision, frame checksum, header,
// index, stream 7, gaps; the buffer's size and status.
__global__ void __launch_bounds__(kThreads) cap_plan_kernel(CapEncArgs a, uint64_t* d_sizes, Status* d_statuses) {
  __shared__ __align__(16) PlanShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  for (uint64_t i = blockIdx.x; i < a.count; i += gridDim.x) {
    __syncthreads();  // done with the previous buffer's shared state
    if (t == 0) sh.ctl = w.ctl[i];
    __syncthreads();
    if (sh.ctl.status == static_cast<int32_t>(Status::ok)) {
      const uint64_t nb = cap_blocks(sh.ctl.n);
      CapBlockRec* recs = w.recs + sh.ctl.block_begin;
      uint64_t carry = 0;
      for (uint64_t base = 0; base < nb; base += kThreads) {
        const uint64_t b = base + t;
        uint64_t total = 0;
        const uint64_t ex = block_excl_scan64(b < nb ? recs[b].size : 0, sh.scratch, &total);
        if (b < nb) recs[b].off = carry + ex;
        carry += total;
      }
      if (t == 0) {
        cap_decide(a, carry, &sh.ctl, &sh.h);
        w.ctl[i] = sh.ctl;
      }
      __syncthreads();
    }
    if (sh.ctl.status != static_cast<int32_t>(Status::ok)) {
      if (t == 0) {
        d_statuses[i] = static_cast<Status>(sh.ctl.status);
        d_sizes[i] = 0;
      }
      continue;  // uniform
    }
    uint8_t* dst = sh.ctl.dst;
    const uint64_t n_checks = sh.ctl.n_checks;
    const uint64_t* hashes = w.hashes + sh.ctl.hash_begin;
    const uint64_t c = a.checksum ? cta_xxh3_64(reinterpret_cast<const uint8_t*>(hashes), 8 * n_checks, sh.hash) : 0;
    const uint64_t check_off = check_off_of(sh.h);
    for (uint64_t k = t; k < n_checks; k += kThreads) write_block_checks(dst + check_off + 4 * k, hashes + k, 1);
    if (!sh.ctl.stored) {
      const CapBlockRec* recs = w.recs + sh.ctl.block_begin;
      for (uint64_t b = t; b < sh.ctl.L.n_blocks; b += kThreads)
        write_cap_index_entry(dst, sh.ctl.L, b, recs[b].size);
    }
    if (t == 0) {
      FrameHeader h = sh.h;
      h.content_checksum = c;
      Gap gaps[7];
      zero_ranges(dst, gaps, frame_gaps(h, gaps));
      write_header(h, dst);
      d_sizes[i] = h.frame_size;
      d_statuses[i] = Status::ok;
    }
  }
}

struct WriteShared {
  CapBlockRec rec;
  CapTable tab;  // shared, not a thread's local memory
  uint16_t code[256];
  uint32_t words[kCapEncWarps][kCapStreamWords];
  CapEncCtl ctl;
  uint64_t owner;
};

// Residual streams, table, stream sizes and the 32 streams (one warp per
// stream at a time), or the block's bytes of a stored frame; grid-stride
// over the exponent blocks of all buffers.
template <class T>
__global__ void __launch_bounds__(kCapEncThreads) cap_write_kernel(CapEncArgs a) {
  __shared__ __align__(16) WriteShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x, lane = t & 31u, warp = t >> 5;
  const uint64_t total = w.totals->blocks;
  if (t == 0) sh.owner = ~uint64_t{0};
  for (uint64_t g = blockIdx.x; g < total; g += gridDim.x) {
    cap_load_owner(w, a.count, g, &sh.owner, &sh.ctl);
    if (sh.ctl.status != static_cast<int32_t>(Status::ok)) continue;  // failed buffer or hole (uniform)
    const uint64_t b = g - sh.ctl.block_begin;
    const uint64_t n = sh.ctl.n;
    const uint8_t* src = sh.ctl.src;
    uint8_t* dst = sh.ctl.dst;
    const uint32_t m = static_cast<uint32_t>(cap_block_len(n, b));
    const uint64_t first = b << kCapBlockLog2;
    if (sh.ctl.stored) {
      const uint64_t begin = first * T::kBytes, end = begin + uint64_t{m} * T::kBytes;
      for (uint64_t i = begin + t; i < end; i += kCapEncThreads) dst[64 + i] = src[i];
      continue;
    }
    const CapLayout& L = sh.ctl.L;
    for (uint64_t q = first / 8 + t; q < (first + m + 7) / 8; q += kCapEncThreads)
      cap_write_residual_group<T>(src, n, q, L, dst);
    if (t == 0) sh.rec = w.recs[g];
    __syncthreads();
    uint8_t* blk = dst + L.blk_off + sh.rec.off;
    const uint32_t kind = sh.rec.kind;
    const bool shared_kind = kind == kCapKindShared;
    if (kind != kCapNoKind) {  // FORMAT.md 4.9: the kind byte first
      if (t == 0) blk[0] = static_cast<uint8_t>(kind);
      ++blk;
    }
    if (t == 0) {
      if (shared_kind) {
        for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + 2 * s, sh.rec.stream_bytes[s]);
      } else {
        sh.tab = cap_table_of(sh.rec);
        write_cap_block_header(sh.tab, sh.rec.stream_bytes, blk);
        if (sh.tab.symbols > 1) cap_codes(sh.tab, sh.code);  // the one rule (core/capacity/format.h)
      }
    }
    __syncthreads();
    if (shared_kind || sh.rec.symbols > 1) {
      const uint8_t* bsrc = src + first * T::kBytes;
      uint32_t* words = sh.words[warp];
      for (uint32_t s = warp; s < kCapStreams; s += kCapEncWarps) {
        const uint64_t off = cap_stream_offset(sh.rec.table_bytes, sh.rec.stream_bytes, s);
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
            if (shared_kind) {  // table s mod T of the set
              const uint32_t x = a.set->cl[cap_table_of_stream(a.set->tables, s)][e];
              len = x >> 16;
              code = x & 0xFFFFu;
            } else {
              len = sh.rec.len[e];
              code = sh.code[e];
            }
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
  if (codec_of(a.dtype, mode_of(Codec::capacity)) != Codec::capacity || a.n > kMaxElems || a.count == 0 ||
      a.count > kMaxBatchCount || a.count != a.lay.count)
    return Status::invalid_argument;
  const uint32_t g = grid_for(info, a.lay.blocks_bound);
  const uint64_t per = static_cast<uint64_t>(info.sms) * 4u;
  out->setup = {1, kThreads};
  out->count = {g, kCapEncThreads};
  out->plan = {static_cast<uint32_t>(a.count < per ? a.count : per), kThreads};
  out->write = {g, kCapEncThreads};
  return Status::ok;
}

Status enqueue_capacity_encode(const CapEncArgs& a, uint64_t* d_sizes, Status* d_statuses, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  CapEncodeLaunches L;
  if ((s = cap_encode_launches(info, a, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  cap_setup_kernel<<<L.setup.grid, L.setup.block, 0, stream>>>(a);
  // cap_encode_launches() refused a dtype the capacity codec does not take.
  visit_codec_dtype<Codec::capacity>(a.dtype, [&](auto t) {
    using T = decltype(t);
    cap_count_kernel<T><<<L.count.grid, L.count.block, 0, stream>>>(a);
    cap_plan_kernel<<<L.plan.grid, L.plan.block, 0, stream>>>(a, d_sizes, d_statuses);
    cap_write_kernel<T><<<L.write.grid, L.write.block, 0, stream>>>(a);
  });
  return launch_status();
}

}  // namespace cuda_detail
}  // namespace splitzip
