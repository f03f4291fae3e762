// SPDX-License-Identifier: Apache-2.0
// Capacity-mode decode (FORMAT.md 4.6.4-4.6.5): setup -> blocks (one warp
// per exponent block, lane s decodes stream s) -> [block hashes] -> final.
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
  CapDecCtl* ctl;
  uint64_t* offs;
  uint64_t* hashes;
};
__device__ __forceinline__ CapWs cap_ws(const CapDecArgs& a) {
  return {reinterpret_cast<CapDecCtl*>(a.ws), reinterpret_cast<uint64_t*>(a.ws + a.lay.recs_off),
          reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off)};
}

struct SetupShared {
  uint64_t scratch[kWarps + 1];
  CapDecCtl ctl;
};

// Rules 1-14 (gaps), check a, the block offsets from the index, check b.
__global__ void __launch_bounds__(kThreads) cap_dec_setup_kernel(CapDecArgs a) {
  __shared__ __align__(16) SetupShared sh;
  const CapWs w = cap_ws(a);
  const uint32_t t = threadIdx.x;
  if (t == 0) cap_dec_plan(a, &sh.ctl);
  __syncthreads();
  if (sh.ctl.status == static_cast<int32_t>(Status::ok)) {
    const uint64_t nb = sh.ctl.L.n_blocks;
    const uint8_t* index = a.src + sh.ctl.L.index_off;
    uint64_t carry = 0;
    for (uint64_t base = 0; base < nb; base += kThreads) {
      const uint64_t b = base + t;
      uint64_t total = 0;
      const uint64_t ex = block_excl_scan64(b < nb ? load_le32(index + 4 * b) : 0, sh.scratch, &total);
      if (b < nb) w.offs[b] = carry + ex;
      carry += total;
    }
    if (t == 0 && carry != sh.ctl.L.blk_size) sh.ctl.status = static_cast<int32_t>(Status::bad_code);  // check b
  }
  __syncthreads();
  if (t == 0) *w.ctl = sh.ctl;
}

struct BlockShared {
  CapDecCtl ctl;
  CapTable table;
  uint16_t code[256];
  uint16_t lut[kCapTableSize];
  int32_t head;  // checks c-e of the current block
};

// One warp per block: table checks, decode table, lane s = stream s.
template <class T>
__device__ __forceinline__ void cap_dec_block(BlockShared& sh, const CapDecArgs& a, const CapWs& w, uint64_t b) {
  const uint32_t lane = threadIdx.x;
  const CapDecCtl& c = sh.ctl;
  const uint8_t* blk = a.src + c.L.blk_off + w.offs[b];
  const uint64_t size = load_le32(a.src + c.L.index_off + 4 * b);
  if (lane == 0) {
    sh.head = static_cast<int32_t>(cap_parse_block(blk, size, exponent_limit(c.h.dtype), &sh.table));
    if (sh.head == static_cast<int32_t>(Status::ok) && sh.table.symbols > 1) cap_codes(sh.table, sh.code);
  }
  __syncwarp();
  const int32_t head = sh.head;
  __syncwarp();  // every lane has read head before lane 0 moves to the next block
  if (head != static_cast<int32_t>(Status::ok)) {
    if (lane == 0) atomicMin(reinterpret_cast<unsigned long long*>(&w.ctl->err), cap_error_word(b, static_cast<Status>(head)));
    return;
  }
  if (sh.table.symbols > 1)
    for (uint32_t e = sh.table.first + lane; e <= sh.table.last; e += 32) cap_fill_symbol(sh.table, sh.code, e, sh.lut);
  __syncwarp();
  const Status s = cap_dec_lane<T>(c, blk, sh.table, sh.lut, b, lane, a.dst, a.src);
  // The block's status is its first failing stream's (FORMAT.md 4.6.5).
  const uint32_t bad = __ballot_sync(0xFFFFFFFFu, s != Status::ok);
  if (bad != 0 && lane == static_cast<uint32_t>(__ffs(bad) - 1))
    atomicMin(reinterpret_cast<unsigned long long*>(&w.ctl->err), cap_error_word(b, s));
  __syncwarp();
}

