/* SPDX-License-Identifier: Apache-2.0 */
// Capacity table sets (FORMAT.md 4.9 and 13): calibrated code lengths that a
// mode-1 frame names by id instead of carrying a table per block. One
// implementation of the set's serialized form (parse, serialize), its id,
// the deterministic calibration, and the rule that picks a block's kind.
// Header-only; the parts device code needs are SZ_HD.
#pragma once

#include <cstdint>

#include "core/capacity/format.h"
#include "core/codec.h"
#include "core/hash.h"
#include "core/le_bytes.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

inline constexpr uint32_t kCapMaxTables = 32;         // T <= the stream count
inline constexpr uint32_t kCapSetVersion = 1;         // serialized form, byte 4
inline constexpr uint64_t kCapSetFixedBytes = 16;     // magic .. reserved, and the trailing id
inline constexpr uint64_t kCapSetTableBytes = 128;    // 256 nibbles per table
// Block kinds in a TABLES frame (FORMAT.md 4.9): the block's first byte.
inline constexpr uint8_t kCapKindOwn = 0;     // the block's own table (4.6.2) follows
inline constexpr uint8_t kCapKindShared = 1;  // stream s is coded with table s mod T of the set

// A parsed, valid set. Tables [count, 32) are all zero.
struct CapTables {
  uint8_t dtype = 0;          // Dtype id
  uint32_t count = 0;         // T: 1, 2, 4, 8, 16 or 32
  uint64_t id = 0;            // XXH3-64 (seed 0) of the serialized bytes before the id
  uint8_t len[kCapMaxTables][256] = {};  // code length per symbol value, 0 = absent
};

// Stream s (element j mod 32 of a block) uses table s mod T.
SZ_HD uint32_t cap_table_of_stream(const CapTables& ts, uint32_t s) { return s & (ts.count - 1u); }

SZ_HD uint64_t cap_tables_size_for(uint32_t count) { return kCapSetFixedBytes + kCapSetTableBytes * count; }
SZ_HD uint64_t cap_tables_serialized_size(const CapTables& ts) { return cap_tables_size_for(ts.count); }

// Table t of the set as a CapTable (first, last, symbols; bytes 0: it is
// not written in a block), for cap_codes / cap_decode_table.
SZ_HD void cap_tables_table(const CapTables& ts, uint32_t t, CapTable* out) {
  uint32_t first = 255, last = 0, symbols = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    out->len[e] = ts.len[t][e];
    if (ts.len[t][e] == 0) continue;
    if (e < first) first = e;
    last = e;
    ++symbols;
  }
  out->first = first;
  out->last = last;
  out->symbols = symbols;
  out->bytes = 0;
}

// Checks of one table's lengths (FORMAT.md 13): each 0..12, none at or
// past the dtype's symbol limit, two or more present and a complete
// prefix code.
SZ_HD Status cap_tables_check_lengths(const uint8_t len[256], uint32_t limit) {
  uint32_t kraft = 0, symbols = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    const uint32_t l = len[e];
    if (l == 0) continue;
    if (l > kCapMaxLen || e >= limit) return Status::bad_codebook;
    kraft += kCapTableSize >> l;
    ++symbols;
  }
  return symbols >= 2 && kraft == kCapTableSize ? Status::ok : Status::bad_codebook;
}

// The serialized form (FORMAT.md 13): "SZCT", version, dtype, log2 T,
// reserved 0, T x 128 bytes of length nibbles (value 2j in the low nibble
// of byte j), then the id: XXH3-64 (seed 0) of every byte before it.
SZ_HD void cap_tables_serialize(const CapTables& ts, uint8_t* out) {
  out[0] = 0x53;
  out[1] = 0x5A;
  out[2] = 0x43;
  out[3] = 0x54;
  out[4] = static_cast<uint8_t>(kCapSetVersion);
  out[5] = ts.dtype;
  uint32_t log2 = 0;
  while ((1u << log2) < ts.count) ++log2;
  out[6] = static_cast<uint8_t>(log2);
  out[7] = 0;
  for (uint32_t t = 0; t < ts.count; ++t)
    for (uint32_t j = 0; j < 128; ++j)
      out[8 + 128 * t + j] = static_cast<uint8_t>((ts.len[t][2 * j] & 0xFu) | ((ts.len[t][2 * j + 1] & 0xFu) << 4));
  const uint64_t body = cap_tables_size_for(ts.count) - 8;
  store_le64(out + body, hash_xxh3(out, body));
}

