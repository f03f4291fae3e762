// SPDX-License-Identifier: Apache-2.0
// Per-buffer backend selection. An explicit choice (option or
// $SPLITZIP_BACKEND) is honoured or fails; it never falls back silently.
#include <cstdlib>

#include "backends/registry.h"

namespace splitzip {
namespace {

const Backend* usable(const char* name, MemoryKind kind) {
  const Backend* b = find_backend(name);
  return b != nullptr && b->available() && b->accepts(kind) ? b : nullptr;
}

}  // namespace

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
  const Backend* b = nullptr;
  if (kind == MemoryKind::device || kind == MemoryKind::managed) {
    b = usable("cuda", kind);
    if (b == nullptr && kind == MemoryKind::device) return Status::unsupported_memory;
  }
  if (b == nullptr) b = usable("cpu", kind);
  if (b == nullptr) b = usable("reference", kind);
  if (b == nullptr) return Status::unsupported_memory;
  *out = b;
  return Status::ok;
}

}  // namespace splitzip
