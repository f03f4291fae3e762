// SPDX-License-Identifier: Apache-2.0
#include "tests/support/malformed.h"

#include <cstring>

#include "core/codec_args.h"
#include "core/header.h"
#include "core/layout.h"
#include "core/le_bytes.h"
#include "tests/support/synthetic.h"

namespace splitzip::test {

void reseal_header(uint8_t* f) { store_le32(f + kHeaderCheckOffset, header_check(f)); }

namespace {

std::vector<uint8_t> encode(Dtype d, const std::vector<uint8_t>& in, uint64_t n, const CompressOptions& o) {
  std::vector<uint8_t> f(compress_bound(d, n));
  CompressOptions ref = o;
  ref.backend = "reference";
  const Result r = compress(d, in.data(), n, f.data(), f.size(), ref);
  f.resize(r.ok() ? r.size : 0);
  return f;
}

}  // namespace

std::vector<MalformedFrame> malformed_frames(Dtype d) {
  std::vector<MalformedFrame> out;
  const std::string prefix = std::string(dtype_name(d)) + "/";
  const uint32_t id = static_cast<uint32_t>(d);
  const bool five_bit = geometry_of(id).exp_bits == 5;

  // Coded base: 2001 elements (odd), chunk 64 (partial last chunk), ~1% escapes.
  const uint64_t n = 2001;
  synth::Params p;
  p.escape_rate = 0.01;
  const auto in = synth::generate(synth::Generator::heavy_tail, d, n, 31, p);
  CompressOptions o;
  o.chunk_log2 = 6;
  o.checksum = true;
  const auto base = encode(d, in, n, o);
  FrameHeader h;
  if (base.empty() || parse_header(base.data(), base.size(), &h) != Status::ok || h.stored() ||
      h.escape_count < 2)
    return out;  // the caller's test fails on an empty corpus
  const FrameLayout L = layout_of(h);
  const uint64_t cap = n * dtype_bytes(d);
  auto add = [&](const char* name, Status want, bool reseal, auto&& edit, uint64_t block = kNoBlock) {
    MalformedFrame m{prefix + name, base, cap, want, block};
    edit(m.bytes);
    if (reseal) reseal_header(m.bytes.data());
    out.push_back(std::move(m));
  };
  // Header rules.
  add("bad_magic", Status::bad_magic, false, [](auto& f) { f[1] ^= 0x20; });
  add("bad_version", Status::unsupported_version, false, [](auto& f) { f[4] = 4; });
  add("v1_check_on_v2_header", Status::header_corrupt, false, [](auto& f) {
    uint8_t tmp[64];
    std::memcpy(tmp, f.data(), 64);
    std::memset(tmp + kHeaderCheckOffset, 0, 4);
    store_le32(&f[kHeaderCheckOffset], static_cast<uint32_t>(xxh64(tmp, 64)));
  });
  add("header_check", Status::header_corrupt, false, [](auto& f) { f[9] ^= 1; });
  add("bad_dtype", Status::bad_dtype, true, [](auto& f) { f[5] = 0; });
  add("reserved_flag", Status::reserved_bits, true, [](auto& f) { f[6] |= 0x80; });
  add("reserved_byte_51", Status::reserved_bits, true, [](auto& f) { f[51] = 1; });
  add("mode_1", Status::bad_header, true, [](auto& f) { f[49] = 1; });
  add("block_log2_15", Status::bad_header, true, [](auto& f) { f[50] = 15; });
  add("chunk_log2_16", Status::bad_chunk_size, true, [](auto& f) { f[7] = 16; });
  add("escapes_over_n", Status::bad_header, true, [&](auto& f) { store_le64(&f[16], n + 1); });
  add("checksum_without_flag", Status::bad_header, true, [](auto& f) { f[6] &= static_cast<uint8_t>(~kFlagChecksum); });
  add("duplicate_codebook_entry", Status::bad_codebook, true, [](auto& f) { f[33] = f[32]; });
  add("codebook_count_0", Status::bad_codebook, true, [](auto& f) { f[48] = 0; });
  add("frame_size_lies", Status::size_mismatch, true, [](auto& f) { store_le64(&f[24], load_le64(&f[24]) + 16); });
  // Rule 14.
  add("code_padding", Status::bad_padding, false, [&](auto& f) { f[L.code_off + L.code_size - 1] |= 0x10; });
  if (L.high_size)
    add("bits3_padding", Status::bad_padding, false, [&](auto& f) { f[L.high_off + L.high_size - 1] |= 0x80; });
  if ((L.code_off + L.code_size) % 16)
    add("gap_after_codes", Status::bad_padding, false, [&](auto& f) { f[L.code_off + L.code_size] = 1; });
  if ((L.exp_off + L.exp_size) % 16)
    add("gap_after_escape_exponents", Status::bad_padding, false, [&](auto& f) { f[L.exp_off + L.exp_size] = 1; });
  if ((L.check_off + L.check_size) % 16)
    add("tail_padding_after_block_checks", Status::bad_padding, false,
        [&](auto& f) { f[L.check_off + L.check_size] = 1; });
  // Rule 15.
  add("count_over_chunk", Status::bad_escape_counts, false, [&](auto& f) { store_le16(&f[L.count_off], 65); });
  add("counts_sum", Status::bad_escape_counts, false,
      [&](auto& f) { store_le16(&f[L.count_off + 2 * (L.n_chunks - 1)], load_le16(&f[L.count_off + 2 * (L.n_chunks - 1)]) + 1u); });
  // Rules 16-17: the first escape and its chunk.
  uint64_t q0 = 0;
  while (load_le16(&base[L.count_off + 2 * q0]) == 0) ++q0;
  const uint64_t c0 = load_le16(&base[L.count_off + 2 * q0]);
  const uint64_t p0 = load_le16(&base[L.pos_off]);
  if (c0 >= 2)
    add("positions_not_increasing", Status::bad_escape_position, false,
        [&](auto& f) { store_le16(&f[L.pos_off + 2], static_cast<uint32_t>(p0)); });
  {
    // The last escape is last in its chunk: one past that chunk's end.
    uint64_t q_last = 0;
    for (uint64_t q = 0; q < L.n_chunks; ++q)
      if (load_le16(&base[L.count_off + 2 * q]) > 0) q_last = q;
    const uint64_t len = q_last + 1 < L.n_chunks ? 64 : n - 64 * q_last;
    add("position_past_chunk", Status::bad_escape_position, false,
        [&](auto& f) { store_le16(&f[L.pos_off + 2 * (h.escape_count - 1)], static_cast<uint32_t>(len)); });
  }
  add("position_0xffff", Status::bad_escape_position, false,
      [&](auto& f) { store_le16(&f[L.pos_off + 2 * (h.escape_count - 1)], 0xFFFF); });
  const uint64_t i0 = 64 * q0 + p0;
  add("escape_slot_code", Status::bad_escape_value, false,
      [&](auto& f) { f[L.code_off + i0 / 2] |= static_cast<uint8_t>(1u << (4 * (i0 & 1))); });
  add("escape_exponent_in_codebook", Status::bad_escape_value, false, [&](auto& f) { f[L.exp_off] = h.codebook[2]; });
  if (five_bit) add("escape_exponent_32", Status::bad_escape_value, false, [&](auto& f) { f[L.exp_off] = 32; });
  // Rule 18: shrink the codebook under the codes in use.
  add("code_past_count", Status::bad_code, true, [&](auto& f) {
    f[48] = 12;
    std::memset(&f[44], 0, 4);
  });
  // Rule 19 (v2): the first block whose check differs, or none when only
  // the combined checksum is wrong.
  add("checksum", Status::checksum_mismatch, false, [&](auto& f) { f[L.res_size ? L.res_off : L.high_off] ^= 1; }, 0);
  add("block_check_flipped", Status::checksum_mismatch, false, [&](auto& f) { f[L.check_off + 1] ^= 8; }, 0);
  add("content_checksum_wrong", Status::checksum_mismatch, true, [](auto& f) { f[57] ^= 1; }, kNoBlock);

  // Stored base.
  const auto rnd = synth::generate(synth::Generator::random_bits, d, 1001, 32);
  CompressOptions so;
  so.checksum = true;
  const auto sbase = encode(d, rnd, 1001, so);
  FrameHeader sh;
  if (sbase.empty() || parse_header(sbase.data(), sbase.size(), &sh) != Status::ok || !sh.stored()) return {};
  const uint64_t sbytes = 1001 * dtype_bytes(d);
  auto sadd = [&](const char* name, Status want, bool reseal, auto&& edit, uint64_t block = kNoBlock) {
    MalformedFrame m{prefix + "stored_" + name, sbase, sbytes, want, block};
    edit(m.bytes);
    if (reseal) reseal_header(m.bytes.data());
    out.push_back(std::move(m));
  };
  sadd("padding", Status::bad_padding, false, [&](auto& f) { f[64 + sbytes] = 1; });
  sadd("escape_count", Status::bad_header, true, [](auto& f) { f[16] = 1; });
  sadd("codebook", Status::bad_header, true, [](auto& f) { f[40] = 1; });
  sadd("checksum", Status::checksum_mismatch, false, [](auto& f) { f[64] ^= 4; }, 0);
  const uint64_t scheck = stored_check_off(id, 1001);
  sadd("block_check_flipped", Status::checksum_mismatch, false, [&](auto& f) { f[scheck + 2] ^= 1; }, 0);
  sadd("block_checks_gap", Status::bad_padding, false, [&](auto& f) { f[scheck + 4] = 1; });
  sadd("truncated", Status::truncated, false, [](auto& f) { f.pop_back(); });

  // Three checksum blocks: a residual bit of the first element of block 2.
  const uint64_t bpe = dtype_bytes(d);
  const uint64_t nb = (2 * kChecksumBlockBytes + 1000) / bpe;
  const auto big_in = synth::generate(synth::Generator::gaussian_kv, d, nb, 33);
  CompressOptions bo;
  bo.checksum = true;
  const auto big = encode(d, big_in, nb, bo);
  FrameHeader bh;
  if (big.empty() || parse_header(big.data(), big.size(), &bh) != Status::ok || bh.stored() || bh.n_checks() != 3)
    return {};
  const FrameLayout BL = layout_of(bh);
  const uint64_t i2 = 2 * kChecksumBlockBytes / bpe;  // first element of block 2
  MalformedFrame m{prefix + "residual_bit_in_block_2", big, nb * bpe, Status::checksum_mismatch, 2};
  if (BL.res_size)
    m.bytes[BL.res_off + i2 * geometry_of(id).res_bytes] ^= 1;
  else
    m.bytes[BL.high_off + (3 * i2) / 8] ^= static_cast<uint8_t>(1u << ((3 * i2) % 8));
  out.push_back(std::move(m));
  return out;
}

::testing::AssertionResult malformed_frames_rejected(const char* backend) {
  size_t total = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const auto frames = malformed_frames(d);
    if (frames.size() < 20) return ::testing::AssertionFailure() << "malformed corpus for " << dtype_name(d) << " is incomplete";
    for (const auto& m : frames) {
      std::vector<uint8_t> dst(m.dst_capacity);
      DecompressOptions o;
      o.backend = backend;
      const Result r = decompress(m.bytes.data(), m.bytes.size(), dst.data(), dst.size(), o);
      if (r.status != m.expected)
        return ::testing::AssertionFailure() << backend << " on " << m.name << ": got " << status_name(r.status)
                                             << ", expected " << status_name(m.expected);
      if (r.corrupt_block != m.corrupt_block)
        return ::testing::AssertionFailure() << backend << " on " << m.name << ": corrupt_block "
                                             << r.corrupt_block << ", expected " << m.corrupt_block;
      ++total;
    }
  }
  return ::testing::AssertionSuccess() << total << " frames";
}

}  // namespace splitzip::test