// The dtype is the frame's, known only on the device: one kernel per dtype
// would need the host to know it, so this dispatches per CTA (uniform).
__global__ void __launch_bounds__(kCapDecThreads) cap_dec_blocks_any(CapDecArgs a) {
  __shared__ __align__(16) BlockShared sh;
  const CapWs w = cap_ws(a);
  if (threadIdx.x == 0) sh.ctl = *w.ctl;
  __syncwarp();
  if (sh.ctl.status != static_cast<int32_t>(Status::ok)) return;
  for (uint64_t b = blockIdx.x; b < sh.ctl.L.n_blocks; b += gridDim.x) {
    switch (sh.ctl.h.dtype) {
      case 1: cap_dec_block<Bf16Traits>(sh, a, w, b); break;
      case 2: cap_dec_block<Fp16Traits>(sh, a, w, b); break;
      case 3: cap_dec_block<Fp32Traits>(sh, a, w, b); break;
      default: cap_dec_block<Fp8E5M2Traits>(sh, a, w, b); break;
    }
  }
}

// v2 block hashes of the output, grid-stride over checksum blocks.
__global__ void __launch_bounds__(kThreads) cap_dec_hash_kernel(CapDecArgs a) {
  __shared__ HashShared hs;
  __shared__ CapDecCtl ctl;
  const CapWs w = cap_ws(a);
  if (threadIdx.x == 0) ctl = *w.ctl;
  __syncthreads();
  if (ctl.status != static_cast<int32_t>(Status::ok) || ctl.err != kCapNoError || !ctl.verify) return;
  const uint64_t bytes = ctl.h.decoded_bytes();
  for (uint64_t k = blockIdx.x; k < ctl.n_checks; k += gridDim.x) {
    const uint64_t h = cta_xxh3_64(a.dst + (k << kChecksumBlockLog2), check_block_len(bytes, k), hs);
    if (threadIdx.x == 0) w.hashes[k] = h;
  }
}

// The frame's status: setup, first failing block, then rule 19.
__global__ void __launch_bounds__(kThreads) cap_dec_final_kernel(CapDecArgs a, CapDecOut* out) {
  __shared__ HashShared hs;
  __shared__ CapDecCtl ctl;
  __shared__ unsigned long long first_bad;
  __shared__ Status st;
  const CapWs w = cap_ws(a);
  if (threadIdx.x == 0) {
    ctl = *w.ctl;
    st = cap_dec_status(ctl);
    first_bad = kNoBlock;
  }
  __syncthreads();
  if (st == Status::ok && ctl.verify) {
    const uint8_t* checks = a.src + ctl.L.check_off;
    for (uint64_t k = threadIdx.x; k < ctl.n_checks; k += kThreads)
      if (load_le32(checks + 4 * k) != static_cast<uint32_t>(w.hashes[k])) atomicMin(&first_bad, k);
    const uint64_t c = cta_xxh3_64(reinterpret_cast<const uint8_t*>(w.hashes), 8 * ctl.n_checks, hs);  // barrier
    if (threadIdx.x == 0 && (first_bad != kNoBlock || c != ctl.h.content_checksum)) st = Status::checksum_mismatch;
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
    *out = o;
  }
}

}  // namespace

Status cap_decode_launches(const DeviceInfo& info, const CapDecArgs& a, CapDecodeLaunches* out) {
  if (info.sms <= 0) return Status::backend_unavailable;
  const uint64_t resident = static_cast<uint64_t>(info.sms) * 32u;  // 32-thread CTAs
  const uint64_t g = a.lay.blocks_bound < resident ? a.lay.blocks_bound : resident;
  out->setup = {1, kThreads};
  out->blocks = {static_cast<uint32_t>(g > 0 ? g : 1), kCapDecThreads};
  const uint64_t hres = static_cast<uint64_t>(info.sms) * 4u;
  const uint64_t hg = a.lay.hashes_bound < hres ? a.lay.hashes_bound : hres;
  out->hash = {a.verify ? static_cast<uint32_t>(hg > 0 ? hg : 1) : 0u, kThreads};
  out->final_ = {1, kThreads};
  return Status::ok;
}

Status enqueue_capacity_decode(const CapDecArgs& a, CapDecOut* d_out, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  CapDecodeLaunches L;
  if ((s = cap_decode_launches(info, a, &L)) != Status::ok) return s;
  if ((s = pending_error()) != Status::ok) return s;
  cap_dec_setup_kernel<<<L.setup.grid, L.setup.block, 0, stream>>>(a);
  cap_dec_blocks_any<<<L.blocks.grid, L.blocks.block, 0, stream>>>(a);
  if (L.hash.grid > 0) cap_dec_hash_kernel<<<L.hash.grid, L.hash.block, 0, stream>>>(a);
  cap_dec_final_kernel<<<L.final_.grid, L.final_.block, 0, stream>>>(a, d_out);
  return launch_status();
}

}  // namespace cuda_detail
}  // namespace splitzip
