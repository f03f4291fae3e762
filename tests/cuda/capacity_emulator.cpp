// SPDX-License-Identifier: Apache-2.0
#include "tests/cuda/capacity_emulator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "cuda/block_hash.h"
#include "cuda/capacity_logic.h"

namespace splitzip::test {
namespace {

using namespace cuda_detail;

// The kernels' dispatch: the dtype's capacity split (fp8_e4m3: the whole byte).
template <class F>
void with_dtype(uint32_t dtype_id, F&& f) {
  visit_codec_dtype<Codec::capacity>(dtype_id, f);
}

std::vector<uint64_t> block_order(uint64_t total, bool reverse) {
  std::vector<uint64_t> order(total);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (reverse) std::reverse(order.begin(), order.end());
  return order;
}

// Device workspace: 256-aligned like cudaMalloc, poisoned (no initialisation
// is promised).
struct Ws {
  explicit Ws(uint64_t bytes) : raw(bytes + 256, 0xA5) {
    base = raw.data() + (256 - reinterpret_cast<uintptr_t>(raw.data()) % 256) % 256;
  }
  std::vector<uint8_t> raw;
  uint8_t* base;
};

// cta_block_hashes over the bytes [b0, b1) of a buffer of `bytes`.
void emu_block_hashes(const uint8_t* data, uint64_t bytes, uint64_t b0, uint64_t b1, uint64_t* hashes) {
  uint64_t first, end;
  tile_check_blocks(b0, b1, &first, &end);
  for (uint64_t k = first; k < end; ++k)
    hashes[k] = xxh3_by_lanes(data + (k << kChecksumBlockLog2), check_block_len(bytes, k));
}

// The device set of a call (FORMAT.md 4.9): the caller's tables, as the
// host copies them; the setup kernels fill the rest.
std::unique_ptr<CapSetDev> emu_set(const CapTables* ts) {
  if (ts == nullptr) return nullptr;
  std::unique_ptr<CapSetDev> d(new CapSetDev);
  std::memset(static_cast<void*>(d.get()), 0xA5, sizeof(CapSetDev));  // poisoned, as device memory
  d->tables = *ts;
  return d;
}

// One warp packing stream s of a block into its bytes at out (write
// kernel), with the code lengths len and codes code of its table.
template <class T>
void emu_pack_stream(const uint8_t* bsrc, uint32_t m, uint32_t s, uint32_t z, const uint8_t len_of[256],
                     const uint16_t code[256], uint8_t* out) {
  std::vector<uint32_t> words(kCapStreamWords, 0xDEADBEEFu);
  for (uint32_t k = 0; k < (z + 3) / 4 + 1 && k < kCapStreamWords; ++k) words[k] = 0;
  const uint32_t cnt = cap_stream_len(m, s);
  uint32_t base = 0;
  for (uint32_t c0 = 0; c0 < cnt; c0 += 32) {
    uint32_t len[32] = {}, cd[32] = {}, incl[32];
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t c = c0 + lane;
      if (c >= cnt) continue;
      const uint32_t e = cap_exp<T>(bsrc, s + kCapStreams * c);
      len[lane] = len_of[e];
      cd[lane] = code[e];
    }
    uint32_t run = 0;
    for (uint32_t lane = 0; lane < 32; ++lane) incl[lane] = run += len[lane];  // __shfl_up scan
    for (uint32_t lane = 0; lane < 32; ++lane) {
      if (!len[lane]) continue;
      uint32_t wi, v0, v1;
      cap_code_words(base + incl[lane] - len[lane], cd[lane], len[lane], &wi, &v0, &v1);
      words.at(wi) |= v0;  // atomicOr
      if (v1) words.at(wi + 1) |= v1;
    }
    base += incl[31];
  }
  for (uint32_t k = 0; k < z; ++k) out[k] = cap_word_byte(words.data(), k);
}

}  // namespace

