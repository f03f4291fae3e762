// The frame layer: argument checks, backend selection, dynamic top-16,
// the stored-mode decision (FORMAT.md 4.4), header, zero gaps, checksums and
// decode-side rules 12-13 and 19. Backends only see streams 1..6.
#include <cstring>
#include <new>

#include "backends/registry.h"
#include "core/header.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

// Device beats managed beats host: the backend must reach both buffers.
MemoryKind combine(MemoryKind a, MemoryKind b) {
  if (a == MemoryKind::device || b == MemoryKind::device) return MemoryKind::device;
  if (a == MemoryKind::managed || b == MemoryKind::managed) return MemoryKind::managed;
  return MemoryKind::host;
}

// Zero bytes between the end of each present stream and the next 16-byte
// boundary; together with the header these cover every non-stream byte.
struct Gap {
  uint64_t off, size;
};
int gaps_of(const FrameLayout& L, Gap out[6]) {
  const uint64_t offs[6] = {L.res_off, L.high_off, L.code_off, L.count_off, L.pos_off, L.exp_off};
  const uint64_t sizes[6] = {L.res_size, L.high_size, L.code_size, L.count_size, L.pos_size, L.exp_size};
  int k = 0;
  for (int s = 0; s < 6; ++s) {
    if (sizes[s] == 0) continue;
    const uint64_t end = offs[s] + sizes[s];
    if (align16(end) > end) out[k++] = {end, align16(end) - end};
  }
  return k;
}

Status select(const char* forced, MemoryKind kind, uint64_t bytes, Direction dir, const Backend** out) {
  DispatchRequest req;
  req.forced = forced;
  req.memory = kind;
  req.bytes = bytes;
  req.direction = dir;
  return select_backend(req, out);
}

Status write_stored(const Backend* be, Dtype dtype, const void* src, uint64_t n, uint8_t* dst,
                    uint64_t capacity, uint8_t chunk_log2, bool checksum, uint64_t hash,
                    uint64_t* size) {
  const uint32_t id = static_cast<uint32_t>(dtype);
  const uint64_t fsize = stored_frame_size(id, n);
  if (fsize > capacity) return Status::dst_too_small;
  const uint64_t bytes = n * dtype_bytes(dtype);
  Status s = be->copy_bytes(dst + 64, src, bytes);
  if (s != Status::ok) return s;
  s = be->zero_bytes(dst + 64 + bytes, fsize - 64 - bytes);
  if (s != Status::ok) return s;
  FrameHeader h;
  h.dtype = static_cast<uint8_t>(id);
  h.flags = static_cast<uint8_t>(kFlagStored | (checksum ? kFlagChecksum : 0));
  h.chunk_log2 = chunk_log2;
  h.n_elems = n;
  h.frame_size = fsize;
  h.content_checksum = checksum ? hash : 0;
  uint8_t hb[64];
  write_header(h, hb);
  s = be->copy_bytes(dst, hb, 64);
  if (s != Status::ok) return s;
  *size = fsize;
  return Status::ok;
}

