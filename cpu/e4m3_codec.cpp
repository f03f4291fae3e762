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

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/fp8_e4m3.h"
#include "core/hash.h"
#include "core/layout.h"
#include "cpu/cpu_targets.h"
#include "cpu/kernels.h"

namespace splitzip {
namespace cpu {
namespace {

constexpr uint64_t kUnit = kChecksumBlockBytes;  // elements (1 byte each) per work unit
constexpr uint64_t kUnitGroups = kUnit / 8;
constexpr uint64_t kKeepEscBytes = uint64_t{16} << 20;  // escape scratch a thread keeps between calls

// The default (threads 0) stays on one thread below parallel_min_bytes(), as the nibble
// codec does: a page-sized call must not pay for waking a team.
int thread_count(int threads, uint64_t units) {
  int t = threads > 0 ? threads : (units * kUnit >= parallel_min_bytes() ? omp_get_max_threads() : 1);
  if (static_cast<uint64_t>(t) > units) t = static_cast<int>(units ? units : 1);
  return t < 1 ? 1 : t;
}

uint64_t unit_groups(uint64_t n, uint64_t u) {
  const uint64_t groups = (n + 7) / 8, first = u * kUnitGroups;
  return groups - first < kUnitGroups ? groups - first : kUnitGroups;
}

}  // namespace

bool e4m3_histogram(const uint8_t* src, uint64_t n, uint64_t n_checks, uint8_t* f, uint64_t counts[256],
                    int threads) {
  std::memset(counts, 0, 256 * sizeof(uint64_t));
  const uint64_t units = (n + kUnit - 1) / kUnit;
  uint8_t* res = f != nullptr ? f + coded_layout(kDtypeE4M3, n, kDefaultChunkLog2, 0, n_checks).res_off : nullptr;
  const int t = thread_count(threads, units);
  bool wrote = res != nullptr;
  if (t == 1) {
    for (uint64_t u = 0; u < units; ++u)
      wrote &= e4m3_histogram_residual(src, n, u * kUnitGroups, unit_groups(n, u), res, counts);
    return wrote;
  }
  std::vector<std::array<uint64_t, 16>> parts(units);
  std::atomic<bool> all{true};
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    auto& part = parts[static_cast<size_t>(u)];
    part.fill(0);
    if (!e4m3_histogram_residual(src, n, static_cast<uint64_t>(u) * kUnitGroups,
                                 unit_groups(n, static_cast<uint64_t>(u)), res, part.data()))
      all.store(false, std::memory_order_relaxed);
  }
  for (const auto& part : parts)
    for (int b = 0; b < 16; ++b) counts[b] += part[static_cast<size_t>(b)];
  return wrote && all.load();
}

Status e4m3_encode(const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget, uint64_t n_checks,
                   uint8_t* f, bool res_done, uint64_t* hashes, int threads, uint64_t* escapes_out) {
  uint8_t code_of[16];
  e4m3_code_table(cb.entries, cb.count, code_of);
  const uint64_t units = (n + kUnit - 1) / kUnit;
  std::vector<uint64_t> first(units + 1, 0);
  const int t = thread_count(threads, units);
  // Streams 1 and 3 sit where coded_layout puts them for any escape count
  // (FORMAT.md 4.7), so one pass codes each unit with its escapes into its
  // own slot of esc; they are packed once the counts are known.
  const FrameLayout L0 = coded_layout(kDtypeE4M3, n, kDefaultChunkLog2, 0, n_checks);
  // Pages reuse this thread's buffer; a big frame's is freed with the call.
  thread_local std::vector<uint8_t> t_esc;
  std::vector<uint8_t> own;
  std::vector<uint8_t>& esc = n <= kKeepEscBytes ? t_esc : own;
  if (esc.size() < n + 64) esc.resize(n + 64);
  uint8_t* e = esc.data();
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    first[u + 1] = e4m3_encode_groups(src, n, g0, gn, code_of, f + L0.res_off, res_done, f + L0.code_off, e + 8 * g0);
    if (hashes != nullptr) hashes[u] = block_hash(src, n, static_cast<uint64_t>(u));
  }
  // Each unit's escapes moved down to their place in element order
  // (first[u] <= the unit's slot, so in unit order nothing is overwritten).
  for (uint64_t u = 0; u < units; ++u) {
    const uint64_t k = first[u + 1];
    first[u + 1] += first[u];
    if (u > 0 && k > 0) std::memmove(e + first[u], e + u * kUnit, k);
  }
  const uint64_t escapes = first[units];
  if (escapes > budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(kDtypeE4M3, n, kDefaultChunkLog2, escapes, n_checks);
  // Stream 6: escape exponents, two per byte (a padding high nibble is 0).
  const int64_t pairs = static_cast<int64_t>(L.exp_size);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t j = 0; j < pairs; ++j) {
    const uint64_t i = 2 * static_cast<uint64_t>(j);
    const uint32_t hi = i + 1 < escapes ? e[i + 1] : 0u;
    f[L.exp_off + static_cast<uint64_t>(j)] = static_cast<uint8_t>(e[i] | (hi << 4));
  }
  *escapes_out = escapes;
  return Status::ok;
}

