// SPDX-License-Identifier: Apache-2.0
// The synchronous Backend ("cuda"): whole frames through the device
// pipelines of encode.cu / decode.cu (capacity mode: capacity_encode.cu /
// capacity_decode.cu), and cuda_pointer_kind(). Each call
// enqueues everything on the caller's stream (cuda::set_backend_stream for
// this thread; cudaStreamPerThread by default) and synchronises that stream
// once at the end, because Backend returns results. Host
// buffers are staged through stream-ordered temporary device memory
// (cudaMallocAsync); device and managed buffers are used in place. Works on
// the current device. Host synchronisations per call: see cuda/README.md.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "backends/registry.h"
#include "core/header.h"
#include "cuda/capacity_launch.h"
#include "cuda/codec_table.h"
#include "cuda/launch.h"
#include "splitzip/splitzip_cuda.hpp"

namespace splitzip {

const char* cuda_unavailable_reason();  // availability.cpp: null when a device is usable

MemoryKind cuda_pointer_kind(const void* p) {
  if (p == nullptr || !cuda::device_available()) return MemoryKind::host;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return MemoryKind::host;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice: return MemoryKind::device;
    case cudaMemoryTypeManaged: return MemoryKind::managed;
    default: return MemoryKind::host;  // pageable or pinned host memory
  }
}

namespace {
thread_local cudaStream_t t_backend_stream = cudaStreamPerThread;
}  // namespace

namespace cuda {
void set_backend_stream(cudaStream_t stream) { t_backend_stream = stream; }
cudaStream_t backend_stream() { return t_backend_stream; }
}  // namespace cuda

namespace {

using namespace cuda_detail;

bool device_side(const void* p) {
  const MemoryKind k = cuda_pointer_kind(p);
  return k == MemoryKind::device || k == MemoryKind::managed;
}

Status cuda_status(cudaError_t e) {
  if (e == cudaSuccess) return Status::ok;
  (void)cudaGetLastError();
  return e == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::device_error;
}

// Stream-ordered temporary device memory, freed in stream order.
class DeviceTemp {
 public:
  explicit DeviceTemp(cudaStream_t s) : stream_(s) {}
  DeviceTemp(const DeviceTemp&) = delete;
  DeviceTemp& operator=(const DeviceTemp&) = delete;
  ~DeviceTemp() {
    if (p_ != nullptr) (void)cudaFreeAsync(p_, stream_);
  }
  Status alloc(uint64_t bytes) {
    if (bytes == 0) bytes = 16;
    return cuda_status(cudaMallocAsync(&p_, bytes, stream_));
  }
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

// Small results the kernels write.
struct Outputs {
  uint64_t size;
  Status status;
  uint32_t pad;
  uint64_t corrupt_block;
};

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  bool available() const override { return cuda::device_available(); }
  const char* unavailable_reason() const override {
    if (available()) return "";
    const char* r = cuda_unavailable_reason();
    return r != nullptr ? r : "CUDA device present but the backend cannot use it";
  }
  bool accepts(MemoryKind) const override { return true; }

  uint64_t workspace_size(Dtype dtype, uint64_t n, Direction dir) const override {
    if (!dtype_valid(dtype)) return 0;
    const auto id = static_cast<uint32_t>(dtype);
    if (dir == Direction::encode) return any_codec_encode_workspace(id, n, 1);  // codec_table.h
    // A device-resident frame of unknown mode runs both decoders (their
    // workspaces side by side).
    return decode_workspace(n * dtype_bytes(dtype), 1).total + cap_decode_workspace(n * dtype_bytes(dtype), 1).total;
  }