std::vector<EmuResult> emulate_capacity_compress_batch(Dtype dtype, const std::vector<EmuEncodeItem>& items,
                                                       uint64_t total_elems, uint32_t chunk_log2, bool checksum,
                                                       bool reverse_blocks, const CapTables* tables) {
  const uint64_t count = items.size();
  std::vector<EmuResult> res(count);
  if (count == 0) return res;
  const auto id = static_cast<uint32_t>(dtype);
  CapEncArgs a{};
  a.count = count;
  a.dtype = id;
  a.chunk_log2 = chunk_log2;
  a.checksum = checksum ? 1u : 0u;
  a.lay = cap_encode_workspace(id, total_elems, count, checksum);
  Ws ws(a.lay.total);
  a.ws = ws.base;
  const std::unique_ptr<CapSetDev> set = emu_set(tables);
  a.set = set.get();
  a.set_id = tables != nullptr ? tables->id : 0;
  auto* totals = reinterpret_cast<CapTotals*>(a.ws);
  auto* ctl = reinterpret_cast<CapEncCtl*>(a.ws + a.lay.ctl_off);
  auto* begins = reinterpret_cast<uint64_t*>(a.ws + a.lay.begins_off);
  auto* recs = reinterpret_cast<CapBlockRec*>(a.ws + a.lay.recs_off);
  auto* hashes = reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off);
  // ---- setup kernel: a thread per buffer, then the prefix sums
  uint64_t block_carry = 0, hash_carry = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const EmuEncodeItem& it = items[i];
    CapEncCtl c{};
    uint64_t nb = 0;
    cap_enc_item({static_cast<const uint8_t*>(it.src), static_cast<uint8_t*>(it.dst), it.n, it.capacity}, id, checksum,
                 &c, &nb);
    cap_enc_place(&c, block_carry, hash_carry, nb, a.lay);
    block_carry += nb;
    hash_carry += c.n_checks;
    ctl[i] = c;
    begins[i] = c.block_begin;
  }
  if (set)
    for (uint32_t t = 0; t < set->tables.count; ++t) cap_set_codes(set.get(), t);  // a thread per table
  totals->blocks = std::min(block_carry, a.lay.blocks_bound);
  totals->checks = std::min(hash_carry, a.lay.hashes_bound);
  with_dtype(id, [&](auto tr) {
    using T = decltype(tr);
    // ---- count kernel: a CTA per exponent block of all buffers
    for (uint64_t g : block_order(totals->blocks, reverse_blocks)) {
      const CapEncCtl& c = ctl[cap_owner(begins, count, g)];
      if (c.status != static_cast<int32_t>(Status::ok)) continue;
      const uint64_t b = g - c.block_begin;
      const uint32_t m = static_cast<uint32_t>(cap_block_len(c.n, b));
      const uint8_t* bsrc = c.src + (b << kCapBlockLog2) * T::kBytes;
      uint32_t bits[kCapStreams] = {};
      bool shared = false;
      if (set) {  // the set's lengths; shared unless a thread saw a symbol without a code
        uint32_t misfit = 0;
        for (uint32_t th = 0; th < kCapEncThreads; ++th) {
          uint32_t mf = 0;
          bits[th % kCapStreams] += cap_set_bits_part<T>(bsrc, m, set->tables, th, &mf);
          misfit |= mf;
        }
        shared = misfit == 0;
        if (shared) cap_finish_shared_rec(recs[g], bits);
        else std::fill(bits, bits + kCapStreams, 0u);
      }
      if (!shared) {  // the histogram and the block's own table
        uint32_t counts[256] = {};
        for (uint32_t j = 0; j < m; ++j) ++counts[cap_exp<T>(bsrc, j)];
        CapTable t;
        cap_code_lengths(counts, &t);
        if (t.symbols > 1)
          for (uint32_t th = 0; th < kCapEncThreads; ++th) bits[th % kCapStreams] += cap_stream_bits_part<T>(bsrc, m, t.len, th);
        cap_finish_rec(recs[g], t, bits, set ? kCapKindOwn : kCapNoKind);
      }
      if (checksum) {
        const uint64_t b0 = (b << kCapBlockLog2) * T::kBytes;
        emu_block_hashes(c.src, c.n * T::kBytes, b0, b0 + uint64_t{m} * T::kBytes, hashes + c.hash_begin);
      }
    }
    // ---- plan kernel: a CTA per buffer
    std::vector<FrameHeader> hdr(count);
    for (uint64_t i = 0; i < count; ++i) {
      CapEncCtl& c = ctl[i];
      if (c.status == static_cast<int32_t>(Status::ok)) {
        uint64_t carry = 0;
        for (uint64_t b = 0; b < cap_blocks(c.n); ++b) {
          recs[c.block_begin + b].off = carry;
          carry += recs[c.block_begin + b].size;
        }
        cap_decide(a, carry, &c, &hdr[i]);
      }
      if (c.status != static_cast<int32_t>(Status::ok)) {
        res[i].status = static_cast<Status>(c.status);
        res[i].size = 0;
        continue;
      }
      FrameHeader& h = hdr[i];
      const uint64_t* hs = hashes + c.hash_begin;
      const uint64_t sum = checksum ? xxh3_by_lanes(reinterpret_cast<const uint8_t*>(hs), 8 * c.n_checks) : 0;
      for (uint64_t k = 0; k < c.n_checks; ++k) write_block_checks(c.dst + check_off_of(h) + 4 * k, hs + k, 1);
      if (!c.stored)
        for (uint64_t b = 0; b < c.L.n_blocks; ++b)
          store_le32(c.dst + c.L.index_off + 4 * b, static_cast<uint32_t>(recs[c.block_begin + b].size));
      h.content_checksum = sum;
      Gap gaps[7];
      zero_ranges(c.dst, gaps, frame_gaps(h, gaps));
      write_header(h, c.dst);
      res[i].status = Status::ok;
      res[i].size = h.frame_size;
    }
    // ---- write kernel: a CTA per exponent block of all buffers
    for (uint64_t g : block_order(totals->blocks, reverse_blocks)) {
      const CapEncCtl& c = ctl[cap_owner(begins, count, g)];
      if (c.status != static_cast<int32_t>(Status::ok)) continue;
      const uint64_t b = g - c.block_begin;
      const uint32_t m = static_cast<uint32_t>(cap_block_len(c.n, b));
      const uint64_t first = b << kCapBlockLog2;
      if (c.stored) {
        std::memcpy(c.dst + 64 + first * T::kBytes, c.src + first * T::kBytes, uint64_t{m} * T::kBytes);
        continue;
      }
      const CapLayout& L = c.L;
      for (uint64_t q = first / 8; q < (first + m + 7) / 8; ++q) cap_write_residual_group<T>(c.src, c.n, q, L, c.dst);
      const CapBlockRec& rec = recs[g];
      uint8_t* blk = c.dst + L.blk_off + rec.off;
      if (rec.kind != kCapNoKind) *blk++ = static_cast<uint8_t>(rec.kind);  // FORMAT.md 4.9
      if (rec.kind == kCapKindShared) {
        for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + 2 * s, rec.stream_bytes[s]);
        for (uint32_t s = 0; s < kCapStreams; ++s) {
          const uint32_t* cl = set->cl[cap_table_of_stream(set->tables, s)];
          uint8_t len[256];
          uint16_t code[256];
          for (uint32_t e = 0; e < 256; ++e) {
            len[e] = static_cast<uint8_t>(cl[e] >> 16);
            code[e] = static_cast<uint16_t>(cl[e]);
          }
          emu_pack_stream<T>(c.src + first * T::kBytes, m, s, rec.stream_bytes[s], len, code,
                             blk + cap_stream_offset(0, rec.stream_bytes, s));
        }
        continue;
      }
      const CapTable tab = cap_table_of(rec);
      write_cap_table(tab, blk);
      if (tab.symbols < 2) continue;
      uint16_t code[256];
      cap_codes(tab, code);
      for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + tab.bytes + 2 * s, rec.stream_bytes[s]);
      for (uint32_t s = 0; s < kCapStreams; ++s) {
        uint64_t off = rec.table_bytes + 2 * kCapStreams;
        for (uint32_t k = 0; k < s; ++k) off += rec.stream_bytes[k];
        emu_pack_stream<T>(c.src + first * T::kBytes, m, s, rec.stream_bytes[s], rec.len, code, blk + off);
      }
    }
  });
  return res;
}

