// SPDX-License-Identifier: Apache-2.0
// The public CUDA API (include/splitzip/splitzip_cuda.hpp): argument checks
// on the host, then the kernel sequences of encode.cu / decode.cu and, for
// capacity mode (FORMAT.md 4.6), capacity_encode.cu / capacity_decode.cu.
// No call here synchronises or allocates.
#include <cuda_runtime.h>

#include <mutex>

#include "cuda/capacity_launch.h"
#include "cuda/codec_table.h"
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

// As check_compress_args: codec_of() refuses an invalid dtype or mode and
// a (dtype, mode) pair no layout takes.
Status check_encode_config(const cuda::EncodeConfig& cfg) {
  if (cfg.chunk_log2 < kMinChunkLog2 || cfg.chunk_log2 > kMaxChunkLog2 ||
      codec_of(cfg.dtype, cfg.mode) == Codec::invalid)
    return Status::invalid_argument;
  return Status::ok;
}

// The fields of an encode every entry point sets alike.
EncodeJob encode_job(const cuda::EncodeConfig& cfg, uint64_t elems, void* workspace, uint64_t workspace_bytes,
                     uint64_t* d_sizes, Status* d_statuses) {
  EncodeJob j;
  j.dtype = static_cast<uint32_t>(cfg.dtype);
  j.chunk_log2 = cfg.chunk_log2;
  j.checksum = cfg.checksum;
  j.elems = elems;
  j.ws = static_cast<uint8_t*>(workspace);
  j.ws_bytes = workspace_bytes;
  j.d_sizes = d_sizes;
  j.d_statuses = d_statuses;
  return j;
}

// The decode workspace: the mode-0 kernels' (decode.cu), then the capacity
// kernels' (capacity_decode.cu), 256-aligned. Both decoders run on every
// call: the mode of a device-resident frame is known only on the device.
struct DecodeWs {
  WorkspaceLayout fast;
  CapWorkspace cap;
  uint64_t total;
};
DecodeWs decode_ws(uint64_t total_dst_bytes, uint64_t count) {
  DecodeWs w;
  w.fast = decode_workspace(total_dst_bytes, count);
  w.cap = cap_decode_workspace(total_dst_bytes, count);
  w.total = align_up(w.fast.total, 256) + w.cap.total;
  return w;
}

// Mode 0 then the capacity kernels on the same outputs: the capacity final
// kernel overrides the words of the mode-1 frames (and of headers that
// fail, with the same status), the mode-0 kernels' stand for the rest.
Status enqueue_decode_both(DecSetupArgs a, const DecodeWs& w, const CapDecArgs& ca_in, uint64_t* d_sizes,
                           Status* d_statuses, uint64_t* d_corrupt, bool fast_only, cudaStream_t stream) {
  DeviceInfo info;
  Status s = device_info(&info);
  if (s != Status::ok) return s;
  CapDecArgs ca = ca_in;
  ca.ws = a.ws + align_up(w.fast.total, 256);
  ca.lay = w.cap;
  // Every shape is checked before the first launch (nothing enqueued on error).
  DecodeLaunches dl;
  CapDecodeLaunches cl;
  if ((s = decode_launches(info, a, &dl)) != Status::ok || (s = cap_decode_launches(info, ca, &cl)) != Status::ok)
    return s;
  if ((s = enqueue_decode(a, d_sizes, d_statuses, d_corrupt, stream)) != Status::ok) return s;
  if (fast_only) return Status::ok;  // mode-1 frames keep the mode-0 kernels' UNSUPPORTED_MODE
  return enqueue_capacity_decode(ca, CapDecDest{nullptr, d_sizes, d_statuses, d_corrupt}, stream);
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
  // Every codec's that takes the dtype, checksum or not (codec_table.h).
  return any_codec_encode_workspace(static_cast<uint32_t>(dtype), total_elems, count);
}

