// SPDX-License-Identifier: Apache-2.0
// Fast host capacity mode (FORMAT.md 4.6). Table rules, code lengths, codes
// and the decode table come from core/capacity/format.h (shared with the
// reference); this file only moves bits quickly:
//  - encode (kernels compiled per Highway target, cpu/capacity_encode-inl.h):
//    per block one vector pass splits bf16, fp16 or fp32 elements (residual
//    bytes straight into the frame, non-temporal past the caches; exponents
//    into an L1/L2-resident buffer) and counts the exponents (AVX-512: in
//    the same loop; AVX2: the histogram after the split, faster there);
//    then the 32 bit writers run with one u64 vector lane per stream, one
//    16-byte store per stream per eight codes. fp8_e5m2 splits as fp16's
//    high byte; fp8_e4m3's symbol is its byte (FORMAT.md 4.6.7): counted and
//    coded straight from the input, and the decoder's transpose writes the
//    output.
//  - decode: each stream into its own row of a stream-major buffer (a
//    12-bit multi-code lookup gives up to three codes; branchless refills
//    whose loads are off the lookups' dependency chain; four streams in
//    lockstep; compiled per Highway target for BMI2's shifts,
//    cpu/capacity-inl.h); then a SIMD pass of 16x16 byte transposes puts
//    the exponents back in element order, for bf16 fused with the join of
//    the residual bytes (which, with the checksum verified, also hashes the
//    64 KiB blocks it writes: only the blocks it did not cover are hashed
//    from the output afterwards), for fp16 / fp32 / fp8_e5m2 followed by a SIMD join
//    per 4096-element chunk while its exponents are in L1; non-temporal
//    stores for outputs past the caches. The multi-code table is reused
//    while consecutive blocks carry the same table. The next block's
//    streams and residuals are prefetched a line of each per round of the
//    stream decoder: 32 short streams defeat the hardware prefetcher, and
//    one burst before the block stalls the core on the full miss queue.
//    The rounds are bound by the lookup chain's latency, not by instruction
//    count: the variants measured and dropped (more lanes, deeper lookups,
//    gathers, assembly rounds, other table layouts, split joins) are in
//    docs/DESIGN.md, section 4.
//  - OpenMP across blocks, in rounds of up to 48 blocks per thread: block outputs
//    are staged in a small per-thread buffer and copied into the frame at
//    the offsets of a prefix sum, so the bytes do not depend on the thread
//    count. One thread runs without a parallel region, and the scratch
//    (150-165 KiB each way) is kept per thread from call to call: small frames
//    (offload pages of a few KiB) paid more for its allocation and zeroing,
//    and for the region's entry, than for their coding.
#include "cpu/capacity_codec.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/capacity/format.h"
#include "core/capacity/reference_capacity.h"
#include "core/capacity/tables.h"
#include "core/frame_rules.h"
#include "core/reference.h"
#include "cpu/capacity_encode.h"
#include "cpu/cpu_targets.h"
#include "cpu/kernels.h"
#include "hwy/cache_control.h"

namespace splitzip {
namespace {

constexpr uint32_t kStreamSlot = 3200;  // >= 2048 codes * 12 bits / 8 + 16 slack (cap_pack_rows)

inline void store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

struct EncScratch {
  alignas(64) uint8_t exps[kCapBlockElems];
  alignas(64) uint8_t streams[kCapStreams * kStreamSlot];
};

// Scratch kept per thread from call to call (150-165 KiB each way): allocated
// and value-initialised (zeroed) per frame, it cost more than coding a
// small frame (offload pages of a few KiB) did. Default-initialised: every
// byte read is written first.
EncScratch& enc_scratch() {
  thread_local std::unique_ptr<EncScratch> s;
  if (!s) s.reset(new EncScratch);
  return *s;
}

// Split one block: residual parts into the frame, exponents and counts out.
// Returns where the block's symbols are: exps, or the input itself when the
// symbol is the whole element (fp8_e4m3, FORMAT.md 4.6.7). pf_next: where
// the split's prefetches go past the block (a batch's next page), or null.
template <class T>
const uint8_t* split_block(const uint8_t* src, uint64_t first, uint32_t m, const CapLayout& L, uint8_t* f,
                           uint8_t* exps, uint32_t counts[256], bool stream, int32_t* window,
                           const uint8_t* pf_next) {
  const uint8_t* in = src + first * T::kBytes;
  if constexpr (T::kId == kDtypeE4M3) {
    static_assert(T::kBytes == 1 && T::kResBytes == 0 && T::kResHighBits == 0, "the whole byte, no residual");
    (void)L, (void)f, (void)exps, (void)stream, (void)window, (void)pf_next;
    uint64_t c64[256] = {};
    cpu::cap_count_bytes(in, m, c64);
    for (uint32_t e = 0; e < 256; ++e) counts[e] = static_cast<uint32_t>(c64[e]);
    return in;
  }
  uint8_t* res = f + L.res_off + first * T::kResBytes;
  uint64_t c64[256] = {};
  // bf16, fp16, fp32: one vector pass, residuals, exponents and their counts.
  if constexpr (T::kId == Bf16Traits::kId) {
    cpu::cap_split_count_bf16(in, m, res, exps, stream, c64, window, pf_next);
  } else if constexpr (T::kId == Fp16Traits::kId) {
    // 3-bit part: blocks start at multiples of 2^16 elements = whole bytes.
    cpu::cap_split_count_fp16(in, m, res, f + L.high_off + (first * 3) / 8, exps, stream, c64, window, pf_next);
  } else if constexpr (T::kId == Fp32Traits::kId) {
    cpu::cap_split_count_fp32(in, m, res, exps, stream, c64, window, pf_next);
  } else if constexpr (T::kId == Fp8E5M2Traits::kId) {
    (void)res;
    (void)stream;
    // 3-bit part: blocks start at multiples of 2^16 elements = whole bytes.
    cpu::cap_split_count_e5m2(in, m, f + L.high_off + (first * 3) / 8, exps, c64, window, pf_next);
  } else {
    static_assert(T::kId == kDtypeE4M3, "a capacity dtype without its split");  // returned above
  }
  for (uint32_t e = 0; e < 256; ++e) counts[e] = static_cast<uint32_t>(c64[e]);
  return exps;
}

// The split's count window (cap_split_count_*), carried from block to block
// and from call to call, per thread and dtype: a page is one block, and a
// frame that started on the scalar counter spent more on its counts than on
// its codes (docs/DESIGN.md 7a). The counts are exact whatever the window.
int32_t& carried_window(uint32_t dtype_id) {
  thread_local int32_t w[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  return w[dtype_id & 7];
}

// One block's bytes (FORMAT.md 4.6.2) appended to out.
void encode_block(const uint8_t* exps, uint32_t m, const uint32_t counts[256], EncScratch* sc,
                  std::vector<uint8_t>* out) {
  CapTable t;
  cap_code_lengths(counts, &t);
  if (t.symbols == 1) {
    const size_t start = out->size();
    out->resize(start + t.bytes);
    write_cap_block_header(t, nullptr, out->data() + start);
    return;
  }
  uint16_t code[256];
  cap_codes(t, code);
  uint32_t cl[256];  // code | len << 16
  for (uint32_t e = 0; e < 256; ++e) cl[e] = code[e] | (uint32_t{t.len[e]} << 16);
  cpu::CapWriters w;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    w.ptr[s] = sc->streams + s * kStreamSlot;
    w.acc[s] = 0;
    w.nb[s] = 0;
  }
  const uint32_t full = m / kCapStreams;  // codes every stream has
  const uint32_t k = full & ~7u;  // rows coded eight at a time
  cpu::cap_pack_rows(exps, k, cl, t.first, t.last, &w);
  uint8_t** ptr = w.ptr;
  uint64_t* acc = w.acc;
  uint32_t* nb = w.nb;
  for (uint32_t j = k * kCapStreams; j < m; ++j) {  // the rest, one code at a time
    const uint32_t s = j % kCapStreams;
    const uint32_t x = cl[exps[j]];
    acc[s] |= uint64_t{x & 0xFFFFu} << nb[s];
    nb[s] += x >> 16;
    store64(ptr[s], acc[s]);
    const uint32_t bytes = nb[s] >> 3;
    ptr[s] += bytes;
    acc[s] = bytes == 8 ? 0 : acc[s] >> (8 * bytes);
    nb[s] &= 7;
  }
  uint32_t z[kCapStreams];
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    if (nb[s]) {
      store64(ptr[s], acc[s]);
      ++ptr[s];
    }
    z[s] = static_cast<uint32_t>(ptr[s] - (sc->streams + s * kStreamSlot));
  }
  const size_t start = out->size();
  out->resize(start + cap_block_bytes(t, z));
  uint8_t* o = out->data() + start;
  o += write_cap_block_header(t, z, o);
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    std::memcpy(o, sc->streams + s * kStreamSlot, z[s]);
    o += z[s];
  }
}

