// SPDX-License-Identifier: Apache-2.0
#include "tests/conformance/targets.h"

#include "backends/registry.h"

namespace splitzip::conformance {

const std::vector<Target>& targets() {
  static const std::vector<Target> t = [] {
    std::vector<Target> v;
    for (size_t i = 0; i < registry_size(); ++i) {
      const Backend* b = registry_at(i);
      if (b->available() && b->accepts(MemoryKind::host)) v.push_back({b->name(), b});
    }
    return v;
  }();
  return t;
}

// FORMAT.md 4.7: fp8_e4m3 has mode 0 only.
bool defined_pair(Dtype d, Mode m) {
  switch (m) {
    case Mode::fast: return true;
    case Mode::capacity: return d != Dtype::fp8_e4m3;
  }
  return false;
}

std::vector<CodecDtype> codec_dtypes() {
  std::vector<CodecDtype> v;
  for (Mode m : {Mode::fast, Mode::capacity})
    for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3})
      if (defined_pair(d, m)) v.push_back({m, d});
  return v;
}

}  // namespace splitzip::conformance
