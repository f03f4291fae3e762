/* SPDX-License-Identifier: Apache-2.0 */
// Explicit backend registry (no self-registering statics) and per-buffer
// dispatch. The list is in registry.cpp; a backend is compiled in when its
// CMake option is on and listed there under its SPLITZIP_HAVE_* macro.
#pragma once

#include <cstddef>

#include "backends/backend.h"

namespace splitzip {

size_t registry_size();
const Backend* registry_at(size_t i);
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
