// SPDX-License-Identifier: Apache-2.0
// FORMAT.md section 9 as a checklist. See spec_oracle.h.
#include "spec_oracle.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace szfuzz {
namespace {

using splitzip::Status;

struct Geo {
  uint32_t bytes, exp_bits, res_bytes, high_bits;
};

// FORMAT.md section 2 table.
Geo geo(uint32_t id) {
  switch (id) {
    case 1: return {2, 8, 1, 0};
    case 2: return {2, 5, 1, 3};
    case 3: return {4, 8, 3, 0};
    case 4: return {1, 5, 0, 3};
    case 5: return {1, 4, 0, 0};  // fp8_e4m3: its own streams (FORMAT.md 4.7)
    default: return {0, 0, 0, 0};
  }
}

// Mode 1's split (4.6.7): fp8_e4m3 codes the whole byte, no residual streams.
Geo cap_geo(uint32_t id) { return id == 5 ? Geo{1, 8, 0, 0} : geo(id); }

uint64_t a16(uint64_t x) { return (x + 15) / 16 * 16; }
uint64_t cdiv(uint64_t a, uint64_t b) { return a / b + (a % b ? 1 : 0); }

uint64_t le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct Streams {
  uint64_t off[8] = {};   // 1..7 (7: v2 block checks)
  uint64_t size[8] = {};
  uint64_t end = 0;
};

Streams streams_of(uint32_t id, uint64_t n, uint32_t chunk_log2, uint64_t e, uint64_t n_checks) {
  const Geo g = geo(id);
  Streams s;
  if (id == 5) {  // 4.7: residual nibbles, 3-bit codes, escape nibbles
    s.size[1] = cdiv(n, 2);
    s.size[3] = cdiv(3 * n, 8);
    s.size[6] = cdiv(e, 2);
  } else {
    s.size[1] = n * g.res_bytes;
    s.size[2] = g.high_bits ? cdiv(3 * n, 8) : 0;
    s.size[3] = cdiv(n, 2);
    s.size[4] = 2 * cdiv(n, uint64_t{1} << chunk_log2);
    s.size[5] = 2 * e;
    s.size[6] = e;
  }
  s.size[7] = 4 * n_checks;
  uint64_t off = 64;
  for (int i = 1; i <= 7; ++i) {
    s.off[i] = off;
    off = a16(off + s.size[i]);
  }
  s.end = a16(off);
  return s;
}

// The hashes, from libxxhash (not the library under test): v1 uses XXH64,
// v2 XXH3-64, both seed 0.
uint64_t xxh(const uint8_t* p, uint64_t n) { return XXH64(p, n, 0); }
uint64_t xxh3(const uint8_t* p, uint64_t n) { return XXH3_64bits(p, n); }

uint32_t header_check_of(const uint8_t* b) {
  uint8_t tmp[64];
  std::memcpy(tmp, b, 64);
  std::memset(tmp + 52, 0, 4);
  return static_cast<uint32_t>(b[4] == 1 ? xxh(tmp, 64) : xxh3(tmp, 64));
}

uint32_t bit(int rule) { return uint32_t{1} << rule; }

// Value from exponent e and residual r, per dtype (FORMAT.md 2).
uint64_t join(uint32_t id, uint32_t e, uint32_t r) {
  switch (id) {
    case 1: return (uint64_t{(r >> 7) & 1} << 15) | (uint64_t{e & 0xFF} << 7) | (r & 0x7F);
    case 2: return (uint64_t{(r >> 10) & 1} << 15) | (uint64_t{e & 0x1F} << 10) | (r & 0x3FF);
    case 3: return (uint64_t{(r >> 23) & 1} << 31) | (uint64_t{e & 0xFF} << 23) | (r & 0x7FFFFF);
    case 4: return (uint64_t{(r >> 2) & 1} << 7) | (uint64_t{e & 0x1F} << 2) | (r & 0x3);
    case 5: return (uint64_t{(r >> 3) & 1} << 7) | (uint64_t{e & 0xF} << 3) | (r & 0x7);
    default: return 0;
  }
}

// Rules 1-11; returns the broken rule or 0, filling v's header fields.
int check_header(const uint8_t* b, uint64_t size, SpecVerdict& v, uint8_t cb[16], uint32_t* cb_count,
                 uint32_t* chunk_log2, bool* checksum, uint64_t* content) {
  if (size < 64) return 1;
  if (!(b[0] == 0x53 && b[1] == 0x5A && b[2] == 0x4B && b[3] == 0x56)) return 2;
  if (b[4] < 1 || b[4] > 3) return 3;
  const uint32_t version = b[4];
  if (le(b + 52, 4) != header_check_of(b)) return 4;
  const uint32_t id = b[5];
  if (id < 1 || id > 5 || (version == 1 && id == 5)) return 5;
  const uint8_t flags = b[6];
  // v1: bytes 49-51 reserved; v2: 49 is mode, 50 block_log2, 51 reserved;
  // v2 flag bit 2 TENSOR (4.8).
  // v3: flag bit 3 TABLES (4.9).
  if ((flags & (version == 3 ? 0xF0 : version == 2 ? 0xF8 : 0xFC)) != 0 || b[51] ||
      (version == 1 && (b[49] || b[50])))
    return 6;
  const bool tables = (flags & 8) != 0;
  *chunk_log2 = b[7];
  if (*chunk_log2 < 6 || *chunk_log2 > 15) return 7;
  const uint64_t n = le(b + 8, 8), e = le(b + 16, 8);
  *content = le(b + 56, 8);
  v.stored = flags & 1;
  *checksum = (flags & 2) != 0;
  std::memcpy(cb, b + 32, 16);
  *cb_count = b[48];
  const uint32_t mode = version >= 2 ? b[49] : 0;
  const uint64_t n_checks = version >= 2 && *checksum ? spec_checksum_blocks(n * geo(id).bytes) : 0;
  if (n > (uint64_t{1} << 56) || (mode != 1 && e > n)) return 8;  // mode 1: e is exp_bytes
  if (!v.stored && n == 0) return 8;  // 4.4: empty input is always stored
  if (!*checksum && *content != 0) return 8;
  if (mode > 1) return 8;                                       // 0 nibble code, 1 capacity (4.6)
  if (version >= 2 && b[50] != (*checksum ? 16 : 0)) return 8;  // block_log2
  // 12: v3 exactly for the frames with a v3 feature (fp8_e4m3 in mode 1, 4.6.7; TABLES, 4.9)
  if (version >= 2 && version != (((id == 5 && mode == 1) || tables) ? 3u : 2u)) return 8;
  if (tables && mode != 1) return 8;  // 4.9
  uint64_t capacity_size = 0;
  if (mode == 1) {  // 4.6: never stored, no codebook, n >= 1, smaller than stored
    if (v.stored || *cb_count != 0 || n == 0) return 8;
    for (int i = tables ? 8 : 0; i < 16; ++i)  // 4.9: bytes 32..39 name the set
      if (cb[i]) return 8;
    v.tables = tables;
    if (e > n * geo(id).bytes) return 8;
    capacity_size = spec_capacity_size(id, n, e, n_checks);
    if (capacity_size >= spec_stored_size(id, n, n_checks)) return 8;
    v.capacity = true;
  } else if (v.stored) {
    if (e != 0 || *cb_count != 0) return 8;
    for (int i = 0; i < 16; ++i)
      if (cb[i]) return 8;
  } else {
    if (*cb_count < 1 || *cb_count > (id == 5 ? 7u : 16u)) return 9;
    for (uint32_t i = 0; i < 16; ++i) {
      if (i >= *cb_count && cb[i] != 0) return 9;
      if (i < *cb_count && geo(id).exp_bits == 5 && cb[i] >= 32) return 9;
      if (i < *cb_count && id == 5 && cb[i] >= 16) return 9;
      for (uint32_t j = 0; j < i && i < *cb_count; ++j)
        if (cb[i] == cb[j]) return 9;
    }
  }
  v.dtype_bytes = geo(id).bytes;
  v.n_elems = n;
  v.escape_count = e;
  v.frame_size = le(b + 24, 8);
  v.version = version;
  v.n_checks = n_checks;
  const uint64_t expect = v.capacity ? capacity_size
                          : v.stored ? spec_stored_size(id, n, v.n_checks)
                                     : spec_coded_size(id, n, *chunk_log2, e, v.n_checks);
  v.payload_end = expect;
  if (flags & 4) {  // TENSOR: a descriptor section of 32 .. 2^25 bytes follows the payload
    if (v.frame_size < expect + 32 || v.frame_size - expect > (uint64_t{1} << 25) || v.frame_size % 16) return 10;
  } else if (v.frame_size != expect) {
    return 10;
  }
  if (size < v.frame_size) return 11;
  return 0;
}

}  // namespace

