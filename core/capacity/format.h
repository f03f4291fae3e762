/* SPDX-License-Identifier: Apache-2.0 */
// Capacity mode (header byte 49 = 1, FORMAT.md 4.6): geometry of the frame,
// the per-block exponent table, the normative length-limited Huffman code
// lengths (package-merge) and canonical codes, and the decode table.
// Header-only and host/device: the reference and every backend call these,
// so the table rules live once.
#pragma once

#include <cstdint>

#include "core/layout.h"
#include "core/le_bytes.h"
#include "core/residual.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

inline constexpr uint8_t kModeCapacity = 1;            // v2 header byte 49
inline constexpr uint32_t kCapBlockLog2 = 16;          // elements per exponent block
inline constexpr uint64_t kCapBlockElems = uint64_t{1} << kCapBlockLog2;
inline constexpr uint32_t kCapStreams = 32;            // interleaved streams per block
inline constexpr uint32_t kCapMaxLen = 12;             // longest code, bits
inline constexpr uint32_t kCapTableSize = 1u << kCapMaxLen;

SZ_HD uint64_t cap_blocks(uint64_t n) { return (n + kCapBlockElems - 1) >> kCapBlockLog2; }
SZ_HD uint64_t cap_block_len(uint64_t n, uint64_t b) {
  const uint64_t first = b << kCapBlockLog2;
  return n - first < kCapBlockElems ? n - first : kCapBlockElems;
}
// Elements of a block of m elements that go to stream s (element j -> stream j mod S).
SZ_HD uint32_t cap_stream_len(uint32_t m, uint32_t s) {
  return m > s ? (m - s + kCapStreams - 1) / kCapStreams : 0;
}

// ---- frame geometry (FORMAT.md 4.6.1) ----
struct CapLayout {
  uint64_t n, n_blocks;
  uint64_t res_off, res_size;      // stream 1, as mode 0
  uint64_t high_off, high_size;    // stream 2, as mode 0
  uint64_t index_off, index_size;  // stream 8: u32 bytes per exponent block
  uint64_t blk_off, blk_size;      // stream 9: the exponent blocks, back to back
  uint64_t check_off, check_size;  // stream 7
  uint64_t frame_size;
};

// exp_bytes: header bytes 16..23 in mode 1 (the size of stream 9).
SZ_HD CapLayout capacity_layout(uint32_t dtype_id, uint64_t n, uint64_t exp_bytes, uint64_t n_checks) {
  // Streams 1 and 2 sit exactly where mode 0 puts them.
  const FrameLayout m0 = coded_layout(dtype_id, n, kDefaultChunkLog2, 0, 0);
  CapLayout L{};
  L.n = n;
  L.n_blocks = cap_blocks(n);
  L.res_off = m0.res_off;   L.res_size = m0.res_size;
  L.high_off = m0.high_off; L.high_size = m0.high_size;
  uint64_t off = m0.code_off;
  L.index_off = off; L.index_size = 4u * L.n_blocks;  off = next_offset(off, L.index_size);
  L.blk_off = off;   L.blk_size = exp_bytes;          off = next_offset(off, L.blk_size);
  L.check_off = off; L.check_size = 4u * n_checks;    off = next_offset(off, L.check_size);
  L.frame_size = align16(off);
  return L;
}

SZ_HD int capacity_gaps(const CapLayout& L, Gap out[5]) {
  const uint64_t offs[5] = {L.res_off, L.high_off, L.index_off, L.blk_off, L.check_off};
  const uint64_t sizes[5] = {L.res_size, L.high_size, L.index_size, L.blk_size, L.check_size};
  return stream_gaps(offs, sizes, 5, out);
}

// Rule 8 for a mode-1 header: exp_bytes small enough that the coded frame is
// smaller than the stored one (and no size overflows).
SZ_HD bool capacity_sizes_ok(uint32_t dtype_id, uint64_t n, uint64_t exp_bytes, uint64_t n_checks) {
  if (n == 0 || exp_bytes > n * geometry_of(dtype_id).bytes) return false;
  return capacity_layout(dtype_id, n, exp_bytes, n_checks).frame_size < stored_frame_size(dtype_id, n, n_checks);
}

// Check a (FORMAT.md 4.6.5): the unused high bits of stream 2's last byte.
SZ_HD bool cap_high_padding_ok(const uint8_t* frame, const CapLayout& L) {
  return bits3_padding_ok(frame + L.high_off, L.high_size, L.n);
}