// Validates fully (FORMAT.md 13, checks in order) and fills *out.
SZ_HD Status cap_tables_parse(const uint8_t* b, uint64_t size, CapTables* out) {
  if (b == nullptr || out == nullptr) return Status::invalid_argument;
  if (size < kCapSetFixedBytes) return Status::truncated;                                       // 1
  if (b[0] != 0x53 || b[1] != 0x5A || b[2] != 0x43 || b[3] != 0x54) return Status::bad_magic;   // 2
  if (b[4] != kCapSetVersion) return Status::unsupported_version;                              // 3
  const uint64_t id = load_le64(b + size - 8);
  if (hash_xxh3(b, size - 8) != id) return Status::header_corrupt;                             // 4
  if (!dtype_id_valid(b[5]) || codec_of(b[5], kModeCapacity) != Codec::capacity) return Status::bad_dtype;  // 5
  if (b[6] > 5 || b[7] != 0) return Status::reserved_bits;                                     // 6
  const uint32_t count = 1u << b[6];
  if (size != cap_tables_size_for(count)) return Status::size_mismatch;                        // 7
  const uint32_t limit = cap_symbol_limit(b[5]);
  out->dtype = b[5];
  out->count = count;
  out->id = id;
  for (uint32_t t = 0; t < kCapMaxTables; ++t)
    for (uint32_t e = 0; e < 256; ++e)
      out->len[t][e] = t < count ? static_cast<uint8_t>((b[8 + 128 * t + e / 2] >> (4 * (e & 1u))) & 0xFu) : 0;
  for (uint32_t t = 0; t < count; ++t) {
    const Status s = cap_tables_check_lengths(out->len[t], limit);                              // 8
    if (s != Status::ok) return s;
  }
  return Status::ok;
}

// The id a set has (its serialized bytes' hash) without a buffer of them.
inline uint64_t cap_tables_compute_id(const CapTables& ts) {
  uint8_t buf[kCapSetFixedBytes + kCapSetTableBytes * kCapMaxTables];
  cap_tables_serialize(ts, buf);
  return load_le64(buf + cap_tables_serialized_size(ts) - 8);
}

// How far calibration widens the symbols its samples hold (13.1 step 2):
// on real KV, values just under the samples' smallest magnitude are what
// other pages of the same layer add (docs/DESIGN.md 7a, "Calibration reach").
inline constexpr uint32_t kCapReachBelow = 8;
inline constexpr uint32_t kCapReachAbove = 2;

// ---- calibration (FORMAT.md 13.1, deterministic) ----
// hist: T rows of 256 counts; row t sums the symbols of the streams s with
// s mod T = t over every sample. For every table the leaves are the symbols
// present in any row, widened by the reach (kCapReachBelow/Above around
// their magnitudes, and 0): a value the samples missed but pages near them
// hold still codes with the set instead of making its block build its own
// table. Leaves without a count get count 1. Then package-merge (4.6.3)
// per table.
inline Status cap_tables_calibrate(Dtype dtype, uint32_t count, const uint64_t* hist, CapTables* out) {
  const auto d = static_cast<uint32_t>(dtype);
  if (out == nullptr || hist == nullptr || !dtype_id_valid(d) || count == 0 || count > kCapMaxTables ||
      (count & (count - 1)) != 0)
    return Status::invalid_argument;
  if (codec_of(d, kModeCapacity) != Codec::capacity) return Status::undefined_mode;
  const uint32_t limit = cap_symbol_limit(d);
  bool present[256] = {};
  uint32_t n_present = 0;
  uint64_t total = 0;
  for (uint32_t t = 0; t < count; ++t)
    for (uint32_t e = 0; e < 256; ++e) {
      const uint64_t c = hist[256 * t + e];
      if (c == 0) continue;
      if (e >= limit || c > (uint64_t{1} << 56) || total > (uint64_t{1} << 56)) return Status::invalid_argument;
      total += c;
      if (!present[e]) ++n_present;
      present[e] = true;
    }
  if (n_present == 0) return Status::invalid_argument;  // no samples
  // The reach (13.1 step 2): magnitudes are exponent fields, or the low 7
  // bits of an fp8_e4m3 byte (its sign is the top bit).
  const uint32_t mag_mask = d == static_cast<uint32_t>(Dtype::fp8_e4m3) ? 0x7Fu : 0xFFu;
  uint32_t lo = 255, hi = 0;
  for (uint32_t e = 0; e < limit; ++e)
    if (present[e]) {
      lo = (e & mag_mask) < lo ? (e & mag_mask) : lo;
      hi = (e & mag_mask) > hi ? (e & mag_mask) : hi;
    }
  for (uint32_t e = 0; e < limit; ++e) {
    const uint32_t m = e & mag_mask;
    if (m + kCapReachBelow >= lo && m <= hi + kCapReachAbove) present[e] = true;
  }
  present[0] = true;
  out->dtype = static_cast<uint8_t>(d);
  out->count = count;
  CapMergeScratch w;
  for (uint32_t t = 0; t < kCapMaxTables; ++t) {
    for (uint32_t e = 0; e < 256; ++e) out->len[t][e] = 0;
    if (t >= count) continue;
    uint64_t c[256];
    for (uint32_t e = 0; e < 256; ++e) {
      const uint64_t h = hist[256 * t + e];
      c[e] = present[e] ? (h > 0 ? h : 1) : 0;
    }
    CapTable tab;
    cap_code_lengths_of(c, &tab, &w);
    for (uint32_t e = 0; e < 256; ++e) out->len[t][e] = tab.len[e];
  }
  out->id = cap_tables_compute_id(*out);
  return Status::ok;
}