Status e4m3_decode(const FrameHeader& h, const uint8_t* f, uint8_t* dst, uint64_t* hashes, int threads) {
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  if (!stream_padding_ok(f, L)) return Status::bad_padding;  // 14
  const uint64_t units = (n + kUnit - 1) / kUnit;
  const int t = thread_count(threads, units);
  uint8_t code_of[16];
  e4m3_code_table(h.codebook, h.codebook_count, code_of);
  const uint8_t* res = f + L.res_off;
  const uint8_t* codes = f + L.code_off;
  const uint8_t* esc = f + L.exp_off;
  // This thread's escapes one per byte, grown once (a big frame's freed).
  thread_local std::vector<uint8_t> t_escb;
  if (t == 1) {
    // One pass: each unit decoded, its codes checked and its escapes taken
    // from the running index (the header's count bounds them), then hashed
    // while in cache. Rules in order afterwards: 15, 17, 18.
    std::vector<uint8_t> own;
    std::vector<uint8_t>& escb = h.escape_count <= kKeepEscBytes ? t_escb : own;
    if (escb.size() < h.escape_count + kE4M3EscbSlack) escb.resize(h.escape_count + kE4M3EscbSlack);
    const bool bad17 = e4m3_expand_escapes(esc, 0, h.escape_count, code_of, escb.data());
    bool bad18 = false;
    uint64_t k = 0;
    for (uint64_t u = 0; u < units; ++u) {
      const uint64_t g0 = u * kUnitGroups, gn = unit_groups(n, u), bytes = std::min(kUnit, n - u * kUnit);
      // A block of whole KiB is hashed inside the decode, each KiB from L1.
      const bool fused = hashes != nullptr && bytes % 1024 == 0;
      const uint64_t m =
          fused ? e4m3_decode_groups_hashed(res, codes, esc, escb.data() + k, n, g0, gn, h.codebook, code_of,
                                            h.codebook_count, k, h.escape_count - k, dst, &bad18, hashes,
                                            bytes < kUnit ? n : 0)
                : e4m3_decode_groups(res, codes, esc, escb.data() + k, n, g0, gn, h.codebook, code_of,
                                     h.codebook_count, k, h.escape_count - k, dst, &bad18);
      if (m == kE4M3Overrun) return Status::bad_escape_counts;  // 15
      k += m;
      if (hashes != nullptr && !fused) hashes[u] = block_hash(dst, n, u);
    }
    if (k != h.escape_count) return Status::bad_escape_counts;  // 15
    if (bad17) return Status::bad_escape_value;                  // 17
    if (bad18) return Status::bad_code;                          // 18
    return Status::ok;
  }
  // Threads: each unit's first escape index from a counting pass.
  std::vector<uint64_t> first(units + 1, 0);
  std::atomic<bool> bad_code{false};
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    bool bad = false;
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    first[u + 1] = e4m3_count_markers(codes, n, g0, gn, h.codebook_count, &bad);
    if (bad) bad_code.store(true, std::memory_order_relaxed);
  }
  for (uint64_t u = 0; u < units; ++u) first[u + 1] += first[u];
  if (first[units] != h.escape_count) return Status::bad_escape_counts;  // 15
  if (bad_code.load()) {  // rule 17 goes first
    for (uint64_t k = 0; k < h.escape_count; ++k)
      if (code_of[e4m3_escape_at(esc, k)] != kE4M3Escape) return Status::bad_escape_value;  // 17
    return Status::bad_code;  // 18
  }
  std::atomic<bool> bad_escape{false};  // 17, checked on each unit's escapes
  std::atomic<bool> no_memory{false}, miscount{false};
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t u = 0; u < static_cast<int64_t>(units); ++u) {
    const uint64_t g0 = static_cast<uint64_t>(u) * kUnitGroups, gn = unit_groups(n, static_cast<uint64_t>(u));
    const uint64_t k = first[u + 1] - first[u];
    try {
      if (t_escb.size() < k + kE4M3EscbSlack) t_escb.resize(k + kE4M3EscbSlack);
    } catch (...) {
      no_memory.store(true);
      continue;
    }
    if (e4m3_expand_escapes(esc, first[u], k, code_of, t_escb.data())) bad_escape.store(true, std::memory_order_relaxed);
    bool bad = false;
    if (e4m3_decode_groups(res, codes, esc, t_escb.data(), n, g0, gn, h.codebook, code_of, h.codebook_count, first[u], k,
                           dst, &bad) != k)
      miscount.store(true);  // cannot happen: counted above
    if (hashes != nullptr) hashes[u] = block_hash(dst, n, static_cast<uint64_t>(u));
  }
  if (no_memory.load()) return Status::out_of_memory;
  if (miscount.load()) return Status::internal_error;
  if (bad_escape.load()) return Status::bad_escape_value;  // 17
  return Status::ok;
}

}  // namespace cpu
}  // namespace splitzip