  FrameOutcome compress_frame(const CompressArgs& args) const override {
    FrameOutcome out;
    if ((out.status = check_compress_args(args)) != Status::ok) return out;
    // check_compress_args refused a pair codec_of() does not take.
    const Codec codec = codec_of(args.dtype, args.mode);
    if (!available()) {
      out.status = Status::backend_unavailable;
      return out;
    }
    const cudaStream_t st = t_backend_stream;
    const auto id = static_cast<uint32_t>(args.dtype);
    const uint64_t bytes = args.n * dtype_bytes(args.dtype);
    const uint64_t n_checks = args.checksum ? checksum_blocks(bytes) : 0;
    // No frame is larger than the stored one with its checks (FORMAT.md 5).
    const uint64_t largest = stored_frame_size(id, args.n, n_checks);
    const uint64_t cap = args.capacity < largest ? args.capacity : largest;
    DeviceTemp src_tmp(st), frame_tmp(st), ws_tmp(st), small(st), set_tmp(st);
    Status s;
    const void* src = args.src;
    CapSetDev* set = nullptr;  // FORMAT.md 4.9: the set, its codes built by the setup kernel
    if (args.tables != nullptr && (s = upload_set(*args.tables, set_tmp, &set, st)) != Status::ok) return fail(out, s);
    if (bytes > 0 && !device_side(src)) {
      if ((s = src_tmp.alloc(bytes)) != Status::ok ||
          (s = cuda_status(cudaMemcpyAsync(src_tmp.get(), src, bytes, cudaMemcpyHostToDevice, st))) != Status::ok)
        return fail(out, s);
      src = src_tmp.get();
    }
    const bool dst_on_device = device_side(args.dst);
    void* dst = args.dst;
    if (!dst_on_device) {
      if ((s = frame_tmp.alloc(cap)) != Status::ok) return fail(out, s);
      dst = frame_tmp.get();
    }
    // Outputs, then (dynamic codebook) 256 counts and the codebook.
    const uint64_t counts_off = 64, cb_off = counts_off + 256 * 8;
    if ((s = small.alloc(cb_off + sizeof(Codebook))) != Status::ok) return fail(out, s);
    auto* o = reinterpret_cast<Outputs*>(small.get());
    EncodeJob j;
    j.src = src;
    j.dst = dst;
    j.n = args.n;
    j.capacity = cap;
    j.dtype = id;
    j.chunk_log2 = args.chunk_log2;
    j.checksum = args.checksum;
    j.elems = args.n;
    j.d_sizes = &o->size;
    j.d_statuses = &o->status;
    j.set = set;
    j.set_id = args.tables != nullptr ? args.tables->id : 0;
    if (codec_uses_codebook(codec) && args.codebook != nullptr) {
      j.cb = args.codebook;
    } else if (codec_uses_codebook(codec)) {  // dynamic top-16 (FORMAT.md 3) on the device
      auto* d_counts = reinterpret_cast<uint64_t*>(small.get() + counts_off);
      auto* d_cb = reinterpret_cast<Codebook*>(small.get() + cb_off);
      if ((s = cuda_status(cudaMemsetAsync(d_counts, 0, 256 * 8, st))) != Status::ok ||
          (s = enqueue_histogram(id, src, args.n, d_counts, st)) != Status::ok ||
          (s = enqueue_codebook(id, d_counts, d_cb, st)) != Status::ok)
        return fail(out, s);
      j.d_codebooks = d_cb;
    }
    j.ws_bytes = codec_encode_workspace(codec, id, args.n, 1, args.checksum);
    if ((s = workspace(args.workspace, args.workspace_size, j.ws_bytes, ws_tmp, &j.ws)) != Status::ok ||
        (s = enqueue_codec_encode(codec, j, st)) != Status::ok)
      return fail(out, s);
    return finish_encode(out, o, dst, dst_on_device ? nullptr : args.dst, cap, st);
  }

  FrameOutcome decompress_frame(const DecompressArgs& args) const override {
    return decode_one(args, args.max_output ? args.max_output : kNoBlock);
  }

  // Device-resident streams: one decompress per frame, each returning the
  // bytes it consumed from the device (the header is parsed there), so the
  // walk costs one host synchronisation per frame. Host streams use the
  // default walk (host frame iterator).
  FrameOutcome decompress_stream(const DecompressArgs& args) const override {
    FrameOutcome total;
    if ((total.status = check_decompress_args(args)) != Status::ok) return total;
    if (!device_side(args.src)) return Backend::decompress_stream(args);
    auto* dst = static_cast<uint8_t*>(args.dst);
    const auto* src = static_cast<const uint8_t*>(args.src);
    while (total.frame_size < args.src_size) {
      DecompressArgs one = args;
      one.src = src + total.frame_size;
      one.src_size = args.src_size - total.frame_size;
      one.dst = dst == nullptr ? nullptr : dst + total.decoded_size;
      one.capacity = args.capacity - total.decoded_size;
      const uint64_t limit = args.max_output ? args.max_output - total.decoded_size : kNoBlock;
      const FrameOutcome o = decode_one(one, limit);
      if (o.status != Status::ok) {
        total.status = o.status;
        total.corrupt_block = o.corrupt_block;
        return total;
      }
      total.decoded_size += o.decoded_size;
      total.frame_size += o.frame_size;
    }
    return total;
  }

  Status read_header_bytes(const void* src, uint8_t out[64]) const override {
    if (src == nullptr || out == nullptr) return Status::invalid_argument;
    if (!device_side(src)) {
      std::memcpy(out, src, 64);
      return Status::ok;
    }
    // On the caller's stream, after the work already enqueued there.
    const cudaStream_t st = t_backend_stream;
    Status s = cuda_status(cudaMemcpyAsync(out, src, 64, cudaMemcpyDeviceToHost, st));
    if (s == Status::ok) s = cuda_status(cudaStreamSynchronize(st));
    return s;
  }

