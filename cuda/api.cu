// SPDX-License-Identifier: Apache-2.0
// The public CUDA API (include/splitzip/splitzip_cuda.hpp): argument checks
// on the host, then the kernel sequences of encode.cu / decode.cu. No call
// here synchronises or allocates.
#include <cuda_runtime.h>

#include <mutex>

#include "cuda/launch.h"
#include "splitzip/splitzip_cuda.hpp"

namespace splitzip {
namespace cuda_detail {

int enc_main_occupancy();     // encode.cu
int dec_main_occupancy();     // decode.cu
bool calibrate_module_load();  // calibrate.cu

Status launch_status() {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::ok;
  return e == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::device_error;
}

Status pending_error() {
  const cudaError_t e = cudaPeekAtLastError();
  if (e == cudaSuccess) return Status::ok;
  return e == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::device_error;
}

Status device_info(DeviceInfo* out) {
  constexpr int kMaxDevices = 64;
  static std::mutex mu;
  static DeviceInfo cache[kMaxDevices];
  static bool filled[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
    (void)cudaGetLastError();
    return Status::backend_unavailable;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (!filled[dev]) {
    DeviceInfo d;
    d.device = dev;
    if (cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return Status::backend_unavailable;
    }
    int coop = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return Status::backend_unavailable;
    }
    d.cooperative = coop != 0;
    if (!d.cooperative) return Status::backend_unavailable;  // the encode kernel is a cooperative launch
    // The occupancy queries also load the encode and decode modules.
    d.enc_ctas_per_sm = enc_main_occupancy();
    d.dec_ctas_per_sm = dec_main_occupancy();
    if (d.sms <= 0 || d.enc_ctas_per_sm <= 0 || d.dec_ctas_per_sm <= 0 || !calibrate_module_load())
      return Status::device_error;
    cache[dev] = d;
    filled[dev] = true;
  }
  *out = cache[dev];
  return Status::ok;
}

namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

constexpr uint64_t kMaxCount = kMaxBatchCount;

Status check_encode_config(const cuda::EncodeConfig& cfg) {
  if (!dtype_valid(cfg.dtype) || cfg.chunk_log2 < kMinChunkLog2 || cfg.chunk_log2 > kMaxChunkLog2)
    return Status::invalid_argument;
  return Status::ok;
}

}  // namespace
}  // namespace cuda_detail

