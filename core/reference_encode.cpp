// Scalar reference encoder: FORMAT.md 4.2 written as plainly as possible.
// Two passes: count escapes per chunk (to place streams 5/6), then write.
#include <cstring>
#include <vector>

#include "core/le_bytes.h"
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

template <class T>
Status encode_impl(EncodeJob& job) {
  const auto* src = static_cast<const uint8_t*>(job.src);
  const uint64_t n = job.n;
  const uint64_t chunk = uint64_t{1} << job.chunk_log2;
  const uint32_t dtype_id = static_cast<uint32_t>(job.dtype);

  uint8_t code_of[256];
  std::memset(code_of, kNotInCodebook, sizeof code_of);
  for (uint32_t c = 0; c < job.codebook->count; ++c) code_of[job.codebook->entries[c]] = static_cast<uint8_t>(c);

  // Pass 1: escapes per chunk.
  const uint64_t n_chunks = (n + chunk - 1) >> job.chunk_log2;
  std::vector<uint16_t> counts(n_chunks, 0);
  uint64_t escapes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (code_of[T::exponent(load_elem<T>(src, i))] == kNotInCodebook) {
      ++counts[i >> job.chunk_log2];
      ++escapes;
    }
  }
  if (escapes > job.max_escapes) return Status::escape_overflow;
  const FrameLayout L = coded_layout(dtype_id, n, job.chunk_log2, escapes);
  if (L.frame_size > job.capacity) return Status::internal_error;  // frame layer sized it

  uint8_t* f = job.frame;
  // In-stream padding bits must be zero: clear the bit-packed streams first.
  std::memset(f + L.high_off, 0, L.high_size);
  std::memset(f + L.code_off, 0, L.code_size);

  uint64_t e_idx = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const typename T::Bits v = load_elem<T>(src, i);
    const uint32_t e = T::exponent(v);
    const uint32_t r = T::residual(v);
    // Stream 1: low 8k bits of the residual, little-endian.
    for (uint32_t b = 0; b < T::kResBytes; ++b)
      f[L.res_off + i * T::kResBytes + b] = static_cast<uint8_t>(r >> (8 * b));
    // Stream 2: top 3 bits, LSB-first bit string.
    if (T::kResHighBits) {
      const uint32_t hi = (r >> (8 * T::kResBytes)) & 7u;
      const uint64_t bit = 3 * i;
      f[L.high_off + (bit >> 3)] |= static_cast<uint8_t>(hi << (bit & 7));
      if ((bit & 7) > 5) f[L.high_off + (bit >> 3) + 1] |= static_cast<uint8_t>(hi >> (8 - (bit & 7)));
    }
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
  job.escape_count = escapes;
  return Status::ok;
}

}  // namespace

Status reference_encode(EncodeJob& job) {
  if (job.codebook == nullptr || job.frame == nullptr || (job.src == nullptr && job.n > 0))
    return Status::invalid_argument;
  Status s = Status::invalid_argument;
  with_traits(job.dtype, [&](auto t) { s = encode_impl<decltype(t)>(job); });
  return s;
}

}  // namespace splitzip
