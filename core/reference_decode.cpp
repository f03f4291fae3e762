// SPDX-License-Identifier: Apache-2.0
// Scalar reference decoder: rules 1-19 in rule order, so a bad frame reports
// its lowest failing rule, then the values.
#include <cstring>
#include <vector>

#include "core/capacity/reference_capacity.h"
#include "core/frame_rules.h"
#include "core/frame_skeleton.h"
#include "core/reference.h"

namespace splitzip {
namespace {

// Rules 14 (in-stream padding) through 18, then streams 1..6 into dst.
template <class T>
Status decode_streams(const FrameHeader& h, const uint8_t* f, uint8_t* dst) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  const uint64_t chunk = uint64_t{1} << h.chunk_log2;
  const uint32_t exp_limit = T::kExpBits == 5 ? 32 : 256;

  bool in_codebook[256] = {};
  for (uint32_t c = 0; c < h.codebook_count; ++c) in_codebook[h.codebook[c]] = true;

  if (!stream_padding_ok(f, L)) return Status::bad_padding;  // rule 14

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
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t e = h.codebook[nibble_at(f + L.code_off, i)];
    const typename T::Bits v = T::join(e, load_residual<T>(f + L.res_off, f + L.high_off, i));
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

namespace {

// The reference's kernel table (core/frame_skeleton.h).
struct ReferenceDecode {
  static const uint8_t* frame(const DecompressArgs& a) { return static_cast<const uint8_t*>(a.src); }
  static uint8_t* out(const DecompressArgs& a) { return static_cast<uint8_t*>(a.dst); }
  Status open(const DecompressArgs& a, FrameHeader* h) { return open_host_frame(a, h); }  // rules 1-14 (gaps)
  Status copy_stored(const DecompressArgs& a, const FrameHeader& h) {
    if (h.decoded_bytes() > 0) std::memmove(out(a), frame(a) + 64, h.decoded_bytes());
    return Status::ok;
  }
  Status decode(CodecTag<Codec::capacity>, const DecompressArgs& a, const FrameHeader& h) {
    const CapTables* set = nullptr;  // FORMAT.md 4.9
    const Status s = cap_frame_set(a.tables, a.n_tables, h.has_tables(), h.tables_id(), h.dtype, &set);
    if (s != Status::ok) return s;
    return reference_capacity_decode(h, frame(a), out(a), set);  // FORMAT.md 4.6
  }
  Status decode(CodecTag<Codec::e4m3>, const DecompressArgs& a, const FrameHeader& h) {
    return reference_e4m3_decode(h, frame(a), out(a));  // FORMAT.md 4.7
  }
  Status decode(CodecTag<Codec::nibble>, const DecompressArgs& a, const FrameHeader& h) {
    Status s = Status::invalid_argument;
    visit_codec_dtype<Codec::nibble>(h.dtype, [&](auto t) { s = decode_streams<decltype(t)>(h, frame(a), out(a)); });
    return s;
  }
  Status verify(const DecompressArgs& a, const FrameHeader& h, uint64_t* corrupt_block) {
    return check_content_host(h, frame(a), out(a), corrupt_block);
  }
};

}  // namespace

FrameOutcome reference_decompress(const DecompressArgs& a) {
  ReferenceDecode k;
  return decompress_with(k, a);
}

}  // namespace splitzip
