// SPDX-License-Identifier: Apache-2.0
// The explicit backend registry: reference first, then each compiled backend.
// Adding a backend means adding one line here under its SPLITZIP_HAVE_* macro.
#include <cstring>

#include "backends/registry.h"

namespace splitzip {
namespace {

struct Registry {
  const Backend* items[4] = {};
  size_t size = 0;
  Registry() {
    items[size++] = reference_backend();
#ifdef SPLITZIP_HAVE_CPU
    items[size++] = cpu_backend();
#endif
#ifdef SPLITZIP_HAVE_CUDA
    items[size++] = cuda_backend();
#endif
#ifdef SPLITZIP_HAVE_KOKKOS
    items[size++] = kokkos_backend();
#endif
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

size_t registry_size() { return registry().size; }

const Backend* registry_at(size_t i) { return i < registry().size ? registry().items[i] : nullptr; }

const Backend* find_backend(const char* name) {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < registry().size; ++i)
    if (std::strcmp(registry().items[i]->name(), name) == 0) return registry().items[i];
  return nullptr;
}

size_t backend_count() { return registry_size(); }

const char* backend_name(size_t index) {
  const Backend* b = registry_at(index);
  return b ? b->name() : nullptr;
}

bool backend_available(const char* name) {
  const Backend* b = find_backend(name);
  return b != nullptr && b->available();
}

}  // namespace splitzip