// A table set's encoder codes (FORMAT.md 4.9), built once per set and
// thread: cl[256 t + e] = code | len << 16 of table t.
struct SetEncoder {
  uint64_t id = 0;
  uint32_t count = 0, mask = 0;
  bool same_symbols = false;
  uint32_t first = 0, last = 0;  // table 0's span (T = 1: the byte-table packer)
  uint64_t used = 0;             // last use (the memo's clock)
  std::vector<uint8_t> len;      // 256 T
  std::vector<uint32_t> cl;      // 256 T
};

// Per thread, the encoders of the last sets used (at most kSetEncoderMemo
// of them, kSetEncoderMemoBytes in all): pages go round robin over a
// model's sets (one per layer and K/V), and rebuilding a set's codes for
// every page cost 5-10% of a 32 KiB page's encode at T = 1 and two thirds
// at T = 32 (docs/DESIGN.md 7a). An entry holds 1.25 KiB per table.
constexpr size_t kSetEncoderMemo = 128;
constexpr size_t kSetEncoderMemoBytes = size_t{4} << 20;

size_t set_encoder_bytes(uint32_t count) { return sizeof(SetEncoder) + size_t{1280} * count; }

const SetEncoder& set_encoder(const CapTables& set) {
  thread_local std::vector<std::unique_ptr<SetEncoder>> memo;
  thread_local uint64_t clock = 0;
  thread_local size_t held = 0;  // bytes of the memo's entries
  const size_t lens = size_t{256} * set.count;
  for (auto& m : memo)
    if (m->id == set.id && m->count == set.count && std::memcmp(m->len.data(), set.len, lens) == 0) {
      m->used = ++clock;
      return *m;
    }
  // Room for the new entry: the least recently used go first; the last
  // one out is rebuilt in place (its vectors keep their storage).
  std::unique_ptr<SetEncoder> reuse;
  while (!memo.empty() && (memo.size() >= kSetEncoderMemo ||
                           held + set_encoder_bytes(set.count) > kSetEncoderMemoBytes)) {
    size_t lru = 0;
    for (size_t i = 1; i < memo.size(); ++i)
      if (memo[i]->used < memo[lru]->used) lru = i;
    held -= set_encoder_bytes(memo[lru]->count);
    reuse = std::move(memo[lru]);
    memo[lru] = std::move(memo.back());
    memo.pop_back();
  }
  memo.push_back(reuse ? std::move(reuse) : std::make_unique<SetEncoder>());
  held += set_encoder_bytes(set.count);
  SetEncoder& e = *memo.back();
  e.used = ++clock;
  e.id = set.id;
  e.count = set.count;
  e.mask = set.count - 1;
  e.same_symbols = cap_tables_same_symbols(set);
  e.len.assign(&set.len[0][0], &set.len[0][0] + lens);
  e.cl.assign(lens, 0);
  for (uint32_t t = 0; t < set.count; ++t) {
    CapTable tab;
    cap_tables_table(set, t, &tab);
    if (t == 0) {
      e.first = tab.first;
      e.last = tab.last;
    }
    uint16_t code[256];
    cap_codes(tab, code);
    for (uint32_t v = 0; v < 256; ++v) e.cl[256 * t + v] = code[v] | (uint32_t{tab.len[v]} << 16);
  }
  return e;
}

