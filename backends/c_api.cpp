// SPDX-License-Identifier: Apache-2.0
// C API: thin conversions onto the C++ API. No exception crosses extern "C".
#include <cstring>
#include <vector>

#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

namespace sz = splitzip;

// The C handle of a table set: the C++ one (copies share the parsed set).
struct sz_tables {
  sz::TableSet set;
};

static_assert(static_cast<int>(sz::Status::internal_error) == SZ_INTERNAL_ERROR, "status numbering");
static_assert(static_cast<int>(sz::Status::checksum_mismatch) == SZ_CHECKSUM_MISMATCH, "status numbering");
static_assert(static_cast<int>(sz::Status::missing_tables) == SZ_MISSING_TABLES, "status numbering");
static_assert(static_cast<int>(sz::Dtype::fp8_e5m2) == SZ_FP8_E5M2, "dtype numbering");
static_assert(sz::kFormatVersion == SZ_FORMAT_VERSION && sz::kMinFormatVersion == SZ_MIN_FORMAT_VERSION,
              "format version");
static_assert(sz::Result{}.corrupt_block == SZ_NO_BLOCK, "no-block marker");

namespace {

sz_status to_c(sz::Status s) { return static_cast<sz_status>(static_cast<int32_t>(s)); }

// Dtype ids outside 1..5 travel through unchanged so the C++ side rejects them.
sz::Dtype to_dtype(int32_t d) { return static_cast<sz::Dtype>(static_cast<uint8_t>(d < 0 || d > 255 ? 0 : d)); }

bool to_codebook(const sz_codebook* in, sz::Codebook* out) {
  if (!sz::dtype_valid(to_dtype(in->dtype))) return false;
  out->dtype = to_dtype(in->dtype);
  out->count = in->count;
  std::memcpy(out->entries, in->entries, 16);
  return true;
}

void from_codebook(const sz::Codebook& in, sz_codebook* out) {
  std::memset(out, 0, sizeof *out);
  out->dtype = static_cast<int32_t>(in.dtype);
  out->count = in.count;
  std::memcpy(out->entries, in.entries, 16);
}

void fill(const sz::Result& r, sz_result* out) {
  if (out == nullptr) return;
  out->size = r.size;
  out->backend = r.backend;
  out->corrupt_block = r.corrupt_block;
}

void from_info(const sz::FrameInfo& info, sz_frame_info* out) {
  std::memset(out, 0, sizeof *out);
  out->version = info.version;
  out->dtype = static_cast<int32_t>(info.dtype);
  out->stored = info.stored ? 1 : 0;
  out->has_checksum = info.has_checksum ? 1 : 0;
  out->chunk_log2 = info.chunk_log2;
  out->n_elems = info.n_elems;
  out->escape_count = info.escape_count;
  out->frame_size = info.frame_size;
  out->decoded_size = info.decoded_size;
  out->content_checksum = info.content_checksum;
  out->checksum_block_log2 = info.checksum_block_log2;
  out->checksum_blocks = info.checksum_blocks;
  out->has_tensor = info.has_tensor ? 1 : 0;
  out->mode = static_cast<int>(info.mode);
  out->has_tables = info.has_tables ? 1 : 0;
  out->tables_id = info.tables_id;
  from_codebook(info.codebook, &out->codebook);
}

// sets: storage for the C++ sets, which must outlive *d. A NULL handle in
// the list is INVALID_ARGUMENT.
sz_status to_options(const sz_decompress_options* o, std::vector<sz::TableSet>* sets, sz::DecompressOptions* d) {
  if (o == nullptr) return SZ_OK;
  d->backend = o->backend;
  d->threads = o->threads;
  d->max_output_bytes = o->max_output_bytes;
  d->verify_checksum = o->skip_checksum == 0;
  if (o->n_tables > 0) {
    if (o->tables == nullptr) return SZ_INVALID_ARGUMENT;
    sets->reserve(o->n_tables);
    for (size_t i = 0; i < o->n_tables; ++i) {
      if (o->tables[i] == nullptr) return SZ_INVALID_ARGUMENT;
      sets->push_back(o->tables[i]->set);
    }
    d->tables = sets->data();
    d->n_tables = sets->size();
  }
  return SZ_OK;
}

bool to_tensor(const sz_tensor_desc* in, sz::TensorDesc* out) {
  if (in->rank > SZ_MAX_TENSOR_RANK || in->dtype < 1 || in->dtype > 255) return false;
  out->dtype = to_dtype(in->dtype);
  out->rank = in->rank;
  for (uint32_t i = 0; i < in->rank; ++i) out->dims[i] = in->dims[i];
  out->total_elems = in->total_elems;
  out->origin = static_cast<sz::TensorOrigin>(in->origin);
  out->name = in->name;
  out->name_size = in->name_size;
  out->container = static_cast<sz::ContainerKind>(in->container);
  out->container_header = in->container_header;
  out->container_size = in->container_size;
  return true;
}

// false: the codebook's dtype is not a dtype at all.
// td: storage for the tensor descriptor, which must outlive *o.
sz_status to_compress_options(const sz_compress_options* opts, sz::Codebook* cb, sz::TensorDesc* td,
                              sz::CompressOptions* o) {
  if (opts == nullptr) return SZ_OK;
  if (opts->codebook != nullptr) {
    if (!to_codebook(opts->codebook, cb)) return SZ_BAD_CODEBOOK;
    o->codebook = cb;
  }
  if (opts->chunk_log2 != 0) o->chunk_log2 = opts->chunk_log2;
  o->checksum = opts->no_checksum == 0;  // on by default (NULL or zeroed options)
  o->backend = opts->backend;
  o->threads = opts->threads;
  if (opts->mode != SZ_MODE_FAST && opts->mode != SZ_MODE_CAPACITY) return SZ_INVALID_ARGUMENT;
  o->mode = opts->mode == SZ_MODE_CAPACITY ? sz::Mode::capacity : sz::Mode::fast;
  if (opts->tensor != nullptr) {
    if (!to_tensor(opts->tensor, td)) return SZ_INVALID_ARGUMENT;
    o->tensor = td;
  }
  if (opts->tables != nullptr) o->tables = &opts->tables->set;
  return SZ_OK;
}

// Per-item outcomes of a batch into the caller's arrays (either may be NULL).
void fill_batch(const std::vector<sz::Result>& rs, sz_status* statuses, sz_result* results) {
  for (size_t i = 0; i < rs.size(); ++i) {
    if (statuses != nullptr) statuses[i] = to_c(rs[i].status);
    if (results != nullptr) fill(rs[i], &results[i]);
  }
}

template <class F>
sz_status guard(F&& f) {
  try {
    return f();
  } catch (...) {
    return SZ_INTERNAL_ERROR;
  }
}

}  // namespace

