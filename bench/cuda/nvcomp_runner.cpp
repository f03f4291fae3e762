// SPDX-License-Identifier: Apache-2.0
#include "bench/cuda/nvcomp_runner.h"

#ifdef SPLITZIP_WITH_NVCOMP

#include <cuda_runtime.h>
#include <nvcomp/ans.h>
#include <nvcomp/bitcomp.h>
#include <nvcomp/cascaded.h>
#include <nvcomp/lz4.h>
#include <nvcomp/version.h>

#include <algorithm>
#include <cstring>

namespace splitzip::bench {
namespace {

// The batched C API has the same shape for every algorithm.
template <class COpts, class DOpts>
struct Algo {
  const char* name;
  COpts copts;
  DOpts dopts;
  nvcompStatus_t (*comp_temp)(size_t, size_t, COpts, size_t*, size_t, cudaStream_t);
  nvcompStatus_t (*max_out)(size_t, COpts, size_t*);
  nvcompStatus_t (*compress)(const void* const*, const size_t*, size_t, size_t, void*, size_t, void* const*,
                             size_t*, COpts, nvcompStatus_t*, cudaStream_t);
  nvcompStatus_t (*decomp_temp)(size_t, size_t, DOpts, size_t*, size_t, cudaStream_t);
  nvcompStatus_t (*decompress)(const void* const*, const size_t*, const size_t*, size_t*, size_t, void*, size_t,
                               void* const*, DOpts, nvcompStatus_t*, cudaStream_t);
};

struct Dev {
  void* p = nullptr;
  ~Dev() {
    if (p) cudaFree(p);
  }
  bool alloc(size_t n) { return cudaMalloc(&p, n ? n : 16) == cudaSuccess; }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class C, class D>
NvcompResult run_one(const Algo<C, D>& a, const void* d_in, uint64_t bytes, uint64_t chunk, int iters,
                     cudaStream_t s) {
  NvcompResult r;
  r.algo = a.name;
  const size_t n_chunks = (bytes + chunk - 1) / chunk;
  std::vector<const void*> in_ptrs(n_chunks);
  std::vector<size_t> in_sizes(n_chunks);
  for (size_t i = 0; i < n_chunks; ++i) {
    in_ptrs[i] = static_cast<const uint8_t*>(d_in) + i * chunk;
    in_sizes[i] = std::min<uint64_t>(chunk, bytes - i * chunk);
  }
  size_t max_out = 0, ctemp = 0, dtemp = 0;
  if (a.max_out(chunk, a.copts, &max_out) != nvcompSuccess ||
      a.comp_temp(n_chunks, chunk, a.copts, &ctemp, bytes, s) != nvcompSuccess ||
      a.decomp_temp(n_chunks, chunk, a.dopts, &dtemp, bytes, s) != nvcompSuccess) {
    r.error = "temp size query failed";
    return r;
  }
  max_out = (max_out + 15) / 16 * 16;
  Dev d_in_ptrs, d_in_sizes, d_out, d_out_ptrs, d_out_sizes, d_ctemp, d_dtemp, d_dec, d_dec_ptrs, d_dec_sizes,
      d_status;
  if (!d_in_ptrs.alloc(n_chunks * 8) || !d_in_sizes.alloc(n_chunks * 8) || !d_out.alloc(n_chunks * max_out) ||
      !d_out_ptrs.alloc(n_chunks * 8) || !d_out_sizes.alloc(n_chunks * 8) || !d_ctemp.alloc(ctemp) ||
      !d_dtemp.alloc(dtemp) || !d_dec.alloc(bytes) || !d_dec_ptrs.alloc(n_chunks * 8) ||
      !d_dec_sizes.alloc(n_chunks * 8) || !d_status.alloc(n_chunks * sizeof(nvcompStatus_t))) {
    r.error = "cudaMalloc failed";
    return r;
  }
  std::vector<void*> out_ptrs(n_chunks), dec_ptrs(n_chunks);
  for (size_t i = 0; i < n_chunks; ++i) {
    out_ptrs[i] = static_cast<uint8_t*>(d_out.p) + i * max_out;
    dec_ptrs[i] = static_cast<uint8_t*>(d_dec.p) + i * chunk;
  }
  cudaMemcpy(d_in_ptrs.p, in_ptrs.data(), n_chunks * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(d_in_sizes.p, in_sizes.data(), n_chunks * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(d_out_ptrs.p, out_ptrs.data(), n_chunks * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(d_dec_ptrs.p, dec_ptrs.data(), n_chunks * 8, cudaMemcpyHostToDevice);
  auto* st = static_cast<nvcompStatus_t*>(d_status.p);
  auto compress = [&] {
    return a.compress(static_cast<const void* const*>(d_in_ptrs.p), static_cast<const size_t*>(d_in_sizes.p), chunk,
                      n_chunks, d_ctemp.p, ctemp, static_cast<void* const*>(d_out_ptrs.p),
                      static_cast<size_t*>(d_out_sizes.p), a.copts, st, s);
  };
  auto decompress = [&] {
    return a.decompress(static_cast<const void* const*>(d_out_ptrs.p), static_cast<const size_t*>(d_out_sizes.p),
                        static_cast<const size_t*>(d_in_sizes.p), static_cast<size_t*>(d_dec_sizes.p), n_chunks,
                        d_dtemp.p, dtemp, static_cast<void* const*>(d_dec_ptrs.p), a.dopts, st, s);
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> tc, td;
  bool launch_ok = true;
  for (int i = 0; i < iters + 1 && launch_ok; ++i) {  // first run is warm-up
    cudaEventRecord(e0, s);
    launch_ok = compress() == nvcompSuccess;
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i > 0) tc.push_back(ms);
  }
  for (int i = 0; i < iters + 1 && launch_ok; ++i) {
    cudaEventRecord(e0, s);
    launch_ok = decompress() == nvcompSuccess;
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i > 0) td.push_back(ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (!launch_ok || cudaDeviceSynchronize() != cudaSuccess) {
    r.error = "nvCOMP call failed";
    (void)cudaGetLastError();
    return r;
  }
  std::vector<size_t> out_sizes(n_chunks);
  std::vector<nvcompStatus_t> status(n_chunks);
  cudaMemcpy(out_sizes.data(), d_out_sizes.p, n_chunks * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(status.data(), d_status.p, n_chunks * sizeof(nvcompStatus_t), cudaMemcpyDeviceToHost);
  for (size_t v : out_sizes) r.compressed_bytes += v;
  bool all_ok = std::all_of(status.begin(), status.end(), [](nvcompStatus_t x) { return x == nvcompSuccess; });
  // Round trip: compare decoded and input on the host.
  std::vector<uint8_t> a_host(bytes), b_host(bytes);
  cudaMemcpy(a_host.data(), d_in, bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(b_host.data(), d_dec.p, bytes, cudaMemcpyDeviceToHost);
  r.roundtrip_ok = all_ok && std::memcmp(a_host.data(), b_host.data(), bytes) == 0;
  r.compress_ms = median(tc);
  r.decompress_ms = median(td);
  r.ok = true;
  return r;
}

nvcompType_t elem_type(uint32_t elem_bytes) {
  return elem_bytes == 2 ? NVCOMP_TYPE_USHORT : elem_bytes == 4 ? NVCOMP_TYPE_UINT : NVCOMP_TYPE_UCHAR;
}

}  // namespace

bool nvcomp_available() { return true; }

std::string nvcomp_version() {
  return std::to_string(NVCOMP_VER_MAJOR) + "." + std::to_string(NVCOMP_VER_MINOR) + "." +
         std::to_string(NVCOMP_VER_PATCH);
}

std::vector<NvcompResult> run_nvcomp(const void* d_in, uint64_t bytes, uint32_t elem_bytes, uint64_t chunk_bytes,
                                     int iters, cudaStream_t stream) {
  std::vector<NvcompResult> out;
  const nvcompType_t t = elem_type(elem_bytes);
  {
    Algo<nvcompBatchedLZ4CompressOpts_t, nvcompBatchedLZ4DecompressOpts_t> a{
        "nvcomp-lz4", nvcompBatchedLZ4CompressDefaultOpts, nvcompBatchedLZ4DecompressDefaultOpts,
        nvcompBatchedLZ4CompressGetTempSize, nvcompBatchedLZ4CompressGetMaxOutputChunkSize,
        nvcompBatchedLZ4CompressAsync, nvcompBatchedLZ4DecompressGetTempSize, nvcompBatchedLZ4DecompressAsync};
    out.push_back(run_one(a, d_in, bytes, chunk_bytes, iters, stream));
  }
  {
    Algo<nvcompBatchedCascadedCompressOpts_t, nvcompBatchedCascadedDecompressOpts_t> a{
        "nvcomp-cascaded", nvcompBatchedCascadedCompressDefaultOpts, nvcompBatchedCascadedDecompressDefaultOpts,
        nvcompBatchedCascadedCompressGetTempSize, nvcompBatchedCascadedCompressGetMaxOutputChunkSize,
        nvcompBatchedCascadedCompressAsync, nvcompBatchedCascadedDecompressGetTempSize,
        nvcompBatchedCascadedDecompressAsync};
    a.copts.common_opts.data_type = t;
    a.dopts.common_opts = a.copts.common_opts;
    out.push_back(run_one(a, d_in, bytes, chunk_bytes, iters, stream));
  }
  {
    Algo<nvcompBatchedBitcompCompressOpts_t, nvcompBatchedBitcompDecompressOpts_t> a{
        "nvcomp-bitcomp", nvcompBatchedBitcompCompressDefaultOpts, nvcompBatchedBitcompDecompressDefaultOpts,
        nvcompBatchedBitcompCompressGetTempSize, nvcompBatchedBitcompCompressGetMaxOutputChunkSize,
        nvcompBatchedBitcompCompressAsync, nvcompBatchedBitcompDecompressGetTempSize,
        nvcompBatchedBitcompDecompressAsync};
    a.copts.data_type = t;
    out.push_back(run_one(a, d_in, bytes, chunk_bytes, iters, stream));
  }
  {
    Algo<nvcompBatchedANSCompressOpts_t, nvcompBatchedANSDecompressOpts_t> a{
        "nvcomp-ans", nvcompBatchedANSCompressDefaultOpts, nvcompBatchedANSDecompressDefaultOpts,
        nvcompBatchedANSCompressGetTempSize, nvcompBatchedANSCompressGetMaxOutputChunkSize,
        nvcompBatchedANSCompressAsync, nvcompBatchedANSDecompressGetTempSize, nvcompBatchedANSDecompressAsync};
    out.push_back(run_one(a, d_in, bytes, chunk_bytes, iters, stream));
  }
  return out;
}

}  // namespace splitzip::bench

#else  // no nvCOMP

namespace splitzip::bench {
bool nvcomp_available() { return false; }
std::string nvcomp_version() { return ""; }
std::vector<NvcompResult> run_nvcomp(const void*, uint64_t, uint32_t, uint64_t, int, cudaStream_t) { return {}; }
}  // namespace splitzip::bench

#endif
