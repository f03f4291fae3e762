// SPDX-License-Identifier: Apache-2.0
// The backend registry: the one list of backends in this build and their
// dispatch preference. Adding a backend means adding one row here under its
// SPLITZIP_HAVE_* macro; its unavailable_reason() says why it cannot run.
#include "backends/registry.h"

#include <cstring>
#include <vector>

namespace splitzip {
namespace {

std::vector<RegistryEntry> make_registry() {
  constexpr uint32_t host = memory_bit(MemoryKind::host);
  [[maybe_unused]] constexpr uint32_t device = memory_bit(MemoryKind::device);
  constexpr uint32_t managed = memory_bit(MemoryKind::managed);
  // Registry order is listing order (reference first). Preference: the GPU
  // takes device and managed buffers, then the SIMD CPU backend, then the
  // scalar reference; Kokkos runs only when named.
  return {
      // backend            preference  automatic for
      {reference_backend(), 3, host | managed},
#ifdef SPLITZIP_HAVE_CPU
      {cpu_backend(), 2, host | managed},
#endif
#ifdef SPLITZIP_HAVE_CUDA
      {cuda_backend(), 1, device | managed},
#endif
#ifdef SPLITZIP_HAVE_KOKKOS
      {kokkos_backend(), 4, 0},
#endif
  };
}

const std::vector<RegistryEntry>& registry() {
  static const std::vector<RegistryEntry> r = make_registry();
  return r;
}

}  // namespace

size_t registry_size() { return registry().size(); }

const RegistryEntry& registry_entry(size_t i) { return registry()[i]; }

const Backend* registry_at(size_t i) { return i < registry().size() ? registry()[i].backend : nullptr; }

const Backend* find_backend(const char* name) {
  if (name == nullptr) return nullptr;
  for (const RegistryEntry& e : registry())
    if (std::strcmp(e.backend->name(), name) == 0) return e.backend;
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

const char* backend_unavailable_reason(const char* name) {
  const Backend* b = find_backend(name);
  if (b == nullptr) return "not compiled into this build";
  if (b->available()) return nullptr;
  const char* r = b->unavailable_reason();
  return r != nullptr && r[0] != '\0' ? r : "not usable in this process";
}

}  // namespace splitzip
