// The synchronous Backend adapter ("cuda") for the frame layer, and
// cuda_pointer_kind(). Backend calls return results, so each one ends with a
// stream synchronisation (cudaStreamPerThread); the asynchronous path is
// include/splitzip/splitzip_cuda.hpp. Host buffers are accepted and staged
// through temporary device memory (stream-ordered cudaMallocAsync); device
// and managed buffers are used in place. Works on the current device.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "backends/registry.h"
#include "cuda/launch.h"
#include "splitzip/splitzip_cuda.hpp"

namespace splitzip {

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

// Small results the kernels write: frame size / status pairs.
struct Outputs {
  uint64_t size;
  Status status;
};

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  bool available() const override { return cuda::device_available(); }
  bool accepts(MemoryKind) const override { return true; }

  Status encode(EncodeJob& job) const override {
    if (!available()) return Status::backend_unavailable;
    if (job.codebook == nullptr || job.frame == nullptr || (job.src == nullptr && job.n > 0))
      return Status::invalid_argument;
    if (job.max_escapes == kNoEscapeBudget) return Status::escape_overflow;
    const cudaStream_t st = cudaStreamPerThread;
    const uint32_t id = static_cast<uint32_t>(job.dtype);
    const uint64_t bytes = job.n * dtype_bytes(job.dtype);
    const uint64_t need = coded_layout(id, job.n, job.chunk_log2, job.max_escapes).frame_size;
    if (need > job.capacity) return Status::invalid_argument;

    DeviceTemp src_tmp(st), frame_tmp(st), ws(st), out(st);
    Status s;
    const void* src = job.src;
    if (!device_side(src) && bytes > 0) {
      if ((s = src_tmp.alloc(bytes)) != Status::ok) return s;
      if ((s = cuda_status(cudaMemcpyAsync(src_tmp.get(), src, bytes, cudaMemcpyDefault, st))) != Status::ok)
        return s;
      src = src_tmp.get();
    }
    const bool frame_on_device = device_side(job.frame);
    uint8_t* frame = job.frame;
    if (!frame_on_device) {
      if ((s = frame_tmp.alloc(need)) != Status::ok) return s;
      frame = frame_tmp.get();
    }
    EncSetupArgs a;
    a.count = 1;
    a.src = src;
    a.dst = frame;
    a.n = job.n;
    a.capacity = frame_on_device ? job.capacity : need;
    a.budget = job.max_escapes;
    a.cb = *job.codebook;
    a.dtype = id;
    a.chunk_log2 = job.chunk_log2;
    a.flags = kPlanStreamsOnly;
    a.lay = encode_workspace(id, job.n, 1);
    if ((s = ws.alloc(a.lay.total)) != Status::ok) return s;
    a.ws = ws.get();
    if ((s = out.alloc(sizeof(Outputs))) != Status::ok) return s;
    auto* o = reinterpret_cast<Outputs*>(out.get());
    if ((s = enqueue_encode(a, job.n, &o->size, &o->status, st)) != Status::ok) return s;
    Outputs host{};
    uint64_t escapes = 0;
    const uint8_t* plan = a.ws + a.lay.plans_off;
    if ((s = cuda_status(cudaMemcpyAsync(&host, o, sizeof host, cudaMemcpyDeviceToHost, st))) != Status::ok ||
        (s = cuda_status(cudaMemcpyAsync(&escapes, plan + offsetof(EncPlan, escapes), 8,
                                         cudaMemcpyDeviceToHost, st))) != Status::ok ||
        (s = cuda_status(cudaStreamSynchronize(st))) != Status::ok)
      return s;
    if (host.status != Status::ok) return host.status;
    if (!frame_on_device) {
      const uint64_t fsize = coded_layout(id, job.n, job.chunk_log2, escapes).frame_size;
      if ((s = cuda_status(cudaMemcpyAsync(job.frame + 64, frame + 64, fsize - 64, cudaMemcpyDefault, st))) !=
              Status::ok ||
          (s = cuda_status(cudaStreamSynchronize(st))) != Status::ok)
        return s;
    }
    job.escape_count = escapes;
    return Status::ok;
  }