Status rule_status(int rule) {
  static const Status kByRule[21] = {
      Status::ok,           Status::truncated,         Status::bad_magic,
      Status::unsupported_version, Status::header_corrupt, Status::bad_dtype,
      Status::reserved_bits, Status::bad_chunk_size,   Status::bad_header,
      Status::bad_codebook, Status::size_mismatch,     Status::truncated,
      Status::limit_exceeded, Status::dst_too_small,   Status::bad_padding,
      Status::bad_escape_counts, Status::bad_escape_position, Status::bad_escape_value,
      Status::bad_code,     Status::checksum_mismatch, Status::missing_tables};
  return rule >= 0 && rule < 21 ? kByRule[rule] : Status::internal_error;
}

Status SpecVerdict::first() const {
  for (int r = 1; r < 21; ++r)
    if (definite & bit(r)) return rule_status(r);
  return Status::ok;
}

bool SpecVerdict::allows(Status s) const {
  if (s == Status::ok) return definite == 0;
  for (int r = 1; r < 21; ++r)
    if ((possible & bit(r)) && rule_status(r) == s) return true;
  return false;
}

uint64_t spec_coded_size(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t escapes,
                         uint64_t n_checks) {
  return streams_of(dtype_id, n, chunk_log2, escapes, n_checks).end;
}

