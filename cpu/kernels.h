/* SPDX-License-Identifier: Apache-2.0 */
// Internal interface between the CPU backend (threads, escape layout,
// validation) and its per-target SIMD kernels (cpu/*-inl.h). No vector types
// here: the kernels are reached through Highway's dynamic dispatch in
// cpu/*_kernels.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace cpu {

// Codebook prepared for the encoder. The codebook is covered by windows of 16
// consecutive exponents; lut[w][x - base[w]] is code+1 for a codebook
// exponent x and 0 otherwise, so one byte-table lookup per window finds the
// code and a zero result marks an escape.
struct EncodeTables {
  uint32_t windows = 0;
  uint8_t base[16] = {};
  alignas(16) uint8_t lut[16][16] = {};
  uint8_t code1_of[256] = {};  // code+1, or 0 for an escape (scalar paths)
};
void build_encode_tables(const Codebook& cb, uint32_t exp_bits, EncodeTables* out);

// Tables for the decoder: code -> bytes that are ORed into the output.
struct DecodeTables {
  alignas(16) uint8_t exp[16] = {};   // cb[c]
  alignas(16) uint8_t lo[16] = {};    // bf16: (cb[c] & 1) << 7
  alignas(16) uint8_t hi[16] = {};    // bf16: cb[c] >> 1; fp16: cb[c] << 2; fp8: cb[c] << 2
};
void build_decode_tables(const uint8_t entries[16], Dtype dtype, DecodeTables* out);

// Escapes found by encode kernels, appended in element order. Stream 4
// counts are incremented in place (little-endian u16 at counts[2 * chunk]).
struct EscapeSink {
  std::vector<uint16_t> pos;  // capacity; the first `size` entries are used
  std::vector<uint8_t> exp;
  uint64_t size = 0;
  uint8_t* counts = nullptr;
  uint32_t chunk_log2 = 10;

  // Room for k more escapes (may throw bad_alloc).
  void reserve_more(uint64_t k) {
    if (size + k <= pos.size()) return;
    const uint64_t cap = std::max<uint64_t>({2 * pos.size(), size + k, 1024});
    pos.resize(cap);
    exp.resize(cap);
  }
  void bump_count(uint64_t chunk, uint32_t k) {
    uint8_t* c = counts + 2 * chunk;
    const uint32_t v = (c[0] | (uint32_t{c[1]} << 8)) + k;
    c[0] = static_cast<uint8_t>(v);
    c[1] = static_cast<uint8_t>(v >> 8);
  }
  // One escape at element i (scalar paths).
  void add(uint64_t i, uint32_t e) {
    reserve_more(1);
    pos[size] = static_cast<uint16_t>(i & ((uint64_t{1} << chunk_log2) - 1));
    exp[size] = static_cast<uint8_t>(e);
    ++size;
    bump_count(i >> chunk_log2, 1);
  }
};

// Stream pointers of one frame (any may be null when absent).
struct Streams {
  uint8_t* res = nullptr;    // stream 1
  uint8_t* high = nullptr;   // stream 2
  uint8_t* codes = nullptr;  // stream 3
  uint64_t high_size = 0;
  // Non-temporal stores for the byte-aligned streams (large frames whose
  // streams 1 and 3 start 16-byte aligned); bf16 only. The kernel leaves
  // them unfenced: see flush_streams().
  bool stream = false;
};
struct ConstStreams {
  const uint8_t* res = nullptr;
  const uint8_t* high = nullptr;
  const uint8_t* codes = nullptr;
  // One past the last readable frame byte. fp16/fp8/fp32 vector loads read
  // up to 15 bytes past the part of stream 1 or 2 they use; the kernels
  // keep every load below `end`.
  const uint8_t* end = nullptr;
  // Non-temporal stores to the output (large outputs, 16-byte aligned),
  // left unfenced: see flush_streams().
  bool stream = false;
};

// bf16 decode: elements ahead of the kernel's loop whose stream 1 and 3
// lines it prefetches (the hardware prefetchers stop at each 4 KiB page and
// restart on every small frame of a batch); a batch prefetches the lines of
// the next frame's first ones itself (cpu_backend.cpp). 2048 beat 1024
// for pages and one buffer; 3072 fetches lines of no use past a page's end
// (docs/DESIGN.md, section 6).
inline constexpr uint64_t kDecodePrefetchAhead = 2048;

// Orders this thread's non-temporal stores before anything it does next
// (sfence). The kernels do not fence: a fence, and any locked instruction,
// waits for the write-combining buffers to drain, so a worker fences once
// after all its ranges (after all its frames in a batch), before the
// barrier or return that hands the output to another thread.
void flush_streams();

// Validated escapes of one decode_range call: element indices (ascending,
// inside the range) and their exponents.
struct EscapeList {
  const uint64_t* idx = nullptr;
  const uint8_t* exp = nullptr;
  uint64_t count = 0;
};

