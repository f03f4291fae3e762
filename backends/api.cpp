// SPDX-License-Identifier: Apache-2.0
// The public codec entry points: argument checks, backend selection per
// buffer, then one whole-frame call into the chosen backend.
#include <new>
#include <vector>

#include "backends/registry.h"
#include "core/codec_args.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/tensor_desc.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

Status parse_frame_info(const void* src, uint64_t src_size, FrameInfo* out);  // core/frame_iterator.cpp

namespace {

// Device beats managed beats host: the backend must reach both buffers.
MemoryKind combine(MemoryKind a, MemoryKind b) {
  if (a == MemoryKind::device || b == MemoryKind::device) return MemoryKind::device;
  if (a == MemoryKind::managed || b == MemoryKind::managed) return MemoryKind::managed;
  return MemoryKind::host;
}

Status select(const char* forced, const void* a, const void* b, uint64_t bytes, Direction dir,
              const Backend** out) {
  DispatchRequest req;
  req.forced = forced;
  req.memory = combine(memory_kind_of(a), memory_kind_of(b));
  req.bytes = bytes;
  req.direction = dir;
  return select_backend(req, out);
}

template <class F>
Result guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    Result r;
    r.status = Status::out_of_memory;
    return r;
  } catch (...) {
    Result r;
    r.status = Status::internal_error;
    return r;
  }
}

// The caller's table sets as the core's list. Up to kInline sets need no
// allocation (a page decode is a few microseconds).
class SetList {
 public:
  SetList() = default;
  SetList(const SetList&) = delete;  // data_ may point into inline_
  SetList& operator=(const SetList&) = delete;
  Status init(const DecompressOptions& opts) {
    if (opts.n_tables == 0) return Status::ok;
    if (opts.tables == nullptr) return Status::invalid_argument;
    const CapTables** p = inline_;
    if (opts.n_tables > kInline) {
      heap_.resize(opts.n_tables);
      p = heap_.data();
    }
    for (size_t i = 0; i < opts.n_tables; ++i) {
      if (opts.tables[i].empty()) return Status::invalid_argument;
      p[i] = opts.tables[i].tables();
    }
    data_ = p;
    size_ = opts.n_tables;
    return Status::ok;
  }
  void apply(DecompressArgs& a) const {
    a.tables = data_;
    a.n_tables = size_;
  }

 private:
  static constexpr size_t kInline = 8;
  const CapTables* inline_[kInline] = {};
  std::vector<const CapTables*> heap_;
  const CapTables* const* data_ = nullptr;
  uint64_t size_ = 0;
};

// A table set to code with (the options' or a batch item's): capacity
// mode only, not empty.
Status apply_tables(const TableSet* ts, Mode mode, CompressArgs& a) {
  if (ts == nullptr) return Status::ok;
  if (ts->empty() || mode != Mode::capacity) return Status::invalid_argument;
  a.tables = ts->tables();
  return Status::ok;
}

Result decompress_impl(const void* src, uint64_t src_size, void* dst, uint64_t capacity,
                       const DecompressOptions& opts, bool stream) {
  Result r;
  DecompressArgs a;
  a.src = src;
  a.src_size = src_size;
  a.dst = dst;
  a.capacity = capacity;
  a.max_output = opts.max_output_bytes;
  a.verify_checksum = opts.verify_checksum;
  a.threads = opts.threads;
  SetList sets;
  if ((r.status = sets.init(opts)) != Status::ok) return r;
  sets.apply(a);
  if ((r.status = check_decompress_args(a)) != Status::ok) return r;
  const Backend* be = nullptr;
  if ((r.status = select(opts.backend, src, dst, capacity, Direction::decode, &be)) != Status::ok) return r;
  r.backend = be->name();
  const FrameOutcome o = stream ? be->decompress_stream(a) : be->decompress_frame(a);
  r.status = o.status;
  r.corrupt_block = o.corrupt_block;
  if (o.status == Status::ok) r.size = o.decoded_size;
  return r;
}

}  // namespace

uint64_t compress_bound(Dtype dtype, uint64_t n_elems) {
  if (!dtype_valid(dtype) || n_elems > kMaxElems) return 0;
  // The stored frame with block checks is the largest frame (FORMAT.md 5).
  const auto id = static_cast<uint32_t>(dtype);
  return stored_frame_size(id, n_elems, checksum_blocks(n_elems * dtype_bytes(dtype)));
}

