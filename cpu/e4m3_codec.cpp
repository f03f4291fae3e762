// SPDX-License-Identifier: Apache-2.0
// fp8_e4m3 coded streams (FORMAT.md 4.7) on OpenMP threads. Work units are
// the 64 KiB checksum blocks (65536 elements): pass 1 counts each unit's
// escape markers, a prefix sum gives every unit its first escape index
// (no positions are stored: the index is a prefix count of code 7), pass 2
// codes the unit's 8-element groups with the format core's group kernels
// and hashes the unit. The group loops are the Highway kernels of
// cpu/e4m3-inl.h (byte-identical to the format core's group kernels,
// core/fp8_e4m3.h, which they use for partial tails and on HWY_SCALAR).
#include "cpu/e4m3_codec.h"

#include <omp.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "core/fp8_e4m3.h"
#include "core/hash.h"
#include "core/layout.h"
#include "cpu/kernels.h"

namespace splitzip {
namespace cpu {
namespace {

constexpr uint64_t kUnit = kChecksumBlockBytes;  // elements (1 byte each) per work unit
constexpr uint64_t kUnitGroups = kUnit / 8;

int thread_count(int threads, uint64_t units) {
  int t = threads > 0 ? threads : omp_get_max_threads();
  if (static_cast<uint64_t>(t) > units) t = static_cast<int>(units ? units : 1);
  return t < 1 ? 1 : t;
}

uint64_t unit_groups(uint64_t n, uint64_t u) {
  const uint64_t groups = (n + 7) / 8, first = u * kUnitGroups;
  return groups - first < kUnitGroups ? groups - first : kUnitGroups;
}

}  // namespace

Status e4m3_encode(const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget, uint64_t n_checks,
                   uint8_t* f, uint64_t* hashes, int threads, uint64_t* escapes_out) {
  uint8_t code_of[16];
  e4m3_code_table(cb.entries, cb.count, code_of);
  const uint64_t units = (n + kUnit - 1) / kUnit;
  std::vector<uint64_t> first(units + 1, 0);
  const int t = thread_count(threads, units);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    first[u + 1] = e4m3_count_escapes(src, n, g0, gn, code_of);
  }
  for (uint64_t u = 0; u < units; ++u) first[u + 1] += first[u];
  const uint64_t escapes = first[units];
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(kDtypeE4M3, n, kDefaultChunkLog2, escapes, n_checks);
  std::vector<uint8_t> esc(escapes + 1);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    e4m3_encode_groups(src, n, g0, gn, code_of, f + L.res_off, f + L.code_off, esc.data() + first[u]);
    if (hashes != nullptr) hashes[u] = block_hash(src, n, static_cast<uint64_t>(u));
  }
  // Stream 6: escape exponents, two per byte (a padding high nibble is 0).
  const int64_t pairs = static_cast<int64_t>(L.exp_size);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t j = 0; j < pairs; ++j) {
    const uint64_t i = 2 * static_cast<uint64_t>(j);
    const uint32_t hi = i + 1 < escapes ? esc[i + 1] : 0u;
    f[L.exp_off + static_cast<uint64_t>(j)] = static_cast<uint8_t>(esc[i] | (hi << 4));
  }
  *escapes_out = escapes;
  return Status::ok;
}

Status e4m3_decode(const FrameHeader& h, const uint8_t* f, uint8_t* dst, uint64_t* hashes, int threads) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  if (!stream_padding_ok(f, L)) return Status::bad_padding;  // 14
  const uint64_t units = (n + kUnit - 1) / kUnit;
  std::vector<uint64_t> first(units + 1, 0);
  const int t = thread_count(threads, units);
  std::atomic<bool> bad_code{false};
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    bool bad = false;
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    first[u + 1] = e4m3_count_markers(f + L.code_off, n, g0, gn, h.codebook_count, &bad);
    if (bad) bad_code.store(true, std::memory_order_relaxed);
  }
  for (uint64_t u = 0; u < units; ++u) first[u + 1] += first[u];
  if (first[units] != h.escape_count) return Status::bad_escape_counts;  // 15
  uint8_t code_of[16];
  e4m3_code_table(h.codebook, h.codebook_count, code_of);
  for (uint64_t k = 0; k < h.escape_count; ++k)  // 17
    if (code_of[e4m3_escape_at(f + L.exp_off, k)] != kE4M3Escape) return Status::bad_escape_value;
  if (bad_code.load()) return Status::bad_code;  // 18
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    bool bad = false;  // rule 17 was checked on every escape above
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    e4m3_decode_groups(f + L.res_off, f + L.code_off, f + L.exp_off, n, g0, gn, h.codebook, code_of, first[u], dst,
                       &bad);
    if (hashes != nullptr) hashes[u] = block_hash(dst, n, static_cast<uint64_t>(u));
  }
  return Status::ok;
}

}  // namespace cpu
}  // namespace splitzip