// One block of a TABLES frame (FORMAT.md 4.9) appended to out: kind 1 when
// every symbol has a code in its stream's table, else kind 0 and its own.
void encode_set_block(const uint8_t* exps, uint32_t m, const uint32_t counts[256], const CapTables& set,
                      const SetEncoder& se, EncScratch* sc, std::vector<uint8_t>* out) {
  const int by_counts = cap_block_fits_by_counts(set, counts, se.same_symbols);
  if (by_counts == 0 || (by_counts < 0 && !cap_block_fits_set(set, exps, m))) {
    out->push_back(kCapKindOwn);
    encode_block(exps, m, counts, sc, out);
    return;
  }
  cpu::CapWriters w;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    w.ptr[s] = sc->streams + s * kStreamSlot;
    w.acc[s] = 0;
    w.nb[s] = 0;
  }
  const uint32_t k = (m / kCapStreams) & ~7u;  // rows coded eight at a time
  // One table: the byte-table packer of the per-block path (its span is
  // that table's); several: per-stream entries.
  if (se.mask == 0)
    cpu::cap_pack_rows(exps, k, se.cl.data(), se.first, se.last, &w);
  else
    cpu::cap_pack_rows_set(exps, k, se.cl.data(), se.mask, &w);
  for (uint32_t j = k * kCapStreams; j < m; ++j) {  // the rest, one code at a time
    const uint32_t s = j % kCapStreams;
    const uint32_t x = se.cl[256 * (s & se.mask) + exps[j]];
    w.acc[s] |= uint64_t{x & 0xFFFFu} << w.nb[s];
    w.nb[s] += x >> 16;
    store64(w.ptr[s], w.acc[s]);
    const uint32_t bytes = w.nb[s] >> 3;
    w.ptr[s] += bytes;
    w.acc[s] = bytes == 8 ? 0 : w.acc[s] >> (8 * bytes);
    w.nb[s] &= 7;
  }
  uint32_t z[kCapStreams];
  uint64_t total = kCapSharedHeaderBytes;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    if (w.nb[s]) {
      store64(w.ptr[s], w.acc[s]);
      ++w.ptr[s];
    }
    z[s] = static_cast<uint32_t>(w.ptr[s] - (sc->streams + s * kStreamSlot));
    total += z[s];
  }
  const size_t start = out->size();
  out->resize(start + total);
  uint8_t* o = out->data() + start;
  *o++ = kCapKindShared;
  for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(o + 2 * s, z[s]);
  o += 2 * kCapStreams;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    std::memcpy(o, sc->streams + s * kStreamSlot, z[s]);
    o += z[s];
  }
}

// The default (requested 0) stays on one thread below parallel_min_bytes(), as the fast
// mode does: a page-sized call must not pay for waking a team.
int thread_count(int requested, uint64_t n_blocks, uint64_t bytes) {
  int t = requested > 0 ? requested : (bytes >= cpu::parallel_min_bytes() ? omp_get_max_threads() : 1);
  if (static_cast<uint64_t>(t) > n_blocks) t = static_cast<int>(n_blocks ? n_blocks : 1);
  return t;
}

// fused (or null): per capacity block, how many of its checksum blocks,
// kChecksPerBlock from its first, the decoder's join already hashed (bf16).
constexpr uint64_t kChecksPerBlock = 2 * kCapBlockElems / kChecksumBlockBytes;
static_assert(kChecksPerBlock * kChecksumBlockBytes == 2 * kCapBlockElems, "whole checksum blocks per bf16 block");

void parallel_block_hashes(const uint8_t* p, uint64_t bytes, uint64_t* hashes, int threads,
                           const uint8_t* fused = nullptr) {
  const auto count = static_cast<int64_t>(checksum_blocks(bytes));
  auto one = [&](uint64_t b) {
    if (fused == nullptr || b % kChecksPerBlock >= fused[b / kChecksPerBlock]) hashes[b] = block_hash(p, bytes, b);
  };
  if (threads == 1) {  // no parallel region: its entry is a fixed cost small frames notice
    for (int64_t b = 0; b < count; ++b) one(static_cast<uint64_t>(b));
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t b = 0; b < count; ++b) one(static_cast<uint64_t>(b));
}

bool overlaps(const void* a, uint64_t an, const void* b, uint64_t bn) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bn && y < x + an;
}

// ---- decode ----

struct DecState {
  const uint8_t* base;
  uint64_t pos, end_bits;
};

// 12-bit bit reversal (windows are LSB-first, canonical code values MSB-first).
struct Rev12 {
  uint16_t v[kCapTableSize];
  Rev12() {
    for (uint32_t x = 0; x < kCapTableSize; ++x) v[x] = static_cast<uint16_t>(reverse_bits(x, kCapMaxLen));
  }
  uint32_t operator()(uint32_t x, uint32_t bits) const { return v[x] >> (kCapMaxLen - bits); }
};