 private:
  // An encode's outcome back to the host, and with a host destination the
  // whole staged range (the frame size is known only after the sync; at most
  // the stored frame size): the call's one sync.
  static FrameOutcome finish_encode(FrameOutcome& out, const Outputs* o, const void* dst, void* host_dst, uint64_t cap,
                                    cudaStream_t st) {
    Outputs host{};
    Status s;
    if ((s = cuda_status(cudaMemcpyAsync(&host, o, sizeof host, cudaMemcpyDeviceToHost, st))) != Status::ok)
      return fail(out, s);
    if (host_dst != nullptr &&
        (s = cuda_status(cudaMemcpyAsync(host_dst, dst, cap, cudaMemcpyDeviceToHost, st))) != Status::ok)
      return fail(out, s);
    if ((s = cuda_status(cudaStreamSynchronize(st))) != Status::ok) return fail(out, s);  // the one sync
    out.status = host.status;
    if (host.status == Status::ok) out.frame_size = host.size;
    return out;
  }

  // A table set into device memory (a CapSetDev for its T tables); the
  // kernels' setup builds its codes or decode tables there.
  static Status upload_set(const CapTables& ts, DeviceTemp& tmp, CapSetDev** out, cudaStream_t st) {
    Status s = tmp.alloc(cap_set_dev_bytes(ts.count));
    if (s == Status::ok)
      s = cuda_status(cudaMemcpyAsync(tmp.get(), &ts, sizeof ts, cudaMemcpyHostToDevice, st));
    *out = s == Status::ok ? reinterpret_cast<CapSetDev*>(tmp.get()) : nullptr;
    return s;
  }

  static FrameOutcome fail(FrameOutcome& out, Status s) {
    out.status = s;
    out.frame_size = 0;
    out.decoded_size = 0;
    return out;
  }

  // The caller's workspace when it is device memory of the size needed,
  // else stream-ordered temporary memory.
  static Status workspace(void* given, uint64_t given_size, uint64_t need, DeviceTemp& tmp, uint8_t** ws) {
    if (given != nullptr && given_size >= need && device_side(given) &&
        (reinterpret_cast<uintptr_t>(given) & 15u) == 0) {
      *ws = static_cast<uint8_t*>(given);
      return Status::ok;
    }
    const Status s = tmp.alloc(need);
    *ws = tmp.get();
    return s;
  }