// Encodes elements [begin, end) of src into streams 1..3 and appends escapes
// to *sink. begin is a multiple of 64 (a chunk boundary); the kernel writes
// only the stream bytes that belong to [begin, end).
// hashes (optional: the frame's block hash slots, FORMAT.md 4.5): the
// kernel may hash whole 64 KiB checksum blocks of the input from `begin`
// on while it encodes them (bf16 and fp16 on SIMD targets: XXH3 on the
// vectors it has loaded) and write their hashes, and the input's shorter last block
// when end == total (the input's elements) and it is whole KiB (a 32 KiB
// page). Returns how many elements from `begin` it hashed (0 = none): the
// caller hashes the rest.
uint64_t encode_range(Dtype dtype, const void* src, uint64_t begin, uint64_t end,
                      const EncodeTables& t, const Streams& s, EscapeSink* sink,
                      uint64_t* hashes = nullptr, uint64_t total = 0);

// Sees each piece of decoded output once it is final (escapes patched) and
// before it leaves the cache: fn(ctx, byte offset in dst, bytes, count), in
// output order. The backend hashes checksum blocks through it.
// hashes (optional, with fn: the frame's block hash slots): the kernel may
// hash whole 64 KiB checksum blocks of the output itself (x86 SIMD
// targets, when `begin` starts a block; also a shorter last block of whole
// KiB) and write their hashes there;
// fn then sees only the rest, still in output order.
struct OutputTap {
  void (*fn)(void* ctx, uint64_t off, const uint8_t* p, uint64_t bytes) = nullptr;
  void* ctx = nullptr;
  uint64_t* hashes = nullptr;
  uint64_t total = 0;  // with hashes: bytes of the whole output (its last block may be shorter)
};

// Decodes elements [begin, end) into dst (element 0 at dst) and patches the
// escapes in `esc`; hands the output to `tap` when it has a fn. Returns the
// largest code seen, for rule 18.
uint32_t decode_range(Dtype dtype, const ConstStreams& s, uint64_t begin, uint64_t end,
                      const DecodeTables& t, const EscapeList& esc, const OutputTap& tap, void* dst);

// The streams 1 and 3 of the bf16 frame that is encoded right after a
// histogram (dynamic codebook): the histogram pass prefetches them block by
// block while it counts, so the encode pass stores into lines already in
// cache instead of waiting on each line's fetch for ownership.
struct WarmOutput {
  uint8_t* res = nullptr;    // 1 byte per element
  uint8_t* codes = nullptr;  // 1/2 byte per element
};

// Adds the exponent counts of elements [0, n) to counts[256]. warm (bf16
// only; may be null): see WarmOutput.
void histogram_range(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256],
                     const WarmOutput* warm = nullptr);

// Capacity decode (cpu/capacity_codec.cpp). One stream of a block: its
// bytes (end_bits = 8 * size) and the row its len codes go to.
struct CapStreamIn {
  const uint8_t* base = nullptr;
  uint64_t end_bits = 0;
  uint8_t* row = nullptr;
  uint32_t len = 0;
};
// A block's lookups for 12-bit windows: multi-code entries (symbols, bits
// << 24, codes << 30) and, beside them, each entry >> 24 (the decoder's
// shift, loaded at a constant offset from the same base).
struct CapLookup {
  uint32_t multi[4096];
  uint8_t steps[4096];
};
// Two byte ranges [at, end) the stream decoder prefetches as it goes, one
// 64-byte line of each per round of lookups (the next block's bytes: a
// burst of these prefetches before the block stalled the core on the full
// miss queue; docs/DESIGN.md, section 4.1); at[i] returns where
// range i stopped. An empty range has at = end (any readable address).
struct CapPrefetch {
  const uint8_t* at[2];
  const uint8_t* end[2];
};
// Decodes the 32 streams with the block's lookups (lens: the code length of
// each symbol) into their rows, which need 16 bytes of slack (a row's last
// round runs past its end); consumed[s]: bits used. Reads up to 16 bytes
// past each stream. False: a stream ran out (malformed).
bool cap_decode_rows(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint64_t* consumed,
                     CapPrefetch* pf);
// The same for a table set's block (FORMAT.md 4.9): stream s decodes with
// lk[s & mask] and lens + 256 * (s & mask) (T = mask + 1 tables).
bool cap_decode_rows_set(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint32_t mask,
                         uint64_t* consumed, CapPrefetch* pf);
// lk->steps from lk->multi: steps[x] = multi[x] >> 24 for the 4096 windows.
void cap_steps(const uint32_t* multi, uint8_t* steps);
// rows[s * stride + i] is the
// exponent of element i * 32 + s; indices [0, n16), n16 a multiple of 16.
// cap_transpose writes the exponents in element order; the bf16 join writes
// the values, with res the block's residual bytes (stream: non-temporal
// stores where out is 16-byte aligned, for outputs past the caches).
void cap_transpose(const uint8_t* rows, size_t stride, uint32_t n16, uint8_t* exps);
void cap_transpose_join_bf16(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res, uint8_t* out,
                             bool stream);
