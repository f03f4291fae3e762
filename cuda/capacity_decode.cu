// SPDX-License-Identifier: Apache-2.0
// Capacity-mode decode (FORMAT.md 4.6.4-4.6.5) of one frame or a batch:
// setup -> index -> blocks (one warp per exponent block of all frames, lane s
// decodes stream s) -> [block hashes] -> final (CTA per frame).
// Design and per-thread steps: cuda/capacity_logic.h.
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
  CapDecCtl* ctl;
  uint64_t* begins;
  uint64_t* hash_begins;
  uint64_t* offs;
  uint64_t* hashes;
};
__device__ __forceinline__ CapWs cap_ws(const CapDecArgs& a) {
  return {reinterpret_cast<CapTotals*>(a.ws), reinterpret_cast<CapDecCtl*>(a.ws + a.lay.ctl_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.begins_off), reinterpret_cast<uint64_t*>(a.ws + a.lay.hash_begins_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.recs_off), reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off)};
}

__device__ __forceinline__ CapDecItem cap_item(const CapDecArgs& a, uint64_t i) {
  if (a.items == nullptr) return {a.src, a.src_size, a.dst, a.dst == nullptr ? 0 : a.dst_capacity};
  const cuda::DecompressItem di = static_cast<const cuda::DecompressItem*>(a.items)[i];
  return {static_cast<const uint8_t*>(di.src), di.src_size, static_cast<uint8_t*>(di.dst),
          di.dst == nullptr ? 0 : di.dst_capacity};
}

// One CTA, a thread per frame: rules 1-14 and check a, then each frame's
// place among the block offsets and hashes of all (prefix sums).
__global__ void __launch_bounds__(kThreads) cap_dec_setup_kernel(CapDecArgs a) {
  __shared__ uint64_t scratch[kWarps + 1];
  const CapWs w = cap_ws(a);
  uint64_t block_carry = 0, hash_carry = 0;
  for (uint64_t base = 0; base < a.count; base += kThreads) {
    const uint64_t i = base + threadIdx.x;
    CapDecCtl c{};
    uint64_t nb = 0, nc = 0;
    if (i < a.count)
      cap_dec_plan(cap_item(a, i), a.limit, a.verify != 0, a.set != nullptr ? &a.set->tables : nullptr, &c, &nb, &nc);
    uint64_t tb = 0, th = 0;
    const uint64_t eb = block_excl_scan64(nb, scratch, &tb);
    const uint64_t eh = block_excl_scan64(nc, scratch, &th);
    if (i < a.count) {
      cap_dec_place(&c, block_carry + eb, hash_carry + eh, nb, a.lay);
      w.ctl[i] = c;
      w.begins[i] = c.block_begin;
      w.hash_begins[i] = c.hash_begin;
    }
    block_carry += tb;
    hash_carry += th;
  }
  // The set's decode tables (FORMAT.md 4.9), a thread per table: read by
  // the blocks kernel, after this one in stream order.
  if (a.set != nullptr && threadIdx.x < a.set->tables.count) cap_set_lut(a.set, threadIdx.x);
  if (threadIdx.x == 0) {
    w.totals->blocks = block_carry < a.lay.blocks_bound ? block_carry : a.lay.blocks_bound;
    w.totals->checks = hash_carry < a.lay.hashes_bound ? hash_carry : a.lay.hashes_bound;
  }
}

struct IndexShared {
  uint64_t scratch[kWarps + 1];
  CapDecCtl ctl;
};

// CTA per frame (grid-stride): the block offsets from the index, check b.
__global__ void __launch_bounds__(kThreads) cap_dec_index_kernel(CapDecArgs a) {
  __shared__ __align__(16) IndexShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  for (uint64_t i = blockIdx.x; i < a.count; i += gridDim.x) {
    __syncthreads();
    if (t == 0) sh.ctl = w.ctl[i];
    __syncthreads();
    if (sh.ctl.status != static_cast<int32_t>(Status::ok)) continue;  // uniform
    const uint64_t nb = sh.ctl.L.n_blocks;
    uint64_t* offs = w.offs + sh.ctl.block_begin;
    uint64_t carry = 0;
    for (uint64_t base = 0; base < nb; base += kThreads) {
      const uint64_t b = base + t;
      uint64_t total = 0;
      const uint64_t ex = block_excl_scan64(b < nb ? cap_index_entry(sh.ctl.src, sh.ctl.L, b) : 0, sh.scratch, &total);
      if (b < nb) offs[b] = carry + ex;
      carry += total;
    }
    if (t == 0 && carry != sh.ctl.L.blk_size) w.ctl[i].status = static_cast<int32_t>(Status::bad_code);  // check b
  }
}