// Multi-code lookups: for each 12-bit window up to three whole codes:
// sym0 | sym1 << 8 | sym2 << 16 | bits << 24 | codes << 30 (the bit count in
// a 6-bit field, so that a 64-bit shift by entry >> 24 shifts by it alone:
// x86 and AArch64 take the count mod 64). Built by enumerating the code
// sequences, each window written once: after a prefix of p bits, the windows
// whose next code does not fit in the r = 12 - p bits left are, in canonical
// (MSB-first) order, the r-bit values from fits[r] on (the codes of length
// <= r cover [0, fits[r])).
void build_multi_table(const CapTable& t, uint32_t* multi) {
  static const Rev12 rev;
  uint16_t code[256];
  cap_codes(t, code);
  uint32_t sym[256], cd[256], len[256], k = 0, count[kCapMaxLen + 1] = {};
  for (uint32_t l = 1; l <= kCapMaxLen; ++l)
    for (uint32_t e = t.first; e <= t.last; ++e)
      if (t.len[e] == l) {
        sym[k] = e;
        cd[k] = code[e];
        len[k++] = l;
        ++count[l];
      }
  uint32_t fits[kCapMaxLen + 1];
  fits[0] = 0;
  for (uint32_t r = 1; r <= kCapMaxLen; ++r) fits[r] = 2 * fits[r - 1] + count[r];
  for (uint32_t a = 0; a < k; ++a) {
    const uint32_t la = len[a], r1 = kCapMaxLen - la;
    const uint32_t e1 = sym[a] | (la << 24) | (1u << 30);
    for (uint32_t v = fits[r1]; v < (1u << r1); ++v) multi[cd[a] | (rev(v, r1) << la)] = e1;
    for (uint32_t b = 0; b < k && len[b] <= r1; ++b) {
      const uint32_t lab = la + len[b], r2 = kCapMaxLen - lab, cab = cd[a] | (cd[b] << la);
      const uint32_t e2 = sym[a] | (sym[b] << 8) | (lab << 24) | (2u << 30);
      for (uint32_t v = fits[r2]; v < (1u << r2); ++v) multi[cab | (rev(v, r2) << lab)] = e2;
      for (uint32_t c = 0; c < k && len[c] <= r2; ++c) {
        const uint32_t labc = lab + len[c], cabc = cab | (cd[c] << lab);
        const uint32_t e3 = sym[a] | (sym[b] << 8) | (sym[c] << 16) | (labc << 24) | (3u << 30);
        for (uint32_t x = cabc; x < kCapTableSize; x += 1u << labc) multi[x] = e3;
      }
    }
  }
}

// Rows of the stream-major exponent buffer: row s holds stream s's codes
// (elements s, s + 32, ...) contiguously; the slack takes the 4-byte stores
// of the multi-code steps and keeps rows off 4 KiB aliasing.
constexpr uint32_t kRowStride = kCapBlockElems / kCapStreams + 64;

struct DecScratch {
  alignas(64) uint8_t rows[kCapStreams * kRowStride];
  alignas(64) uint8_t exps[kCapBlockElems];
  alignas(64) cpu::CapLookup lookup;
  std::vector<uint8_t> tail;  // the frame's last block, padded (decode_block)
  uint8_t table_bytes[2 + 128];  // the table the lookups were built for (at most first 0, last 255)
  uint32_t table_size = 0;                       // 0: none yet
};

// Kept per thread like EncScratch; the lookups carry over to the next
// frame too when its first block has the same table.
DecScratch& dec_scratch() {
  thread_local std::unique_ptr<DecScratch> s;
  if (!s) s.reset(new DecScratch);
  return *s;
}

// Where decode_block left a block's exponents.
enum class ExpLayout { rows, exps };

// The 32 streams whose u16 sizes are at `sizes` (the streams follow them)
// of a block [blk, blk + size) into sc->rows, by run(in, used) (the
// kernel with the block's lookups). False: malformed (a stream ran out,
// or checks f and g fail): the caller names the fault with the reference.
template <class Run>
bool decode_streams(const uint8_t* blk, uint64_t size, const uint8_t* sizes, uint32_t m, const uint8_t* limit,
                    DecScratch* sc, cpu::CapPrefetch* pf, Run&& run) {
  (void)pf;
  DecState st[kCapStreams];
  const uint8_t* p = sizes + 2 * kCapStreams;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    const uint64_t z = load_le16(sizes + 2 * s);
    st[s] = {p, 0, 8 * z};
    p += z;
  }
  // The stream decoder reads up to 16 bytes past a stream's end: the streams
  // that end within 16 bytes of the buffer's end (the frame's last block's
  // last ones) are decoded from a padded copy of the block's bytes from the
  // first of them on (the decoded codes and checks do not depend on the
  // bytes past a stream, only the reads). Not the whole block: a copy of
  // it was a fixed cost of every small frame.
  if (blk + size + 16 > limit) {
    uint32_t s0 = kCapStreams;  // streams are in order: their ends ascend
    while (s0 > 0 && st[s0 - 1].base + st[s0 - 1].end_bits / 8 + 16 > limit) --s0;
    const uint8_t* from = s0 < kCapStreams ? st[s0].base : blk + size;
    sc->tail.assign(from, blk + size);
    sc->tail.resize(sc->tail.size() + 16, 0);
    const uint8_t* copy = sc->tail.data();
    for (uint32_t s = s0; s < kCapStreams; ++s) st[s].base = copy + (st[s].base - from);
  }
  cpu::CapStreamIn in[kCapStreams];
  uint64_t used[kCapStreams];
  for (uint32_t s = 0; s < kCapStreams; ++s)
    in[s] = {st[s].base, st[s].end_bits, sc->rows + s * kRowStride, cap_stream_len(m, s)};
  if (!run(in, used)) return false;  // a stream ran out
  bool bad = false;
  for (uint32_t s = 0; s < kCapStreams; ++s) bad |= cap_stream_end(st[s].base, st[s].end_bits / 8, used[s]) != Status::ok;
  return !bad;
}

// Decodes block b into sc->rows, or into sc->exps when it has one symbol or
// is malformed; statuses as reference_capacity_decode_block. limit: one
// past the last readable byte of the frame buffer. pf: ranges the stream
// decoder prefetches as it goes (cpu::CapPrefetch), advanced.
Status decode_block(const uint8_t* blk, uint64_t size, uint32_t m, uint32_t exp_limit, const uint8_t* limit,
                    DecScratch* sc, ExpLayout* layout, cpu::CapPrefetch* pf) {
  *layout = ExpLayout::exps;
  uint8_t* exps = sc->exps;
  CapTable t;
  const Status ts = cap_parse_block(blk, size, exp_limit, &t);  // checks c-e
  if (ts != Status::ok) return ts;
  if (t.symbols == 1) {
    std::memset(exps, static_cast<int>(t.first), m);
    return Status::ok;
  }
  // Blocks of one frame often share their code lengths: the lookups of the
  // previous block are reused when its table bytes are the same. (The lanes'
  // tails take a window's first code from the multi-code lookups too.)
  if (sc->table_size != t.bytes || std::memcmp(sc->table_bytes, blk, t.bytes) != 0) {
    build_multi_table(t, sc->lookup.multi);
    static_assert(sizeof sc->lookup.steps == kCapTableSize, "one shift per window");
    cpu::cap_steps(sc->lookup.multi, sc->lookup.steps);
    std::memcpy(sc->table_bytes, blk, t.bytes);
    sc->table_size = t.bytes;
  }
  const bool ok = decode_streams(blk, size, blk + t.bytes, m, limit, sc, pf, [&](const cpu::CapStreamIn* in, uint64_t* used) {
    return cpu::cap_decode_rows(in, &sc->lookup, t.len, used, pf);
  });
  if (!ok) return reference_capacity_decode_block(blk, size, m, exp_limit, exps);
  *layout = ExpLayout::rows;
  return Status::ok;
}

