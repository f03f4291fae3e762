// SPDX-License-Identifier: Apache-2.0
// splitzip::TableSet: the public handle of a capacity table set (FORMAT.md
// 4.9, 13). Parsing, serialization and calibration are the core's
// (core/capacity/tables.h); this file owns files and sharing.
#include <cstdio>
#include <memory>
#include <new>
#include <vector>

#include "core/capacity/tables.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

uint64_t TableSet::id() const { return t_ ? t_->id : 0; }
Dtype TableSet::dtype() const { return t_ ? static_cast<Dtype>(t_->dtype) : Dtype::bf16; }
uint32_t TableSet::table_count() const { return t_ ? t_->count : 0; }
uint64_t TableSet::serialized_size() const { return t_ ? cap_tables_serialized_size(*t_) : 0; }

Status TableSet::to_bytes(void* dst, uint64_t capacity, uint64_t* written) const {
  if (written != nullptr) *written = 0;
  if (t_ == nullptr || dst == nullptr) return Status::invalid_argument;
  const uint64_t need = cap_tables_serialized_size(*t_);
  if (capacity < need) return Status::dst_too_small;
  cap_tables_serialize(*t_, static_cast<uint8_t*>(dst));
  if (written != nullptr) *written = need;
  return Status::ok;
}

Status TableSet::from_bytes(const void* src, uint64_t size, TableSet* out) {
  if (out == nullptr || (src == nullptr && size > 0)) return Status::invalid_argument;
  try {
    auto t = std::make_shared<CapTables>();
    const Status s = cap_tables_parse(static_cast<const uint8_t*>(src), size, t.get());
    if (s != Status::ok) return s;
    out->t_ = std::move(t);
    return Status::ok;
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
}

Status TableSet::save(const char* path) const {
  if (path == nullptr || t_ == nullptr) return Status::invalid_argument;
  try {
    std::vector<uint8_t> buf(cap_tables_serialized_size(*t_));
    cap_tables_serialize(*t_, buf.data());
    std::FILE* f = std::fopen(path, "wb");
    if (f == nullptr) return Status::io_error;
    const bool wrote = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
    const bool closed = std::fclose(f) == 0;
    if (!wrote || !closed) {
      std::remove(path);  // never leave a partial file behind
      return Status::io_error;
    }
    return Status::ok;
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
}

Status TableSet::load(const char* path, TableSet* out) {
  if (path == nullptr || out == nullptr) return Status::invalid_argument;
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return Status::io_error;
  try {
    // A set file is small (FORMAT.md 13 bounds it); read at most one byte
    // past the largest so that a longer file is refused, not cut.
    const uint64_t limit = cap_tables_size_for(kCapMaxTables) + 1;
    std::vector<uint8_t> buf(limit);
    const size_t got = std::fread(buf.data(), 1, buf.size(), f);
    const bool err = std::ferror(f) != 0;
    std::fclose(f);
    if (err) return Status::io_error;
    if (got == limit) return Status::size_mismatch;
    return from_bytes(buf.data(), got, out);
  } catch (const std::bad_alloc&) {
    std::fclose(f);
    return Status::out_of_memory;
  }
}

Status calibrate_tables(Dtype dtype, const void* const* buffers, const uint64_t* n_elems, size_t n_buffers,
                        TableSet* out, uint32_t table_count) {
  if (out == nullptr || !dtype_valid(dtype)) return Status::invalid_argument;
  if (n_buffers > 0 && (buffers == nullptr || n_elems == nullptr)) return Status::invalid_argument;
  uint64_t total = 0;
  for (size_t i = 0; i < n_buffers; ++i) {
    if (n_elems[i] > kMaxElems || (buffers[i] == nullptr && n_elems[i] > 0)) return Status::invalid_argument;
    total += n_elems[i];
  }
  if (total == 0) return Status::invalid_argument;  // nothing to calibrate on
  try {
    auto t = std::make_shared<CapTables>();
    const Status s = cap_tables_from_samples(dtype, table_count == 0 ? kDefaultTableCount : table_count,
                                             buffers, n_elems, n_buffers, t.get());
    if (s != Status::ok) return s;
    out->t_ = std::move(t);
    return Status::ok;
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  }
}

}  // namespace splitzip