Result compress_impl(Dtype dtype, const void* src, uint64_t n, void* dst_v, uint64_t capacity,
                     const CompressOptions& opts) {
  Result r;
  if (!dtype_valid(dtype) || dst_v == nullptr || (src == nullptr && n > 0) || n > kMaxElems ||
      opts.chunk_log2 < kMinChunkLog2 || opts.chunk_log2 > kMaxChunkLog2) {
    r.status = Status::invalid_argument;
    return r;
  }
  auto* dst = static_cast<uint8_t*>(dst_v);
  const uint32_t id = static_cast<uint32_t>(dtype);
  const uint64_t bytes = n * dtype_bytes(dtype);
  const auto chunk_log2 = static_cast<uint8_t>(opts.chunk_log2);

  const Backend* be = nullptr;
  r.status = select(opts.backend, combine(memory_kind_of(src), memory_kind_of(dst)), bytes,
                    Direction::encode, &be);
  if (r.status != Status::ok) return r;
  r.backend = be->name();

  Codebook cb;
  if (opts.codebook != nullptr) {
    cb = *opts.codebook;
    if (validate_codebook(cb) != Status::ok || cb.dtype != dtype) {
      r.status = Status::bad_codebook;
      return r;
    }
  }

  // FORMAT.md 4.4: coded iff n > 0 and it is smaller than stored (and fits).
  const uint64_t budget = max_escapes(id, n, opts.chunk_log2, capacity);
  // Neither form can fit: fail before reading the input at all.
  if (budget == kNoEscapeBudget && stored_frame_size(id, n) > capacity) {
    r.status = Status::dst_too_small;
    return r;
  }

  uint64_t hash = 0;
  if (opts.checksum) {
    r.status = be->content_hash(src, bytes, &hash);
    if (r.status != Status::ok) return r;
  }

  if (budget != kNoEscapeBudget) {
    if (opts.codebook == nullptr) {
      uint64_t counts[256];
      r.status = be->histogram(dtype, src, n, counts, opts.threads);
      if (r.status != Status::ok) return r;
      Histogram h(dtype);
      h.add_counts(counts);
      cb = h.codebook();
    }
    EncodeJob job{dtype, src, n, opts.chunk_log2, &cb, dst, capacity, budget, opts.threads};
    const Status s = be->encode(job);
    if (s == Status::ok) {
      const FrameLayout L = coded_layout(id, n, opts.chunk_log2, job.escape_count);
      Gap gaps[6];
      const int k = gaps_of(L, gaps);
      for (int g = 0; g < k; ++g) {
        r.status = be->zero_bytes(dst + gaps[g].off, gaps[g].size);
        if (r.status != Status::ok) return r;
      }
      FrameHeader h;
      h.dtype = static_cast<uint8_t>(id);
      h.flags = opts.checksum ? kFlagChecksum : 0;
      h.chunk_log2 = chunk_log2;
      h.n_elems = n;
      h.escape_count = job.escape_count;
      h.frame_size = L.frame_size;
      std::memcpy(h.codebook, cb.entries, 16);
      h.codebook_count = cb.count;
      h.content_checksum = opts.checksum ? hash : 0;
      uint8_t hb[64];
      write_header(h, hb);
      r.status = be->copy_bytes(dst, hb, 64);
      if (r.status == Status::ok) r.size = L.frame_size;
      return r;
    }
    if (s != Status::escape_overflow) {
      r.status = s;
      return r;
    }
  }
  r.status = write_stored(be, dtype, src, n, dst, capacity, chunk_log2, opts.checksum, hash, &r.size);
  return r;
}

// Reads the header through the backend (the frame may live on a device).
Status read_header(const Backend* be, const void* src, uint64_t src_size, FrameHeader* h) {
  uint8_t hb[64];
  if (src_size >= 64) {
    const Status s = be->copy_bytes(hb, src, 64);
    if (s != Status::ok) return s;
  }
  return parse_header(src_size >= 64 ? hb : src, src_size, h);
}