// A table set's decode lookups (FORMAT.md 4.9), built once per set and
// kept in a small cache shared by the threads (keyed by id, checked
// against the lengths: a set is 16 + 128 T bytes of lengths).
struct SetDecoder {
  CapTables set;
  std::vector<cpu::CapLookup> lookup;  // T
  std::vector<uint8_t> lens;           // T x 256
  explicit SetDecoder(const CapTables& s) : set(s), lookup(s.count), lens(256 * s.count) {
    for (uint32_t t = 0; t < s.count; ++t) {
      CapTable tab;
      cap_tables_table(s, t, &tab);
      build_multi_table(tab, lookup[t].multi);
      cpu::cap_steps(lookup[t].multi, lookup[t].steps);
      std::memcpy(lens.data() + 256 * t, s.len[t], 256);
    }
  }
  bool is(const CapTables& s) const {
    return s.id == set.id && s.count == set.count && s.dtype == set.dtype &&
           std::memcmp(s.len, set.len, 256 * s.count) == 0;
  }
};

// Bounded by the lookups' bytes (20 KiB per table): 48 MiB holds a set
// per layer and K/V of a 30-layer model at any T.
constexpr uint64_t kSetCacheBytes = uint64_t{48} << 20;

std::shared_ptr<const SetDecoder> set_decoder(const CapTables& s) {
  thread_local std::shared_ptr<const SetDecoder> last;  // the common case: page after page of one set
  if (last && last->is(s)) return last;
  static std::mutex mu;
  static std::vector<std::shared_ptr<const SetDecoder>> cache;  // most recent last
  {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < cache.size(); ++i)
      if (cache[i]->is(s)) {
        auto hit = cache[i];
        cache.erase(cache.begin() + static_cast<std::ptrdiff_t>(i));
        cache.push_back(hit);
        return last = hit;
      }
  }
  auto built = std::make_shared<const SetDecoder>(s);  // outside the lock: ~T x 10 us
  auto bytes = [](const SetDecoder& d) { return uint64_t{d.set.count} * sizeof(cpu::CapLookup); };
  std::lock_guard<std::mutex> lock(mu);
  uint64_t total = bytes(*built);
  for (const auto& c : cache) total += bytes(*c);
  while (!cache.empty() && total > kSetCacheBytes) {
    total -= bytes(*cache.front());
    cache.erase(cache.begin());
  }
  cache.push_back(built);
  return last = built;
}

// Block of a TABLES frame (FORMAT.md 4.9): kind byte, then an own-table
// block (decode_block) or the set's streams. Statuses as
// reference_capacity_decode_set_block.
Status decode_set_block(const uint8_t* blk, uint64_t size, uint32_t m, uint32_t exp_limit, const uint8_t* limit,
                        const SetDecoder& sd, DecScratch* sc, ExpLayout* layout, cpu::CapPrefetch* pf) {
  *layout = ExpLayout::exps;
  if (size < 1 || blk[0] > kCapKindShared) return Status::bad_code;
  if (blk[0] == kCapKindOwn) return decode_block(blk + 1, size - 1, m, exp_limit, limit, sc, layout, pf);
  if (size < kCapSharedHeaderBytes) return Status::bad_code;
  uint64_t total = kCapSharedHeaderBytes;
  for (uint32_t s = 0; s < kCapStreams; ++s) total += load_le16(blk + 1 + 2 * s);
  if (total != size) return Status::bad_code;
  const uint32_t mask = sd.set.count - 1;
  const bool ok = decode_streams(blk, size, blk + 1, m, limit, sc, pf, [&](const cpu::CapStreamIn* in, uint64_t* used) {
    return cpu::cap_decode_rows_set(in, sd.lookup.data(), sd.lens.data(), mask, used, pf);
  });
  if (!ok) return reference_capacity_decode_set_block(sd.set, blk, size, m, exp_limit, sc->exps);
  *layout = ExpLayout::rows;
  return Status::ok;
}

// Elements [j0, m) of the block: exponents in element order.
template <class T>
void join_block(const uint8_t* f, const CapLayout& L, uint64_t first, uint32_t j0, uint32_t m, const uint8_t* exps,
                uint8_t* dst) {
  uint8_t* out = dst + first * T::kBytes;
  for (uint32_t i = j0; i < m; ++i) {
    const typename T::Bits v = T::join(exps[i], load_residual<T>(f + L.res_off, f + L.high_off, first + i));
    std::memcpy(out + i * T::kBytes, &v, sizeof v);
  }
}

// Indices per fp16 / fp32 join chunk (4096 exponents).
constexpr uint32_t kJoinChunk = 128;

