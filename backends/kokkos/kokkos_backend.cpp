// SPDX-License-Identifier: Apache-2.0
// The Kokkos backend: whole frames (kokkos_frame.h) on
// Kokkos::DefaultExecutionSpace.
//
// Memory: a host-reachable default space (Serial, OpenMP, Threads) takes host
// and managed buffers; a device space (CUDA) takes device and managed
// buffers (header bytes and block hashes then cross via Kokkos::deep_copy).
#include <new>

#include "backends/kokkos/kokkos_frame.h"
#include "backends/kokkos/kokkos_runtime.h"
#include "backends/registry.h"

namespace splitzip {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
constexpr bool kHostReachable = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

// Runs f with Kokkos up and launches serialized; no exception escapes.
template <class F>
FrameOutcome run(F&& f) {
  FrameOutcome o;
  try {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    if (!kokkos_impl::ensure_runtime()) {
      o.status = Status::backend_unavailable;
      return o;
    }
    return f();
  } catch (const std::bad_alloc&) {  // Kokkos allocation failures derive from it
    o.status = Status::out_of_memory;
  } catch (...) {
    o.status = Status::internal_error;
  }
  return o;
}

class KokkosBackend final : public Backend {
 public:
  const char* name() const override { return "kokkos"; }

  bool available() const override { return kokkos_impl::runtime_usable(); }

  const char* unavailable_reason() const override {
    return available() ? ""
                       : "the Kokkos runtime was finalized, or initialised by someone else in a way "
                         "splitzip cannot use";
  }

  bool accepts(MemoryKind kind) const override {
    switch (kind) {
      case MemoryKind::host:
      case MemoryKind::unknown: return kHostReachable;
      case MemoryKind::device: return !kHostReachable;
      case MemoryKind::managed: return true;
    }
    return false;
  }

  FrameOutcome compress_frame(const CompressArgs& a) const override {
    return run([&] { return kokkos_impl::compress_frame(Space(), a); });
  }

  FrameOutcome decompress_frame(const DecompressArgs& a) const override {
    return run([&] { return kokkos_impl::decompress_frame(Space(), a); });
  }

  // Host spaces read frames in place; a device space reads each header of a
  // stream through a copy (Backend::decompress_stream).
  bool host_reachable(const void* p) const override {
    if constexpr (kHostReachable) return Backend::host_reachable(p);
    return false;
  }

  Status read_header_bytes(const void* src, uint8_t out[64]) const override {
    if constexpr (kHostReachable) {
      return Backend::read_header_bytes(src, out);
    } else {
      if (src == nullptr || out == nullptr) return Status::invalid_argument;
      FrameOutcome o = run([&] {
        Kokkos::deep_copy(Space(), kokkos_impl::HostBytes(out, 64),
                          kokkos_impl::ConstBytes<Space>(static_cast<const uint8_t*>(src), 64));
        Space().fence();
        return FrameOutcome{};
      });
      return o.status;
    }
  }
};

}  // namespace

const Backend* kokkos_backend() {
  static const KokkosBackend instance;
  return &instance;
}

}  // namespace splitzip
