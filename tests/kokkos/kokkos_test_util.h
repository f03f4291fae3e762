/* SPDX-License-Identifier: Apache-2.0 */
// Helpers for the Kokkos backend tests: run one backend's encode/decode on
// the payload streams directly (below the frame layer), so tiny inputs that
// the frame layer would store still exercise the coded path.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "backends/registry.h"
#include "core/synthetic.h"
#include "splitzip/splitzip.hpp"

namespace splitzip::test {

inline const Backend* kokkos() { return find_backend("kokkos"); }
inline const Backend* reference() { return find_backend("reference"); }

inline constexpr Dtype kAllDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

// A backend's encode into a frame buffer pre-filled with `fill`, sized for
// the worst case (every element an escape) plus a 32-byte tail, so bytes
// written outside streams 1..6 show up as differences from another run.
struct Encoded {
  Status status = Status::internal_error;
  uint64_t escapes = 0;
  std::vector<uint8_t> frame;
};

inline Encoded encode_streams(const Backend* be, Dtype dtype, const void* src, uint64_t n, uint32_t chunk_log2,
                              const Codebook& cb, uint64_t max_escapes = ~uint64_t{0}, uint8_t fill = 0xA5) {
  Encoded out;
  const uint64_t cap = coded_layout(static_cast<uint32_t>(dtype), n, chunk_log2, n).frame_size + 32;
  out.frame.assign(cap, fill);
  EncodeJob job{dtype, src, n, chunk_log2, &cb, out.frame.data(), cap - 32, max_escapes, 0};
  out.status = be->encode(job);
  out.escapes = job.escape_count;
  return out;
}

// The header a frame layer would write for encoded streams.
inline FrameHeader header_for(Dtype dtype, uint64_t n, uint32_t chunk_log2, const Codebook& cb,
                              uint64_t escapes) {
  FrameHeader h;
  h.dtype = static_cast<uint8_t>(dtype);
  h.chunk_log2 = static_cast<uint8_t>(chunk_log2);
  h.n_elems = n;
  h.escape_count = escapes;
  h.frame_size = coded_layout(h.dtype, n, chunk_log2, escapes).frame_size;
  for (int i = 0; i < 16; ++i) h.codebook[i] = cb.entries[i];
  h.codebook_count = cb.count;
  return h;
}

// Zeroes the bytes between streams (the frame layer's job on encode).
inline void zero_gaps(std::vector<uint8_t>& frame, const FrameLayout& L) {
  const uint64_t offs[6] = {L.res_off, L.high_off, L.code_off, L.count_off, L.pos_off, L.exp_off};
  const uint64_t sizes[6] = {L.res_size, L.high_size, L.code_size, L.count_size, L.pos_size, L.exp_size};
  for (int s = 0; s < 6; ++s)
    if (sizes[s] > 0)
      for (uint64_t b = offs[s] + sizes[s]; b < align16(offs[s] + sizes[s]) && b < frame.size(); ++b) frame[b] = 0;
}

// Dynamic top-16 codebook of a buffer (what the frame layer would pick).
inline Codebook top16(Dtype dtype, const std::vector<uint8_t>& data, uint64_t n) {
  Histogram h(dtype);
  h.add(data.data(), n);
  Codebook cb = h.codebook();
  if (cb.count == 0) {  // empty input: any valid codebook
    cb.dtype = dtype;
    cb.count = 1;
  }
  return cb;
}

}  // namespace splitzip::test