// Stream 8: block b's byte size in stream 9.
SZ_HD uint32_t cap_index_entry(const uint8_t* frame, const CapLayout& L, uint64_t b) {
  return load_le32(frame + L.index_off + 4 * b);
}
SZ_HD void write_cap_index_entry(uint8_t* frame, const CapLayout& L, uint64_t b, uint64_t size) {
  store_le32(frame + L.index_off + 4 * b, static_cast<uint32_t>(size));
}

// ---- the block table (FORMAT.md 4.6.2) ----
// first, last, then one nibble per symbol first..last (0: absent).
SZ_HD uint32_t cap_table_bytes(uint32_t first, uint32_t last) { return 2u + (last - first + 2u) / 2u; }

struct CapTable {
  uint32_t first = 0, last = 0;
  uint32_t symbols = 0;        // present symbols
  uint8_t len[256] = {};       // code length per exponent value, 0 = absent
  uint32_t bytes = 0;          // table bytes in the block
};

// Parses and validates the table at p (avail bytes of the block). Returns ok,
// bad_codebook (table content) or bad_code (the block is too short for it).
SZ_HD Status parse_cap_table(const uint8_t* p, uint64_t avail, uint32_t exp_limit, CapTable* t) {
  if (avail < 2) return Status::bad_code;
  t->first = p[0];
  t->last = p[1];
  if (t->first > t->last || t->last >= exp_limit) return Status::bad_codebook;
  t->bytes = cap_table_bytes(t->first, t->last);
  if (avail < t->bytes) return Status::bad_code;
  for (uint32_t e = 0; e < 256; ++e) t->len[e] = 0;
  const uint32_t span = t->last - t->first + 1;
  uint32_t kraft = 0;
  t->symbols = 0;
  for (uint32_t i = 0; i < span; ++i) {
    const uint32_t l = (p[2 + i / 2] >> ((i & 1u) * 4u)) & 0xFu;
    if (l > kCapMaxLen) return Status::bad_codebook;
    if (l == 0) continue;
    t->len[t->first + i] = static_cast<uint8_t>(l);
    kraft += kCapTableSize >> l;
    ++t->symbols;
  }
  if ((span & 1u) && (p[2 + span / 2] >> 4) != 0) return Status::bad_codebook;   // padding nibble
  if (t->len[t->first] == 0 || t->len[t->last] == 0) return Status::bad_codebook;
  if (t->symbols == 1) return t->len[t->first] == 1 ? Status::ok : Status::bad_codebook;
  return kraft == kCapTableSize ? Status::ok : Status::bad_codebook;  // complete prefix code
}

SZ_HD void write_cap_table(const CapTable& t, uint8_t* p) {
  p[0] = static_cast<uint8_t>(t.first);
  p[1] = static_cast<uint8_t>(t.last);
  const uint32_t span = t.last - t.first + 1;
  for (uint32_t i = 0; i < (span + 1) / 2; ++i) p[2 + i] = 0;
  for (uint32_t i = 0; i < span; ++i) p[2 + i / 2] |= static_cast<uint8_t>(t.len[t.first + i] << ((i & 1u) * 4u));
}

// The normative code lengths (FORMAT.md 4.6.3): package-merge with limit
// kCapMaxLen over the present symbols sorted by (count, value) ascending, a
// leaf before a package of equal weight, the first 2m-2 items of the last
// list selected. counts: per exponent value. Fills t (first, last, symbols,
// len, bytes); a single present symbol gets length 1 (coded with 0 bits).
// At least one count must be non-zero.
// The work arrays of cap_code_lengths (15 KB): a caller that runs it on a
// GPU passes them in shared memory instead of a thread's local memory,
// which the driver would reserve for every resident thread.
struct CapMergeScratch {
  uint8_t sym[256];
  uint8_t is_leaf[kCapMaxLen + 1][512];
  uint64_t cur[512], next[512];
};

