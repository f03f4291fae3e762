// Frame header write/parse (FORMAT.md 4.1, rules 1-11) and the escape budget.
#include <cstring>

#include "core/header.h"
#include "core/le_bytes.h"

namespace splitzip {
namespace {

constexpr uint32_t kCheckOffset = 52;

uint32_t header_check_of(const uint8_t bytes[64]) {
  uint8_t tmp[64];
  std::memcpy(tmp, bytes, 64);
  std::memset(tmp + kCheckOffset, 0, 4);
  return static_cast<uint32_t>(xxh64(tmp, 64, 0));
}

uint64_t frame_size_for(const FrameHeader& h) {
  if (h.stored()) return stored_frame_size(h.dtype, h.n_elems);
  return coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count).frame_size;
}

}  // namespace

void write_header(const FrameHeader& h, uint8_t out[64]) {
  std::memset(out, 0, 64);
  std::memcpy(out, kMagic, 4);
  out[4] = h.version;
  out[5] = h.dtype;
  out[6] = h.flags;
  out[7] = h.chunk_log2;
  store_le64(out + 8, h.n_elems);
  store_le64(out + 16, h.escape_count);
  store_le64(out + 24, h.frame_size);
  std::memcpy(out + 32, h.codebook, 16);
  out[48] = h.codebook_count;
  store_le64(out + 56, h.content_checksum);
  store_le32(out + kCheckOffset, header_check_of(out));
}

Status parse_header(const void* src, uint64_t src_size, FrameHeader* out) {
  if (out == nullptr || (src == nullptr && src_size > 0)) return Status::invalid_argument;
  // Rule 1.
  if (src_size < 64) return Status::truncated;
  const auto* b = static_cast<const uint8_t*>(src);
  // Rules 2-4.
  if (std::memcmp(b, kMagic, 4) != 0) return Status::bad_magic;
  if (b[4] != kFormatVersion) return Status::unsupported_version;
  if (load_le32(b + kCheckOffset) != header_check_of(b)) return Status::header_corrupt;

  FrameHeader h;
  h.version = b[4];
  h.dtype = b[5];
  h.flags = b[6];
  h.chunk_log2 = b[7];
  h.n_elems = load_le64(b + 8);
  h.escape_count = load_le64(b + 16);
  h.frame_size = load_le64(b + 24);
  std::memcpy(h.codebook, b + 32, 16);
  h.codebook_count = b[48];
  h.content_checksum = load_le64(b + 56);

  // Rule 5.
  if (!dtype_valid(static_cast<Dtype>(h.dtype))) return Status::bad_dtype;
  // Rule 6.
  if ((h.flags & ~kFlagsKnown) != 0 || b[49] != 0 || b[50] != 0 || b[51] != 0)
    return Status::reserved_bits;
  // Rule 7.
  if (h.chunk_log2 < kMinChunkLog2 || h.chunk_log2 > kMaxChunkLog2) return Status::bad_chunk_size;
  // Rule 8.
  if (h.n_elems > kMaxElems || h.escape_count > h.n_elems) return Status::bad_header;
  if (!h.has_checksum() && h.content_checksum != 0) return Status::bad_header;
  if (h.stored()) {
    if (h.escape_count != 0 || h.codebook_count != 0) return Status::bad_header;
    for (uint8_t e : h.codebook)
      if (e != 0) return Status::bad_header;
  } else {
    // Rule 9.
    Codebook cb;
    cb.dtype = static_cast<Dtype>(h.dtype);
    cb.count = h.codebook_count;
    std::memcpy(cb.entries, h.codebook, 16);
    const Status s = validate_codebook(cb);
    if (s != Status::ok) return s;
  }
  // Rule 10. n <= 2^56 keeps every size computation below 2^59.
  if (h.frame_size != frame_size_for(h)) return Status::size_mismatch;
  // Rule 11.
  if (src_size < h.frame_size) return Status::truncated;
  *out = h;
  return Status::ok;
}

FrameLayout layout_of(const FrameHeader& h) {
  return coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count);
}

uint64_t max_escapes(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t capacity) {
  if (geometry_of(dtype_id).bytes == 0 || n == 0 || n > kMaxElems) return kNoEscapeBudget;
  // Coded iff coded_size < stored_size (FORMAT.md 4.4), and it must fit.
  const uint64_t stored = stored_frame_size(dtype_id, n);
  const uint64_t limit = capacity < stored - 1 ? capacity : stored - 1;
  auto fits = [&](uint64_t e) {
    return coded_layout(dtype_id, n, chunk_log2, e).frame_size <= limit;
  };
  if (!fits(0)) return kNoEscapeBudget;
  // coded_size is non-decreasing in E: binary search the largest E <= n that fits.
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

}  // namespace splitzip
