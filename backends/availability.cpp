// SPDX-License-Identifier: Apache-2.0
// backend_unavailable_reason(): the registry's account of each backend that
// cannot run here, in words (C++ and C API).
#include <cstring>

#include "backends/registry.h"
#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

#ifdef SPLITZIP_HAVE_CUDA
const char* cuda_unavailable_reason();  // cuda/availability.cpp
#endif

const char* backend_unavailable_reason(const char* name) {
  const Backend* b = find_backend(name);
  if (b == nullptr) return "not compiled into this build";
  if (b->available()) return nullptr;
#ifdef SPLITZIP_HAVE_CUDA
  if (std::strcmp(name, "cuda") == 0) {
    const char* r = cuda_unavailable_reason();
    return r ? r : "CUDA device present but the backend cannot use it";
  }
#endif
#ifdef SPLITZIP_HAVE_KOKKOS
  if (std::strcmp(name, "kokkos") == 0)
    return "the Kokkos runtime was finalized, or initialised by someone else in a way splitzip cannot use";
#endif
  return "not usable in this process";
}

}  // namespace splitzip

extern "C" const char* sz_backend_unavailable_reason(const char* name) {
  return splitzip::backend_unavailable_reason(name);
}