// The block's values from its exponents (where decode_block left them) and
// residuals: the SIMD transpose for whole 16-index tiles of the rows, the
// rest element by element. hashes (bf16, or null): the block's checksum
// block slots, which the join fills where it hashes what it writes;
// returns how many, from the block's first (the rest are the caller's).
template <class T>
uint32_t finish_block(const uint8_t* f, const CapLayout& L, uint64_t first, uint32_t m, DecScratch* sc,
                      ExpLayout layout, bool stream, uint8_t* dst, uint64_t* hashes, bool last) {
  uint32_t j0 = 0, hashed = 0;
  if (layout == ExpLayout::rows) {
    const uint32_t n16 = (m / kCapStreams) & ~15u;  // indices every stream has, whole tiles
    j0 = n16 * kCapStreams;
    if constexpr (T::kId == Bf16Traits::kId) {
      const uint8_t* res = f + L.res_off + first;
      if (hashes != nullptr)
        hashed = cpu::cap_transpose_join_bf16_hashed(sc->rows, kRowStride, n16, res, dst + 2 * first, stream, hashes,
                                                     last && j0 == m);
      else
        cpu::cap_transpose_join_bf16(sc->rows, kRowStride, n16, res, dst + 2 * first, stream);
    } else if constexpr (T::kId == Fp16Traits::kId || T::kId == Fp32Traits::kId) {
      // Chunks of kJoinChunk indices: the transposed exponents are joined
      // while they are in L1. first is a multiple of 8 elements, so each
      // chunk's 3-bit part starts at a whole byte.
      const uint8_t* res_end = f + L.res_off + L.res_size;
      const uint8_t* high_end = f + L.high_off + L.high_size;
      for (uint32_t c = 0; c < n16; c += kJoinChunk) {
        const uint32_t cnt = std::min(kJoinChunk, n16 - c);
        const uint64_t e0 = first + uint64_t{c} * kCapStreams;  // the chunk's first element
        cpu::cap_transpose(sc->rows + c, kRowStride, cnt, sc->exps);
        if constexpr (T::kId == Fp16Traits::kId)
          cpu::cap_join_fp16(sc->exps, cnt * kCapStreams, f + L.res_off + e0, f + L.high_off + 3 * e0 / 8, high_end,
                             dst + 2 * e0, stream);
        else
          cpu::cap_join_fp32(sc->exps, cnt * kCapStreams, f + L.res_off + 3 * e0, res_end, dst + 4 * e0, stream);
      }
      if (stream) hwy::FlushStream();  // once per block: a fence per chunk cost ~4%
    } else if constexpr (T::kId == kDtypeE4M3) {
      cpu::cap_transpose(sc->rows, kRowStride, n16, dst + first);  // the symbols are the bytes (4.6.7)
    } else {
      static_assert(T::kId == Fp8E5M2Traits::kId, "a capacity dtype without its join");
      const uint8_t* high_end = f + L.high_off + L.high_size;
      for (uint32_t c = 0; c < n16; c += kJoinChunk) {
        const uint32_t cnt = std::min(kJoinChunk, n16 - c);
        const uint64_t e0 = first + uint64_t{c} * kCapStreams;
        cpu::cap_transpose(sc->rows + c, kRowStride, cnt, sc->exps);
        cpu::cap_join_e5m2(sc->exps, cnt * kCapStreams, f + L.high_off + 3 * e0 / 8, high_end, dst + e0, stream);
      }
      if (stream) hwy::FlushStream();
    }
    for (uint32_t j = j0; j < m; ++j) sc->exps[j] = sc->rows[(j % kCapStreams) * kRowStride + j / kCapStreams];
  }
  if constexpr (T::kId == Fp8E5M2Traits::kId) {
    // j0 is 0 or whole 16-index tiles of 32 streams: its 3-bit part starts at a whole byte.
    const uint64_t e0 = first + j0;
    cpu::cap_join_e5m2(sc->exps + j0, m - j0, f + L.high_off + 3 * e0 / 8, f + L.high_off + L.high_size, dst + e0,
                       false);
  } else {
    join_block<T>(f, L, first, j0, m, sc->exps, dst);
  }
  return hashed;
}

}  // namespace

