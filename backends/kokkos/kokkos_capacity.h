/* SPDX-License-Identifier: Apache-2.0 */
// Kokkos capacity mode (FORMAT.md 4.6): streams 1, 2, 8 and 9 of a mode-1
// frame, and their decode with checks a-g of 4.6.5; the rest of the frame
// (header, stream 7, gaps, stored fallback) is kokkos_frame.h's.
//
// Encode:
//   1. one index per exponent block: histogram, code lengths and canonical
//      codes (core/capacity/format.h), bits of each of the 32 streams,
//      block size                                         (parallel_for)
//   2. exclusive scan of the block sizes -> block offsets (parallel_scan)
//   3. one index per (block, stream) bit-packs its stream; stream 0's index
//      also writes the index entry, table and sizes       (parallel_for)
//   4. one index per 8 elements writes streams 1 and 2    (parallel_for)
// Decode:
//   1. padding of stream 2 (check a), index sum (check b) (parallel_reduce, parallel_scan)
//   2. one team per block: table and sizes (c-e) once, then one thread per
//      stream decodes its codes (f, g) and writes whole elements
//                                                         (team parallel_reduce)
// Every write has a fixed place and the first failing check is the minimum
// of (block, stage) keys, so bytes and statuses do not depend on the
// execution space, team size or thread count.
//
// Table sets (FORMAT.md 4.9): the set is copied to space memory once per
// call, with its canonical codes (encode) or its T decode tables (decode),
// one index per table. Step 1 then picks each block's kind by the
// normative rule (every symbol coded by its stream's table: shared, else
// its own table) and every block starts with the kind byte.
#pragma once

#include <string>

#include "backends/kokkos/kokkos_encode.h"
#include "backends/kokkos/kokkos_views.h"
#include "core/capacity/format.h"
#include "core/capacity/tables.h"
#include "core/codec_args.h"
#include "core/header.h"

namespace splitzip {
namespace kokkos_impl {

template <class ExecSpace>
using U32s = Kokkos::View<uint32_t*, typename ExecSpace::memory_space>;
template <class ExecSpace>
using U16s = Kokkos::View<uint16_t*, typename ExecSpace::memory_space>;
// A table set in space memory: one element, or none (no TABLES).
template <class ExecSpace>
using SetView = Kokkos::View<CapTables*, typename ExecSpace::memory_space>;

// The caller's set (host memory) into space memory.
template <class ExecSpace>
SetView<ExecSpace> upload_set(const ExecSpace& space, const CapTables& ts) {
  SetView<ExecSpace> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("splitzip::cap_set")), 1);
  Kokkos::deep_copy(space, v,
                    Kokkos::View<const CapTables*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(&ts, 1));
  return v;
}

// Table t's canonical codes (FORMAT.md 4.6.3): codes(256 t + e) = code | len << 16.
template <class ExecSpace>
struct CapSetCodes {
  SetView<ExecSpace> set;
  U32s<ExecSpace> codes;
  KOKKOS_INLINE_FUNCTION void operator()(const Index ti) const {
    const auto t = static_cast<uint32_t>(ti);
    CapTable tab;
    cap_tables_table(set(0), t, &tab);
    uint16_t code[256];
    cap_codes(tab, code);
    for (uint32_t e = 0; e < 256; ++e) codes(256u * t + e) = code[e] | (uint32_t{tab.len[e]} << 16);
  }
};

// Table t's decode table at luts(4096 t).
template <class ExecSpace>
struct CapSetLuts {
  SetView<ExecSpace> set;
  U16s<ExecSpace> luts;
  KOKKOS_INLINE_FUNCTION void operator()(const Index ti) const {
    const auto t = static_cast<uint32_t>(ti);
    CapTable tab;
    cap_tables_table(set(0), t, &tab);
    cap_decode_table(tab, luts.data() + uint64_t{kCapTableSize} * t);
  }
};

// Per-block plan entries: heads(b) = first | last << 8 | symbols << 16;
// codes(256 b + e) = canonical code (bit-reversed) | length << 16.
KOKKOS_INLINE_FUNCTION uint32_t cap_head(const CapTable& t) { return t.first | (t.last << 8) | (t.symbols << 16); }