uint64_t spec_stored_size(uint32_t dtype_id, uint64_t n, uint64_t n_checks) {
  return 64 + a16(n * geo(dtype_id).bytes) + a16(4 * n_checks);
}

uint64_t spec_checksum_blocks(uint64_t bytes) { return cdiv(bytes, 65536); }

// 4.6.1: streams 1, 2 as in mode 0, then the block index (4 bytes per 65536
// elements), the exponent blocks (exp_bytes), the block checks.
uint64_t spec_capacity_size(uint32_t dtype_id, uint64_t n, uint64_t exp_bytes, uint64_t n_checks) {
  const Geo g = cap_geo(dtype_id);
  const uint64_t sizes[5] = {n * g.res_bytes, g.high_bits ? cdiv(3 * n, 8) : 0, 4 * cdiv(n, 65536), exp_bytes,
                             4 * n_checks};
  uint64_t off = 64;
  for (uint64_t s : sizes) off = a16(off + s);
  return off;
}

namespace {
// XXH3-64 of each 2^16-byte block (the last may be short).
std::vector<uint64_t> block_hashes(const uint8_t* data, uint64_t bytes) {
  std::vector<uint64_t> h;
  for (uint64_t off = 0; off < bytes; off += 65536) h.push_back(xxh3(data + off, std::min<uint64_t>(65536, bytes - off)));
  return h;
}
uint64_t combine(const std::vector<uint64_t>& h) {
  std::vector<uint8_t> le_bytes(8 * h.size());
  for (size_t b = 0; b < h.size(); ++b)
    for (int i = 0; i < 8; ++i) le_bytes[8 * b + i] = static_cast<uint8_t>(h[b] >> (8 * i));
  return xxh3(le_bytes.data(), le_bytes.size());
}
}  // namespace

uint64_t spec_content_checksum_v2(const uint8_t* data, uint64_t bytes) { return combine(block_hashes(data, bytes)); }