// C: uint32_t (a block's counts) or uint64_t (a table set's calibration,
// core/capacity/tables.h); the leaves' sum must fit in 64 bits.
template <class C>
SZ_HD void cap_code_lengths_of(const C* counts, CapTable* t, CapMergeScratch* w) {
  uint8_t* sym = w->sym;
  uint32_t m = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    t->len[e] = 0;
    if (counts[e] == 0) continue;
    // insertion by (count, value): values arrive ascending, so ties keep order
    uint32_t k = m++;
    while (k > 0 && counts[sym[k - 1]] > counts[e]) {
      sym[k] = sym[k - 1];
      --k;
    }
    sym[k] = static_cast<uint8_t>(e);
  }
  t->symbols = m;
  if (m == 1) {
    t->len[sym[0]] = 1;
  } else {
    // Lists for levels kCapMaxLen (leaves only) down to 1; is_leaf marks the
    // merged order of each level, weights only of the current one.
    auto& is_leaf = w->is_leaf;
    uint64_t* cur = w->cur;
    uint64_t* next = w->next;
    uint32_t cur_n = m;
    for (uint32_t i = 0; i < m; ++i) {
      cur[i] = counts[sym[i]];
      is_leaf[kCapMaxLen][i] = 1;
    }
    for (uint32_t l = kCapMaxLen - 1; l >= 1; --l) {
      const uint32_t packages = cur_n / 2;
      uint32_t i = 0, j = 0, k = 0;
      while (i < m || j < packages) {
        const uint64_t pw = j < packages ? cur[2 * j] + cur[2 * j + 1] : 0;
        if (i < m && (j >= packages || uint64_t{counts[sym[i]]} <= pw)) {
          next[k] = counts[sym[i++]];
          is_leaf[l][k++] = 1;
        } else {
          next[k] = pw;
          is_leaf[l][k++] = 0;
          ++j;
        }
      }
      for (uint32_t q = 0; q < k; ++q) cur[q] = next[q];
      cur_n = k;
    }
    // Select 2m-2 items of level 1; the packages taken select twice as many
    // items of the level below. Leaves taken at a level are a prefix of sym.
    uint32_t take = 2 * m - 2;
    for (uint32_t l = 1; l <= kCapMaxLen && take > 0; ++l) {
      uint32_t leaves = 0;
      for (uint32_t q = 0; q < take; ++q) leaves += is_leaf[l][q];
      for (uint32_t q = 0; q < leaves; ++q) ++t->len[sym[q]];
      take = 2 * (take - leaves);
    }
  }
  uint32_t first = 255, last = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    if (t->len[e] == 0) continue;
    if (e < first) first = e;
    last = e;
  }
  t->first = first;
  t->last = last;
  t->bytes = cap_table_bytes(first, last);
}
SZ_HD void cap_code_lengths(const uint32_t counts[256], CapTable* t, CapMergeScratch* w) {
  cap_code_lengths_of(counts, t, w);
}
SZ_HD void cap_code_lengths(const uint32_t counts[256], CapTable* t) {
  CapMergeScratch w;
  cap_code_lengths(counts, t, &w);
}

// Canonical codes (FORMAT.md 4.6.3), stored bit-reversed: the stream is
// LSB-first, so a code's first (most significant) bit is its lowest bit.
SZ_HD uint32_t reverse_bits(uint32_t c, uint32_t len) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < len; ++i) r |= ((c >> i) & 1u) << (len - 1 - i);
  return r;
}
SZ_HD void cap_codes(const CapTable& t, uint16_t code[256]) {
  uint32_t bl_count[kCapMaxLen + 1] = {};
  for (uint32_t e = t.first; e <= t.last; ++e) ++bl_count[t.len[e]];
  bl_count[0] = 0;
  uint32_t next_code[kCapMaxLen + 2] = {};
  uint32_t c = 0;
  for (uint32_t l = 1; l <= kCapMaxLen; ++l) {
    c = (c + bl_count[l - 1]) << 1;
    next_code[l] = c;
  }
  for (uint32_t e = 0; e < 256; ++e) {
    code[e] = 0;
    if (t.len[e] == 0) continue;
    code[e] = static_cast<uint16_t>(reverse_bits(next_code[t.len[e]]++, t.len[e]));
  }
}

// Decode table for a valid table of >= 2 symbols: entry[peek of kCapMaxLen
// bits] = symbol | (length << 8).
// The entries of symbol e (any order over symbols: a GPU fills them in
// parallel, one symbol per lane).
SZ_HD void cap_fill_symbol(const CapTable& t, const uint16_t code[256], uint32_t e, uint16_t table[kCapTableSize]) {
  const uint32_t l = t.len[e];
  if (l == 0) return;
  for (uint32_t hi = 0; hi < (kCapTableSize >> l); ++hi)
    table[code[e] | (hi << l)] = static_cast<uint16_t>(e | (l << 8));
}
SZ_HD void cap_decode_table(const CapTable& t, uint16_t table[kCapTableSize]) {
  uint16_t code[256];
  cap_codes(t, code);
  for (uint32_t e = t.first; e <= t.last; ++e) cap_fill_symbol(t, code, e, table);
}

// ---- a block's layout (FORMAT.md 4.6.2) ----
// The table; with two or more symbols then the 32 streams' byte sizes (u16)
// and the streams back to back. One symbol: the table is the block.

// Bytes of a stream of `bits` code bits.
SZ_HD uint32_t cap_stream_bytes(uint64_t bits) { return static_cast<uint32_t>((bits + 7) / 8); }