extern "C" {

const char* sz_status_name(sz_status s) { return sz::status_name(static_cast<sz::Status>(s)); }
const char* sz_status_message(sz_status s) { return sz::status_message(static_cast<sz::Status>(s)); }
const char* sz_dtype_name(sz_dtype d) { return sz::dtype_name(to_dtype(d)); }
uint32_t sz_dtype_bytes(sz_dtype d) { return sz::dtype_bytes(to_dtype(d)); }

int sz_parse_dtype(const char* name, sz_dtype* out) {
  sz::Dtype d;
  if (out == nullptr || !sz::parse_dtype(name, &d)) return 0;
  *out = static_cast<sz_dtype>(static_cast<int>(d));
  return 1;
}

uint64_t sz_tensor_desc_size(const sz_tensor_desc* t) {
  sz::TensorDesc d;
  return t != nullptr && to_tensor(t, &d) ? sz::tensor_desc_size(d) : 0;
}

sz_status sz_read_tensor_desc(const void* src, uint64_t src_size, sz_tensor_desc* out, int* present) {
  return guard([&] {
    if (out == nullptr || present == nullptr) return SZ_INVALID_ARGUMENT;
    sz::TensorDesc d;
    bool have = false;
    const sz::Status s = sz::read_tensor_desc(src, src_size, &d, &have);
    if (s != sz::Status::ok) return to_c(s);
    std::memset(out, 0, sizeof *out);
    *present = have ? 1 : 0;
    if (have) {
      out->dtype = static_cast<int32_t>(d.dtype);
      out->rank = d.rank;
      for (uint32_t i = 0; i < d.rank; ++i) out->dims[i] = d.dims[i];
      out->total_elems = d.total_elems;
      out->origin = static_cast<int32_t>(d.origin);
      out->name = d.name;
      out->name_size = d.name_size;
      out->container = static_cast<int32_t>(d.container);
      out->container_header = d.container_header;
      out->container_size = d.container_size;
    }
    return SZ_OK;
  });
}

uint64_t sz_compress_bound(sz_dtype dtype, uint64_t n_elems) {
  return sz::compress_bound(to_dtype(dtype), n_elems);
}

sz_status sz_compress(sz_dtype dtype, const void* src, uint64_t n_elems, void* dst,
                      uint64_t dst_capacity, const sz_compress_options* opts, sz_result* result) {
  return guard([&] {
    sz::CompressOptions o;
    sz::Codebook cb;
    sz::TensorDesc td;
    if (const sz_status st = to_compress_options(opts, &cb, &td, &o); st != SZ_OK) return st;
    const sz::Result r = sz::compress(to_dtype(dtype), src, n_elems, dst, dst_capacity, o);
    fill(r, result);
    return to_c(r.status);
  });
}

sz_status sz_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                        const sz_decompress_options* opts, sz_result* result) {
  return guard([&] {
    sz::DecompressOptions o;
    std::vector<sz::TableSet> sets;
    if (const sz_status st = to_options(opts, &sets, &o); st != SZ_OK) return st;
    const sz::Result r = sz::decompress(src, src_size, dst, dst_capacity, o);
    fill(r, result);
    return to_c(r.status);
  });
}