namespace cuda {

using namespace cuda_detail;

bool device_available() {
  static const bool available = [] {
    int n = 0;
    const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    (void)cudaGetLastError();
    return ok;
  }();
  return available;
}

Status warm_up() {
  if (!device_available()) return Status::backend_unavailable;
  DeviceInfo d;
  return device_info(&d);
}

uint64_t compress_workspace_size(Dtype dtype, uint64_t total_elems, uint64_t count) {
  if (!dtype_valid(dtype) || count == 0) return 0;
  return encode_workspace(static_cast<uint32_t>(dtype), total_elems, count).total;
}

uint64_t decompress_workspace_size(uint64_t total_dst_bytes, uint64_t count) {
  if (count == 0) return 0;
  return decode_workspace(total_dst_bytes, count).total;
}

Status compress_async(const void* src, uint64_t n_elems, void* dst, uint64_t dst_capacity,
                      const Codebook& codebook, const EncodeConfig& cfg, uint64_t* d_frame_size,
                      Status* d_status, void* workspace, uint64_t workspace_bytes, cudaStream_t stream) {
  Status s = check_encode_config(cfg);
  if (s != Status::ok) return s;
  if (dst == nullptr || (src == nullptr && n_elems > 0) || n_elems > kMaxElems || d_frame_size == nullptr ||
      d_status == nullptr || workspace == nullptr || !aligned16(workspace))
    return Status::invalid_argument;
  if (validate_codebook(codebook) != Status::ok || codebook.dtype != cfg.dtype) return Status::bad_codebook;
  if (dst_capacity < compress_bound(cfg.dtype, n_elems)) return Status::dst_too_small;
  const uint32_t id = static_cast<uint32_t>(cfg.dtype);
  EncSetupArgs a;
  a.count = 1;
  a.src = src;
  a.dst = dst;
  a.n = n_elems;
  a.capacity = dst_capacity;
  a.cb = codebook;
  a.dtype = id;
  a.chunk_log2 = cfg.chunk_log2;
  a.flags = cfg.checksum ? kPlanChecksum : 0;
  a.ws = static_cast<uint8_t*>(workspace);
  a.lay = encode_workspace(id, n_elems, 1);
  if (workspace_bytes < a.lay.total) return Status::invalid_argument;
  return enqueue_encode(a, n_elems, d_frame_size, d_status, stream);
}

Status compress_batch_async(const CompressItem* d_items, uint64_t count, uint64_t total_elems,
                            const Codebook* d_codebooks, uint32_t codebook_count, const EncodeConfig& cfg,
                            uint64_t* d_frame_sizes, Status* d_statuses, void* workspace,
                            uint64_t workspace_bytes, cudaStream_t stream) {
  Status s = check_encode_config(cfg);
  if (s != Status::ok) return s;
  if (count == 0) return Status::ok;
  if (count > kMaxCount || d_items == nullptr || d_codebooks == nullptr || codebook_count == 0 ||
      d_frame_sizes == nullptr || d_statuses == nullptr || workspace == nullptr || !aligned16(workspace) ||
      total_elems > kMaxElems)
    return Status::invalid_argument;
  const uint32_t id = static_cast<uint32_t>(cfg.dtype);
  EncSetupArgs a;
  a.items = d_items;
  a.count = count;
  a.codebooks = d_codebooks;
  a.n_codebooks = codebook_count;
  a.dtype = id;
  a.chunk_log2 = cfg.chunk_log2;
  a.flags = cfg.checksum ? kPlanChecksum : 0;
  a.ws = static_cast<uint8_t*>(workspace);
  a.lay = encode_workspace(id, total_elems, count);
  if (workspace_bytes < a.lay.total) return Status::invalid_argument;
  return enqueue_encode(a, total_elems, d_frame_sizes, d_statuses, stream);
}

Status decompress_async(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                        const DecodeConfig& cfg, uint64_t* d_out_size, Status* d_status, void* workspace,
                        uint64_t workspace_bytes, cudaStream_t stream) {
  if ((src == nullptr && src_size > 0) || d_out_size == nullptr || d_status == nullptr ||
      workspace == nullptr || !aligned16(workspace))
    return Status::invalid_argument;
  DecSetupArgs a;
  a.count = 1;
  a.src = src;
  a.src_size = src_size;
  a.dst = dst;
  a.dst_capacity = dst == nullptr ? 0 : dst_capacity;
  a.limit = cfg.max_output_bytes ? cfg.max_output_bytes : kNoBlock;
  a.verify = cfg.verify_checksum;
  a.ws = static_cast<uint8_t*>(workspace);
  a.lay = decode_workspace(a.dst_capacity, 1);
  if (workspace_bytes < a.lay.total) return Status::invalid_argument;
  return enqueue_decode(a, d_out_size, d_status, cfg.d_corrupt_blocks, stream);
}

Status decompress_batch_async(const DecompressItem* d_items, uint64_t count, uint64_t total_dst_bytes,
                              const DecodeConfig& cfg, uint64_t* d_out_sizes, Status* d_statuses,
                              void* workspace, uint64_t workspace_bytes, cudaStream_t stream) {
  if (count == 0) return Status::ok;
  if (count > kMaxCount || d_items == nullptr || d_out_sizes == nullptr || d_statuses == nullptr ||
      workspace == nullptr || !aligned16(workspace))
    return Status::invalid_argument;
  DecSetupArgs a;
  a.items = d_items;
  a.count = count;
  a.limit = cfg.max_output_bytes ? cfg.max_output_bytes : kNoBlock;
  a.verify = cfg.verify_checksum;
  a.ws = static_cast<uint8_t*>(workspace);
  a.lay = decode_workspace(total_dst_bytes, count);
  if (workspace_bytes < a.lay.total) return Status::invalid_argument;
  return enqueue_decode(a, d_out_sizes, d_statuses, cfg.d_corrupt_blocks, stream);
}

Status histogram_async(Dtype dtype, const void* src, uint64_t n_elems, uint64_t* d_counts, cudaStream_t stream) {
  if (!dtype_valid(dtype)) return Status::invalid_argument;
  return enqueue_histogram(static_cast<uint32_t>(dtype), src, n_elems, d_counts, stream);
}

Status codebook_from_histogram_async(Dtype dtype, const uint64_t* d_counts, Codebook* d_codebook,
                                     cudaStream_t stream) {
  if (!dtype_valid(dtype)) return Status::invalid_argument;
  return enqueue_codebook(static_cast<uint32_t>(dtype), d_counts, d_codebook, stream);
}

}  // namespace cuda
}  // namespace splitzip
