// SPDX-License-Identifier: Apache-2.0
// Scalar reference encoder: FORMAT.md 4 written as plainly as possible.
// Two passes: count escapes per chunk (to place streams 5/6), then write.
#include <cstring>
#include <vector>

#include "core/capacity/reference_capacity.h"
#include "core/frame_rules.h"
#include "core/frame_skeleton.h"
#include "core/reference.h"

namespace splitzip {
namespace {

constexpr uint8_t kNotInCodebook = 0xFF;

template <class T>
typename T::Bits load_elem(const uint8_t* src, uint64_t i) {
  typename T::Bits v;
  std::memcpy(&v, src + i * T::kBytes, sizeof v);
  return v;
}

// Streams 1..6. Returns escape_overflow when E exceeds the budget.
template <class T>
Status encode_streams(const uint8_t* src, uint64_t n, uint32_t chunk_log2, const Codebook& cb,
                      uint64_t budget, uint64_t n_checks, uint8_t* f, uint64_t* escapes_out) {
  const uint64_t chunk = uint64_t{1} << chunk_log2;
  uint8_t code_of[256];
  std::memset(code_of, kNotInCodebook, sizeof code_of);
  for (uint32_t c = 0; c < cb.count; ++c) code_of[cb.entries[c]] = static_cast<uint8_t>(c);

  // Pass 1: escapes per chunk.
  const uint64_t n_chunks = (n + chunk - 1) >> chunk_log2;
  std::vector<uint16_t> counts(n_chunks, 0);
  uint64_t escapes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (code_of[T::exponent(load_elem<T>(src, i))] == kNotInCodebook) {
      ++counts[i >> chunk_log2];
      ++escapes;
    }
  }
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(static_cast<uint32_t>(T::kId), n, chunk_log2, escapes, n_checks);
  // In-stream padding bits must be zero: clear the bit-packed streams first.
  std::memset(f + L.high_off, 0, L.high_size);
  std::memset(f + L.code_off, 0, L.code_size);

  uint64_t e_idx = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const typename T::Bits v = load_elem<T>(src, i);
    const uint32_t e = T::exponent(v);
    const uint32_t r = T::residual(v);
    store_residual<T>(f + L.res_off, f + L.high_off, i, r);  // streams 1-2
    // Stream 3: code, or the fixed code 0 for an escape.
    uint32_t code = code_of[e];
    if (code == kNotInCodebook) {
      code = 0;
      store_le16(f + L.pos_off + 2 * e_idx, static_cast<uint32_t>(i & (chunk - 1)));
      f[L.exp_off + e_idx] = static_cast<uint8_t>(e);
      ++e_idx;
    }
    f[L.code_off + (i >> 1)] |= static_cast<uint8_t>(code << ((i & 1) * 4));
  }
  // Stream 4.
  for (uint64_t q = 0; q < n_chunks; ++q) store_le16(f + L.count_off + 2 * q, counts[q]);
  *escapes_out = escapes;
  return Status::ok;
}

}  // namespace

void host_block_hashes(const void* data, uint64_t bytes, uint64_t* hashes) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t count = checksum_blocks(bytes);
  for (uint64_t b = 0; b < count; ++b) hashes[b] = block_hash(p, bytes, b);
}

namespace {

// The reference's kernel table (core/frame_skeleton.h): one thread, host memory.
struct ReferenceEncode {
  Status plan(const CompressArgs& a, FramePlan* p) { return plan_frame(a, p); }
  Status histogram(const CompressArgs& a, const FramePlan&, uint64_t counts[256]) {
    for (int e = 0; e < 256; ++e) counts[e] = 0;
    add_exponent_counts(a.dtype, a.src, a.n, counts);
    return Status::ok;
  }
  Status encode(CodecTag<Codec::capacity>, const CompressArgs& a, const FramePlan& p, FrameHeader* h) {
    return reference_capacity_encode(a, p.n_checks, h);  // FORMAT.md 4.6
  }
  Status encode(CodecTag<Codec::e4m3>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {  // FORMAT.md 4.7
    return reference_e4m3_encode(static_cast<const uint8_t*>(a.src), a.n, cb, p.budget, p.n_checks,
                                 static_cast<uint8_t*>(a.dst), escapes);
  }
  Status encode(CodecTag<Codec::nibble>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {
    Status s = Status::invalid_argument;
    visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(a.dtype), [&](auto t) {
      s = encode_streams<decltype(t)>(static_cast<const uint8_t*>(a.src), a.n, a.chunk_log2, cb, p.budget,
                                      p.n_checks, static_cast<uint8_t*>(a.dst), escapes);
    });
    return s;
  }
  Status store(const CompressArgs& a, const FramePlan& p) {
    if (p.bytes > 0) std::memmove(static_cast<uint8_t*>(a.dst) + 64, a.src, p.bytes);
    return Status::ok;
  }
  Status finish(const CompressArgs& a, const FramePlan& p, FrameHeader* h) {
    std::vector<uint64_t> hashes(p.n_checks);
    if (a.checksum) host_block_hashes(a.src, p.bytes, hashes.data());
    finish_frame(*h, static_cast<uint8_t*>(a.dst), hashes.data());
    return Status::ok;
  }
};

}  // namespace

FrameOutcome reference_compress(const CompressArgs& a) {
  ReferenceEncode k;
  return compress_with(k, a);
}

}  // namespace splitzip
