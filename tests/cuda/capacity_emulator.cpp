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

template <class F>
void with_dtype(uint32_t dtype_id, F&& f) {
  switch (dtype_id) {
    case 1: f(Bf16Traits{}); break;
    case 2: f(Fp16Traits{}); break;
    case 3: f(Fp32Traits{}); break;
    default: f(Fp8E5M2Traits{}); break;
  }
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

// One warp packing stream s of a block into its bytes at out (write kernel).
template <class T>
void emu_pack_stream(const uint8_t* bsrc, uint32_t m, uint32_t s, const CapBlockRec& rec, const uint16_t code[256],
                     uint8_t* out) {
  const uint32_t z = rec.stream_bytes[s];
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
      len[lane] = rec.len[e];
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

EmuResult emulate_capacity_compress(Dtype dtype, const void* src_v, uint64_t n, void* dst_v, uint64_t capacity,
                                    uint32_t chunk_log2, bool checksum, bool reverse_blocks) {
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
  if ((res.status = check_compress_args(args)) != Status::ok) return res;
  if (dtype == Dtype::fp8_e4m3) {
    res.status = Status::unsupported_mode;
    return res;
  }
  const uint64_t n_checks = checksum ? checksum_blocks(n * dtype_bytes(dtype)) : 0;
  const uint64_t largest = stored_frame_size(id, n, n_checks);
  CapEncArgs a{};
  a.src = static_cast<const uint8_t*>(src_v);
  a.dst = static_cast<uint8_t*>(dst_v);
  a.n = n;
  a.capacity = std::min(capacity, largest);
  a.dtype = id;
  a.chunk_log2 = chunk_log2;
  a.checksum = checksum ? 1u : 0u;
  a.lay = cap_encode_workspace(id, n, checksum);
  Ws ws(a.lay.total);
  a.ws = ws.base;
  auto* ctl = reinterpret_cast<CapEncCtl*>(a.ws);
  auto* recs = reinterpret_cast<CapBlockRec*>(a.ws + a.lay.recs_off);
  auto* hashes = reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off);
  const uint64_t nb = cap_blocks(n);
  with_dtype(id, [&](auto tr) {
    using T = decltype(tr);
    // ---- count kernel
    for (uint64_t b : block_order(nb, reverse_blocks)) {
      const uint32_t m = static_cast<uint32_t>(cap_block_len(n, b));
      const uint8_t* bsrc = a.src + (b << kCapBlockLog2) * T::kBytes;
      uint32_t counts[256] = {};
      for (uint32_t j = 0; j < m; ++j) ++counts[cap_exp<T>(bsrc, j)];
      CapTable t;
      cap_code_lengths(counts, &t);
      uint32_t bits[kCapStreams] = {};
      if (t.symbols > 1)
        for (uint32_t th = 0; th < kCapEncThreads; ++th) bits[th % kCapStreams] += cap_stream_bits_part<T>(bsrc, m, t.len, th);
      cap_finish_rec(recs[b], t, bits);
      if (checksum) {
        const uint64_t b0 = (b << kCapBlockLog2) * T::kBytes;
        emu_block_hashes(a.src, n * T::kBytes, b0, b0 + uint64_t{m} * T::kBytes, hashes);
      }
    }
    // ---- plan kernel
    uint64_t carry = 0;
    for (uint64_t b = 0; b < nb; ++b) {
      recs[b].off = carry;
      carry += recs[b].size;
    }
    FrameHeader h;
    cap_decide(a, a.lay.hashes_bound, carry, ctl, &h);
    if (ctl->status != static_cast<int32_t>(Status::ok)) {
      res.status = static_cast<Status>(ctl->status);
      return;
    }
    const uint64_t nc = a.lay.hashes_bound;
    const uint64_t c = checksum ? xxh3_by_lanes(reinterpret_cast<const uint8_t*>(hashes), 8 * nc) : 0;
    for (uint64_t k = 0; k < nc; ++k) write_block_checks(a.dst + check_off_of(h) + 4 * k, hashes + k, 1);
    if (!ctl->stored)
      for (uint64_t b = 0; b < nb; ++b) store_le32(a.dst + ctl->L.index_off + 4 * b, static_cast<uint32_t>(recs[b].size));
    h.content_checksum = c;
    Gap gaps[7];
    zero_ranges(a.dst, gaps, frame_gaps(h, gaps));
    write_header(h, a.dst);
    res.size = h.frame_size;
    // ---- write kernel
    for (uint64_t b : block_order(nb, reverse_blocks)) {
      const uint32_t m = static_cast<uint32_t>(cap_block_len(n, b));
      const uint64_t first = b << kCapBlockLog2;
      if (ctl->stored) {
        std::memcpy(a.dst + 64 + first * T::kBytes, a.src + first * T::kBytes, uint64_t{m} * T::kBytes);
        continue;
      }
      const CapLayout& L = ctl->L;
      for (uint64_t g = first / 8; g < (first + m + 7) / 8; ++g) cap_write_residual_group<T>(a.src, n, g, L, a.dst);
      const CapBlockRec& rec = recs[b];
      uint8_t* blk = a.dst + L.blk_off + rec.off;
      const CapTable tab = cap_table_of(rec);
      write_cap_table(tab, blk);
      if (tab.symbols < 2) continue;
      uint16_t code[256];
      cap_codes(tab, code);
      for (uint32_t s = 0; s < kCapStreams; ++s) store_le16(blk + tab.bytes + 2 * s, rec.stream_bytes[s]);
      for (uint32_t s = 0; s < kCapStreams; ++s) {
        uint64_t off = rec.table_bytes + 2 * kCapStreams;
        for (uint32_t k = 0; k < s; ++k) off += rec.stream_bytes[k];
        emu_pack_stream<T>(a.src + first * T::kBytes, m, s, rec, code, blk + off);
      }
    }
  });
  if (res.status != Status::ok) res.size = 0;
  return res;
}

EmuCapDecode emulate_capacity_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                                         bool verify, uint64_t max_output_bytes, bool reverse_blocks) {
  EmuCapDecode out;
  CapDecArgs a{};
  a.src = static_cast<const uint8_t*>(src);
  a.src_size = src_size;
  a.dst = static_cast<uint8_t*>(dst);
  a.dst_capacity = dst == nullptr ? 0 : dst_capacity;
  a.limit = max_output_bytes ? max_output_bytes : kNoBlock;
  a.verify = verify ? 1u : 0u;
  a.lay = cap_decode_workspace(a.dst_capacity);
  Ws ws(a.lay.total);
  a.ws = ws.base;
  auto* ctl = reinterpret_cast<CapDecCtl*>(a.ws);
  auto* offs = reinterpret_cast<uint64_t*>(a.ws + a.lay.recs_off);
  auto* hashes = reinterpret_cast<uint64_t*>(a.ws + a.lay.hashes_off);
  // ---- setup kernel
  cap_dec_plan(a, ctl);
  if (ctl->status == static_cast<int32_t>(Status::ok)) {
    uint64_t carry = 0;
    for (uint64_t b = 0; b < ctl->L.n_blocks; ++b) {
      offs[b] = carry;
      carry += load_le32(a.src + ctl->L.index_off + 4 * b);
    }
    if (carry != ctl->L.blk_size) ctl->status = static_cast<int32_t>(Status::bad_code);
  }
  // ---- blocks kernel: one warp per block
  if (ctl->status == static_cast<int32_t>(Status::ok)) {
    const CapDecCtl c = *ctl;
    std::vector<uint16_t> lut(kCapTableSize, 0xFFFF);
    with_dtype(c.h.dtype, [&](auto tr) {
      using T = decltype(tr);
      for (uint64_t b : block_order(c.L.n_blocks, reverse_blocks)) {
        const uint8_t* blk = a.src + c.L.blk_off + offs[b];
        const uint64_t size = load_le32(a.src + c.L.index_off + 4 * b);
        CapTable t;
        const Status head = cap_parse_block(blk, size, exponent_limit(c.h.dtype), &t);
        if (head != Status::ok) {
          ctl->err = std::min(ctl->err, cap_error_word(b, head));
          continue;
        }
        if (t.symbols > 1) {
          uint16_t code[256];
          cap_codes(t, code);
          for (uint32_t lane = 0; lane < 32; ++lane)
            for (uint32_t e = t.first + lane; e <= t.last; e += 32) cap_fill_symbol(t, code, e, lut.data());
        }
        for (uint32_t lane = 0; lane < 32; ++lane) {  // first failing lane wins (ballot + ffs)
          const Status s = cap_dec_lane<T>(c, blk, t, lut.data(), b, lane, a.dst, a.src);
          if (s != Status::ok) {
            ctl->err = std::min(ctl->err, cap_error_word(b, s));
            break;
          }
        }
      }
    });
  }
  // ---- hash kernel
  const CapDecCtl c = *ctl;
  if (c.status == static_cast<int32_t>(Status::ok) && c.err == kCapNoError && c.verify)
    for (uint64_t k = 0; k < c.n_checks; ++k)
      hashes[k] = xxh3_by_lanes(a.dst + (k << kChecksumBlockLog2), check_block_len(c.h.decoded_bytes(), k));
  // ---- final kernel
  Status st = cap_dec_status(c);
  uint64_t first_bad = kNoBlock;
  if (st == Status::ok && c.verify) {
    for (uint64_t k = 0; k < c.n_checks; ++k)
      if (load_le32(a.src + c.L.check_off + 4 * k) != static_cast<uint32_t>(hashes[k])) first_bad = std::min(first_bad, k);
    const uint64_t h = xxh3_by_lanes(reinterpret_cast<const uint8_t*>(hashes), 8 * c.n_checks);
    if (first_bad != kNoBlock || h != c.h.content_checksum) st = Status::checksum_mismatch;
  }
  out.handled = c.handled != 0;
  out.r.status = st;
  out.r.corrupt_block = first_bad;
  if (st == Status::ok) out.r.size = c.h.decoded_bytes();
  return out;
}

}  // namespace splitzip::test
