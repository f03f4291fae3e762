// SPDX-License-Identifier: Apache-2.0
// The scalar reference as a Backend: host memory only, single-threaded.
#include "backends/registry.h"
#include "core/reference.h"

namespace splitzip {
namespace {

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "reference"; }
  bool available() const override { return true; }
  bool accepts(MemoryKind kind) const override {
    return kind == MemoryKind::host || kind == MemoryKind::managed || kind == MemoryKind::unknown;
  }
  FrameOutcome compress_frame(const CompressArgs& a) const override { return reference_compress(a); }
  FrameOutcome decompress_frame(const DecompressArgs& a) const override { return reference_decompress(a); }
};

}  // namespace

const Backend* reference_backend() {
  static const ReferenceBackend instance;
  return &instance;
}

}  // namespace splitzip