Result compress(Dtype dtype, const void* src, uint64_t n_elems, void* dst, uint64_t dst_capacity,
                const CompressOptions& opts) {
  return guarded([&] {
    Result r;
    CompressArgs a;
    a.dtype = dtype;
    a.src = src;
    a.n = n_elems;
    a.dst = dst;
    a.capacity = dst_capacity;
    a.codebook = opts.codebook;
    a.chunk_log2 = opts.chunk_log2;
    a.checksum = opts.checksum;
    a.threads = opts.threads;
    a.mode = opts.mode;
    if ((r.status = apply_tables(opts.tables, opts.mode, a)) != Status::ok) return r;
    if ((r.status = check_compress_args(a)) != Status::ok) return r;
    // FORMAT.md 4.8: the descriptor follows the payload; the backend gets the rest of the room.
    const uint64_t desc = opts.tensor != nullptr ? tensor_desc_size(*opts.tensor) : 0;
    if (opts.tensor != nullptr) {
      if (desc == 0 || opts.tensor->dtype != dtype || opts.tensor->total_elems < n_elems) {
        r.status = Status::invalid_argument;
        return r;
      }
      const MemoryKind k = memory_kind_of(dst);
      if (k == MemoryKind::device) {
        r.status = Status::unsupported_memory;
        return r;
      }
      if (dst_capacity < desc) {
        r.status = Status::dst_too_small;
        return r;
      }
      a.capacity -= desc;
    }
    const Backend* be = nullptr;
    r.status = select(opts.backend, src, dst, n_elems * dtype_bytes(dtype), Direction::encode, &be);
    if (r.status != Status::ok) return r;
    r.backend = be->name();
    const FrameOutcome o = be->compress_frame(a);
    r.status = o.status;
    if (o.status == Status::ok) r.size = o.frame_size;
    if (o.status == Status::ok && opts.tensor != nullptr) {
      uint64_t size = 0;
      r.status = attach_tensor_desc(static_cast<uint8_t*>(dst), o.frame_size, dst_capacity, *opts.tensor, &size);
      r.size = r.status == Status::ok ? size : 0;
    }
    return r;
  });
}

Result decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                  const DecompressOptions& opts) {
  return guarded([&] { return decompress_impl(src, src_size, dst, dst_capacity, opts, false); });
}

Result decompress_frames(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                         const DecompressOptions& opts) {
  return guarded([&] { return decompress_impl(src, src_size, dst, dst_capacity, opts, true); });
}

namespace {

// One backend for a whole batch: it must reach every item's buffers.
template <class Item>
Status select_batch(const char* forced, const Item* items, size_t count, Direction dir, const Backend** out) {
  MemoryKind kind = MemoryKind::host;
  uint64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    kind = combine(kind, combine(memory_kind_of(items[i].src), memory_kind_of(items[i].dst)));
    bytes += items[i].dst_capacity;
  }
  DispatchRequest req;
  req.forced = forced;
  req.memory = kind;
  req.bytes = bytes;
  req.direction = dir;
  return select_backend(req, out);
}

// ok, or the status of the first item that failed.
Status first_failure(const Result* results, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (results[i].status != Status::ok) return results[i].status;
  return Status::ok;
}

template <class F>
Status guarded_status(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  } catch (...) {
    return Status::internal_error;
  }
}

}  // namespace

Status compress_batch(Dtype dtype, const CompressItem* items, size_t count, Result* results,
                      const CompressOptions& opts) {
  if (count == 0) return Status::ok;
  if (items == nullptr || results == nullptr) return Status::invalid_argument;
  return guarded_status([&] {
    for (size_t i = 0; i < count; ++i) results[i] = Result{};
    const Backend* be = nullptr;
    Status s = select_batch(opts.backend, items, count, Direction::encode, &be);
    if (s != Status::ok) {
      for (size_t i = 0; i < count; ++i) results[i].status = s;
      return s;
    }
    // Items that pass the argument checks run; the others keep their status.
    std::vector<CompressArgs> args;
    std::vector<size_t> index;
    args.reserve(count);
    index.reserve(count);
    // The one codebook is checked once, not per item (as check_compress_args
    // would: after the other arguments, so the same status comes out).
    const bool codebook_ok = opts.codebook == nullptr ||
                             (validate_codebook(*opts.codebook) == Status::ok && opts.codebook->dtype == dtype);
    CompressArgs tabled;
    const Status tables_status = apply_tables(opts.tables, opts.mode, tabled);
    for (size_t i = 0; i < count; ++i) {
      CompressArgs a;
      a.dtype = dtype;
      a.src = items[i].src;
      a.n = items[i].n_elems;
      a.dst = items[i].dst;
      a.capacity = items[i].dst_capacity;
      a.codebook = opts.codebook;
      a.chunk_log2 = opts.chunk_log2;
      a.checksum = opts.checksum;
      a.threads = 1;  // parallel across items, not inside one
      a.mode = opts.mode;
      a.tables = tabled.tables;
      results[i].backend = be->name();
      Status item_tables = tables_status;
      if (items[i].tables != nullptr) item_tables = apply_tables(items[i].tables, opts.mode, a);
      CompressArgs unbooked = a;
      unbooked.codebook = nullptr;
      results[i].status = item_tables != Status::ok ? item_tables : check_compress_args(unbooked);
      if (results[i].status == Status::ok && !codebook_ok) results[i].status = Status::bad_codebook;
      // The item's tensor descriptor (else the batch's) follows its payload, as in compress().
      const TensorDesc* t = items[i].tensor != nullptr ? items[i].tensor : opts.tensor;
      if (results[i].status == Status::ok && t != nullptr) {
        const uint64_t desc = tensor_desc_size(*t);
        if (desc == 0 || t->dtype != dtype || t->total_elems < a.n)
          results[i].status = Status::invalid_argument;
        else if (memory_kind_of(a.dst) == MemoryKind::device)
          results[i].status = Status::unsupported_memory;
        else if (a.capacity < desc)
          results[i].status = Status::dst_too_small;
        else
          a.capacity -= desc;
      }
      if (results[i].status != Status::ok) continue;
      args.push_back(a);
      index.push_back(i);
    }
    std::vector<FrameOutcome> outs(args.size());
    be->compress_batch(args.data(), args.size(), opts.threads, outs.data());
    for (size_t k = 0; k < args.size(); ++k) {
      const size_t i = index[k];
      Result& r = results[i];
      r.status = outs[k].status;
      if (outs[k].status == Status::ok) r.size = outs[k].frame_size;
      const TensorDesc* t = items[i].tensor != nullptr ? items[i].tensor : opts.tensor;
      if (r.status == Status::ok && t != nullptr) {
        uint64_t size = 0;
        r.status = attach_tensor_desc(static_cast<uint8_t*>(items[i].dst), r.size, items[i].dst_capacity, *t, &size);
        r.size = r.status == Status::ok ? size : 0;
      }
    }
    return first_failure(results, count);
  });
}