// Encode step 1 for block b.
template <class T, class ExecSpace>
struct CapPlanBlocks {
  ConstBytes<ExecSpace> src;
  uint64_t n;
  U32s<ExecSpace> heads, codes, stream_bytes;
  U64s<ExecSpace> sizes;
  SetView<ExecSpace> set;  // empty: per-block tables
  U32s<ExecSpace> kinds;   // with a set: each block's kind (FORMAT.md 4.9)

  // A block of a TABLES frame is shared iff every element's symbol has a
  // length in its stream's table (the normative kind rule of 4.9, as
  // cap_block_fits_set); then its stream sizes come from those lengths.
  KOKKOS_INLINE_FUNCTION bool plan_shared(uint64_t b, uint64_t begin, uint32_t m) const {
    const CapTables& ts = set(0);
    uint32_t bits[kCapStreams];
    for (uint32_t s = 0; s < kCapStreams; ++s) bits[s] = 0;
    for (uint32_t j = 0; j < m; ++j) {
      const uint32_t s = j % kCapStreams;
      const uint32_t l = ts.len[cap_table_of_stream(ts, s)][T::exponent(load_elem<T>(src, begin + j))];
      if (l == 0) return false;
      bits[s] += l;
    }
    uint64_t total = kCapSharedHeaderBytes;
    for (uint32_t s = 0; s < kCapStreams; ++s) total += stream_bytes(b * kCapStreams + s) = cap_stream_bytes(bits[s]);
    kinds(b) = kCapKindShared;
    heads(b) = 0;
    sizes(b) = total;
    return true;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Index bi) const {
    const auto b = static_cast<uint64_t>(bi);
    const uint64_t begin = b << kCapBlockLog2;
    const auto m = static_cast<uint32_t>(cap_block_len(n, b));
    const bool has_set = set.data() != nullptr;
    if (has_set && plan_shared(b, begin, m)) return;
    uint32_t counts[256];
    for (uint32_t e = 0; e < 256; ++e) counts[e] = 0;
    for (uint32_t j = 0; j < m; ++j) ++counts[T::exponent(load_elem<T>(src, begin + j))];
    CapTable t;
    cap_code_lengths(counts, &t);
    uint16_t code[256];
    uint32_t z[kCapStreams];
    if (t.symbols > 1) {
      cap_codes(t, code);
      uint32_t bits[kCapStreams];
      for (uint32_t s = 0; s < kCapStreams; ++s) bits[s] = 0;
      for (uint32_t j = 0; j < m; ++j) bits[j % kCapStreams] += t.len[T::exponent(load_elem<T>(src, begin + j))];
      for (uint32_t s = 0; s < kCapStreams; ++s) z[s] = stream_bytes(b * kCapStreams + s) = cap_stream_bytes(bits[s]);
    } else {
      for (uint32_t e = 0; e < 256; ++e) code[e] = 0;
    }
    for (uint32_t e = 0; e < 256; ++e) codes(b * 256u + e) = code[e] | (uint32_t{t.len[e]} << 16);
    heads(b) = cap_head(t);
    sizes(b) = cap_block_bytes(t, z) + (has_set ? 1u : 0u);  // the kind byte
    if (has_set) kinds(b) = kCapKindOwn;
  }
};

// Encode step 3 for stream s of block b (index 32 b + s).
template <class T, class ExecSpace>
struct CapWriteStreams {
  ConstBytes<ExecSpace> src;
  Bytes<ExecSpace> frame;
  uint64_t n, blk_off;
  CapLayout L;
  U32s<ExecSpace> heads, codes, stream_bytes;
  U64s<ExecSpace> sizes, offsets;
  SetView<ExecSpace> set;    // empty: per-block tables
  U32s<ExecSpace> kinds, set_codes;