EmuResult emulate_capacity_compress(Dtype dtype, const void* src_v, uint64_t n, void* dst_v, uint64_t capacity,
                                    uint32_t chunk_log2, bool checksum, bool reverse_blocks, const CapTables* tables) {
  EmuResult res;
  const auto id = static_cast<uint32_t>(dtype);
  // The synchronous backend's host checks and staging bound (cuda_backend.cu).
  CompressArgs args;
  args.dtype = dtype;
  args.src = src_v;
  args.n = n;
  args.dst = dst_v;
  args.capacity = capacity;
  args.chunk_log2 = chunk_log2;
  args.checksum = checksum;
  args.mode = Mode::capacity;
  args.tables = tables;
  if ((res.status = check_compress_args(args)) != Status::ok) return res;
  const uint64_t n_checks = checksum ? checksum_blocks(n * dtype_bytes(dtype)) : 0;
  const uint64_t largest = stored_frame_size(id, n, n_checks);
  EmuEncodeItem it;
  it.src = src_v;
  it.dst = dst_v;
  it.n = n;
  it.capacity = std::min(capacity, largest);
  return emulate_capacity_compress_batch(dtype, {it}, n, chunk_log2, checksum, reverse_blocks, tables)[0];
}

std::vector<EmuCapDecode> emulate_capacity_decompress_batch(const std::vector<EmuDecodeItem>& items,
                                                           uint64_t total_dst_bytes, uint64_t max_output_bytes,
                                                           bool verify, bool reverse_blocks, const CapTables* tables) {
  const uint64_t count = items.size();
  std::vector<EmuCapDecode> out(count);
  if (count == 0) return out;
  CapDecArgs a{};
  a.count = count;
  a.limit = max_output_bytes ? max_output_bytes : kNoBlock;
  a.verify = verify ? 1u : 0u;
  a.lay = cap_decode_workspace(total_dst_bytes, count);
  Ws ws(a.lay.total);
  a.ws = ws.base;
  const std::unique_ptr<CapSetDev> set = emu_set(tables);
  a.set = set.get();
  auto* totals = reinterpret_cast<CapTotals*>(a.ws);
  auto* ctl = reinterpret_cast<CapDecCtl*>(a.ws + a.lay.ctl_off);
  auto* begins = reinterpret_cast<uint64_t*>(a.ws + a.lay.begins_off);
  auto* hash_begins = reinterpret_cast<uint64_t*>(a.ws + a.lay.hash_begins_off);
  auto* offs = reinterpret_cast<uint64_t*>(a.ws + a.lay.recs_off);
  auto* hashes = reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off);
  // ---- setup kernel: a thread per frame, then the prefix sums
  uint64_t block_carry = 0, hash_carry = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const EmuDecodeItem& it = items[i];
    CapDecCtl c{};
    uint64_t nb = 0, nc = 0;
    cap_dec_plan({static_cast<const uint8_t*>(it.src), it.src_size, static_cast<uint8_t*>(it.dst),
                  it.dst == nullptr ? 0 : it.dst_capacity},
                 a.limit, verify, set ? &set->tables : nullptr, &c, &nb, &nc);
    cap_dec_place(&c, block_carry, hash_carry, nb, a.lay);
    block_carry += nb;
    hash_carry += nc;
    ctl[i] = c;
    begins[i] = c.block_begin;
    hash_begins[i] = c.hash_begin;
  }
  if (set)
    for (uint32_t t = 0; t < set->tables.count; ++t) cap_set_lut(set.get(), t);  // a thread per table
  totals->blocks = std::min(block_carry, a.lay.blocks_bound);
  totals->checks = std::min(hash_carry, a.lay.hashes_bound);
  // ---- index kernel: a CTA per frame
  for (uint64_t i = 0; i < count; ++i) {
    CapDecCtl& c = ctl[i];
    if (c.status != static_cast<int32_t>(Status::ok)) continue;
    uint64_t carry = 0;
    for (uint64_t b = 0; b < c.L.n_blocks; ++b) {
      offs[c.block_begin + b] = carry;
      carry += load_le32(c.src + c.L.index_off + 4 * b);
    }
    if (carry != c.L.blk_size) c.status = static_cast<int32_t>(Status::bad_code);
  }
  // ---- blocks kernel: one warp per exponent block of all frames
  std::vector<uint16_t> lut(kCapTableSize, 0xFFFF);
  for (uint64_t g : block_order(totals->blocks, reverse_blocks)) {
    CapDecCtl& gc = ctl[cap_owner(begins, count, g)];
    const CapDecCtl c = gc;  // the CTA's shared copy
    if (c.status != static_cast<int32_t>(Status::ok)) continue;
    const uint64_t b = g - c.block_begin;
    with_dtype(c.h.dtype, [&](auto tr) {
      using T = decltype(tr);
      const uint8_t* blk = c.src + c.L.blk_off + offs[g];
      const uint64_t size = load_le32(c.src + c.L.index_off + 4 * b);
      CapTable t;
      uint32_t body = 0, shared = 0;
      const Status head = cap_dec_open(c, blk, size, &t, &body, &shared);
      if (head != Status::ok) {
        gc.err = std::min(gc.err, cap_error_word(b, head));
        return;
      }
      if (!shared && t.symbols > 1) {
        uint16_t code[256];
        cap_codes(t, code);
        for (uint32_t lane = 0; lane < 32; ++lane)
          for (uint32_t e = t.first + lane; e <= t.last; e += 32) cap_fill_symbol(t, code, e, lut.data());
      }
      for (uint32_t lane = 0; lane < 32; ++lane) {  // first failing lane wins (ballot + ffs)
        const Status s = shared ? cap_dec_shared_lane<T>(c, blk + body, *set, b, lane)
                                : cap_dec_lane<T>(c, blk + body, t, lut.data(), b, lane);
        if (s != Status::ok) {
          gc.err = std::min(gc.err, cap_error_word(b, s));
          break;
        }
      }
    });
  }
  // ---- hash kernel: a CTA per check of all frames
  for (uint64_t k : block_order(totals->checks, reverse_blocks)) {
    const CapDecCtl& c = ctl[cap_owner(hash_begins, count, k)];
    if (c.status != static_cast<int32_t>(Status::ok) || c.err != kCapNoError || !c.verify) continue;
    const uint64_t j = k - c.hash_begin;
    hashes[k] = xxh3_by_lanes(c.dst + (j << kChecksumBlockLog2), check_block_len(c.h.decoded_bytes(), j));
  }
  // ---- final kernel: a CTA per frame
  for (uint64_t i = 0; i < count; ++i) {
    const CapDecCtl& c = ctl[i];
    Status st = cap_dec_status(c);
    uint64_t first_bad = kNoBlock;
    if (st == Status::ok && c.verify) {
      const uint64_t* hs = hashes + c.hash_begin;
      for (uint64_t k = 0; k < c.n_checks; ++k)
        if (load_le32(c.src + c.L.check_off + 4 * k) != static_cast<uint32_t>(hs[k])) first_bad = std::min(first_bad, k);
      const uint64_t h = xxh3_by_lanes(reinterpret_cast<const uint8_t*>(hs), 8 * c.n_checks);
      if (first_bad != kNoBlock || h != c.h.content_checksum) st = Status::checksum_mismatch;
    }
    out[i].handled = c.handled != 0;
    out[i].r.status = st;
    out[i].r.corrupt_block = first_bad;
    if (st == Status::ok) out[i].r.size = c.h.decoded_bytes();
  }
  return out;
}

EmuCapDecode emulate_capacity_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                                         bool verify, uint64_t max_output_bytes, bool reverse_blocks,
                                         const CapTables* tables) {
  EmuDecodeItem it;
  it.src = src;
  it.src_size = src_size;
  it.dst = dst;
  it.dst_capacity = dst == nullptr ? 0 : dst_capacity;
  return emulate_capacity_decompress_batch({it}, it.dst_capacity, max_output_bytes, verify, reverse_blocks, tables)[0];
}

std::vector<EmuResult> emulate_decompress_batch_async(const std::vector<EmuDecodeItem>& items,
                                                      uint64_t total_dst_bytes, uint64_t max_output_bytes, bool verify,
                                                      bool reverse, const CapTables* tables) {
  std::vector<EmuResult> out = emulate_decompress_batch(items, total_dst_bytes, max_output_bytes, verify, reverse);
  const std::vector<EmuCapDecode> cap =
      emulate_capacity_decompress_batch(items, total_dst_bytes, max_output_bytes, verify, reverse, tables);
  for (size_t i = 0; i < items.size(); ++i)
    if (cap[i].handled) out[i] = cap[i].r;  // the capacity final kernel's override
  return out;
}

}  // namespace splitzip::test