Status decompress_batch(const DecompressItem* items, size_t count, Result* results, const DecompressOptions& opts) {
  if (count == 0) return Status::ok;
  if (items == nullptr || results == nullptr) return Status::invalid_argument;
  return guarded_status([&] {
    for (size_t i = 0; i < count; ++i) results[i] = Result{};
    const Backend* be = nullptr;
    Status s = select_batch(opts.backend, items, count, Direction::decode, &be);
    if (s != Status::ok) {
      for (size_t i = 0; i < count; ++i) results[i].status = s;
      return s;
    }
    std::vector<DecompressArgs> args;
    std::vector<size_t> index;
    args.reserve(count);
    index.reserve(count);
    SetList sets;  // one list for every item
    const Status sets_status = sets.init(opts);
    for (size_t i = 0; i < count; ++i) {
      DecompressArgs a;
      sets.apply(a);
      a.src = items[i].src;
      a.src_size = items[i].src_size;
      a.dst = items[i].dst;
      a.capacity = items[i].dst_capacity;
      a.max_output = opts.max_output_bytes;  // per item
      a.verify_checksum = opts.verify_checksum;
      a.threads = 1;
      results[i].backend = be->name();
      if ((results[i].status = sets_status) != Status::ok) continue;
      if ((results[i].status = check_decompress_args(a)) != Status::ok) continue;
      args.push_back(a);
      index.push_back(i);
    }
    std::vector<FrameOutcome> outs(args.size());
    be->decompress_batch(args.data(), args.size(), opts.threads, outs.data());
    for (size_t k = 0; k < args.size(); ++k) {
      Result& r = results[index[k]];
      r.status = outs[k].status;
      r.corrupt_block = outs[k].corrupt_block;
      if (outs[k].status == Status::ok) r.size = outs[k].decoded_size;
    }
    return first_failure(results, count);
  });
}

Status frame_info(const void* src, uint64_t src_size, FrameInfo* out) {
  if (out == nullptr || (src == nullptr && src_size > 0)) return Status::invalid_argument;
  const MemoryKind kind = memory_kind_of(src);
  if (kind == MemoryKind::host || kind == MemoryKind::unknown || src_size < 64)
    return parse_frame_info(src, src_size, out);
  // A device-resident frame: the backend that reaches it copies the header.
  const Backend* be = nullptr;
  Status s = select(nullptr, src, src, 64, Direction::decode, &be);
  uint8_t hb[64];
  if (s == Status::ok) s = be->read_header_bytes(src, hb);
  if (s != Status::ok) return s;
  FrameInfo info;
  s = frame_header_info(hb, &info);
  if (s == Status::ok && src_size < info.frame_size) s = Status::truncated;  // rule 11
  if (s == Status::ok) *out = info;
  return s;
}

uint64_t xxh64(const void* data, uint64_t size, uint64_t seed) {
  return XXH64(data, static_cast<size_t>(size), seed);
}

uint64_t xxh3_64(const void* data, uint64_t size) { return hash_xxh3(data, size); }

}  // namespace splitzip