  // Stream s of the block at begin, bit-packed at off; cl(e) = code | len << 16.
  template <class CodeOf>
  KOKKOS_INLINE_FUNCTION void pack(uint64_t off, uint64_t begin, uint32_t m, uint32_t s, CodeOf&& cl) const {
    uint64_t acc = 0;  // LSB-first bit buffer, fewer than 8 + 12 bits pending
    uint32_t pending = 0;
    for (uint32_t j = s; j < m; j += kCapStreams) {
      const uint32_t c = cl(T::exponent(load_elem<T>(src, begin + j)));
      acc |= uint64_t{c & 0xFFFFu} << pending;
      pending += c >> 16;
      for (; pending >= 8; pending -= 8, acc >>= 8) frame(off++) = static_cast<uint8_t>(acc);
    }
    if (pending > 0) frame(off) = static_cast<uint8_t>(acc);  // high bits are 0
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Index q) const {
    const uint64_t b = static_cast<uint64_t>(q) / kCapStreams;
    const auto s = static_cast<uint32_t>(static_cast<uint64_t>(q) % kCapStreams);
    uint64_t base = blk_off + offsets(b);
    const uint32_t* z = stream_bytes.data() + b * kCapStreams;
    const uint64_t begin = b << kCapBlockLog2;
    const auto m = static_cast<uint32_t>(cap_block_len(n, b));
    if (s == 0) write_cap_index_entry(frame.data(), L, b, sizes(b));
    if (set.data() != nullptr) {  // FORMAT.md 4.9: the kind byte first
      const uint32_t kind = kinds(b);
      if (s == 0) frame(base) = static_cast<uint8_t>(kind);
      ++base;
      if (kind == kCapKindShared) {  // the 32 sizes, then stream s coded with table s mod T
        if (s == 0)
          for (uint32_t k = 0; k < kCapStreams; ++k) store_le16(frame.data() + base + 2 * k, z[k]);
        const uint32_t t = cap_table_of_stream(set(0), s);
        pack(base + cap_stream_offset(0, z, s), begin, m, s, [&](uint32_t e) { return set_codes(256u * t + e); });
        return;
      }
    }
    const uint32_t head = heads(b);
    const uint32_t first = head & 0xFFu, last = (head >> 8) & 0xFFu, symbols = head >> 16;
    if (s == 0) {
      CapTable t;
      t.first = first;
      t.last = last;
      t.symbols = symbols;
      t.bytes = cap_table_bytes(first, last);
      for (uint32_t e = first; e <= last; ++e) t.len[e] = static_cast<uint8_t>(codes(b * 256u + e) >> 16);
      write_cap_block_header(t, z, frame.data() + base);
    }
    if (symbols <= 1) return;  // one symbol: the table is the block
    pack(base + cap_stream_offset(cap_table_bytes(first, last), z, s), begin, m, s,
         [&](uint32_t e) { return codes(b * 256u + e); });
  }
};

// Encode step 4: streams 1 and 2 for elements 8g .. 8g+7 (as mode 0, so no
// two indices share an output byte).
template <class T, class ExecSpace>
struct CapWriteResiduals {
  ConstBytes<ExecSpace> src;
  Bytes<ExecSpace> frame;
  uint64_t n, res_off, high_off;

  KOKKOS_INLINE_FUNCTION void operator()(const Index g) const {
    const uint64_t base = static_cast<uint64_t>(g) * 8u;
    const uint32_t m = n - base < 8u ? static_cast<uint32_t>(n - base) : 8u;
    uint32_t r[8];
    for (uint32_t j = 0; j < m; ++j) r[j] = T::residual(load_elem<T>(src, base + j));
    store_residual_octet<T>(frame.data() + res_off, frame.data() + high_off, static_cast<uint64_t>(g), m, r);
  }
};