namespace {

// ---- mode 1 (FORMAT.md 4.6), read from the text ----

// Residual of element i from streams 1 and 2 (4.2).
uint32_t residual_at(const uint8_t* src, const Geo& g, uint64_t res_off, uint64_t high_off, uint64_t high_size,
                     uint64_t i) {
  uint32_t r = 0;
  for (uint32_t k = 0; k < g.res_bytes; ++k) r |= uint32_t{src[res_off + i * g.res_bytes + k]} << (8 * k);
  if (g.high_bits) {
    const uint64_t b0 = 3 * i;
    uint32_t w = src[high_off + b0 / 8];
    if (b0 / 8 + 1 < high_size) w |= uint32_t{src[high_off + b0 / 8 + 1]} << 8;
    r |= ((w >> (b0 % 8)) & 7u) << (8 * g.res_bytes);
  }
  return r;
}

// An LSB-first bit string of `bytes` bytes (4.6.2).
struct BitString {
  const uint8_t* p;
  uint64_t bytes;
  uint64_t at = 0;
  bool next(uint32_t* b) {  // false past the end
    if (at >= 8 * bytes) return false;
    *b = (p[at / 8] >> (at % 8)) & 1u;
    ++at;
    return true;
  }
};

// One exponent block of m elements (4.6.2-4.6.5 c-g) into exps.
Status capacity_block(const uint8_t* p, uint64_t size, uint64_t m, uint32_t exp_bits, uint32_t* exps) {
  if (size < 2) return Status::bad_code;  // c
  const uint32_t first = p[0], last = p[1];
  // d, the parts that give the table its size (which c needs).
  if (first > last || last >= (uint32_t{1} << exp_bits)) return Status::bad_codebook;
  const uint32_t span = last - first + 1;
  const uint64_t table = 2 + cdiv(span, 2);
  if (size < table) return Status::bad_code;  // c
  std::vector<uint32_t> len(256, 0);
  for (uint32_t k = 0; k < span; ++k) len[first + k] = (p[2 + k / 2] >> (4 * (k % 2))) & 0xF;
  // d: lengths 1..12 (0 absent), first and last present, zero padding nibble,
  // one value of length 1 or a complete code.
  uint32_t present = 0;
  uint64_t kraft = 0;
  for (uint32_t e = first; e <= last; ++e) {
    if (len[e] > 12) return Status::bad_codebook;
    if (len[e] == 0) continue;
    ++present;
    kraft += uint64_t{1} << (12 - len[e]);
  }
  if (len[first] == 0 || len[last] == 0) return Status::bad_codebook;
  if (span % 2 == 1 && (p[2 + span / 2] >> 4) != 0) return Status::bad_codebook;
  if (present == 1) {
    if (len[first] != 1) return Status::bad_codebook;
    if (size != table) return Status::bad_code;  // e
    for (uint64_t j = 0; j < m; ++j) exps[j] = first;
    return Status::ok;
  }
  if (kraft != 4096) return Status::bad_codebook;
  // e: 32 stream sizes, then the streams fill the block exactly.
  if (size < table + 64) return Status::bad_code;
  uint64_t stream_size[32], total = table + 64;
  for (int s = 0; s < 32; ++s) total += stream_size[s] = le(p + table + 2 * s, 2);
  if (total != size) return Status::bad_code;
  // Canonical codes (4.6.3): count per length, first code per length,
  // values in ascending order within a length.
  uint32_t bl[14] = {}, next[14] = {};
  for (uint32_t e = first; e <= last; ++e) ++bl[len[e]];
  bl[0] = 0;
  for (uint32_t l = 2; l <= 12; ++l) next[l] = (next[l - 1] + bl[l - 1]) << 1;
  std::vector<std::vector<uint32_t>> value_of(13);  // [len][code - first code of len]
  uint32_t first_code[13];
  for (uint32_t l = 1; l <= 12; ++l) first_code[l] = next[l];
  for (uint32_t e = first; e <= last; ++e)
    if (len[e]) value_of[len[e]].push_back(e);
  // f, g per stream: code i of stream s is element 32 i + s; a code's first
  // bit is the stream's next bit.
  uint64_t off = table + 64;
  for (uint64_t s = 0; s < 32; ++s) {
    BitString bits{p + off, stream_size[s]};
    for (uint64_t j = s; j < m; j += 32) {
      uint32_t code = 0, l = 0, b = 0;
      for (;;) {
        if (!bits.next(&b)) return Status::bad_code;  // f: runs past the end
        code = (code << 1) | b;
        ++l;
        if (code >= first_code[l] && code - first_code[l] < bl[l]) break;
        if (l == 12) return Status::internal_error;  // a complete code always ends by 12 bits
      }
      exps[j] = value_of[l][code - first_code[l]];
    }
    if (cdiv(bits.at, 8) != stream_size[s]) return Status::bad_code;  // f: ends before the last byte
    for (uint32_t b = 0; bits.next(&b);)
      if (b) return Status::bad_padding;  // g
    off += stream_size[s];
  }
  return Status::ok;
}

// The rule bit whose status a 4.6.5 check gives.
int rule_of_capacity_status(Status s) {
  switch (s) {
    case Status::bad_padding: return 14;
    case Status::bad_codebook: return 9;
    case Status::bad_code: return 18;
    case Status::missing_tables: return 20;
    default: return 0;
  }
}

// The payload of a mode-1 frame whose header holds: the gaps (rule 14),
// checks a-g in order, and the decoded elements into out. *checks_off:
// stream 7.
Status capacity_payload(const uint8_t* src, const SpecVerdict& v, uint8_t* out, uint64_t* checks_off) {
  const uint32_t id = src[5];
  const Geo g = cap_geo(id);
  const uint64_t n = v.n_elems, nb = cdiv(n, 65536);
  // 4.6.1: streams 1, 2, 8, 9, 7 at 16-byte-aligned offsets from 64.
  const uint64_t size[5] = {n * g.res_bytes, g.high_bits ? cdiv(3 * n, 8) : 0, 4 * nb, v.escape_count,
                            4 * v.n_checks};
  uint64_t off[5], at = 64;
  for (int k = 0; k < 5; ++k) {
    off[k] = at;
    at = a16(at + size[k]);
  }
  *checks_off = off[4];
  std::vector<bool> covered(v.payload_end, false);
  for (int k = 0; k < 5; ++k)
    for (uint64_t i = 0; i < size[k]; ++i) covered[off[k] + i] = true;
  for (uint64_t i = 64; i < v.payload_end; ++i)
    if (!covered[i] && src[i]) return Status::bad_padding;  // rule 14, before a-g
  // 4.9 check 0: the oracle, like the fuzzed decoders, is given no set.
  if (v.tables) return Status::missing_tables;
  if (size[1] && (3 * n) % 8 && (src[off[1] + size[1] - 1] >> ((3 * n) % 8))) return Status::bad_padding;  // a
  uint64_t sum = 0;
  for (uint64_t b = 0; b < nb; ++b) sum += le(src + off[2] + 4 * b, 4);
  if (sum != v.escape_count) return Status::bad_code;  // b
  std::vector<uint32_t> exps(n);
  uint64_t blk = off[3];
  for (uint64_t b = 0; b < nb; ++b) {
    const uint64_t bytes = le(src + off[2] + 4 * b, 4);
    const uint64_t m = std::min<uint64_t>(65536, n - 65536 * b);
    const Status s = capacity_block(src + blk, bytes, m, g.exp_bits, exps.data() + 65536 * b);
    if (s != Status::ok) return s;
    blk += bytes;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t val = id == 5 ? exps[i] : join(id, exps[i], residual_at(src, g, off[0], off[1], size[1], i));
    for (uint32_t k = 0; k < g.bytes; ++k) out[i * g.bytes + k] = static_cast<uint8_t>(val >> (8 * k));
  }
  return Status::ok;
}

}  // namespace

