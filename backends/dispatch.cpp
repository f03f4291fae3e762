// SPDX-License-Identifier: Apache-2.0
// Per-buffer backend selection from the registry list. An explicit choice
// (option or $SPLITZIP_BACKEND) is honoured or fails; it never falls back
// silently.
#include <cstdlib>

#include "backends/registry.h"

namespace splitzip {

Status select_backend(const DispatchRequest& req, const Backend** out) {
  if (out == nullptr) return Status::invalid_argument;
  const MemoryKind kind = req.memory == MemoryKind::unknown ? MemoryKind::host : req.memory;
  const char* forced = req.forced;
  if (forced == nullptr) {
    // Read per call so tests and long-lived hosts can change it; empty = unset.
    const char* env = std::getenv("SPLITZIP_BACKEND");
    if (env != nullptr && env[0] != '\0') forced = env;
  }
  if (forced != nullptr) {
    const Backend* b = find_backend(forced);
    if (b == nullptr) return Status::unknown_backend;
    if (!b->available()) return Status::backend_unavailable;
    if (!b->accepts(kind)) return Status::unsupported_memory;
    *out = b;
    return Status::ok;
  }
  const RegistryEntry* best = nullptr;
  for (size_t i = 0; i < registry_size(); ++i) {
    const RegistryEntry& e = registry_entry(i);
    if ((e.auto_memory & memory_bit(kind)) == 0 || (best != nullptr && e.preference >= best->preference))
      continue;
    if (e.backend->available() && e.backend->accepts(kind)) best = &e;
  }
  if (best == nullptr) return Status::unsupported_memory;
  *out = best->backend;
  return Status::ok;
}

}  // namespace splitzip
