/* SPDX-License-Identifier: Apache-2.0 */
// The backend registry: one explicit list (registry.cpp, no self-registering
// statics) of the backends compiled into this build, each with its dispatch
// preference; why one cannot run is its own Backend::unavailable_reason().
// Dispatch, the C/C++/Python listings and `splitzip backends` all read it.
// A backend is compiled in when its CMake option is on and listed there under
// its SPLITZIP_HAVE_* macro.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/backend.h"

namespace splitzip {

constexpr uint32_t memory_bit(MemoryKind k) { return uint32_t{1} << static_cast<uint32_t>(k); }

struct RegistryEntry {
  const Backend* backend = nullptr;
  // Automatic dispatch (no backend named) tries the backends that may take
  // a buffer's memory kind lowest preference first.
  int preference = 0;
  // Memory kinds (memory_bit) automatic dispatch may give this backend; a
  // backend named by the caller is held only to its accepts().
  uint32_t auto_memory = 0;
};

// Entries in registry order (reference first); i < registry_size().
size_t registry_size();
const RegistryEntry& registry_entry(size_t i);
const Backend* registry_at(size_t i);           // null when i >= registry_size()
const Backend* find_backend(const char* name);  // null when not compiled in

struct DispatchRequest {
  const char* forced = nullptr;  // option; when null, $SPLITZIP_BACKEND
  MemoryKind memory = MemoryKind::host;
  uint64_t bytes = 0;            // uncompressed bytes
  Direction direction = Direction::encode;
};

// Picks a backend. A forced name that is unknown gives unknown_backend; one
// that is known but not available or cannot take this memory gives
// backend_unavailable / unsupported_memory. Never falls back silently.
// Otherwise the available entry of lowest preference whose auto_memory has
// the buffer's kind (unknown counts as host) and which accepts it, else
// unsupported_memory.
Status select_backend(const DispatchRequest& req, const Backend** out);

// Backends compiled into this build (declared here, defined in their dirs).
const Backend* reference_backend();
#ifdef SPLITZIP_HAVE_CPU
const Backend* cpu_backend();
#endif
#ifdef SPLITZIP_HAVE_CUDA
const Backend* cuda_backend();
// Defined in cuda/: where p lives per the CUDA runtime (host when no device).
MemoryKind cuda_pointer_kind(const void* p);
#endif
#ifdef SPLITZIP_HAVE_KOKKOS
const Backend* kokkos_backend();
#endif

}  // namespace splitzip