SpecVerdict spec_check(const uint8_t* src, uint64_t size, const SpecOptions& opts) {
  SpecVerdict v;
  uint8_t cb[16];
  uint32_t cb_count = 0, chunk_log2 = 0;
  bool checksum = false;
  uint64_t content = 0;
  const int hr = check_header(src, size, v, cb, &cb_count, &chunk_log2, &checksum, &content);
  if (hr) {
    v.definite = v.possible = bit(hr);
    return v;
  }
  v.header_ok = true;
  const uint32_t id = src[5];
  const Geo g = geo(id);
  const uint64_t n = v.n_elems;
  v.decoded_size = n * g.bytes;
  if (opts.max_output_bytes != 0 && v.decoded_size > opts.max_output_bytes) {
    v.definite = v.possible = bit(12);
    return v;
  }
  if (opts.dst_capacity < v.decoded_size) {
    v.definite = v.possible = bit(13);
    return v;
  }
  std::vector<uint8_t> out(v.decoded_size);
  uint32_t def = 0, pos = 0;
  // Stream 7 (v2 block checks): after the padded stored data, or the last stream.
  uint64_t checks_off = 0;
  if (v.capacity) {
    // 4.6.5 orders the checks: the first failing one is the frame's status,
    // for the reference and (the differential fuzzer requires) every backend.
    const Status s = capacity_payload(src, v, out.data(), &checks_off);
    if (s != Status::ok) {
      v.definite = bit(rule_of_capacity_status(s));
      v.possible = v.definite | (checksum && opts.verify_checksum ? bit(19) : 0u);  // output undefined
      return v;
    }
  } else if (v.stored) {
    checks_off = 64 + a16(v.decoded_size);
    const uint64_t checks_end = checks_off + 4 * v.n_checks;
    for (uint64_t i = 64 + v.decoded_size; i < v.payload_end; ++i)
      if (src[i] && !(i >= checks_off && i < checks_end)) def |= bit(14);
    if (v.decoded_size) std::memcpy(out.data(), src + 64, v.decoded_size);
  } else if (id == 5) {
    const Streams s = streams_of(id, n, chunk_log2, v.escape_count, v.n_checks);
    checks_off = s.off[7];
    std::vector<bool> covered(v.payload_end, false);
    for (int k = 1; k <= 7; ++k)
      for (uint64_t i = 0; i < s.size[k]; ++i) covered[s.off[k] + i] = true;
    for (uint64_t i = 64; i < v.payload_end; ++i)
      if (!covered[i] && src[i]) def |= bit(14);
    if ((n & 1) && (src[s.off[1] + s.size[1] - 1] & 0xF0)) def |= bit(14);
    if ((v.escape_count & 1) && (src[s.off[6] + s.size[6] - 1] & 0xF0)) def |= bit(14);
    if ((3 * n) % 8 && (src[s.off[3] + s.size[3] - 1] >> ((3 * n) % 8))) def |= bit(14);
    auto bits = [&](uint64_t off, uint64_t bit0, uint32_t w) {
      uint32_t x = 0;
      for (uint32_t k = 0; k < w; ++k) x |= uint32_t{(src[off + (bit0 + k) / 8] >> ((bit0 + k) % 8)) & 1u} << k;
      return x;
    };
    uint64_t markers = 0;
    bool bad_code = false;
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t c = bits(s.off[3], 3 * i, 3);
      markers += c == 7;
      bad_code |= c != 7 && c >= cb_count;
    }
    if (markers != v.escape_count) def |= bit(15);
    bool in_cb[16] = {};
    for (uint32_t c = 0; c < cb_count; ++c) in_cb[cb[c]] = true;
    bool esc_bad = false;
    for (uint64_t k = 0; k < v.escape_count; ++k) esc_bad |= in_cb[bits(s.off[6], 4 * k, 4)];
    // With a marker count that differs from E, which nibbles a decoder reads is its choice.
    if (markers != v.escape_count) pos |= esc_bad ? bit(17) : 0;
    else if (esc_bad) def |= bit(17);
    if (bad_code) def |= bit(18);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n && !(def & (bit(15) | bit(18))); ++i) {
      const uint32_t c = bits(s.off[3], 3 * i, 3);
      const uint32_t e = c == 7 ? bits(s.off[6], 4 * k++, 4) : cb[c];
      out[i] = static_cast<uint8_t>(join(5, e, bits(s.off[1], 4 * i, 4)));
    }
  } else {
    const Streams s = streams_of(id, n, chunk_log2, v.escape_count, v.n_checks);
    checks_off = s.off[7];
    // Rule 14: every byte outside a stream is zero, and the unused bits at
    // the end of the code and 3-bit streams are zero.
    std::vector<bool> covered(v.payload_end, false);
    for (int k = 1; k <= 7; ++k)
      for (uint64_t i = 0; i < s.size[k]; ++i) covered[s.off[k] + i] = true;
    for (uint64_t i = 64; i < v.payload_end; ++i)
      if (!covered[i] && src[i]) def |= bit(14);
    if ((n & 1) && (src[s.off[3] + s.size[3] - 1] & 0xF0)) def |= bit(14);
    if (s.size[2] && (3 * n) % 8) {
      const uint32_t used = (3 * n) % 8;
      if (src[s.off[2] + s.size[2] - 1] >> used) def |= bit(14);
    }
    auto code = [&](uint64_t i) -> uint32_t { return (src[s.off[3] + i / 2] >> (4 * (i & 1))) & 0xF; };
    const uint64_t chunk = uint64_t{1} << chunk_log2;
    const uint64_t n_chunks = cdiv(n, chunk);
    auto chunk_len = [&](uint64_t q) { return std::min(chunk, n - q * chunk); };

    // Rule 15.
    uint64_t sum = 0;
    bool counts_bad = false;
    for (uint64_t q = 0; q < n_chunks; ++q) {
      const uint64_t c = le(src + s.off[4] + 2 * q, 2);
      if (c > chunk_len(q)) counts_bad = true;
      sum += c;
    }
    if (sum != v.escape_count) counts_bad = true;
    if (counts_bad) def |= bit(15);

    // Rules 16 and 17, escapes assigned to chunks by the counts (stopping at E).
    bool in_cb[256] = {};
    for (uint32_t c = 0; c < cb_count; ++c) in_cb[cb[c]] = true;
    uint32_t esc = 0;
    bool outside = false;  // some position lies past its chunk
    std::vector<std::pair<uint64_t, uint32_t>> patches;  // element, exponent
    uint64_t idx = 0;
    for (uint64_t q = 0; q < n_chunks && idx < v.escape_count; ++q) {
      const uint64_t c = le(src + s.off[4] + 2 * q, 2);
      uint64_t prev = 0;
      for (uint64_t j = 0; j < c && idx < v.escape_count; ++j, ++idx) {
        const uint64_t p = le(src + s.off[5] + 2 * idx, 2);
        const uint32_t x = src[s.off[6] + idx];
        if (x >= (uint32_t{1} << g.exp_bits) || in_cb[x]) esc |= bit(17);
        if (p >= chunk_len(q) || (j > 0 && p <= prev)) esc |= bit(16);
        outside |= p >= chunk_len(q);
        if (p < chunk_len(q)) {
          if (code(q * chunk + p) != 0) esc |= bit(17);
          patches.emplace_back(q * chunk + p, x);
        }
        prev = p;
      }
    }
    // With counts that do not add up, which escape belongs to which chunk is
    // an implementation's choice: 16 and 17 are only possible, not certain.
    if (counts_bad) pos |= bit(16) | bit(17);
    else def |= esc;
    // A position outside its chunk has no code slot to check; where an
    // implementation looks instead is its choice.
    if ((def & bit(16)) && outside) pos |= bit(17);

    // Rule 18.
    for (uint64_t i = 0; i < n; ++i)
      if (code(i) >= cb_count) {
        def |= bit(18);
        break;
      }

    // The naive decode: codebook exponent, then escape patches.
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t r = 0;
      for (uint32_t k = 0; k < g.res_bytes; ++k) r |= uint32_t{src[s.off[1] + i * g.res_bytes + k]} << (8 * k);
      if (g.high_bits) {
        const uint64_t b0 = 3 * i;
        uint32_t w = src[s.off[2] + b0 / 8];
        if (b0 / 8 + 1 < s.size[2]) w |= uint32_t{src[s.off[2] + b0 / 8 + 1]} << 8;
        r |= ((w >> (b0 % 8)) & 7u) << (8 * g.res_bytes);
      }
      uint32_t e = cb[code(i)];
      const uint64_t val = join(id, e, r);
      for (uint32_t k = 0; k < g.bytes; ++k) out[i * g.bytes + k] = static_cast<uint8_t>(val >> (8 * k));
    }
    for (const auto& pe : patches) {
      const uint64_t i = pe.first;
      uint64_t val = le(out.data() + i * g.bytes, static_cast<int>(g.bytes));
      // Keep the residual, replace the exponent.
      uint32_t r = 0;
      switch (id) {
        case 1: r = static_cast<uint32_t>(((val >> 8) & 0x80) | (val & 0x7F)); break;
        case 2: r = static_cast<uint32_t>(((val >> 5) & 0x400) | (val & 0x3FF)); break;
        case 3: r = static_cast<uint32_t>(((val >> 8) & 0x800000) | (val & 0x7FFFFF)); break;
        case 4: r = static_cast<uint32_t>(((val >> 5) & 0x4) | (val & 0x3)); break;
      }
      val = join(id, pe.second, r);
      for (uint32_t k = 0; k < g.bytes; ++k) out[i * g.bytes + k] = static_cast<uint8_t>(val >> (8 * k));
    }
  }
  // Rule 19. Past a fault in rules 15-18 the output is undefined, so a
  // checksum failure is then a legitimate report too.
  if (checksum && opts.verify_checksum) {
    if ((def | pos) & (bit(15) | bit(16) | bit(17) | bit(18))) {
      pos |= bit(19);
    } else if (v.version == 1) {
      if (xxh(out.data(), out.size()) != content) def |= bit(19);
    } else {
      // v2: the first block whose stored check differs, else the combined hash.
      const std::vector<uint64_t> h = block_hashes(out.data(), out.size());
      uint64_t first_bad = ~uint64_t{0};
      for (uint64_t b = 0; b < h.size(); ++b) {
        if (le(src + checks_off + 4 * b, 4) != (h[b] & 0xFFFFFFFFu)) {
          first_bad = b;
          break;
        }
      }
      // Reported only when rule 19 is the frame's first broken rule.
      if (def == 0) v.corrupt_block = first_bad;
      if (first_bad != ~uint64_t{0} || combine(h) != content) def |= bit(19);
    }
  }
  v.definite = def;
  v.possible = def | pos;
  if (def == 0) v.output = std::move(out);
  return v;
}

