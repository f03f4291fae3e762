/* SPDX-License-Identifier: Apache-2.0 */
// The CUDA backend's kernels per codec (core/codec.h): one overload on
// CodecTag per codec, reached only through visit_codec(codec_of(...)), so a
// codec without CUDA kernels does not compile (as the kernel tables of
// core/frame_skeleton.h do for the host backends). Host code; api.cu and
// cuda_backend.cu both enqueue through it.
//
// Why not compress_with / decompress_with: the skeleton's steps run on the
// device here. Encode's plan, codec, stored fallback and finish are phases of
// one cooperative launch (the escape count is known only there), and a
// device-resident frame is opened on the device, so the host cannot pick its
// codec. The order is the skeleton's: setup (argument checks, rules 1-14)
// -> the codec's kernels (15-18) -> finalize (rule 19, with core's
// block_check_ok / content_status).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/codec.h"
#include "cuda/capacity_launch.h"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {

// One encode call: a batch (items in device memory) or the one buffer here.
struct EncodeJob {
  const cuda::CompressItem* items = nullptr;
  uint64_t count = 1;
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t n = 0;
  uint64_t capacity = 0;
  const Codebook* cb = nullptr;           // single buffer: a host codebook, passed by value
  const Codebook* d_codebooks = nullptr;  // else device codebooks (batch, or dynamic top-16)
  uint32_t n_codebooks = 0;
  uint32_t dtype = 0;
  uint32_t chunk_log2 = 0;
  bool checksum = false;
  uint64_t elems = 0;  // all buffers' elements (sizes the workspace and the grid)
  uint8_t* ws = nullptr;
  uint64_t ws_bytes = 0;
  uint64_t* d_sizes = nullptr;
  Status* d_statuses = nullptr;
  CapSetDev* set = nullptr;  // capacity: a table set in device memory (FORMAT.md 4.9)
  uint64_t set_id = 0;
};

// ---- nibble and e4m3: the fused encode kernel (encode.cu), which picks
// the dtype's layout on the device through the same codec_of ----
inline uint64_t fused_encode_workspace(uint32_t dtype, uint64_t elems, uint64_t count) {
  return encode_workspace(dtype, elems, count).total;
}
inline Status enqueue_fused_encode(const EncodeJob& j, cudaStream_t st) {
  EncSetupArgs a;
  a.items = j.items;
  a.count = j.count;
  a.src = j.src;
  a.dst = j.dst;
  a.n = j.n;
  a.capacity = j.capacity;
  if (j.items == nullptr && j.cb != nullptr) {
    a.cb = *j.cb;
  } else {
    a.codebooks = j.d_codebooks;
    a.n_codebooks = j.n_codebooks;
  }
  a.dtype = j.dtype;
  a.chunk_log2 = j.chunk_log2;
  a.flags = j.checksum ? kPlanChecksum : 0;
  a.ws = j.ws;
  a.lay = encode_workspace(j.dtype, j.elems, j.count);
  if (j.ws_bytes < a.lay.total) return Status::invalid_argument;
  return enqueue_encode(a, j.elems, j.d_sizes, j.d_statuses, st);
}

inline constexpr bool uses_codebook(CodecTag<Codec::nibble>) { return true; }
inline uint64_t encode_workspace_of(CodecTag<Codec::nibble>, uint32_t dtype, uint64_t elems, uint64_t count, bool) {
  return fused_encode_workspace(dtype, elems, count);
}
inline Status enqueue_encode_of(CodecTag<Codec::nibble>, const EncodeJob& j, cudaStream_t st) {
  return enqueue_fused_encode(j, st);
}

inline constexpr bool uses_codebook(CodecTag<Codec::e4m3>) { return true; }
inline uint64_t encode_workspace_of(CodecTag<Codec::e4m3>, uint32_t dtype, uint64_t elems, uint64_t count, bool) {
  return fused_encode_workspace(dtype, elems, count);
}
inline Status enqueue_encode_of(CodecTag<Codec::e4m3>, const EncodeJob& j, cudaStream_t st) {
  return enqueue_fused_encode(j, st);
}

// ---- capacity (FORMAT.md 4.6): capacity_encode.cu; no codebook ----
inline constexpr bool uses_codebook(CodecTag<Codec::capacity>) { return false; }
inline uint64_t encode_workspace_of(CodecTag<Codec::capacity>, uint32_t dtype, uint64_t elems, uint64_t count,
                                    bool checksum) {
  return cap_encode_workspace(dtype, elems, count, checksum).total;
}
inline Status enqueue_encode_of(CodecTag<Codec::capacity>, const EncodeJob& j, cudaStream_t st) {
  CapEncArgs c{};
  c.items = j.items;
  c.count = j.count;
  c.src = static_cast<const uint8_t*>(j.src);
  c.dst = static_cast<uint8_t*>(j.dst);
  c.n = j.n;
  c.capacity = j.capacity;
  c.dtype = j.dtype;
  c.chunk_log2 = j.chunk_log2;
  c.checksum = j.checksum ? 1u : 0u;
  c.ws = j.ws;
  c.lay = cap_encode_workspace(j.dtype, j.elems, j.count, j.checksum);
  c.set = j.set;
  c.set_id = j.set_id;
  if (j.ws_bytes < c.lay.total) return Status::invalid_argument;
  return enqueue_capacity_encode(c, j.d_sizes, j.d_statuses, st);
}

// ---- which decoder kernels read a codec's frames ----
enum class DecodeKernels : uint8_t { fused, capacity };  // decode.cu, capacity_decode.cu
inline constexpr DecodeKernels decode_kernels_of(CodecTag<Codec::nibble>) { return DecodeKernels::fused; }
inline constexpr DecodeKernels decode_kernels_of(CodecTag<Codec::e4m3>) { return DecodeKernels::fused; }
inline constexpr DecodeKernels decode_kernels_of(CodecTag<Codec::capacity>) { return DecodeKernels::capacity; }

// ---- by codec value ----
inline bool codec_uses_codebook(Codec c) {
  bool u = false;
  visit_codec(c, [&](auto tag) { u = uses_codebook(tag); });
  return u;
}
// invalid_argument for Codec::invalid (the caller's checks refuse it first).
inline Status enqueue_codec_encode(Codec c, const EncodeJob& j, cudaStream_t st) {
  Status s = Status::invalid_argument;
  visit_codec(c, [&](auto tag) { s = enqueue_encode_of(tag, j, st); });
  return s;
}
inline uint64_t codec_encode_workspace(Codec c, uint32_t dtype, uint64_t elems, uint64_t count, bool checksum) {
  uint64_t w = 0;
  visit_codec(c, [&](auto tag) { w = encode_workspace_of(tag, dtype, elems, count, checksum); });
  return w;
}
// The largest encode workspace of the codecs that take the dtype, checksum
// or not: what a caller must provide before it knows the mode.
inline uint64_t any_codec_encode_workspace(uint32_t dtype, uint64_t elems, uint64_t count) {
  uint64_t w = 0;
  for (uint32_t i = 0; i < kCodecCount; ++i) {
    const Codec c = static_cast<Codec>(i);
    if (!codec_takes(c, dtype)) continue;
    const uint64_t x = codec_encode_workspace(c, dtype, elems, count, true);
    w = x > w ? x : w;
  }
  return w;
}
inline DecodeKernels codec_decode_kernels(Codec c) {
  DecodeKernels k = DecodeKernels::fused;
  visit_codec(c, [&](auto tag) { k = decode_kernels_of(tag); });
  return k;
}

}  // namespace cuda_detail
}  // namespace splitzip