sz_status sz_decompress_frames(const void* src, uint64_t src_size, void* dst,
                               uint64_t dst_capacity, const sz_decompress_options* opts,
                               sz_result* result) {
  return guard([&] {
    sz::DecompressOptions o;
    std::vector<sz::TableSet> sets;
    if (const sz_status st = to_options(opts, &sets, &o); st != SZ_OK) return st;
    const sz::Result r = sz::decompress_frames(src, src_size, dst, dst_capacity, o);
    fill(r, result);
    return to_c(r.status);
  });
}

namespace {
sz_status compress_batch_c(sz_dtype dtype, const sz_compress_item* items, size_t count,
                           const sz_tables* const* item_tables, const sz_compress_options* opts,
                           sz_status* statuses, sz_result* results) {
  return guard([&] {
    if (count == 0) return SZ_OK;
    if (items == nullptr) return SZ_INVALID_ARGUMENT;
    sz::CompressOptions o;
    sz::Codebook cb;
    std::vector<sz::Result> rs(count);
    sz::TensorDesc td;
    if (const sz_status st = to_compress_options(opts, &cb, &td, &o); st != SZ_OK) {
      for (auto& r : rs) r.status = static_cast<sz::Status>(st);
      fill_batch(rs, statuses, results);
      return st;
    }
    std::vector<sz::CompressItem> in(count);
    for (size_t i = 0; i < count; ++i) {
      in[i] = {items[i].src, items[i].n_elems, items[i].dst, items[i].dst_capacity};
      if (item_tables != nullptr && item_tables[i] != nullptr) in[i].tables = &item_tables[i]->set;
    }
    const sz::Status s = sz::compress_batch(to_dtype(dtype), in.data(), count, rs.data(), o);
    fill_batch(rs, statuses, results);
    return to_c(s);
  });
}
}  // namespace

sz_status sz_compress_batch(sz_dtype dtype, const sz_compress_item* items, size_t count,
                            const sz_compress_options* opts, sz_status* statuses, sz_result* results) {
  return compress_batch_c(dtype, items, count, nullptr, opts, statuses, results);
}

sz_status sz_compress_batch_tables(sz_dtype dtype, const sz_compress_item* items, size_t count,
                                   const sz_tables* const* item_tables, const sz_compress_options* opts,
                                   sz_status* statuses, sz_result* results) {
  return compress_batch_c(dtype, items, count, item_tables, opts, statuses, results);
}