// Adds the symbols of n elements (element i -> row i mod T) to hist (T rows
// of 256). Elements are counted from a block start (blocks are 2^16
// elements, a multiple of 32), so a sample must start where a frame does.
inline Status cap_tables_add_samples(Dtype dtype, uint32_t count, const void* buf, uint64_t n, uint64_t* hist) {
  const auto d = static_cast<uint32_t>(dtype);
  if (hist == nullptr || (buf == nullptr && n > 0) || count == 0 || count > kCapMaxTables ||
      (count & (count - 1)) != 0)
    return Status::invalid_argument;
  if (codec_of(d, kModeCapacity) != Codec::capacity) return Status::undefined_mode;
  const auto* p = static_cast<const uint8_t*>(buf);
  const uint64_t mask = count - 1;
  visit_codec_dtype<Codec::capacity>(d, [&](auto tr) {
    using T = decltype(tr);
    for (uint64_t i = 0; i < n; ++i) {
      typename T::Bits v;
      __builtin_memcpy(&v, p + i * T::kBytes, sizeof v);
      ++hist[256 * (i & mask) + T::exponent(v)];
    }
  });
  return Status::ok;
}

// A set from sample buffers (each as one frame's elements would be): the
// histograms of cap_tables_add_samples, then cap_tables_calibrate.
inline Status cap_tables_from_samples(Dtype dtype, uint32_t count, const void* const* bufs, const uint64_t* n_elems,
                                      uint64_t n_bufs, CapTables* out) {
  if (out == nullptr || (n_bufs > 0 && (bufs == nullptr || n_elems == nullptr)) || count == 0 ||
      count > kCapMaxTables)
    return Status::invalid_argument;
  static thread_local uint64_t hist[kCapMaxTables * 256];
  for (auto& h : hist) h = 0;
  for (uint64_t i = 0; i < n_bufs; ++i) {
    const Status s = cap_tables_add_samples(dtype, count, bufs[i], n_elems[i], hist);
    if (s != Status::ok) return s;
  }
  return cap_tables_calibrate(dtype, count, hist, out);
}

// ---- the frame side (FORMAT.md 4.9) ----
// The normative kind of a block: shared iff every element's symbol has a
// code in its stream's table. exps: the block's m symbols.
SZ_HD bool cap_block_fits_set(const CapTables& ts, const uint8_t* exps, uint32_t m) {
  const uint32_t mask = ts.count - 1u;
  for (uint32_t j = 0; j < m; ++j)
    if (ts.len[j & mask][exps[j]] == 0) return false;
  return true;
}

// The same from a block's counts, when every table codes the same symbols
// (a calibrated set's do): exact then. Returns 1 fits, 0 does not, -1
// cannot tell (tables differ in their symbols: use cap_block_fits_set).
SZ_HD int cap_block_fits_by_counts(const CapTables& ts, const uint32_t counts[256], bool same_symbols) {
  if (!same_symbols) return -1;
  for (uint32_t e = 0; e < 256; ++e)
    if (counts[e] != 0 && ts.len[0][e] == 0) return 0;
  return 1;
}

// Whether every table of the set has the same present symbols.
SZ_HD bool cap_tables_same_symbols(const CapTables& ts) {
  for (uint32_t t = 1; t < ts.count; ++t)
    for (uint32_t e = 0; e < 256; ++e)
      if ((ts.len[t][e] == 0) != (ts.len[0][e] == 0)) return false;
  return true;
}

// The set a frame names, among those a decoder was given (null: MISSING_TABLES).
SZ_HD const CapTables* cap_tables_find(const CapTables* const* sets, uint64_t n_sets, uint64_t id, uint32_t dtype_id) {
  for (uint64_t i = 0; i < n_sets; ++i)
    if (sets != nullptr && sets[i] != nullptr && sets[i]->id == id && sets[i]->dtype == dtype_id) return sets[i];
  return nullptr;
}

// The set of a frame (FORMAT.md 4.9): *out = null for a frame without
// TABLES; MISSING_TABLES when the caller gave no set of its id and dtype.
SZ_HD Status cap_frame_set(const CapTables* const* sets, uint64_t n_sets, bool has_tables, uint64_t id,
                           uint32_t dtype_id, const CapTables** out) {
  *out = nullptr;
  if (!has_tables) return Status::ok;
  *out = cap_tables_find(sets, n_sets, id, dtype_id);
  return *out != nullptr ? Status::ok : Status::missing_tables;
}

// Bytes before stream 0 of a shared-kind block: the kind and the 32 sizes.
inline constexpr uint32_t kCapSharedHeaderBytes = 1 + 2 * kCapStreams;

}  // namespace splitzip
