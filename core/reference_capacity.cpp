// SPDX-License-Identifier: Apache-2.0
// Scalar reference of the capacity mode (FORMAT.md 4.6), written plainly:
// split every element into exponent and residual, Huffman-code the exponents
// per block of 2^16 with 32 interleaved LSB-first bit streams.
#include "core/capacity/reference_capacity.h"

#include <cstring>
#include <vector>

#include "core/capacity/format.h"
#include "core/reference.h"

namespace splitzip {
namespace {

template <class T>
typename T::Bits load_elem(const uint8_t* src, uint64_t i) {
  typename T::Bits v;
  std::memcpy(&v, src + i * T::kBytes, sizeof v);
  return v;
}

// Streams 1 and 2 from the residuals (FORMAT.md 4.2, unchanged in mode 1).
template <class T>
void write_residuals(const uint8_t* src, uint64_t n, const CapLayout& L, uint8_t* f) {
  std::memset(f + L.high_off, 0, L.high_size);
  for (uint64_t i = 0; i < n; ++i) store_residual<T>(f + L.res_off, f + L.high_off, i, T::residual(load_elem<T>(src, i)));
}

class BitWriter {
 public:
  explicit BitWriter(std::vector<uint8_t>* out) : out_(out) {}
  void put(uint32_t bits, uint32_t len) {
    for (uint32_t i = 0; i < len; ++i) {
      if ((pos_ & 7) == 0) out_->push_back(0);
      out_->back() |= static_cast<uint8_t>(((bits >> i) & 1u) << (pos_ & 7));
      ++pos_;
    }
  }

 private:
  std::vector<uint8_t>* out_;
  uint64_t pos_ = 0;
};

}  // namespace

void reference_capacity_encode_block(const uint8_t* exps, uint32_t m, std::vector<uint8_t>* out) {
  uint32_t counts[256] = {};
  for (uint32_t j = 0; j < m; ++j) ++counts[exps[j]];
  CapTable t;
  cap_code_lengths(counts, &t);
  uint32_t z[kCapStreams] = {};
  std::vector<uint8_t> streams;
  if (t.symbols > 1) {  // one symbol: zero bits per element, no streams
    uint16_t code[256];
    cap_codes(t, code);
    for (uint32_t s = 0; s < kCapStreams; ++s) {
      const size_t before = streams.size();
      BitWriter w(&streams);
      for (uint32_t j = s; j < m; j += kCapStreams) w.put(code[exps[j]], t.len[exps[j]]);
      z[s] = static_cast<uint32_t>(streams.size() - before);
    }
  }
  const size_t start = out->size();
  out->resize(start + cap_header_bytes(t));
  write_cap_block_header(t, z, out->data() + start);
  out->insert(out->end(), streams.begin(), streams.end());
}

void reference_capacity_encode_set_block(const CapTables& set, const uint8_t* exps, uint32_t m,
                                         std::vector<uint8_t>* out) {
  if (!cap_block_fits_set(set, exps, m)) {  // a symbol its stream's table lacks: its own table
    out->push_back(kCapKindOwn);
    reference_capacity_encode_block(exps, m, out);
    return;
  }
  uint16_t code[kCapMaxTables][256];
  for (uint32_t t = 0; t < set.count; ++t) {
    CapTable tab;
    cap_tables_table(set, t, &tab);
    cap_codes(tab, code[t]);
  }
  uint32_t z[kCapStreams] = {};
  std::vector<uint8_t> streams;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    const uint32_t t = cap_table_of_stream(set, s);
    const size_t before = streams.size();
    BitWriter w(&streams);
    for (uint32_t j = s; j < m; j += kCapStreams) w.put(code[t][exps[j]], set.len[t][exps[j]]);
    z[s] = static_cast<uint32_t>(streams.size() - before);
  }
  out->push_back(kCapKindShared);
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    out->push_back(static_cast<uint8_t>(z[s]));
    out->push_back(static_cast<uint8_t>(z[s] >> 8));
  }
  out->insert(out->end(), streams.begin(), streams.end());
}

Status reference_capacity_decode_set_block(const CapTables& set, const uint8_t* blk, uint64_t size, uint32_t m,
                                           uint32_t exp_limit, uint8_t* exps) {
  if (size < 1 || blk[0] > kCapKindShared) return Status::bad_code;  // check c of 4.9
  if (blk[0] == kCapKindOwn) return reference_capacity_decode_block(blk + 1, size - 1, m, exp_limit, exps);
  if (size < kCapSharedHeaderBytes) return Status::bad_code;  // check e of 4.9
  uint64_t off = kCapSharedHeaderBytes;
  for (uint32_t s = 0; s < kCapStreams; ++s) off += load_le16(blk + 1 + 2 * s);
  if (off != size) return Status::bad_code;
  static thread_local uint16_t table[kCapMaxTables][kCapTableSize];
  for (uint32_t t = 0; t < set.count; ++t) {
    CapTable tab;
    cap_tables_table(set, t, &tab);
    cap_decode_table(tab, table[t]);
  }
  off = kCapSharedHeaderBytes;
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    const uint32_t z = load_le16(blk + 1 + 2 * s);
    const Status ss = cap_decode_stream(blk + off, z, s, m, table[cap_table_of_stream(set, s)],
                                        [&](uint32_t j, uint32_t e) { exps[j] = static_cast<uint8_t>(e); });
    if (ss != Status::ok) return ss;
    off += z;
  }
  return Status::ok;
}

