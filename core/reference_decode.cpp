// Scalar reference decoder: validates rules 14-18 in rule order (so a bad
// frame reports its lowest failing rule), then rebuilds the values.
#include <cstring>

#include "core/le_bytes.h"
#include "core/reference.h"

namespace splitzip {
namespace {

template <class T>
Status decode_impl(const DecodeJob& job) {
  const FrameHeader& h = *job.header;
  const FrameLayout L = layout_of(h);
  const uint8_t* f = job.frame;
  const uint64_t n = h.n_elems;
  const uint64_t chunk = uint64_t{1} << h.chunk_log2;
  const uint32_t exp_limit = T::kExpBits == 5 ? 32 : 256;

  bool in_codebook[256] = {};
  for (uint32_t c = 0; c < h.codebook_count; ++c) in_codebook[h.codebook[c]] = true;

  // Rule 14: in-stream padding (gap bytes are the frame layer's).
  if ((n & 1) && (f[L.code_off + L.code_size - 1] >> 4) != 0) return Status::bad_padding;
  if (T::kResHighBits && L.high_size > 0) {
    const uint64_t used_bits = 3 * n - 8 * (L.high_size - 1);  // 1..8 bits of the last byte
    if (used_bits < 8 && (f[L.high_off + L.high_size - 1] >> used_bits) != 0) return Status::bad_padding;
  }

  // Rule 15: per-chunk counts within chunk length, summing to E.
  uint64_t sum = 0;
  for (uint64_t q = 0; q < L.n_chunks; ++q) {
    const uint64_t len = q + 1 < L.n_chunks ? chunk : n - q * chunk;
    const uint64_t c = load_le16(f + L.count_off + 2 * q);
    if (c > len) return Status::bad_escape_counts;
    sum += c;
  }
  if (sum != h.escape_count) return Status::bad_escape_counts;

  // Rule 16: positions strictly increasing within a chunk, inside the chunk.
  uint64_t e_idx = 0;
  for (uint64_t q = 0; q < L.n_chunks; ++q) {
    const uint64_t len = q + 1 < L.n_chunks ? chunk : n - q * chunk;
    const uint64_t c = load_le16(f + L.count_off + 2 * q);
    for (uint64_t j = 0; j < c; ++j, ++e_idx) {
      const uint64_t p = load_le16(f + L.pos_off + 2 * e_idx);
      if (p >= len) return Status::bad_escape_position;
      if (j > 0 && p <= load_le16(f + L.pos_off + 2 * (e_idx - 1))) return Status::bad_escape_position;
    }
  }

  // Rule 17: escape slots hold code 0; escape exponents are real escapes.
  e_idx = 0;
  for (uint64_t q = 0; q < L.n_chunks; ++q) {
    const uint64_t c = load_le16(f + L.count_off + 2 * q);
    for (uint64_t j = 0; j < c; ++j, ++e_idx) {
      const uint64_t i = q * chunk + load_le16(f + L.pos_off + 2 * e_idx);
      const uint32_t x = f[L.exp_off + e_idx];
      if (nibble_at(f + L.code_off, i) != 0 || x >= exp_limit || in_codebook[x])
        return Status::bad_escape_value;
    }
  }

  // Rule 18: every code names a codebook entry.
  for (uint64_t i = 0; i < n; ++i)
    if (nibble_at(f + L.code_off, i) >= h.codebook_count) return Status::bad_code;

  // Decode: codebook exponent, residual byte part + 3-bit part.
  auto* dst = static_cast<uint8_t*>(job.dst);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t e = h.codebook[nibble_at(f + L.code_off, i)];
    uint32_t r = 0;
    for (uint32_t b = 0; b < T::kResBytes; ++b) r |= uint32_t{f[L.res_off + i * T::kResBytes + b]} << (8 * b);
    if (T::kResHighBits) r |= bits3_at(f + L.high_off, n, i) << (8 * T::kResBytes);
    const typename T::Bits v = T::join(e, r);
    std::memcpy(dst + i * T::kBytes, &v, sizeof v);
  }
  // Patch escapes.
  e_idx = 0;
  for (uint64_t q = 0; q < L.n_chunks; ++q) {
    const uint64_t c = load_le16(f + L.count_off + 2 * q);
    for (uint64_t j = 0; j < c; ++j, ++e_idx) {
      const uint64_t i = q * chunk + load_le16(f + L.pos_off + 2 * e_idx);
      typename T::Bits v;
      std::memcpy(&v, dst + i * T::kBytes, sizeof v);
      v = T::join(f[L.exp_off + e_idx], T::residual(v));
      std::memcpy(dst + i * T::kBytes, &v, sizeof v);
    }
  }
  return Status::ok;
}

}  // namespace

Status reference_decode(const DecodeJob& job) {
  if (job.header == nullptr || job.frame == nullptr) return Status::invalid_argument;
  if (job.dst == nullptr && job.header->n_elems > 0) return Status::invalid_argument;
  Status s = Status::invalid_argument;
  with_traits(static_cast<Dtype>(job.header->dtype), [&](auto t) { s = decode_impl<decltype(t)>(job); });
  return s;
}

}  // namespace splitzip