bool all_zero(const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

// Decodes one frame with an already selected backend. *consumed = frame_size.
Status decode_one(const Backend* be, const uint8_t* src, uint64_t src_size, uint8_t* dst,
                  uint64_t capacity, bool limited, uint64_t limit_left,
                  const DecompressOptions& opts, uint64_t* consumed, uint64_t* written) {
  FrameHeader h;
  Status s = read_header(be, src, src_size, &h);
  if (s != Status::ok) return s;
  const uint64_t out_bytes = h.n_elems * dtype_bytes(static_cast<Dtype>(h.dtype));
  if (limited && out_bytes > limit_left) return Status::limit_exceeded;  // rule 12
  if (out_bytes > capacity || (dst == nullptr && out_bytes > 0)) return Status::dst_too_small;  // rule 13

  uint8_t pad[16];
  if (h.stored()) {
    const uint64_t tail = h.frame_size - 64 - out_bytes;
    s = be->copy_bytes(pad, src + 64 + out_bytes, tail);
    if (s != Status::ok) return s;
    if (!all_zero(pad, tail)) return Status::bad_padding;
    s = be->copy_bytes(dst, src + 64, out_bytes);
    if (s != Status::ok) return s;
  } else {
    const FrameLayout L = layout_of(h);
    Gap gaps[6];
    const int k = gaps_of(L, gaps);
    for (int g = 0; g < k; ++g) {
      s = be->copy_bytes(pad, src + gaps[g].off, gaps[g].size);
      if (s != Status::ok) return s;
      if (!all_zero(pad, gaps[g].size)) return Status::bad_padding;
    }
    DecodeJob job{&h, src, dst, opts.threads};
    s = be->decode(job);
    if (s != Status::ok) return s;
  }
  if (opts.verify_checksum && h.has_checksum()) {  // rule 19
    uint64_t hash = 0;
    s = be->content_hash(dst, out_bytes, &hash);
    if (s != Status::ok) return s;
    if (hash != h.content_checksum) return Status::checksum_mismatch;
  }
  *consumed = h.frame_size;
  *written = out_bytes;
  return Status::ok;
}

Result decompress_impl(const void* src_v, uint64_t src_size, void* dst_v, uint64_t capacity,
                       const DecompressOptions& opts, bool many) {
  Result r;
  if ((src_v == nullptr && src_size > 0) || (dst_v == nullptr && capacity > 0)) {
    r.status = Status::invalid_argument;
    return r;
  }
  const auto* src = static_cast<const uint8_t*>(src_v);
  auto* dst = static_cast<uint8_t*>(dst_v);
  const Backend* be = nullptr;
  r.status = select(opts.backend, combine(memory_kind_of(src), memory_kind_of(dst)), capacity,
                    Direction::decode, &be);
  if (r.status != Status::ok) return r;
  r.backend = be->name();

  uint64_t in_pos = 0, out_pos = 0;
  const bool limited = opts.max_output_bytes != 0;
  // One frame for decompress(); for a stream, frames until the input ends.
  for (bool first = true; many ? in_pos < src_size : first; first = false) {
    uint64_t consumed = 0, written = 0;
    // The output limit covers the whole stream of frames.
    const Status s = decode_one(be, src + in_pos, src_size - in_pos, dst + out_pos, capacity - out_pos,
                                limited, limited ? opts.max_output_bytes - out_pos : 0, opts,
                                &consumed, &written);
    if (s != Status::ok) {
      r.status = s;
      return r;
    }
    in_pos += consumed;
    out_pos += written;
  }
  r.size = out_pos;
  return r;
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

}  // namespace

uint64_t compress_bound(Dtype dtype, uint64_t n_elems) {
  if (!dtype_valid(dtype) || n_elems > kMaxElems) return 0;
  return stored_frame_size(static_cast<uint32_t>(dtype), n_elems);
}

Result compress(Dtype dtype, const void* src, uint64_t n_elems, void* dst, uint64_t dst_capacity,
                const CompressOptions& opts) {
  return guarded([&] { return compress_impl(dtype, src, n_elems, dst, dst_capacity, opts); });
}

Result decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                  const DecompressOptions& opts) {
  return guarded([&] { return decompress_impl(src, src_size, dst, dst_capacity, opts, false); });
}

Result decompress_frames(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                         const DecompressOptions& opts) {
  return guarded([&] { return decompress_impl(src, src_size, dst, dst_capacity, opts, true); });
}

Status frame_info(const void* src, uint64_t src_size, FrameInfo* out) {
  if (out == nullptr || (src == nullptr && src_size > 0)) return Status::invalid_argument;
  const MemoryKind kind = memory_kind_of(src);
  FrameHeader h;
  Status s;
  if (kind == MemoryKind::host || kind == MemoryKind::unknown || src_size < 64) {
    s = parse_header(src, src_size, &h);
  } else {
    const Backend* be = nullptr;
    s = select(nullptr, kind, 64, Direction::decode, &be);
    if (s == Status::ok) s = read_header(be, src, src_size, &h);
  }
  if (s != Status::ok) return s;
  FrameInfo info;
  info.version = h.version;
  info.dtype = static_cast<Dtype>(h.dtype);
  info.stored = h.stored();
  info.has_checksum = h.has_checksum();
  info.chunk_log2 = h.chunk_log2;
  info.n_elems = h.n_elems;
  info.escape_count = h.escape_count;
  info.frame_size = h.frame_size;
  info.decoded_size = h.n_elems * dtype_bytes(info.dtype);
  info.content_checksum = h.content_checksum;
  info.codebook.dtype = info.dtype;
  info.codebook.count = h.codebook_count;
  std::memcpy(info.codebook.entries, h.codebook, 16);
  *out = info;
  return Status::ok;
}

}  // namespace splitzip