uint64_t decompress_workspace_size(uint64_t total_dst_bytes, uint64_t count) {
  if (count == 0) return 0;
  return decode_ws(total_dst_bytes, count).total;
}

Status compress_async(const void* src, uint64_t n_elems, void* dst, uint64_t dst_capacity,
                      const Codebook& codebook, const EncodeConfig& cfg, uint64_t* d_frame_size,
                      Status* d_status, void* workspace, uint64_t workspace_bytes, cudaStream_t stream) {
  Status s = check_encode_config(cfg);
  if (s != Status::ok) return s;
  if (dst == nullptr || (src == nullptr && n_elems > 0) || n_elems > kMaxElems || d_frame_size == nullptr ||
      d_status == nullptr || workspace == nullptr || !aligned16(workspace))
    return Status::invalid_argument;
  const Codec codec = codec_of(cfg.dtype, cfg.mode);
  if (codec_uses_codebook(codec) && (validate_codebook(codebook) != Status::ok || codebook.dtype != cfg.dtype))
    return Status::bad_codebook;
  if (dst_capacity < compress_bound(cfg.dtype, n_elems)) return Status::dst_too_small;
  EncodeJob j = encode_job(cfg, n_elems, workspace, workspace_bytes, d_frame_size, d_status);
  j.src = src;
  j.dst = dst;
  j.n = n_elems;
  j.capacity = dst_capacity;
  j.cb = &codebook;
  return enqueue_codec_encode(codec, j, stream);
}

Status compress_batch_async(const CompressItem* d_items, uint64_t count, uint64_t total_elems,
                            const Codebook* d_codebooks, uint32_t codebook_count, const EncodeConfig& cfg,
                            uint64_t* d_frame_sizes, Status* d_statuses, void* workspace,
                            uint64_t workspace_bytes, cudaStream_t stream) {
  Status s = check_encode_config(cfg);
  if (s != Status::ok) return s;
  if (count == 0) return Status::ok;
  const Codec codec = codec_of(cfg.dtype, cfg.mode);
  if (count > kMaxCount || d_items == nullptr ||
      (codec_uses_codebook(codec) && (d_codebooks == nullptr || codebook_count == 0)) || d_frame_sizes == nullptr ||
      d_statuses == nullptr || workspace == nullptr || !aligned16(workspace) || total_elems > kMaxElems)
    return Status::invalid_argument;
  EncodeJob j = encode_job(cfg, total_elems, workspace, workspace_bytes, d_frame_sizes, d_statuses);
  j.items = d_items;
  j.count = count;
  j.d_codebooks = d_codebooks;
  j.n_codebooks = codebook_count;
  return enqueue_codec_encode(codec, j, stream);
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
  const DecodeWs w = decode_ws(a.dst_capacity, 1);
  a.lay = w.fast;
  if (workspace_bytes < w.total) return Status::invalid_argument;
  CapDecArgs ca{};
  ca.count = 1;
  ca.src = static_cast<const uint8_t*>(src);
  ca.src_size = src_size;
  ca.dst = static_cast<uint8_t*>(dst);
  ca.dst_capacity = a.dst_capacity;
  ca.limit = a.limit;
  ca.verify = cfg.verify_checksum ? 1u : 0u;
  return enqueue_decode_both(a, w, ca, d_out_size, d_status, cfg.d_corrupt_blocks, cfg.fast_frames_only, stream);
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
  const DecodeWs w = decode_ws(total_dst_bytes, count);
  a.lay = w.fast;
  if (workspace_bytes < w.total) return Status::invalid_argument;
  CapDecArgs ca{};
  ca.items = d_items;
  ca.count = count;
  ca.limit = a.limit;
  ca.verify = cfg.verify_checksum ? 1u : 0u;
  return enqueue_decode_both(a, w, ca, d_out_sizes, d_statuses, cfg.d_corrupt_blocks, cfg.fast_frames_only,
                             stream);
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