// Bytes before stream 0.
SZ_HD uint32_t cap_header_bytes(const CapTable& t) { return t.symbols > 1 ? t.bytes + 2 * kCapStreams : t.bytes; }

// Offset of stream s from the block start; size_of(k): stream k's bytes.
template <class SizeOf>
SZ_HD uint64_t cap_stream_offset_by(uint32_t table_bytes, uint32_t s, SizeOf&& size_of) {
  uint64_t off = table_bytes + 2 * kCapStreams;
  for (uint32_t k = 0; k < s; ++k) off += size_of(k);
  return off;
}
// The same from the streams' sizes z (an encoder's; s may be kCapStreams).
SZ_HD uint64_t cap_stream_offset(uint32_t table_bytes, const uint32_t* z, uint32_t s) {
  return cap_stream_offset_by(table_bytes, s, [&](uint32_t k) { return z[k]; });
}

// Bytes of a block whose streams have z[s] bytes (z unused with one symbol).
SZ_HD uint64_t cap_block_bytes(const CapTable& t, const uint32_t z[kCapStreams]) {
  return t.symbols > 1 ? cap_stream_offset(t.bytes, z, kCapStreams) : t.bytes;
}

// Writes the table and, with two or more symbols, the stream sizes z at
// blk; returns where stream 0 starts.
SZ_HD uint32_t write_cap_block_header(const CapTable& t, const uint32_t z[kCapStreams], uint8_t* blk) {
  write_cap_table(t, blk);
  if (t.symbols > 1)
    for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + t.bytes + 2 * s, z[s]);
  return cap_header_bytes(t);
}

// Decode side, for a block cap_parse_block accepted with two or more
// symbols: stream s's bytes and its offset from the block start.
SZ_HD uint32_t cap_stream_size(const uint8_t* blk, const CapTable& t, uint32_t s) {
  return load_le16(blk + t.bytes + 2 * s);
}
SZ_HD uint64_t cap_stream_at(const uint8_t* blk, const CapTable& t, uint32_t s) {
  return cap_stream_offset_by(t.bytes, s, [&](uint32_t k) { return cap_stream_size(blk, t, k); });
}

// ---- decoding one block (FORMAT.md 4.6.4, checks c-g of 4.6.5) ----
// Checks c, d and e of a block of `size` bytes: its table, and that the
// stream sizes fill the block exactly. The streams start at t->bytes + 64.
SZ_HD Status cap_parse_block(const uint8_t* blk, uint64_t size, uint32_t exp_limit, CapTable* t) {
  const Status ts = parse_cap_table(blk, size, exp_limit, t);
  if (ts != Status::ok) return ts;
  if (t->symbols == 1) return size == t->bytes ? Status::ok : Status::bad_code;
  if (size < cap_header_bytes(*t)) return Status::bad_code;
  return cap_stream_at(blk, *t, kCapStreams) == size ? Status::ok : Status::bad_code;
}

// Checks f (the codes end in the stream's last byte, no overrun) and g (its
// padding bits are zero) of a stream of z bytes whose codes ended at bit
// pos. Decoders with their own fast loops call it after them.
SZ_HD Status cap_stream_end(const uint8_t* stream, uint64_t z, uint64_t pos) {
  if (pos > 8 * z || (pos + 7) / 8 != z) return Status::bad_code;
  if ((pos & 7) && (stream[pos >> 3] >> (pos & 7)) != 0) return Status::bad_padding;
  return Status::ok;
}

// Checks f and g of stream s (z bytes at `stream`) of a block of m
// elements, decoding its codes with `table` (cap_decode_table); put(j, e)
// receives element j of the block. One stream is independent of the others:
// a GPU lane or a SIMD lane group decodes one.
template <class Put>
SZ_HD Status cap_decode_stream(const uint8_t* stream, uint64_t z, uint32_t s, uint32_t m,
                               const uint16_t table[kCapTableSize], Put&& put) {
  const uint64_t end_bit = 8 * z;
  uint64_t pos = 0;
  for (uint32_t j = s; j < m; j += kCapStreams) {
    // kCapMaxLen bits from pos; bits past the stream read as 0
    uint32_t peek = 0;
    const uint64_t byte = pos >> 3;
    for (uint32_t k = 0; k < 3 && byte + k < z; ++k) peek |= uint32_t{stream[byte + k]} << (8 * k);
    peek = (peek >> (pos & 7)) & (kCapTableSize - 1);
    const uint32_t entry = table[peek];
    const uint32_t len = entry >> 8;
    if (pos + len > end_bit) return Status::bad_code;  // overrun
    put(j, entry & 0xFFu);
    pos += len;
  }
  return cap_stream_end(stream, z, pos);
}

}  // namespace splitzip
