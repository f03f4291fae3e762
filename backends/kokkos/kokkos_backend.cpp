// The Kokkos backend: the kernels of kokkos_encode.h / kokkos_decode.h /
// kokkos_histogram.h run on Kokkos::DefaultExecutionSpace.
//
// Memory: a host-reachable default space (Serial, OpenMP, Threads) takes host
// and managed buffers; a device space (CUDA) takes device and managed
// buffers, and the byte-movement hooks then go through Kokkos::deep_copy.
#include <new>
#include <vector>

#include "backends/kokkos/kokkos_decode.h"
#include "backends/kokkos/kokkos_encode.h"
#include "backends/kokkos/kokkos_histogram.h"
#include "backends/kokkos/kokkos_runtime.h"
#include "backends/registry.h"

namespace splitzip {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
constexpr bool kHostReachable = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

// Runs f with Kokkos up and launches serialized; no exception escapes.
template <class F>
Status run(F&& f) {
  try {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    if (!kokkos_impl::ensure_runtime()) return Status::backend_unavailable;
    return f();
  } catch (const std::bad_alloc&) {  // Kokkos allocation failures derive from it
    return Status::out_of_memory;
  } catch (...) {
    return Status::internal_error;
  }
}

class KokkosBackend final : public Backend {
 public:
  const char* name() const override { return "kokkos"; }

  bool available() const override { return kokkos_impl::runtime_usable(); }

  bool accepts(MemoryKind kind) const override {
    switch (kind) {
      case MemoryKind::host:
      case MemoryKind::unknown: return kHostReachable;
      case MemoryKind::device: return !kHostReachable;
      case MemoryKind::managed: return true;
    }
    return false;
  }

  Status encode(EncodeJob& job) const override {
    return run([&] { return kokkos_impl::encode(Space(), job); });
  }

  Status decode(const DecodeJob& job) const override {
    return run([&] { return kokkos_impl::decode(Space(), job); });
  }

  Status histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256],
                   int /*threads*/) const override {
    return run([&] { return kokkos_impl::histogram(Space(), dtype, src, n, counts); });
  }

  Status copy_bytes(void* dst, const void* src, uint64_t bytes) const override {
    if constexpr (kHostReachable) {
      return Backend::copy_bytes(dst, src, bytes);
    } else {
      if (bytes == 0) return Status::ok;
      if (dst == nullptr || src == nullptr) return Status::invalid_argument;
      // Device deep copies go through the runtime's unified addressing, so
      // either side may be host memory.
      return run([&] {
        Kokkos::deep_copy(Space(), kokkos_impl::Bytes<Space>(static_cast<uint8_t*>(dst), bytes),
                          kokkos_impl::ConstBytes<Space>(static_cast<const uint8_t*>(src), bytes));
        Space().fence();
        return Status::ok;
      });
    }
  }

  Status zero_bytes(void* dst, uint64_t bytes) const override {
    if constexpr (kHostReachable) {
      return Backend::zero_bytes(dst, bytes);
    } else {
      if (bytes == 0) return Status::ok;
      if (dst == nullptr) return Status::invalid_argument;
      return run([&] {
        Kokkos::deep_copy(Space(), kokkos_impl::Bytes<Space>(static_cast<uint8_t*>(dst), bytes), uint8_t{0});
        Space().fence();
        return Status::ok;
      });
    }
  }

  Status content_hash(const void* src, uint64_t bytes, uint64_t* out) const override {
    if constexpr (kHostReachable) {
      return Backend::content_hash(src, bytes, out);
    } else {
      if (out == nullptr || (src == nullptr && bytes > 0)) return Status::invalid_argument;
      std::vector<uint8_t> host;
      try {
        host.resize(bytes);
      } catch (const std::bad_alloc&) {
        return Status::out_of_memory;
      }
      const Status c = copy_bytes(host.data(), src, bytes);
      if (c != Status::ok) return c;
      *out = xxh64(host.data(), bytes, 0);
      return Status::ok;
    }
  }
};

}  // namespace

const Backend* kokkos_backend() {
  static const KokkosBackend instance;
  return &instance;
}

}  // namespace splitzip
