// SPDX-License-Identifier: Apache-2.0
// Dtype names, parsing and sizes.
#include <cstring>

#include "core/layout.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

bool dtype_valid(Dtype d) { return dtype_id_valid(static_cast<uint32_t>(d)); }

uint32_t dtype_bytes(Dtype d) { return geometry_of(static_cast<uint32_t>(d)).bytes; }

const char* dtype_name(Dtype d) {
  const char* name = "invalid";
  visit_dtype(d, [&](auto t) { name = decltype(t)::kName; });
  return name;
}

bool parse_dtype(const char* name, Dtype* out) {
  if (name == nullptr || out == nullptr) return false;
  for (uint32_t id = 1; id <= kDtypeCount; ++id) {
    const auto d = static_cast<Dtype>(id);
    if (std::strcmp(name, dtype_name(d)) == 0) {
      *out = d;
      return true;
    }
  }
  return false;
}

}  // namespace splitzip