  // One frame; limit = output bytes allowed (rule 12), kNoBlock for none.
  FrameOutcome decode_one(const DecompressArgs& args, uint64_t limit) const {
    FrameOutcome out;
    if ((out.status = check_decompress_args(args)) != Status::ok) return out;
    if (!available()) {
      out.status = Status::backend_unavailable;
      return out;
    }
    const cudaStream_t st = t_backend_stream;
    DeviceTemp src_tmp(st), dst_tmp(st), ws_tmp(st), small(st), set_tmp(st);
    Status s;
    const bool src_on_device = device_side(args.src);
    const bool dst_on_device = args.dst == nullptr || device_side(args.dst);
    const void* src = args.src;
    uint64_t src_size = args.src_size;
    // Output bytes, when the host must size a staging buffer for them (0
    // when the header is bad: the device then reports its status).
    uint64_t out_bytes = 0;
    // The decoder(s) to run: the host knows the mode when it read the header;
    // a device-to-device call does not, and runs both (the capacity kernels
    // leave frames that are not mode 1 alone): no extra host sync.
    const bool mode_known = !src_on_device || !dst_on_device;
    DecodeKernels kernels = DecodeKernels::fused;
    // The one set the kernels get (FORMAT.md 4.9): the frame's among the
    // given ones when the host reads the header; a device-to-device call
    // with one set passes it (the device compares its id), with several it
    // reads the header (one more sync).
    const CapTables* set_host = args.n_tables == 1 ? args.tables[0] : nullptr;
    if (mode_known || args.n_tables > 1) {
      uint8_t hb[64];
      FrameHeader h;
      const bool have = src_size >= 64 && read_header_bytes(args.src, hb) == Status::ok;  // device src: 1 sync
      // Header rules fail here exactly as on the device (parse_header is shared).
      const bool parsed = have && parse_header(hb, src_size, &h) == Status::ok;
      set_host = parsed && h.has_tables() ? cap_tables_find(args.tables, args.n_tables, h.tables_id(), h.dtype) : nullptr;
      if (mode_known && parsed) {
        kernels = codec_decode_kernels(codec_of(h.dtype, h.mode));
        out_bytes = h.decoded_bytes() < args.capacity ? h.decoded_bytes() : args.capacity;
        if (!src_on_device) src_size = h.frame_size;  // stage only the frame
      } else if (mode_known && !src_on_device) {
        src_size = src_size < 64 ? src_size : 64;  // the device reports the header's status
      }
    }
    CapSetDev* set = nullptr;
    if (set_host != nullptr && (s = upload_set(*set_host, set_tmp, &set, st)) != Status::ok) return fail(out, s);
    if (!src_on_device && src_size > 0) {
      if ((s = src_tmp.alloc(src_size)) != Status::ok ||
          (s = cuda_status(cudaMemcpyAsync(src_tmp.get(), src, src_size, cudaMemcpyHostToDevice, st))) !=
              Status::ok)
        return fail(out, s);
      src = src_tmp.get();
    }
    void* dst = args.dst;
    uint64_t capacity = args.capacity;
    if (!dst_on_device) {
      if ((s = dst_tmp.alloc(out_bytes)) != Status::ok) return fail(out, s);
      dst = dst_tmp.get();
      capacity = out_bytes < args.capacity ? out_bytes : args.capacity;
    }
    if ((s = small.alloc(sizeof(Outputs) + 8 + sizeof(CapDecOut))) != Status::ok) return fail(out, s);
    auto* o = reinterpret_cast<Outputs*>(small.get());
    DecSetupArgs a;
    a.count = 1;
    a.src = src;
    a.src_size = src_size;
    a.dst = dst;
    a.dst_capacity = args.dst == nullptr ? 0 : capacity;
    a.limit = limit;
    a.verify = args.verify_checksum;
    a.lay = decode_workspace(a.dst_capacity, 1);
    const bool run_fast = !mode_known || kernels == DecodeKernels::fused;
    const bool run_cap = !mode_known || kernels == DecodeKernels::capacity;
    CapDecArgs ca{};
    ca.count = 1;
    ca.lay = cap_decode_workspace(a.dst_capacity, 1);
    const uint64_t fast_ws = run_fast ? a.lay.total : 0;
    if ((s = workspace(args.workspace, args.workspace_size, fast_ws + (run_cap ? ca.lay.total : 0), ws_tmp, &a.ws)) !=
        Status::ok)
      return fail(out, s);
    if (run_fast && (s = enqueue_decode(a, &o->size, &o->status, &o->corrupt_block, st)) != Status::ok)
      return fail(out, s);
    auto* co = reinterpret_cast<CapDecOut*>(small.get() + sizeof(Outputs) + 8);
    if (run_cap) {  // FORMAT.md 4.6: capacity_decode.cu
      ca.src = static_cast<const uint8_t*>(src);
      ca.src_size = src_size;
      ca.dst = static_cast<uint8_t*>(dst);
      ca.dst_capacity = a.dst_capacity;
      ca.limit = limit;
      ca.verify = args.verify_checksum ? 1u : 0u;
      ca.ws = a.ws + fast_ws;
      ca.set = set;
      if ((s = enqueue_capacity_decode(ca, CapDecDest{co, nullptr, nullptr, nullptr}, st)) != Status::ok)
        return fail(out, s);
    }
    Outputs host{};
    CapDecOut cap_host{};
    uint64_t consumed = 0;
    const uint8_t* plan = a.ws + a.lay.plans_off;
    if (run_fast &&
        ((s = cuda_status(cudaMemcpyAsync(&host, o, sizeof host, cudaMemcpyDeviceToHost, st))) != Status::ok ||
         (s = cuda_status(cudaMemcpyAsync(&consumed, plan + offsetof(DecPlan, h) + offsetof(FrameHeader, frame_size),
                                          8, cudaMemcpyDeviceToHost, st))) != Status::ok))
      return fail(out, s);
    if (run_cap && (s = cuda_status(cudaMemcpyAsync(&cap_host, co, sizeof cap_host, cudaMemcpyDeviceToHost, st))) !=
                       Status::ok)
      return fail(out, s);
    // Host destination: copied back whatever the outcome (after an error the
    // destination's bytes are undefined, FORMAT.md 1).
    if (!dst_on_device && capacity > 0 &&
        (s = cuda_status(cudaMemcpyAsync(args.dst, dst, capacity, cudaMemcpyDeviceToHost, st))) != Status::ok)
      return fail(out, s);
    if ((s = cuda_status(cudaStreamSynchronize(st))) != Status::ok) return fail(out, s);  // the one sync
    if (run_cap && (!run_fast || cap_host.handled)) {
      host.status = cap_host.status;
      host.size = cap_host.size;
      host.corrupt_block = cap_host.corrupt_block;
      consumed = cap_host.consumed;
    }
    out.status = host.status;
    out.corrupt_block = host.corrupt_block;
    if (host.status == Status::ok) {
      out.decoded_size = host.size;
      out.frame_size = consumed;
    }
    return out;
  }
};

}  // namespace

const Backend* cuda_backend() {
  static const CudaBackend instance;
  return &instance;
}

}  // namespace splitzip
