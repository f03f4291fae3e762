/* SPDX-License-Identifier: Apache-2.0 */
// Helpers for the Kokkos backend tests: whole-frame calls on the Backend
// interface (backends/backend.h) next to the reference oracle
// (core/reference.h), with guard bytes after every output so a write past
// the frame or past the capacity shows up as a difference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "backends/registry.h"
#include "core/codec_args.h"
#include "core/reference.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

namespace splitzip::test {

inline const Backend* kokkos() { return find_backend("kokkos"); }

inline constexpr Dtype kAllDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

// Loud build (issue 11): a Kokkos suite whose default execution space cannot
// run it fails; it never skips.
inline ::testing::AssertionResult kokkos_runs_host_buffers() {
  const Backend* be = kokkos();
  if (be == nullptr) return ::testing::AssertionFailure() << "backend \"kokkos\" is not compiled in";
  if (!be->available()) return ::testing::AssertionFailure() << "backend \"kokkos\" unavailable: " << be->unavailable_reason();
  if (!be->accepts(MemoryKind::host))
    return ::testing::AssertionFailure()
           << "Kokkos::DefaultExecutionSpace cannot reach host memory; these suites need a host space";
  return ::testing::AssertionSuccess();
}

inline constexpr uint64_t kGuard = 32;
inline constexpr uint8_t kFill = 0xA5;

// One compress call into a buffer pre-filled with kFill, at least
// capacity + kGuard bytes.
struct Compressed {
  FrameOutcome outcome;
  std::vector<uint8_t> buf;
  std::vector<uint8_t> frame() const {
    return {buf.begin(), buf.begin() + static_cast<long>(outcome.status == Status::ok ? outcome.frame_size : 0)};
  }
};

inline CompressArgs compress_args(Dtype dtype, const void* src, uint64_t n, const Codebook* cb = nullptr,
                                  uint32_t chunk_log2 = kDefaultChunkLog2, bool checksum = false) {
  CompressArgs a;
  a.dtype = dtype;
  a.src = src;
  a.n = n;
  a.codebook = cb;
  a.chunk_log2 = chunk_log2;
  a.checksum = checksum;
  return a;
}

// capacity ~0: compress_bound of the arguments.
inline Compressed run_compress(bool use_kokkos, CompressArgs a, uint64_t capacity = ~uint64_t{0}) {
  if (capacity == ~uint64_t{0}) capacity = compress_bound(a.dtype, a.n);
  Compressed c;
  // Room for a stored frame whatever the capacity, so an encoder that
  // ignored the capacity shows up as changed guard bytes, not heap damage.
  const uint64_t bound = compress_bound(a.dtype, a.n);
  c.buf.assign((capacity > bound ? capacity : bound) + kGuard, kFill);
  a.dst = c.buf.data();
  a.capacity = capacity;
  c.outcome = use_kokkos ? kokkos()->compress_frame(a) : reference_compress(a);
  return c;
}

struct Decompressed {
  FrameOutcome outcome;
  std::vector<uint8_t> out;  // capacity + kGuard bytes, pre-filled with kFill
};

inline Decompressed run_decompress(bool use_kokkos, const std::vector<uint8_t>& frame, uint64_t capacity,
                                   bool verify = true) {
  Decompressed d;
  d.out.assign(capacity + kGuard, kFill);
  DecompressArgs a;
  a.src = frame.data();
  a.src_size = frame.size();
  a.dst = d.out.data();
  a.capacity = capacity;
  a.verify_checksum = verify;
  d.outcome = use_kokkos ? kokkos()->decompress_frame(a) : reference_decompress(a);
  return d;
}

inline bool same_outcome(const FrameOutcome& a, const FrameOutcome& b) {
  return a.status == b.status && a.frame_size == b.frame_size && a.decoded_size == b.decoded_size &&
         a.corrupt_block == b.corrupt_block;
}

inline std::string describe(const FrameOutcome& o) {
  return std::string(status_name(o.status)) + " frame_size=" + std::to_string(o.frame_size) +
         " decoded=" + std::to_string(o.decoded_size) + " corrupt_block=" +
         (o.corrupt_block == kNoBlock ? std::string("none") : std::to_string(o.corrupt_block));
}

// Decodes `frame` with Kokkos and the reference: same outcome (status,
// sizes, first corrupt block) and, on success, the same output bytes and
// nothing written past the decoded size.
inline ::testing::AssertionResult same_decode(const std::vector<uint8_t>& frame, uint64_t capacity,
                                              bool verify = true) {
  const Decompressed k = run_decompress(true, frame, capacity, verify);
  const Decompressed r = run_decompress(false, frame, capacity, verify);
  if (!same_outcome(k.outcome, r.outcome))
    return ::testing::AssertionFailure() << "kokkos: " << describe(k.outcome) << "; reference: " << describe(r.outcome);
  if (k.outcome.status == Status::ok) {
    if (k.out != r.out) return ::testing::AssertionFailure() << "decoded bytes differ";
    for (uint64_t i = k.outcome.decoded_size; i < k.out.size(); ++i)
      if (k.out[i] != kFill) return ::testing::AssertionFailure() << "kokkos wrote past the output at " << i;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace splitzip::test