  Status decode(const DecodeJob& job) const override {
    if (!available()) return Status::backend_unavailable;
    if (job.header == nullptr || job.frame == nullptr) return Status::invalid_argument;
    const FrameHeader& h = *job.header;
    const uint64_t out_bytes = h.n_elems * geometry_of(h.dtype).bytes;
    if (job.dst == nullptr && out_bytes > 0) return Status::invalid_argument;
    const cudaStream_t st = cudaStreamPerThread;
    DeviceTemp frame_tmp(st), dst_tmp(st), ws(st), out(st);
    Status s;
    const uint8_t* frame = job.frame;
    if (!device_side(frame)) {
      if ((s = frame_tmp.alloc(h.frame_size)) != Status::ok) return s;
      if ((s = cuda_status(cudaMemcpyAsync(frame_tmp.get(), frame, h.frame_size, cudaMemcpyDefault, st))) !=
          Status::ok)
        return s;
      frame = frame_tmp.get();
    }
    const bool dst_on_device = device_side(job.dst);
    void* dst = job.dst;
    if (!dst_on_device) {
      if ((s = dst_tmp.alloc(out_bytes)) != Status::ok) return s;
      dst = dst_tmp.get();
    }
    DecSetupArgs a;
    a.count = 1;
    a.src = frame;
    a.src_size = h.frame_size;
    a.dst = dst;
    a.dst_capacity = out_bytes;
    a.verify = false;  // rule 19 is the frame layer's
    a.lay = decode_workspace(out_bytes, 1);
    if ((s = ws.alloc(a.lay.total)) != Status::ok) return s;
    a.ws = ws.get();
    if ((s = out.alloc(sizeof(Outputs))) != Status::ok) return s;
    auto* o = reinterpret_cast<Outputs*>(out.get());
    if ((s = enqueue_decode(a, &o->size, &o->status, st)) != Status::ok) return s;
    Outputs host{};
    if ((s = cuda_status(cudaMemcpyAsync(&host, o, sizeof host, cudaMemcpyDeviceToHost, st))) != Status::ok ||
        (s = cuda_status(cudaStreamSynchronize(st))) != Status::ok)
      return s;
    if (host.status != Status::ok) return host.status;
    if (!dst_on_device && out_bytes > 0) {
      if ((s = cuda_status(cudaMemcpyAsync(job.dst, dst, out_bytes, cudaMemcpyDefault, st))) != Status::ok ||
          (s = cuda_status(cudaStreamSynchronize(st))) != Status::ok)
        return s;
    }
    return Status::ok;
  }

  Status histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256], int) const override {
    if (counts == nullptr || !dtype_valid(dtype) || (src == nullptr && n > 0)) return Status::invalid_argument;
    if (!available()) return Status::backend_unavailable;
    const cudaStream_t st = cudaStreamPerThread;
    DeviceTemp src_tmp(st), dc(st);
    const uint64_t bytes = n * dtype_bytes(dtype);
    Status s;
    if (!device_side(src) && bytes > 0) {
      if ((s = src_tmp.alloc(bytes)) != Status::ok) return s;
      if ((s = cuda_status(cudaMemcpyAsync(src_tmp.get(), src, bytes, cudaMemcpyDefault, st))) != Status::ok)
        return s;
      src = src_tmp.get();
    }
    if ((s = dc.alloc(256 * sizeof(uint64_t))) != Status::ok) return s;
    auto* d_counts = reinterpret_cast<uint64_t*>(dc.get());
    if ((s = cuda_status(cudaMemsetAsync(d_counts, 0, 256 * sizeof(uint64_t), st))) != Status::ok) return s;
    if ((s = enqueue_histogram(static_cast<uint32_t>(dtype), src, n, d_counts, st)) != Status::ok) return s;
    if ((s = cuda_status(cudaMemcpyAsync(counts, d_counts, 256 * sizeof(uint64_t), cudaMemcpyDeviceToHost,
                                         st))) != Status::ok)
      return s;
    return cuda_status(cudaStreamSynchronize(st));
  }

  Status copy_bytes(void* dst, const void* src, uint64_t bytes) const override {
    if (bytes == 0) return Status::ok;
    if (dst == nullptr || src == nullptr) return Status::invalid_argument;
    if (!device_side(dst) && !device_side(src)) {
      std::memmove(dst, src, bytes);
      return Status::ok;
    }
    const cudaStream_t st = cudaStreamPerThread;
    const Status s = cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st));
    if (s != Status::ok) return s;
    return cuda_status(cudaStreamSynchronize(st));
  }

  Status zero_bytes(void* dst, uint64_t bytes) const override {
    if (bytes == 0) return Status::ok;
    if (dst == nullptr) return Status::invalid_argument;
    if (!device_side(dst)) {
      std::memset(dst, 0, bytes);
      return Status::ok;
    }
    const cudaStream_t st = cudaStreamPerThread;
    const Status s = cuda_status(cudaMemsetAsync(dst, 0, bytes, st));
    if (s != Status::ok) return s;
    return cuda_status(cudaStreamSynchronize(st));
  }

  Status content_hash(const void* src, uint64_t bytes, uint64_t* out) const override {
    if (out == nullptr || (src == nullptr && bytes > 0)) return Status::invalid_argument;
    if (!device_side(src)) {
      *out = xxh64(src, bytes, 0);
      return Status::ok;
    }
    const cudaStream_t st = cudaStreamPerThread;
    DeviceTemp d(st);
    Status s;
    if ((s = d.alloc(8)) != Status::ok) return s;
    auto* d_hash = reinterpret_cast<uint64_t*>(d.get());
    if ((s = enqueue_hash(src, bytes, d_hash, st)) != Status::ok) return s;
    if ((s = cuda_status(cudaMemcpyAsync(out, d_hash, 8, cudaMemcpyDeviceToHost, st))) != Status::ok) return s;
    return cuda_status(cudaStreamSynchronize(st));
  }
};

}  // namespace

const Backend* cuda_backend() {
  static const CudaBackend instance;
  return &instance;
}

}  // namespace splitzip