uint32_t spec_exponent(splitzip::Dtype dtype, const void* src, uint64_t i) {
  const auto* p = static_cast<const uint8_t*>(src);
  switch (dtype) {
    case splitzip::Dtype::bf16: return static_cast<uint32_t>((le(p + 2 * i, 2) >> 7) & 0xFF);
    case splitzip::Dtype::fp16: return static_cast<uint32_t>((le(p + 2 * i, 2) >> 10) & 0x1F);
    case splitzip::Dtype::fp32: return static_cast<uint32_t>((le(p + 4 * i, 4) >> 23) & 0xFF);
    case splitzip::Dtype::fp8_e5m2: return (p[i] >> 2) & 0x1F;
    case splitzip::Dtype::fp8_e4m3: return (p[i] >> 3) & 0xF;
  }
  return 0;
}

splitzip::Codebook spec_calibrate(splitzip::Dtype dtype, const void* src, uint64_t n) {
  uint64_t count[256] = {};
  for (uint64_t i = 0; i < n; ++i) ++count[spec_exponent(dtype, src, i)];
  std::vector<uint32_t> order;
  for (uint32_t e = 0; e < 256; ++e)
    if (count[e]) order.push_back(e);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return count[a] > count[b]; });
  splitzip::Codebook cb;
  cb.dtype = dtype;
  cb.count = static_cast<uint8_t>(std::min<size_t>(order.size(), dtype == splitzip::Dtype::fp8_e4m3 ? 7 : 16));
  for (uint32_t c = 0; c < cb.count; ++c) cb.entries[c] = static_cast<uint8_t>(order[c]);
  return cb;
}

uint64_t spec_escape_count(splitzip::Dtype dtype, const void* src, uint64_t n,
                           const splitzip::Codebook& cb) {
  bool in_cb[256] = {};
  for (uint32_t c = 0; c < cb.count && c < 16; ++c) in_cb[cb.entries[c]] = true;
  uint64_t e = 0;
  for (uint64_t i = 0; i < n; ++i) e += !in_cb[spec_exponent(dtype, src, i)];
  return e;
}

bool repair_header_checks(uint8_t* buf, uint64_t size) {
  bool changed = false;
  uint64_t off = 0;
  while (size - off >= 64) {
    uint8_t* h = buf + off;
    const uint32_t c = header_check_of(h);
    for (int i = 0; i < 4; ++i) {
      const auto b = static_cast<uint8_t>(c >> (8 * i));
      changed |= h[52 + i] != b;
      h[52 + i] = b;
    }
    const uint64_t fs = le(h + 24, 8);
    if (fs < 64 || fs > size - off) break;
    off += fs;
  }
  return changed;
}

}  // namespace szfuzz
