// SPDX-License-Identifier: Apache-2.0
// Codebook: validation (rule 9), histogram, deterministic top-16 calibration
// (FORMAT.md 3) and the .szcb file (FORMAT.md 10).
#include <cstdio>
#include <cstring>

#include "core/header.h"
#include "core/reference.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

namespace {
constexpr uint8_t kCbMagic[4] = {0x53, 0x5A, 0x43, 0x42};  // "SZCB"
}

Status validate_codebook(const Codebook& cb) {
  return check_codebook(static_cast<uint32_t>(cb.dtype), cb.entries, cb.count);
}

void add_exponent_counts(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256]) {
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using Bits = typename T::Bits;
    const auto* p = static_cast<const uint8_t*>(src);
    for (uint64_t i = 0; i < n; ++i) {
      Bits v;
      std::memcpy(&v, p + i * T::kBytes, sizeof v);  // unaligned-safe; hosts are little-endian
      ++counts[T::exponent(v)];
    }
  });
}

Histogram::Histogram(Dtype dtype) : dtype_(dtype) {}

void Histogram::add(const void* data, uint64_t n_elems) {
  if (data == nullptr || n_elems == 0) return;
  add_exponent_counts(dtype_, data, n_elems, counts_);
  total_ += n_elems;
}

void Histogram::add_counts(const uint64_t counts[256]) {
  if (counts == nullptr) return;
  for (uint32_t e = 0; e < 256; ++e) {
    counts_[e] += counts[e];
    total_ += counts[e];
  }
}

Codebook Histogram::codebook() const {
  Codebook cb;
  cb.dtype = dtype_;
  cb.count = static_cast<uint8_t>(top_codebook(counts_, cb.entries, codebook_limit(static_cast<uint32_t>(dtype_))));
  return cb;
}

Status calibrate(Dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                 size_t n_buffers, Codebook* out) {
  if (out == nullptr || !dtype_valid(dtype)) return Status::invalid_argument;
  if (n_buffers > 0 && (buffers == nullptr || n_elems == nullptr)) return Status::invalid_argument;
  Histogram h(dtype);
  for (size_t i = 0; i < n_buffers; ++i) {
    if (n_elems[i] > kMaxElems || (buffers[i] == nullptr && n_elems[i] > 0))
      return Status::invalid_argument;
    h.add(buffers[i], n_elems[i]);
  }
  if (h.total() == 0) return Status::invalid_argument;  // nothing to calibrate on
  *out = h.codebook();
  return Status::ok;
}

Status codebook_serialize(const Codebook& cb, uint8_t out[kCodebookFileSize]) {
  if (out == nullptr) return Status::invalid_argument;
  const Status s = validate_codebook(cb);
  if (s != Status::ok) return s;
  std::memset(out, 0, kCodebookFileSize);
  std::memcpy(out, kCbMagic, 4);
  out[4] = 1;
  out[5] = static_cast<uint8_t>(cb.dtype);
  out[6] = cb.count;
  std::memcpy(out + 8, cb.entries, 16);
  store_le32(out + 28, static_cast<uint32_t>(xxh64(out, 28, 0)));
  return Status::ok;
}

Status codebook_deserialize(const void* src, uint64_t size, Codebook* out) {
  if (out == nullptr || (src == nullptr && size > 0)) return Status::invalid_argument;
  if (size < kCodebookFileSize) return Status::truncated;
  const auto* b = static_cast<const uint8_t*>(src);
  if (std::memcmp(b, kCbMagic, 4) != 0) return Status::bad_magic;
  if (b[4] != 1) return Status::unsupported_version;
  if (load_le32(b + 28) != static_cast<uint32_t>(xxh64(b, 28, 0))) return Status::header_corrupt;
  if (!dtype_valid(static_cast<Dtype>(b[5]))) return Status::bad_dtype;
  if (b[7] != 0 || b[24] != 0 || b[25] != 0 || b[26] != 0 || b[27] != 0)
    return Status::reserved_bits;
  Codebook cb;
  cb.dtype = static_cast<Dtype>(b[5]);
  cb.count = b[6];
  std::memcpy(cb.entries, b + 8, 16);
  const Status s = validate_codebook(cb);
  if (s != Status::ok) return s;
  *out = cb;
  return Status::ok;
}

Status codebook_save(const Codebook& cb, const char* path) {
  if (path == nullptr) return Status::invalid_argument;
  uint8_t buf[kCodebookFileSize];
  const Status s = codebook_serialize(cb, buf);
  if (s != Status::ok) return s;
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return Status::io_error;
  const bool wrote = std::fwrite(buf, 1, sizeof buf, f) == sizeof buf;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(path);  // never leave a partial file behind
    return Status::io_error;
  }
  return Status::ok;
}

Status codebook_load(const char* path, Codebook* out) {
  if (path == nullptr || out == nullptr) return Status::invalid_argument;
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return Status::io_error;
  uint8_t buf[kCodebookFileSize + 1];
  const size_t got = std::fread(buf, 1, sizeof buf, f);
  const bool err = std::ferror(f) != 0;
  std::fclose(f);
  if (err) return Status::io_error;
  // A codebook file is exactly 32 bytes; anything longer is not one.
  if (got > kCodebookFileSize) return Status::size_mismatch;
  return codebook_deserialize(buf, got, out);
}

}  // namespace splitzip