FrameOutcome capacity_compress_frame(const CompressArgs& a, const CapEncodeHints& hints) {
  FrameOutcome out;
  if ((out.status = check_compress_args(a)) != Status::ok) return out;
  const uint64_t bytes = a.n * dtype_bytes(a.dtype);
  if (a.mode != Mode::capacity || a.n == 0 || overlaps(a.src, bytes, a.dst, a.capacity))
    return reference_compress(a);
  const auto id = static_cast<uint32_t>(a.dtype);
  const auto* src = static_cast<const uint8_t*>(a.src);
  auto* f = static_cast<uint8_t*>(a.dst);
  const uint64_t n_checks = a.checksum ? checksum_blocks(bytes) : 0;
  const uint64_t stored = stored_frame_size(id, a.n, n_checks);
  // Streams 1-2 go straight into the frame: their place depends on n only.
  const CapLayout L0 = capacity_layout(id, a.n, 0, n_checks);
  if (L0.index_off > a.capacity) return reference_compress(a);  // tiny dst: the oracle sorts it out
  const uint64_t n_blocks = cap_blocks(a.n);
  const int threads = thread_count(a.threads, n_blocks, bytes);
  std::vector<uint32_t> sizes(n_blocks);
  // Rounds of kRoundBlocks blocks per thread: each thread codes its blocks
  // into a small reused buffer, then all copy their part into stream 9 at
  // the offsets of a prefix sum. The frame is written once, the staging
  // stays in cache and nothing is allocated per block (no page faults on
  // large staging buffers, which serialise in the kernel). 48 blocks (~0.6
  // MB of KV data's codes) rather than 16: with the vector encoder a round
  // is short, and its two barriers (threads asleep under
  // OMP_WAIT_POLICY=passive) cost more (docs/DESIGN.md, section 3).
  constexpr uint64_t kRoundBlocks = 48;
  std::vector<uint64_t> used(static_cast<size_t>(threads) * 8);  // one cache line per thread
  const bool stream = bytes >= cpu::stream_min_bytes();  // residuals past the caches: non-temporal stores
  uint64_t exp_bytes = 0;
  std::vector<uint64_t> hashes(n_checks);
  const uint64_t dtype_b = dtype_bytes(a.dtype);
  // Thread t of a team of nt. One thread runs the body without a parallel
  // region (whose entry and exit small frames notice) and without barriers:
  // it may be inside a caller's parallel region (a batch's worker), where
  // an orphaned barrier would bind to the caller's team. A team is sized by
  // what OpenMP gave (nested regions may get fewer threads than asked for),
  // never by what was asked.
  auto body = [&](int t, int nt) {
    // Fewer blocks a round when the frame has fewer than a full round for
    // every thread: with 48 each, a 5 MiB bf16 frame (40 blocks) all went to
    // thread 0 and two threads encoded no faster than one.
    const auto nt64 = static_cast<uint64_t>(nt);
    const uint64_t round_blocks = std::min(kRoundBlocks, (n_blocks + nt64 - 1) / nt64);
    const uint64_t per_round = round_blocks * nt64;
    EncScratch* sc = &enc_scratch();
    const SetEncoder* se = a.tables != nullptr ? &set_encoder(*a.tables) : nullptr;
    std::vector<uint8_t> buf;
    buf.reserve(std::min(kRoundBlocks, n_blocks) * (kCapBlockElems * kCapMaxLen / 8 + 256 + 2 * kCapStreams));
    uint32_t counts[256];
    int32_t& window = carried_window(id);  // bf16, fp16, fp32, fp8_e5m2
    uint64_t written = 0;  // stream 9 bytes of the rounds before (the same in every thread)
    for (uint64_t r0 = 0; r0 < n_blocks; r0 += per_round) {
      const uint64_t b0 = std::min(n_blocks, r0 + round_blocks * static_cast<uint64_t>(t));
      const uint64_t b1 = std::min(n_blocks, b0 + round_blocks);
      buf.clear();
      for (uint64_t b = b0; b < b1; ++b) {
        const uint64_t first = b << kCapBlockLog2;
        const auto m = static_cast<uint32_t>(cap_block_len(a.n, b));
        const uint8_t* syms = sc->exps;
        visit_codec_dtype<Codec::capacity>(id, [&](auto tr) {  // the dtype's capacity split
          syms = split_block<decltype(tr)>(src, first, m, L0, f, sc->exps, counts, stream, &window,
                                           b + 1 == n_blocks ? static_cast<const uint8_t*>(hints.next) : nullptr);
        });
        // The block's checksum blocks (2^16 elements of any dtype are whole
        // 64 KiB blocks) while the split has left its input in L2: a pass
        // over the whole input afterwards read it from memory again, ~10%
        // of the encode.
        if (a.checksum)
          for (uint64_t c = (first * dtype_b) >> kChecksumBlockLog2; c < checksum_blocks((first + m) * dtype_b); ++c)
            hashes[c] = block_hash(src, bytes, c);
        const size_t before = buf.size();
        if (se != nullptr)
          encode_set_block(syms, m, counts, *a.tables, *se, sc, &buf);
        else
          encode_block(syms, m, counts, sc, &buf);
        sizes[b] = static_cast<uint32_t>(buf.size() - before);
      }
      used[8 * t] = buf.size();
      if (nt > 1) {
#pragma omp barrier
      }
      uint64_t at = written, round = 0;
      for (int u = 0; u < nt; ++u) {
        if (u < t) at += used[8 * u];
        round += used[8 * u];
      }
      // Only bytes that can belong to a coded frame: inside the capacity and
      // before the stored frame's end (a coded frame is smaller, FORMAT.md
      // 4.4), so nothing lands past compress_bound. Past that, keep counting:
      // the outcome (stored, or DST_TOO_SMALL) needs the total.
      const uint64_t end = L0.blk_off + at + buf.size();
      if (end <= a.capacity && end < stored) std::memcpy(f + L0.blk_off + at, buf.data(), buf.size());
      written += round;
      if (nt > 1) {
#pragma omp barrier
      }
    }
    if (t == 0) exp_bytes = written;
  };
  if (threads == 1) {
    body(0, 1);
  } else {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num(), omp_get_num_threads());
  }
  const CapLayout L = capacity_layout(id, a.n, exp_bytes, n_checks);
  FrameHeader h = make_header(id, a.n, a.chunk_log2, a.checksum);
  if (L.frame_size >= stored) {  // FORMAT.md 4.4: store (mode 0)
    if (stored > a.capacity) {
      out.status = Status::dst_too_small;
      return out;
    }
    h.flags |= kFlagStored;
    std::memcpy(f + 64, src, bytes);
  } else {
    if (L.frame_size > a.capacity) {
      out.status = Status::dst_too_small;
      return out;
    }
    h.mode = kModeCapacity;
    h.version = frame_version(h.dtype, h.mode, h.flags);
    h.escape_count = exp_bytes;
    if (a.tables != nullptr) set_tables_fields(&h, a.tables->id);
    for (uint64_t b = 0; b < n_blocks; ++b) write_cap_index_entry(f, L, b, sizes[b]);
  }
  finish_frame(h, f, hashes.data());
  out.frame_size = h.frame_size;
  return out;
}

FrameOutcome capacity_decompress_frame(const DecompressArgs& a) {
  FrameHeader h;
  FrameOutcome out;
  if ((out.status = open_host_frame(a, &h)) != Status::ok) return out;  // rules 1-14 (gaps)
  return capacity_decompress_opened(a, h);
}