// The same, also computing the XXH3-64 of whole 64 KiB checksum blocks of
// out (FORMAT.md 4.5) from the values it writes, where the target fuses it
// (AVX2): hashes[k] = hash of out[65536 k, 65536 (k + 1)) for k below the
// returned count (blocks past it, and all on other targets, are the
// caller's to hash). last: out ends the frame, so the indices past the
// whole 64 KiB blocks are its last, shorter checksum block (a page's only
// one), hashed too when they are whole 4 KiB (AVX2: 2 KiB) groups.
uint32_t cap_transpose_join_bf16_hashed(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res,
                                        uint8_t* out, bool stream, uint64_t* hashes, bool last);
// fp16 / fp32 / fp8_e5m2 values [0, count) from exps (element order) and
// their residual parts: res (1 byte per element for fp16, 3 for fp32) and,
// for fp16 and fp8_e5m2, the packed 3-bit part with element 0 at bit 0 of high. Reads stay below
// high_end / res_end. stream: as above, without the fence: the caller
// calls hwy::FlushStream() before the values are read elsewhere.
void cap_join_fp16(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* high,
                   const uint8_t* high_end, uint8_t* out, bool stream);
void cap_join_fp32(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* res_end, uint8_t* out,
                   bool stream);
void cap_join_e5m2(const uint8_t* exps, uint32_t count, const uint8_t* high, const uint8_t* high_end, uint8_t* out,
                   bool stream);

// fp8_e4m3 (FORMAT.md 4.7) over the 8-element format groups [g0, g0 + gn)
// of an n-element buffer, byte-identical to core/fp8_e4m3.h's group
// kernels (cpu/e4m3-inl.h). Escapes before the range are the caller's:
// `esc` / `esc_index` point at the range's first escape.
// Escapes (code-7 markers) the encoder writes for the groups.
uint64_t e4m3_count_escapes(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16]);
// The dynamic codebook's pass: adds the groups' exponent counts to
// counts[0..16); res non-null: writes their stream 1 too, except on
// HWY_SCALAR (returns whether it did).
bool e4m3_histogram_residual(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, uint8_t* res,
                             uint64_t counts[16]);
// Streams 1 (unless res_done) and 3 of the groups; their escape exponents
// to esc[0..k), element order; esc must have room for 8 * gn + 64 bytes.
// Returns k.
uint64_t e4m3_encode_groups(const uint8_t* src, uint64_t n, uint64_t g0, uint64_t gn, const uint8_t code_of[16],
                            uint8_t* res, bool res_done, uint8_t* codes, uint8_t* esc);
// Markers in the groups' codes; *bad_code set on a code in count..6 (rule 18).
uint64_t e4m3_count_markers(const uint8_t* codes, uint64_t n, uint64_t g0, uint64_t gn, uint32_t count,
                            bool* bad_code);
// Decodes the groups into dst (element 0 at dst) and checks their codes in
// the same pass (*bad_code: a code in count..6, rule 18). escb: stream 6's
// escapes from the range's first (number esc_index) on, one per byte
// (e4m3_expand_escapes), esc_avail of them and kE4M3EscbSlack readable
// bytes past. Returns the markers decoded, or kE4M3Overrun when the groups
// hold more than esc_avail (rule 15; dst is then partly written).
inline constexpr uint64_t kE4M3Overrun = ~uint64_t{0};
inline constexpr uint64_t kE4M3EscbSlack = 128;
uint64_t e4m3_decode_groups(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                            uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16], const uint8_t code_of[16],
                            uint32_t count, uint64_t esc_index, uint64_t esc_avail, uint8_t* dst, bool* bad_code);
// e4m3_decode_groups on one checksum block (g0 a multiple of 8192 groups,
// 8 * gn a multiple of 1 KiB), hashing each KiB of output from L1 as it is
// written: hashes[block] = block_hash(dst, n, block). last_end: n when this
// is the output's shorter last block, else 0.
uint64_t e4m3_decode_groups_hashed(const uint8_t* res, const uint8_t* codes, const uint8_t* esc, const uint8_t* escb,
                                   uint64_t n, uint64_t g0, uint64_t gn, const uint8_t cb[16],
                                   const uint8_t code_of[16], uint32_t count, uint64_t esc_index, uint64_t esc_avail,
                                   uint8_t* dst, bool* bad_code, uint64_t* hashes, uint64_t last_end);
// Escapes [i0, i0 + k) of stream 6 into escb[0..k), one per byte; returns
// whether one is a codebook exponent (rule 17).
bool e4m3_expand_escapes(const uint8_t* esc, uint64_t i0, uint64_t k, const uint8_t code_of[16], uint8_t* escb);
int64_t e4m3_target();

// HWY_TARGET of the kernels the dispatcher currently picks (for tests).
int64_t encode_target();
int64_t decode_target();
int64_t capacity_target();

}  // namespace cpu
}  // namespace splitzip