// Streams 1, 2, 8 and 9 of a mode-1 frame into a.dst, h->mode and
// h->escape_count (= exp_bytes), as reference_capacity_encode: escape_overflow
// when the frame must be stored, dst_too_small when the coded frame exceeds
// the capacity; nothing is written into the frame before both are decided.
template <class T, class ExecSpace>
Status capacity_encode(const ExecSpace& space, const CompressArgs& a, uint64_t n_checks, FrameHeader* h) {
  const uint64_t n = a.n;
  if (n == 0) return Status::escape_overflow;
  const uint64_t nb = cap_blocks(n);
  const ConstBytes<ExecSpace> src(static_cast<const uint8_t*>(a.src), n * T::kBytes);
  const auto no_init = [](const char* label) { return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)); };
  U32s<ExecSpace> heads(no_init("splitzip::cap_heads"), nb);
  U32s<ExecSpace> codes(no_init("splitzip::cap_codes"), nb * 256u);
  U32s<ExecSpace> stream_bytes(no_init("splitzip::cap_stream_bytes"), nb * kCapStreams);
  U64s<ExecSpace> sizes(no_init("splitzip::cap_block_sizes"), nb);
  U64s<ExecSpace> offsets(no_init("splitzip::cap_block_offsets"), nb);
  SetView<ExecSpace> set;
  U32s<ExecSpace> kinds, set_codes;
  if (a.tables != nullptr) {  // FORMAT.md 4.9
    set = upload_set(space, *a.tables);
    kinds = U32s<ExecSpace>(no_init("splitzip::cap_kinds"), nb);
    set_codes = U32s<ExecSpace>(no_init("splitzip::cap_set_codes"), 256u * a.tables->count);
    Kokkos::parallel_for("splitzip::kokkos::cap_set_codes", Range<ExecSpace>(space, 0, a.tables->count),
                         CapSetCodes<ExecSpace>{set, set_codes});
  }
  Kokkos::parallel_for("splitzip::kokkos::cap_plan_blocks", Range<ExecSpace>(space, 0, static_cast<Index>(nb)),
                       CapPlanBlocks<T, ExecSpace>{src, n, heads, codes, stream_bytes, sizes, set, kinds});
  uint64_t exp_bytes = 0;
  Kokkos::parallel_scan("splitzip::kokkos::cap_block_offsets", Range<ExecSpace>(space, 0, static_cast<Index>(nb)),
                        ExclusiveScan<ExecSpace>{sizes, offsets}, exp_bytes);
  const auto id = static_cast<uint32_t>(T::kId);
  const CapLayout L = capacity_layout(id, n, exp_bytes, n_checks);
  if (L.frame_size >= stored_frame_size(id, n, n_checks)) return Status::escape_overflow;  // 4.4
  if (L.frame_size > a.capacity) return Status::dst_too_small;
  const Bytes<ExecSpace> frame(static_cast<uint8_t*>(a.dst), L.frame_size);
  Kokkos::parallel_for("splitzip::kokkos::cap_write_streams",
                       Range<ExecSpace>(space, 0, static_cast<Index>(nb * kCapStreams)),
                       CapWriteStreams<T, ExecSpace>{src, frame, n, L.blk_off, L, heads, codes, stream_bytes, sizes,
                                                     offsets, set, kinds, set_codes});
  Kokkos::parallel_for("splitzip::kokkos::cap_write_residuals",
                       Range<ExecSpace>(space, 0, static_cast<Index>((n + 7u) / 8u)),
                       CapWriteResiduals<T, ExecSpace>{src, frame, n, L.res_off, L.high_off});
  space.fence();
  h->mode = kModeCapacity;
  h->version = frame_version(h->dtype, h->mode, h->flags);
  h->escape_count = exp_bytes;
  if (a.tables != nullptr) set_tables_fields(h, a.tables->id);
  return Status::ok;
}

// ---- decode ----

// Check a: the unused high bits of stream 2's last byte; one index.
template <class ExecSpace>
struct CapCheckHighPadding {
  ConstBytes<ExecSpace> frame;
  CapLayout L;

  KOKKOS_INLINE_FUNCTION void operator()(const Index, uint32_t& mask) const {
    if (!cap_high_padding_ok(frame.data(), L)) mask |= kBadPadding;
  }
};

template <class ExecSpace>
struct CapReadIndex {
  ConstBytes<ExecSpace> frame;
  U64s<ExecSpace> sizes;
  CapLayout L;

  KOKKOS_INLINE_FUNCTION void operator()(const Index b) const {
    sizes(b) = cap_index_entry(frame.data(), L, static_cast<uint64_t>(b));
  }
};

// One block's state, shared by its team.
struct CapBlockScratch {
  uint16_t table[kCapTableSize];
  uint64_t stream_off[kCapStreams];  // from the block start
  uint32_t stream_size[kCapStreams];
  CapTable t;
  uint32_t shared;  // a kind-1 block of a TABLES frame (FORMAT.md 4.9)
  uint32_t status;
};

// The first failure in frame order: block, then stage (0: table and sizes,
// 1 + s: stream s), with the status in the low byte.
inline constexpr uint64_t kCapNoFailure = ~uint64_t{0};
KOKKOS_INLINE_FUNCTION uint64_t cap_failure(uint64_t b, uint32_t stage, Status s) {
  return (((b << 6) | stage) << 8) | static_cast<uint32_t>(s);
}