sz_status sz_decompress_batch(const sz_decompress_item* items, size_t count, const sz_decompress_options* opts,
                              sz_status* statuses, sz_result* results) {
  return guard([&] {
    if (count == 0) return SZ_OK;
    if (items == nullptr) return SZ_INVALID_ARGUMENT;
    std::vector<sz::DecompressItem> in(count);
    for (size_t i = 0; i < count; ++i) in[i] = {items[i].src, items[i].src_size, items[i].dst, items[i].dst_capacity};
    std::vector<sz::Result> rs(count);
    sz::DecompressOptions o;
    std::vector<sz::TableSet> sets;
    if (const sz_status st = to_options(opts, &sets, &o); st != SZ_OK) {
      for (auto& r : rs) r.status = static_cast<sz::Status>(st);
      fill_batch(rs, statuses, results);
      return st;
    }
    const sz::Status s = sz::decompress_batch(in.data(), count, rs.data(), o);
    fill_batch(rs, statuses, results);
    return to_c(s);
  });
}

sz_status sz_frame_info_read(const void* src, uint64_t src_size, sz_frame_info* out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    sz::FrameInfo info;
    const sz::Status s = sz::frame_info(src, src_size, &info);
    if (s == sz::Status::ok) from_info(info, out);
    return to_c(s);
  });
}

sz_status sz_frame_header_info(const void* src, sz_frame_info* out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    sz::FrameInfo info;
    const sz::Status s = sz::frame_header_info(src, &info);
    if (s == sz::Status::ok) from_info(info, out);
    return to_c(s);
  });
}

sz_status sz_frame_iter_init(sz_frame_iter* it, const void* src, uint64_t size) {
  if (it == nullptr) return SZ_INVALID_ARGUMENT;
  it->src = static_cast<const uint8_t*>(src);
  it->size = size;
  it->pos = 0;
  it->failed = SZ_OK;
  if (src == nullptr && size > 0) it->failed = SZ_INVALID_ARGUMENT;
  return static_cast<sz_status>(it->failed);
}

// The C state is (stream, position, sticky status); each step runs the C++
// FrameIterator over the rest of the stream for exactly one frame.
sz_status sz_frame_iter_next(sz_frame_iter* it, sz_frame_view* out) {
  return guard([&] {
    if (it == nullptr || out == nullptr) return SZ_INVALID_ARGUMENT;
    std::memset(out, 0, sizeof *out);
    if (it->failed != SZ_OK) return static_cast<sz_status>(it->failed);
    if (it->pos > it->size) return static_cast<sz_status>(it->failed = SZ_INVALID_ARGUMENT);
    sz::FrameIterator rest(it->src == nullptr ? nullptr : it->src + it->pos, it->size - it->pos);
    sz::FrameView v;
    const sz::Status s = rest.next(&v);
    if (s != sz::Status::ok) return static_cast<sz_status>(it->failed = to_c(s));
    if (v.data == nullptr) return SZ_OK;  // the end
    out->data = v.data;
    out->size = v.size;
    out->offset = it->pos;
    from_info(v.info, &out->info);
    it->pos += v.size;
    return SZ_OK;
  });
}

uint64_t sz_frame_iter_offset(const sz_frame_iter* it) { return it == nullptr ? 0 : it->pos; }

sz_status sz_calibrate(sz_dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                       size_t n_buffers, sz_codebook* out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    sz::Codebook cb;
    const sz::Status s = sz::calibrate(to_dtype(dtype), buffers, n_elems, n_buffers, &cb);
    if (s == sz::Status::ok) from_codebook(cb, out);
    return to_c(s);
  });
}

sz_status sz_validate_codebook(const sz_codebook* cb) {
  sz::Codebook c;
  if (cb == nullptr) return SZ_INVALID_ARGUMENT;
  if (!to_codebook(cb, &c)) return SZ_BAD_CODEBOOK;
  return to_c(sz::validate_codebook(c));
}

sz_status sz_codebook_serialize(const sz_codebook* cb, uint8_t out[SZ_CODEBOOK_FILE_SIZE]) {
  sz::Codebook c;
  if (cb == nullptr || out == nullptr) return SZ_INVALID_ARGUMENT;
  if (!to_codebook(cb, &c)) return SZ_BAD_CODEBOOK;
  return to_c(sz::codebook_serialize(c, out));
}