struct BlockShared {
  CapDecCtl ctl;
  uint64_t owner;
  CapTable table;
  uint16_t code[256];
  uint16_t lut[kCapTableSize];
  int32_t head;     // checks c-e of the current block
  uint32_t body;    // its own bytes' start: 1 after a kind byte (FORMAT.md 4.9)
  uint32_t shared;  // a kind-1 block: streams coded with the set's tables
};

// One warp per block: table checks, decode table, lane s = stream s.
template <class T>
__device__ __forceinline__ void cap_dec_block(BlockShared& sh, const CapWs& w, const CapSetDev* set, uint64_t b) {
  const uint32_t lane = threadIdx.x;
  const CapDecCtl& c = sh.ctl;
  CapDecCtl* gctl = w.ctl + sh.owner;
  const uint8_t* blk = c.src + c.L.blk_off + w.offs[c.block_begin + b];
  const uint64_t size = cap_index_entry(c.src, c.L, b);
  if (lane == 0) {
    sh.head = static_cast<int32_t>(cap_dec_open(c, blk, size, &sh.table, &sh.body, &sh.shared));
    if (sh.head == static_cast<int32_t>(Status::ok) && !sh.shared && sh.table.symbols > 1) cap_codes(sh.table, sh.code);
  }
  __syncwarp();
  const int32_t head = sh.head;
  const uint32_t body = sh.body, shared = sh.shared;
  __syncwarp();  // every lane has read head before lane 0 moves to the next block
  if (head != static_cast<int32_t>(Status::ok)) {
    if (lane == 0) atomicMin(reinterpret_cast<unsigned long long*>(&gctl->err), cap_error_word(b, static_cast<Status>(head)));
    return;
  }
  if (!shared && sh.table.symbols > 1)
    for (uint32_t e = sh.table.first + lane; e <= sh.table.last; e += 32) cap_fill_symbol(sh.table, sh.code, e, sh.lut);
  __syncwarp();
  const Status s = shared ? cap_dec_shared_lane<T>(c, blk + body, *set, b, lane)
                          : cap_dec_lane<T>(c, blk + body, sh.table, sh.lut, b, lane);
  // The block's status is its first failing stream's (FORMAT.md 4.6.5).
  const uint32_t bad = __ballot_sync(0xFFFFFFFFu, s != Status::ok);
  if (bad != 0 && lane == static_cast<uint32_t>(__ffs(bad) - 1))
    atomicMin(reinterpret_cast<unsigned long long*>(&gctl->err), cap_error_word(b, s));
  __syncwarp();
}

// The visitor's callable for one block (a functor: a lambda in the kernel
// makes nvcc treat the __shared__ block as dynamically initialized).
struct CapDecBlockOp {
  BlockShared* sh;
  const CapWs* w;
  const CapSetDev* set;
  uint64_t b;
  template <class T>
  __device__ __forceinline__ void operator()(T) const { cap_dec_block<T>(*sh, *w, set, b); }
};

// Grid-stride over the exponent blocks of all frames. The dtype is the
// frame's, known only on the device: one kernel per dtype would need the
// host to know it, so this dispatches per block (uniform over the warp).
__global__ void __launch_bounds__(kCapDecThreads) cap_dec_blocks_any(CapDecArgs a) {
  __shared__ __align__(16) BlockShared sh;
  const CapWs w = cap_ws(a);
  const uint64_t total = w.totals->blocks;
  if (threadIdx.x == 0) sh.owner = ~uint64_t{0};
  for (uint64_t g = blockIdx.x; g < total; g += gridDim.x) {
    __syncwarp();  // every lane is done with the previous owner
    if (threadIdx.x == 0) {
      const uint64_t i = cap_owner(w.begins, a.count, g);
      if (i != sh.owner) {
        sh.owner = i;
        sh.ctl = w.ctl[i];  // err is stale here: the blocks only lower the global one
      }
    }
    __syncwarp();
    if (sh.ctl.status != static_cast<int32_t>(Status::ok)) continue;  // failed frame or hole
    const uint64_t b = g - sh.ctl.block_begin;
    // The header was parsed as a capacity frame: codec_of() took the pair.
    visit_codec_dtype<Codec::capacity>(sh.ctl.h.dtype, CapDecBlockOp{&sh, &w, a.set, b});
  }
}