Status reference_capacity_decode_block(const uint8_t* blk, uint64_t size, uint32_t m, uint32_t exp_limit,
                                       uint8_t* exps) {
  CapTable t;
  const Status ts = cap_parse_block(blk, size, exp_limit, &t);
  if (ts != Status::ok) return ts;
  if (t.symbols == 1) {
    for (uint32_t j = 0; j < m; ++j) exps[j] = static_cast<uint8_t>(t.first);
    return Status::ok;
  }
  static thread_local uint16_t table[kCapTableSize];
  cap_decode_table(t, table);
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    const Status ss = cap_decode_stream(blk + cap_stream_at(blk, t, s), cap_stream_size(blk, t, s), s, m, table,
                                        [&](uint32_t j, uint32_t e) { exps[j] = static_cast<uint8_t>(e); });
    if (ss != Status::ok) return ss;
  }
  return Status::ok;
}

Status reference_capacity_encode(const CompressArgs& a, uint64_t n_checks, FrameHeader* h) {
  if (a.n == 0) return Status::escape_overflow;
  const auto id = static_cast<uint32_t>(a.dtype);
  const auto* src = static_cast<const uint8_t*>(a.src);
  auto* f = static_cast<uint8_t*>(a.dst);
  std::vector<uint8_t> exps(a.n);
  with_traits(a.dtype, [&](auto t) {
    using T = decltype(t);
    for (uint64_t i = 0; i < a.n; ++i) exps[i] = static_cast<uint8_t>(T::exponent(load_elem<T>(src, i)));
  });
  const uint64_t n_blocks = cap_blocks(a.n);
  std::vector<uint8_t> blocks;
  std::vector<uint32_t> sizes(n_blocks);
  for (uint64_t b = 0; b < n_blocks; ++b) {
    const size_t before = blocks.size();
    const uint8_t* be = exps.data() + (b << kCapBlockLog2);
    const auto m = static_cast<uint32_t>(cap_block_len(a.n, b));
    if (a.tables != nullptr)
      reference_capacity_encode_set_block(*a.tables, be, m, &blocks);  // FORMAT.md 4.9
    else
      reference_capacity_encode_block(be, m, &blocks);
    sizes[b] = static_cast<uint32_t>(blocks.size() - before);
  }
  const CapLayout L = capacity_layout(id, a.n, blocks.size(), n_checks);
  if (L.frame_size >= stored_frame_size(id, a.n, n_checks)) return Status::escape_overflow;  // 4.4
  if (L.frame_size > a.capacity) return Status::dst_too_small;
  // Streams 1-2 read the input, which may overlap nothing else written so far.
  with_traits(a.dtype, [&](auto t) { write_residuals<decltype(t)>(src, a.n, L, f); });
  for (uint64_t b = 0; b < n_blocks; ++b) write_cap_index_entry(f, L, b, sizes[b]);
  std::memcpy(f + L.blk_off, blocks.data(), blocks.size());
  h->mode = kModeCapacity;
  h->escape_count = blocks.size();
  if (a.tables != nullptr) set_tables_fields(h, a.tables->id);
  return Status::ok;
}

Status reference_capacity_decode(const FrameHeader& h, const uint8_t* f, uint8_t* dst, const CapTables* set) {
  const CapLayout L = capacity_layout_of(h);
  const uint64_t n = h.n_elems;
  if (!cap_high_padding_ok(f, L)) return Status::bad_padding;  // check a
  // Check b: the block index covers stream 9 exactly.
  uint64_t sum = 0;
  for (uint64_t b = 0; b < L.n_blocks; ++b) sum += cap_index_entry(f, L, b);
  if (sum != L.blk_size) return Status::bad_code;
  std::vector<uint8_t> exps(n);
  const uint32_t exp_limit = exponent_limit(h.dtype);
  uint64_t off = L.blk_off;
  for (uint64_t b = 0; b < L.n_blocks; ++b) {
    const uint64_t size = cap_index_entry(f, L, b);
    const auto m = static_cast<uint32_t>(cap_block_len(n, b));
    uint8_t* be = exps.data() + (b << kCapBlockLog2);
    const Status s = set != nullptr ? reference_capacity_decode_set_block(*set, f + off, size, m, exp_limit, be)
                                    : reference_capacity_decode_block(f + off, size, m, exp_limit, be);
    if (s != Status::ok) return s;
    off += size;
  }
  Status s = Status::ok;
  with_traits(static_cast<Dtype>(h.dtype), [&](auto t) {
    using T = decltype(t);
    for (uint64_t i = 0; i < n; ++i) {
      const typename T::Bits v = T::join(exps[i], load_residual<T>(f + L.res_off, f + L.high_off, i));
      std::memcpy(dst + i * T::kBytes, &v, sizeof v);
    }
  });
  return s;
}

}  // namespace splitzip
