// Default Backend methods: scalar histogram and host byte movement.
#include <cstring>

#include "backends/backend.h"
#include "core/reference.h"

namespace splitzip {

Status Backend::histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256],
                          int /*threads*/) const {
  if (counts == nullptr || !dtype_valid(dtype) || (src == nullptr && n > 0))
    return Status::invalid_argument;
  std::memset(counts, 0, 256 * sizeof(uint64_t));
  add_exponent_counts(dtype, src, n, counts);
  return Status::ok;
}

Status Backend::copy_bytes(void* dst, const void* src, uint64_t bytes) const {
  if (bytes == 0) return Status::ok;
  if (dst == nullptr || src == nullptr) return Status::invalid_argument;
  std::memmove(dst, src, bytes);
  return Status::ok;
}

Status Backend::zero_bytes(void* dst, uint64_t bytes) const {
  if (bytes == 0) return Status::ok;
  if (dst == nullptr) return Status::invalid_argument;
  std::memset(dst, 0, bytes);
  return Status::ok;
}

Status Backend::content_hash(const void* src, uint64_t bytes, uint64_t* out) const {
  if (out == nullptr || (src == nullptr && bytes > 0)) return Status::invalid_argument;
  *out = xxh64(src, bytes, 0);
  return Status::ok;
}

}  // namespace splitzip
