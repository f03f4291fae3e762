// SPDX-License-Identifier: Apache-2.0
// Memory kinds (a dispatch notion, not a format one): their names, and where
// a pointer lives. Without CUDA every pointer is host memory.
#include "backends/registry.h"

namespace splitzip {

const char* memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::unknown: return "unknown";
    case MemoryKind::host: return "host";
    case MemoryKind::device: return "device";
    case MemoryKind::managed: return "managed";
  }
  return "invalid";
}

MemoryKind memory_kind_of(const void* p) {
#ifdef SPLITZIP_HAVE_CUDA
  return p == nullptr ? MemoryKind::host : cuda_pointer_kind(p);
#else
  (void)p;
  return MemoryKind::host;
#endif
}

}  // namespace splitzip