sz_status sz_codebook_deserialize(const void* src, uint64_t size, sz_codebook* out) {
  if (out == nullptr) return SZ_INVALID_ARGUMENT;
  sz::Codebook c;
  const sz::Status s = sz::codebook_deserialize(src, size, &c);
  if (s == sz::Status::ok) from_codebook(c, out);
  return to_c(s);
}

sz_status sz_codebook_save(const sz_codebook* cb, const char* path) {
  sz::Codebook c;
  if (cb == nullptr || path == nullptr) return SZ_INVALID_ARGUMENT;
  if (!to_codebook(cb, &c)) return SZ_BAD_CODEBOOK;
  return to_c(sz::codebook_save(c, path));
}

sz_status sz_codebook_load(const char* path, sz_codebook* out) {
  if (out == nullptr || path == nullptr) return SZ_INVALID_ARGUMENT;
  sz::Codebook c;
  const sz::Status s = sz::codebook_load(path, &c);
  if (s == sz::Status::ok) from_codebook(c, out);
  return to_c(s);
}

namespace {
sz_status new_tables(sz::TableSet&& set, sz_tables** out) {
  *out = new sz_tables{std::move(set)};
  return SZ_OK;
}
}  // namespace

sz_status sz_tables_calibrate(sz_dtype dtype, const void* const* buffers, const uint64_t* n_elems, size_t n_buffers,
                              uint32_t table_count, sz_tables** out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    *out = nullptr;
    sz::TableSet set;
    const sz::Status s = sz::calibrate_tables(to_dtype(dtype), buffers, n_elems, n_buffers, &set, table_count);
    return s == sz::Status::ok ? new_tables(std::move(set), out) : to_c(s);
  });
}

sz_status sz_tables_from_bytes(const void* src, uint64_t size, sz_tables** out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    *out = nullptr;
    sz::TableSet set;
    const sz::Status s = sz::TableSet::from_bytes(src, size, &set);
    return s == sz::Status::ok ? new_tables(std::move(set), out) : to_c(s);
  });
}

sz_status sz_tables_load(const char* path, sz_tables** out) {
  return guard([&] {
    if (out == nullptr) return SZ_INVALID_ARGUMENT;
    *out = nullptr;
    sz::TableSet set;
    const sz::Status s = sz::TableSet::load(path, &set);
    return s == sz::Status::ok ? new_tables(std::move(set), out) : to_c(s);
  });
}

sz_status sz_tables_save(const sz_tables* t, const char* path) {
  return guard([&] { return t == nullptr ? SZ_INVALID_ARGUMENT : to_c(t->set.save(path)); });
}

void sz_tables_free(sz_tables* t) { delete t; }

uint64_t sz_tables_serialized_size(const sz_tables* t) { return t == nullptr ? 0 : t->set.serialized_size(); }

sz_status sz_tables_to_bytes(const sz_tables* t, void* dst, uint64_t capacity, uint64_t* written) {
  return guard([&] {
    if (written != nullptr) *written = 0;
    return t == nullptr ? SZ_INVALID_ARGUMENT : to_c(t->set.to_bytes(dst, capacity, written));
  });
}

uint64_t sz_tables_id(const sz_tables* t) { return t == nullptr ? 0 : t->set.id(); }
int32_t sz_tables_dtype(const sz_tables* t) { return t == nullptr ? 0 : static_cast<int32_t>(t->set.dtype()); }
uint32_t sz_tables_count(const sz_tables* t) { return t == nullptr ? 0 : t->set.table_count(); }

uint64_t sz_xxh64(const void* data, uint64_t size, uint64_t seed) {
  if (data == nullptr && size > 0) return 0;
  return sz::xxh64(data, size, seed);
}

uint64_t sz_xxh3_64(const void* data, uint64_t size) {
  if (data == nullptr && size > 0) return 0;
  return sz::xxh3_64(data, size);
}

size_t sz_backend_count(void) { return sz::backend_count(); }
const char* sz_backend_name(size_t index) { return sz::backend_name(index); }
int sz_backend_available(const char* name) { return sz::backend_available(name) ? 1 : 0; }
const char* sz_backend_unavailable_reason(const char* name) { return sz::backend_unavailable_reason(name); }

}  // extern "C"