// Decode step 2: one team per block of the batch starting at first_block.
template <class T, class ExecSpace>
struct CapDecodeBlocks {
  ConstBytes<ExecSpace> frame;
  Bytes<ExecSpace> dst;
  U64s<ExecSpace> sizes, offsets;
  uint64_t n, first_block, res_off, high_off, blk_off;
  uint32_t exp_limit;
  SetView<ExecSpace> set;  // the frame's set (TABLES), else empty
  U16s<ExecSpace> luts;    // its decode tables, kCapTableSize each

  using member_type = typename Teams<ExecSpace>::member_type;

  KOKKOS_INLINE_FUNCTION uint32_t residual(uint64_t i) const {
    return load_residual<T>(frame.data() + res_off, frame.data() + high_off, i);
  }

  // Checks c-e (FORMAT.md 4.6.5; with a set c0 and e1 of 4.9 first) and the
  // decode table; one thread.
  KOKKOS_INLINE_FUNCTION Status open_block(const uint8_t* blk, uint64_t size, CapBlockScratch* sc) const {
    sc->shared = 0;
    uint32_t body = 0;  // the kind byte before an own-table block
    if (set.data() != nullptr) {
      if (size < 1 || blk[0] > kCapKindShared) return Status::bad_code;  // c0
      body = 1;
      if (blk[0] == kCapKindShared) {  // e1: the 32 sizes fill the block
        sc->shared = 1;
        if (size < kCapSharedHeaderBytes) return Status::bad_code;
        uint64_t off = kCapSharedHeaderBytes;
        for (uint32_t s = 0; s < kCapStreams; ++s) {
          sc->stream_off[s] = off;
          off += sc->stream_size[s] = load_le16(blk + 1 + 2 * s);
        }
        return off == size ? Status::ok : Status::bad_code;
      }
    }
    const Status st = cap_parse_block(blk + body, size - body, exp_limit, &sc->t);
    if (st != Status::ok || sc->t.symbols == 1) return st;
    uint64_t off = body + cap_header_bytes(sc->t);
    for (uint32_t s = 0; s < kCapStreams; ++s) {
      sc->stream_off[s] = off;
      off += sc->stream_size[s] = cap_stream_size(blk + body, sc->t, s);
    }
    cap_decode_table(sc->t, sc->table);
    return Status::ok;
  }

  // Checks f and g of stream s; writes its elements. A shared block's
  // stream s reads table s mod T of the set.
  KOKKOS_INLINE_FUNCTION Status decode_stream(const uint8_t* blk, const CapBlockScratch* sc, uint64_t begin,
                                              uint32_t m, uint32_t s) const {
    const uint16_t* table =
        sc->shared ? luts.data() + uint64_t{kCapTableSize} * cap_table_of_stream(set(0), s) : sc->table;
    return cap_decode_stream(blk + sc->stream_off[s], sc->stream_size[s], s, m, table,
                             [&](uint32_t j, uint32_t e) {
                               const uint64_t i = begin + j;
                               store_elem<T>(dst, i, T::join(e, residual(i)));
                             });
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team, uint64_t& failure) const {
    const uint64_t b = first_block + static_cast<uint64_t>(team.league_rank());
    auto* sc = static_cast<CapBlockScratch*>(team.team_scratch(0).get_shmem(sizeof(CapBlockScratch)));
    const uint8_t* blk = frame.data() + blk_off + offsets(b);
    const uint64_t begin = b << kCapBlockLog2;
    const auto m = static_cast<uint32_t>(cap_block_len(n, b));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { sc->status = static_cast<uint32_t>(open_block(blk, sizes(b), sc)); });
    team.team_barrier();
    uint64_t local = kCapNoFailure;
    if (sc->status != static_cast<uint32_t>(Status::ok)) {
      local = cap_failure(b, 0, static_cast<Status>(sc->status));
    } else if (!sc->shared && sc->t.symbols == 1) {
      const uint32_t e = sc->t.first;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<Index>(m)), [&](const Index j) {
        const uint64_t i = begin + static_cast<uint64_t>(j);
        store_elem<T>(dst, i, T::join(e, residual(i)));
      });
    } else {
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, static_cast<Index>(kCapStreams)),
          [&](const Index s, uint64_t& v) {
            const Status st = decode_stream(blk, sc, begin, m, static_cast<uint32_t>(s));
            if (st != Status::ok) {
              const uint64_t key = cap_failure(b, 1u + static_cast<uint32_t>(s), st);
              if (key < v) v = key;
            }
          },
          Kokkos::Min<uint64_t>(local));
    }
    if (local < failure) failure = local;  // every member holds the team result; min is idempotent
    team.team_barrier();                   // the scratch is reused by the next block of this team
  }
};