// v2 block hashes of the outputs, grid-stride over the checks of all frames.
__global__ void __launch_bounds__(kThreads) cap_dec_hash_kernel(CapDecArgs a) {
  __shared__ HashShared hs;
  __shared__ CapDecCtl ctl;
  __shared__ uint64_t owner;
  const CapWs w = cap_ws(a);
  const uint64_t total = w.totals->checks;
  if (threadIdx.x == 0) owner = ~uint64_t{0};
  for (uint64_t k = blockIdx.x; k < total; k += gridDim.x) {
    __syncthreads();
    if (threadIdx.x == 0) {
      const uint64_t i = cap_owner(w.hash_begins, a.count, k);
      if (i != owner) {
        owner = i;
        ctl = w.ctl[i];
      }
    }
    __syncthreads();
    if (ctl.status != static_cast<int32_t>(Status::ok) || ctl.err != kCapNoError || !ctl.verify) continue;
    const uint64_t j = k - ctl.hash_begin;
    const uint64_t h = cta_xxh3_64(ctl.dst + (j << kChecksumBlockLog2), check_block_len(ctl.h.decoded_bytes(), j), hs);
    if (threadIdx.x == 0) w.hashes[k] = h;
  }
}

// CTA per frame (grid-stride): the frame's status (setup, first failing
// block, rule 19) and outputs.
__global__ void __launch_bounds__(kThreads) cap_dec_final_kernel(CapDecArgs a, CapDecDest dest) {
  __shared__ HashShared hs;
  __shared__ CapDecCtl ctl;
  __shared__ unsigned long long first_bad;
  __shared__ Status st;
  const CapWs w = cap_ws(a);
  for (uint64_t i = blockIdx.x; i < a.count; i += gridDim.x) {
    __syncthreads();
    if (threadIdx.x == 0) {
      ctl = w.ctl[i];
      st = cap_dec_status(ctl);
      first_bad = kNoBlock;
    }
    __syncthreads();
    if (st == Status::ok && ctl.verify) {
      const uint8_t* checks = ctl.src + ctl.L.check_off;
      const uint64_t* hashes = w.hashes + ctl.hash_begin;
      for (uint64_t k = threadIdx.x; k < ctl.n_checks; k += kThreads)
        if (!block_check_ok(checks, hashes, k)) atomicMin(&first_bad, k);
      const uint64_t c = cta_xxh3_64(reinterpret_cast<const uint8_t*>(hashes), 8 * ctl.n_checks, hs);  // barrier
      if (threadIdx.x == 0) st = content_status(ctl.h, first_bad, c);
    }
    if (threadIdx.x == 0) {
      CapDecOut o{};
      o.status = st;
      o.handled = ctl.handled;
      o.corrupt_block = first_bad;
      if (st == Status::ok) {
        o.size = ctl.h.decoded_bytes();
        o.consumed = ctl.h.frame_size;
      }
      if (dest.out != nullptr) dest.out[i] = o;
      if (dest.sizes != nullptr && ctl.handled) {  // override the mode-0 kernels' words
        dest.sizes[i] = o.size;
        dest.statuses[i] = o.status;
        if (dest.corrupt != nullptr) dest.corrupt[i] = o.corrupt_block;
      }
    }
  }
}

}  // namespace

Status cap_decode_launches(const DeviceInfo& info, const CapDecArgs& a, CapDecodeLaunches* out) {
  if (info.sms <= 0) return Status::backend_unavailable;
  if (a.count == 0 || a.count > kMaxBatchCount || a.count != a.lay.count) return Status::invalid_argument;
  const uint64_t resident = static_cast<uint64_t>(info.sms) * 32u;  // 32-thread CTAs
  const uint64_t g = a.lay.blocks_bound < resident ? a.lay.blocks_bound : resident;
  const uint64_t per = static_cast<uint64_t>(info.sms) * 4u;
  const uint32_t frames = static_cast<uint32_t>(a.count < per ? a.count : per);
  out->setup = {1, kThreads};
  out->index = {frames, kThreads};
  out->blocks = {static_cast<uint32_t>(g > 0 ? g : 1), kCapDecThreads};
  const uint64_t hg = a.lay.hashes_bound < per ? a.lay.hashes_bound : per;
  out->hash = {a.verify ? static_cast<uint32_t>(hg > 0 ? hg : 1) : 0u, kThreads};
  out->final_ = {frames, kThreads};
  return Status::ok;
}

Status enqueue_capacity_decode(const CapDecArgs& a, const CapDecDest& dest, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  CapDecodeLaunches L;
  if ((s = cap_decode_launches(info, a, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  cap_dec_setup_kernel<<<L.setup.grid, L.setup.block, 0, stream>>>(a);
  cap_dec_index_kernel<<<L.index.grid, L.index.block, 0, stream>>>(a);
  cap_dec_blocks_any<<<L.blocks.grid, L.blocks.block, 0, stream>>>(a);
  if (L.hash.grid > 0) cap_dec_hash_kernel<<<L.hash.grid, L.hash.block, 0, stream>>>(a);
  cap_dec_final_kernel<<<L.final_.grid, L.final_.block, 0, stream>>>(a, dest);
  return launch_status();
}

}  // namespace cuda_detail
}  // namespace splitzip