FrameOutcome capacity_decompress_opened(const DecompressArgs& a, const FrameHeader& h, const CapDecodeHints& hints) {
  FrameOutcome out;
  const auto* f = static_cast<const uint8_t*>(a.src);
  auto* dst = static_cast<uint8_t*>(a.dst);
  if (h.mode != kModeCapacity || h.stored()) return reference_decompress(a);
  const CapTables* set = nullptr;  // FORMAT.md 4.9, check 0
  if ((out.status = cap_frame_set(a.tables, a.n_tables, h.has_tables(), h.tables_id(), h.dtype, &set)) != Status::ok)
    return out;
  const std::shared_ptr<const SetDecoder> sd = set != nullptr ? set_decoder(*set) : nullptr;
  const CapLayout L = capacity_layout_of(h);
  const uint64_t n = h.n_elems;
  if (!cap_high_padding_ok(f, L)) {  // check a
    out.status = Status::bad_padding;
    return out;
  }
  std::vector<uint64_t> blk_at(L.n_blocks + 1);
  blk_at[0] = L.blk_off;
  for (uint64_t b = 0; b < L.n_blocks; ++b) blk_at[b + 1] = blk_at[b] + cap_index_entry(f, L, b);
  if (blk_at[L.n_blocks] - L.blk_off != L.blk_size) {
    out.status = Status::bad_code;
    return out;
  }
  const uint32_t exp_limit = cap_symbol_limit(h.dtype);
  const int threads = thread_count(a.threads, L.n_blocks, h.decoded_bytes());
  std::vector<Status> st(L.n_blocks, Status::ok);
  const uint8_t* end = f + (a.src_size < h.frame_size ? h.frame_size : a.src_size);
  const auto nb = static_cast<int64_t>(L.n_blocks);
  const bool stream = hints.stream_output || h.decoded_bytes() >= cpu::stream_min_bytes();  // as the fast mode
  const auto dt = static_cast<Dtype>(h.dtype);
  // Residual bytes per element of the dtypes with SIMD joins (finish_block).
  const uint64_t res_bytes = dt == Dtype::fp32 ? 3 : dt == Dtype::bf16 || dt == Dtype::fp16 ? 1 : 0;
  const bool verify = a.verify_checksum && h.has_checksum();
  std::vector<uint64_t> hashes(verify ? h.n_checks() : 0);
  // bf16 checksum blocks are hashed in the join, from the values in
  // registers (a capacity block = two whole checksum blocks): a pass over
  // the output afterwards re-read it from DRAM (written past the caches).
  // fused[b]: how many of block b's were, from its first.
  const bool fuse = verify && dt == Dtype::bf16;
  std::vector<uint8_t> fused(fuse ? L.n_blocks : 0, 0);
  // The next item's set decoder (kept alive while its lookups are prefetched).
  std::shared_ptr<const SetDecoder> next_sd;
  if (hints.next != nullptr && hints.next_size >= 64) {
    FrameHeader nh;
    const CapTables* ns = nullptr;
    if (parse_header(static_cast<const uint8_t*>(hints.next), hints.next_size, &nh) == Status::ok &&
        nh.mode == kModeCapacity && !nh.stored() && nh.has_tables() &&
        cap_frame_set(a.tables, a.n_tables, true, nh.tables_id(), nh.dtype, &ns) == Status::ok && ns != nullptr)
      next_sd = set_decoder(*ns);
  }
  auto block = [&](uint64_t b, DecScratch* sc) {
    const auto m = static_cast<uint32_t>(cap_block_len(n, b));
    // The block's streams are short (~700 bytes each, 32 at once): too short
    // for the hardware prefetcher, so the next block's bytes (its streams,
    // then its residuals) are fetched while this one decodes, a line of each
    // per round of the stream decoder; what it did not reach (a block that
    // ends early, fp32's three residual bytes per element), and fp16's 3-bit
    // part, after it.
    const bool next = b + 1 < L.n_blocks;
    const uint64_t next_first = (b + 1) << kCapBlockLog2, next_m = next ? cap_block_len(n, b + 1) : 0;
    cpu::CapPrefetch pf = {{f, f}, {f, f}};
    if (next) {
      pf.at[0] = f + blk_at[b + 1];
      pf.end[0] = f + blk_at[b + 2];
      pf.at[1] = f + L.res_off + res_bytes * next_first;
      pf.end[1] = pf.at[1] + res_bytes * next_m;
    } else if (next_sd != nullptr || hints.next != nullptr) {
      // The next item's frame (its first 64 KiB), and the lookups of its
      // set's table 0, entries and steps (a page's set was last used a whole
      // round of sets ago: out of L2).
      const auto* nf = static_cast<const uint8_t*>(hints.next);
      pf.at[0] = nf;
      pf.end[0] = nf + std::min<uint64_t>(hints.next_size, uint64_t{1} << 16);
      if (next_sd != nullptr) {
        pf.at[1] = reinterpret_cast<const uint8_t*>(&next_sd->lookup[0]);
        pf.end[1] = pf.at[1] + sizeof next_sd->lookup[0];
      }
    }
    ExpLayout layout;
    st[b] = sd ? decode_set_block(f + blk_at[b], blk_at[b + 1] - blk_at[b], m, exp_limit, end, *sd, sc, &layout, &pf)
               : decode_block(f + blk_at[b], blk_at[b + 1] - blk_at[b], m, exp_limit, end, sc, &layout, &pf);
    for (int i = 0; i < 2; ++i)
      for (const uint8_t* p = pf.at[i]; p < pf.end[i]; p += 64) __builtin_prefetch(p);
    if (dt == Dtype::fp16)
      for (uint64_t o = 0; o < 3 * next_m / 8; o += 64) __builtin_prefetch(f + L.high_off + 3 * next_first / 8 + o);
    if (st[b] == Status::ok) {
      uint64_t* hs = fuse ? hashes.data() + kChecksPerBlock * b : nullptr;
      visit_codec_dtype<Codec::capacity>(h.dtype, [&](auto tr) {
        const uint32_t k =
            finish_block<decltype(tr)>(f, L, b << kCapBlockLog2, m, sc, layout, stream, dst, hs, b + 1 == L.n_blocks);
        if (fuse) fused[b] = static_cast<uint8_t>(k);
      });
    }
  };
  if (threads == 1) {  // no parallel region (a fixed cost small frames notice)
    DecScratch* sc = &dec_scratch();
    for (uint64_t b = 0; b < L.n_blocks; ++b) block(b, sc);
  } else {
#pragma omp parallel num_threads(threads)
    {
      DecScratch* sc = &dec_scratch();
#pragma omp for schedule(static)
      for (int64_t bi = 0; bi < nb; ++bi) block(static_cast<uint64_t>(bi), sc);
    }
  }
  for (uint64_t b = 0; b < L.n_blocks; ++b)
    if (st[b] != Status::ok) {
      out.status = st[b];  // the first bad block, as the reference
      return out;
    }
  const uint64_t bytes = h.decoded_bytes();
  if (verify) {
    // The checksum blocks the join did not hash (other dtypes and targets,
    // partial blocks' tails, blocks the reference decoded).
    parallel_block_hashes(dst, bytes, hashes.data(), threads, fuse ? fused.data() : nullptr);
    out.status = verify_block_hashes(h, f, hashes.data(), &out.corrupt_block);
    if (out.status != Status::ok) return out;
  }
  out.frame_size = h.frame_size;
  out.decoded_size = bytes;
  return out;
}

}  // namespace splitzip