// Checks a-g of FORMAT.md 4.6.5 on the mode-1 frame frame_p with parsed
// header h (rules 1-14 outside the streams already hold), and its values
// into dst_p (both in space memory). set: the frame's table set
// (cap_frame_set: host memory), null without TABLES.
template <class T, class ExecSpace>
Status capacity_decode(const ExecSpace& space, const FrameHeader& h, const uint8_t* frame_p, uint8_t* dst_p,
                       const CapTables* host_set) {
  const CapLayout L = capacity_layout_of(h);
  const uint64_t n = h.n_elems;
  const ConstBytes<ExecSpace> frame(frame_p, L.frame_size);
  const Bytes<ExecSpace> dst(dst_p, n * T::kBytes);

  uint32_t mask = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::cap_check_padding", Range<ExecSpace>(space, 0, 1),
                          CapCheckHighPadding<ExecSpace>{frame, L},
                          Kokkos::BOr<uint32_t>(mask));
  if (mask != 0) return Status::bad_padding;  // a

  const auto no_init = [](const char* label) { return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)); };
  U64s<ExecSpace> sizes(no_init("splitzip::cap_block_sizes"), L.n_blocks);
  U64s<ExecSpace> offsets(no_init("splitzip::cap_block_offsets"), L.n_blocks);
  Kokkos::parallel_for("splitzip::kokkos::cap_read_index", Range<ExecSpace>(space, 0, static_cast<Index>(L.n_blocks)),
                       CapReadIndex<ExecSpace>{frame, sizes, L});
  uint64_t total = 0;
  Kokkos::parallel_scan("splitzip::kokkos::cap_block_offsets",
                        Range<ExecSpace>(space, 0, static_cast<Index>(L.n_blocks)),
                        ExclusiveScan<ExecSpace>{sizes, offsets}, total);
  if (total != L.blk_size) return Status::bad_code;  // b

  const uint32_t exp_limit = 1u << T::kExpBits;  // the split's symbols (FORMAT.md 4.6.7)
  SetView<ExecSpace> set;
  U16s<ExecSpace> luts;
  if (host_set != nullptr) {  // FORMAT.md 4.9: the set's T decode tables
    set = upload_set(space, *host_set);
    luts = U16s<ExecSpace>(no_init("splitzip::cap_set_luts"), uint64_t{kCapTableSize} * host_set->count);
    Kokkos::parallel_for("splitzip::kokkos::cap_set_luts", Range<ExecSpace>(space, 0, host_set->count),
                         CapSetLuts<ExecSpace>{set, luts});
  }
  for (uint64_t b0 = 0; b0 < L.n_blocks; b0 += kLeagueBatch) {
    const uint64_t league = L.n_blocks - b0 < kLeagueBatch ? L.n_blocks - b0 : kLeagueBatch;
    uint64_t failure = kCapNoFailure;
    Kokkos::parallel_reduce(
        "splitzip::kokkos::cap_decode_blocks",
        Teams<ExecSpace>(space, static_cast<int>(league), Kokkos::AUTO)
            .set_scratch_size(0, Kokkos::PerTeam(sizeof(CapBlockScratch))),
        CapDecodeBlocks<T, ExecSpace>{frame, dst, sizes, offsets, n, b0, L.res_off, L.high_off, L.blk_off, exp_limit,
                                      set, luts},
        Kokkos::Min<uint64_t>(failure));
    if (failure != kCapNoFailure) return static_cast<Status>(failure & 0xFFu);  // c-g, first in frame order
  }
  space.fence();
  return Status::ok;
}

}  // namespace kokkos_impl
}  // namespace splitzip
