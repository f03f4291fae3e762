// SPDX-License-Identifier: Apache-2.0
// Where a pointer lives. Without CUDA every pointer is host memory.
#include "backends/registry.h"

namespace splitzip {

MemoryKind memory_kind_of(const void* p) {
#ifdef SPLITZIP_HAVE_CUDA
  return p == nullptr ? MemoryKind::host : cuda_pointer_kind(p);
#else
  (void)p;
  return MemoryKind::host;
#endif
}

}  // namespace splitzip
