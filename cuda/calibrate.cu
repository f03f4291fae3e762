// SPDX-License-Identifier: Apache-2.0
// Exponent histogram and top-16 codebook, stream-ordered (dynamic
// calibration without a host trip).
#include <cuda_runtime.h>

#include "core/codec.h"
#include "core/header.h"
#include "cuda/encode_logic.h"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {
namespace {

constexpr uint32_t kHistThreads = 256;
// Per-warp sub-histograms are flushed before a u32 bin could overflow.
constexpr uint64_t kHistFlushGroups = uint64_t{1} << 22;

template <class T>
__device__ __forceinline__ void hist_group(const uint8_t* src, uint64_t n, uint64_t gi, bool aligned,
                                          uint32_t* bins) {
  const uint64_t first = gi * kGroupElems;
  const uint64_t left = n - first;
  const uint32_t valid = left < kGroupElems ? static_cast<uint32_t>(left) : kGroupElems;
  uint32_t in[4 * T::kBytes];
  const uint8_t* s = src + first * T::kBytes;
  if (valid == kGroupElems && aligned) {
SZ_UNROLL
    for (uint32_t k = 0; k < T::kBytes; ++k) load16(s + 16 * k, in + 4 * k);
  } else {
    load_bytes(s, valid * T::kBytes, in);
  }
SZ_UNROLL
  for (uint32_t i = 0; i < kGroupElems; ++i) {
    if (i < valid) {
      const auto v = static_cast<typename T::Bits>(group_elem<T>(in, i));
      atomicAdd(&bins[T::exponent(v)], 1u);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kHistThreads) histogram_kernel(const uint8_t* src, uint64_t n,
                                                                 unsigned long long* counts) {
  __shared__ uint32_t bins[kHistThreads / 32][256];
  const uint32_t warp = threadIdx.x >> 5;
  for (uint32_t i = threadIdx.x; i < (kHistThreads / 32) * 256; i += kHistThreads) (&bins[0][0])[i] = 0;
  __syncthreads();
  const bool aligned = (reinterpret_cast<uintptr_t>(src) & 15u) == 0;
  const uint64_t groups = (n + kGroupElems - 1) / kGroupElems;
  const uint64_t stride = uint64_t{gridDim.x} * kHistThreads;
  uint64_t since_flush = 0;
  for (uint64_t base = uint64_t{blockIdx.x} * kHistThreads; base < groups; base += stride) {
    const uint64_t gi = base + threadIdx.x;
    if (gi < groups) hist_group<T>(src, n, gi, aligned, bins[warp]);
    if (++since_flush == kHistFlushGroups / kHistThreads) {
      since_flush = 0;
      __syncthreads();
      for (uint32_t e = threadIdx.x; e < 256; e += kHistThreads) {
        uint64_t c = 0;
        for (uint32_t w = 0; w < kHistThreads / 32; ++w) {
          c += bins[w][e];
          bins[w][e] = 0;
        }
        if (c) atomicAdd(counts + e, static_cast<unsigned long long>(c));
      }
      __syncthreads();
    }
  }
  __syncthreads();
  for (uint32_t e = threadIdx.x; e < 256; e += kHistThreads) {
    uint64_t c = 0;
    for (uint32_t w = 0; w < kHistThreads / 32; ++w) c += bins[w][e];
    if (c) atomicAdd(counts + e, static_cast<unsigned long long>(c));
  }
}

// 256 threads, one per exponent: each finds its own rank (top16_rank), the
// winners (codebook_limit of the dtype) write their entries; the count is the
// number of non-zero bins, capped at that limit. About 256 compares per thread instead of a serial
// 16 x 256 scan.
__global__ void __launch_bounds__(256) codebook_kernel(uint32_t dtype, const uint64_t* counts, Codebook* out) {
  __shared__ uint64_t c[256];
  __shared__ uint8_t entries[16];
  __shared__ uint32_t nonzero;
  const uint32_t e = threadIdx.x;
  c[e] = counts[e];
  if (e < 16) entries[e] = 0;
  if (e == 0) nonzero = 0;
  __syncthreads();
  const uint32_t limit = codebook_limit(dtype);  // FORMAT.md 3
  const uint32_t rank = top16_rank(c, e);
  if (rank < limit) entries[rank] = static_cast<uint8_t>(e);
  if (c[e] != 0) atomicAdd(&nonzero, 1u);
  __syncthreads();
  if (e == 0) {
    Codebook cb;
    cb.dtype = static_cast<Dtype>(dtype);
    cb.count = static_cast<uint8_t>(nonzero < limit ? nonzero : limit);
    for (int i = 0; i < 16; ++i) cb.entries[i] = entries[i];
    *out = cb;
  }
}

}  // namespace

// Loads this file's module (lazy loading would otherwise load it at the
// first launch, which may be inside a graph capture).
bool calibrate_module_load() {
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, histogram_kernel<Bf16Traits>) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

Status enqueue_histogram(uint32_t dtype, const void* src, uint64_t n, uint64_t* d_counts, cudaStream_t stream) {
  if (geometry_of(dtype).bytes == 0 || d_counts == nullptr || (src == nullptr && n > 0))
    return Status::invalid_argument;
  if (n == 0) return Status::ok;
  DeviceInfo info;
  const Status s = device_info(&info);
  if (s != Status::ok) return s;
  const uint64_t groups = (n + kGroupElems - 1) / kGroupElems;
  const uint64_t want = (groups + kHistThreads - 1) / kHistThreads;
  const uint64_t cap = static_cast<uint64_t>(info.sms) * 4;
  const auto grid = static_cast<unsigned>(want < cap ? want : cap);
  if (pending_error() != Status::ok) return pending_error();
  const auto* p = static_cast<const uint8_t*>(src);
  auto* c = reinterpret_cast<unsigned long long*>(d_counts);
  if (!visit_dtype(dtype, [&](auto t) { histogram_kernel<decltype(t)><<<grid, kHistThreads, 0, stream>>>(p, n, c); }))
    return Status::invalid_argument;
  return launch_status();
}

Status enqueue_codebook(uint32_t dtype, const uint64_t* d_counts, Codebook* d_codebook, cudaStream_t stream) {
  if (geometry_of(dtype).bytes == 0 || d_counts == nullptr || d_codebook == nullptr)
    return Status::invalid_argument;
  Status s = pending_error();
  if (s != Status::ok) return s;
  codebook_kernel<<<1, 256, 0, stream>>>(dtype, d_counts, d_codebook);
  return launch_status();
}

}  // namespace cuda_detail
}  // namespace splitzip
