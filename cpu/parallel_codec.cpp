// SPDX-License-Identifier: Apache-2.0
// OpenMP over contiguous ranges for the CPU backend (cpu/parallel_codec.h).
// Output bytes do not depend on the thread count or the SIMD target: every
// thread writes only its own chunks' bytes of streams 1..4, escapes are
// placed by a prefix sum over per-thread counts, and with a checksum a
// thread's range is whole checksum blocks, hashed by that thread right after
// it coded them (the input on encode, the output on decode: still in cache).
#include "cpu/parallel_codec.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/hash.h"
#include "core/layout.h"
#include "core/le_bytes.h"
#include "cpu/block_hasher.h"
#include "cpu/cpu_targets.h"
#include "cpu/kernels.h"
#include "hwy/cache_control.h"

#if defined(__SSE2__) && !defined(HWY_DISABLE_CACHE_CONTROL)
#include <emmintrin.h>
#endif

namespace splitzip {
namespace cpu {

// Buffers below this many uncompressed bytes run on one thread by default.
// On an idle host two threads pay from ~256 KiB, but on a loaded one each
// fork/join waits for a descheduled worker (orders of magnitude slower).
// Serving hosts are busy, so parallelism starts only where one call is
// long enough (>= ~0.4 ms at 10 GB/s) to hide that (docs/DESIGN.md,
// section 6).
constexpr uint64_t kParallelMinBytes = uint64_t{4} << 20;

uint64_t parallel_min_bytes() { return kParallelMinBytes; }

// Outputs at least this large use non-temporal stores (they would not stay
// in the 32 MiB L3 anyway; docs/DESIGN.md, section 6).
constexpr uint64_t kStreamMinBytes = uint64_t{32} << 20;
std::atomic<uint64_t> g_stream_min{0};

uint64_t stream_min_bytes() {
  const uint64_t forced = g_stream_min.load(std::memory_order_relaxed);
  return forced ? forced : kStreamMinBytes;
}
void set_stream_min_bytes(uint64_t bytes) { g_stream_min.store(bytes); }

constexpr uint64_t kBatchDecodeStreamMinBytes = uint64_t{2} << 20;
uint64_t batch_decode_stream_min_bytes() { return std::min(stream_min_bytes(), kBatchDecodeStreamMinBytes); }

void flush_streams() { hwy::FlushStream(); }

namespace {

// Elements per kernel call inside a thread's range without a checksum (a
// multiple of every chunk size): the encoder checks the escape budget
// between calls, the decoder validates one step's escapes into a list its
// kernel patches. With a checksum a step is one partition unit.
constexpr uint64_t kStep = uint64_t{1} << 15;
constexpr int kMaxThreads = 1024;

int thread_count(int requested, uint64_t bytes, uint64_t parts) {
  int t = requested > 0 ? requested : thread_override();
  if (t <= 0) t = bytes >= kParallelMinBytes ? omp_get_max_threads() : 1;
  t = std::min(t, kMaxThreads);
  if (static_cast<uint64_t>(t) > parts) t = static_cast<int>(parts);
  return std::max(t, 1);
}

// Part p of [0, total) split into `parts` near-equal contiguous pieces.
void split(uint64_t total, int parts, int p, uint64_t* lo, uint64_t* hi) {
  const uint64_t q = total / static_cast<uint64_t>(parts);
  const uint64_t r = total % static_cast<uint64_t>(parts);
  const auto up = static_cast<uint64_t>(p);
  *lo = up * q + std::min(up, r);
  *hi = *lo + q + (up < r ? 1 : 0);
}

// Threads own whole units of elements: whole chunks (streams 4-6), and
// with a checksum whole checksum blocks too. Both are powers of two.
struct Partition {
  uint64_t unit, step;
};
Partition partition_of(uint32_t elem_bytes, uint32_t chunk_log2, bool hashing) {
  const uint64_t chunk = uint64_t{1} << chunk_log2;
  if (!hashing) return {chunk, kStep};
  const uint64_t unit = std::max(chunk, kChecksumBlockBytes / elem_bytes);
  return {unit, unit};
}

void store_u16_le(uint8_t* dst, const uint16_t* src, uint64_t count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::memcpy(dst, src, 2 * count);
#else
  for (uint64_t i = 0; i < count; ++i) store_le16(dst + 2 * i, src[i]);
#endif
}

// Runs body(tid, nt) on a team of `threads`. One thread runs body(0, 1)
// directly: no fork/join, and no OpenMP construct inside body binds to a
// team of the caller's (a batch runs frames inside its own parallel loop).
template <class F>
void run_team(int threads, const F& body) {
  if (threads <= 1) {
    body(0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  body(omp_get_thread_num(), omp_get_num_threads());
}

// The barrier of a team that run_team started; nothing for one thread.
inline void team_barrier(int nt) {
  if (nt > 1) {
#pragma omp barrier
  }
}

// Lowest failing rule among 16..17 (0 = none) -> status.
Status rule_status(int rule) {
  switch (rule) {
    case 16: return Status::bad_escape_position;
    case 17: return Status::bad_escape_value;
    default: return Status::ok;
  }
}

void lower_rule(std::atomic<int>& worst, int rule) {
  int cur = worst.load();
  while ((cur == 0 || rule < cur) && !worst.compare_exchange_weak(cur, rule)) {
  }
}

// Per-thread escape scratch, reused from call to call. Kept at most
// kScratchKeep entries between calls so a frame with many escapes does
// not pin its memory for the thread's lifetime.
constexpr uint64_t kScratchKeep = uint64_t{1} << 16;
thread_local EscapeSink t_sink;
thread_local std::vector<uint64_t> t_esc_idx;
thread_local std::vector<uint8_t> t_esc_exp;

template <class V>
void trim_vector(V& v) {
  if (v.capacity() > kScratchKeep) V().swap(v);
}

// Trims the thread's scratch when a call ends (however it ends).
struct ScratchTrim {
  EscapeSink* sink;
  explicit ScratchTrim(EscapeSink* s) : sink(s) {}
  ScratchTrim(const ScratchTrim&) = delete;
  ScratchTrim& operator=(const ScratchTrim&) = delete;
  ~ScratchTrim() {
    if (sink != nullptr) {
      trim_vector(sink->pos);
      trim_vector(sink->exp);
      sink->size = 0;
    }
  }
};

// encode_coded() on one thread without a checksum (batch pages, small
// frames): the team body's steps with no team state (offsets, atomics,
// per-thread sinks), which cost as much as a small kernel call per page.
Status encode_one_thread(const CodedEncode& job, const FrameLayout& L0, const EncodeTables& tables,
                         const Streams& s, uint64_t* escapes_out) {
  const uint64_t n = job.n;
  EscapeSink& sink = t_sink;
  const ScratchTrim trim(&sink);
  sink.size = 0;
  sink.counts = job.frame + L0.count_off;
  sink.chunk_log2 = job.chunk_log2;
  std::memset(sink.counts, 0, L0.count_size);
  try {
    for (uint64_t i = 0; i < n;) {
      const uint64_t j = std::min(n, i + kStep);
      encode_range(job.dtype, job.src, i, j, tables, s, &sink, nullptr);
      if (sink.size > job.budget) break;  // the frame is stored
      i = j;
    }
  } catch (...) {  // bad_alloc from the escape vectors
    if (s.stream && !job.caller_fences) flush_streams();
    return Status::out_of_memory;
  }
  if (s.stream && !job.caller_fences) flush_streams();
  const uint64_t escapes = sink.size;
  if (escapes > job.budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(static_cast<uint32_t>(job.dtype), n, job.chunk_log2, escapes, job.n_checks);
  if (L.frame_size > job.capacity) return Status::internal_error;
  if (escapes != 0) {
    store_u16_le(job.frame + L.pos_off, sink.pos.data(), escapes);
    std::memcpy(job.frame + L.exp_off, sink.exp.data(), escapes);
  }
  *escapes_out = escapes;
  return Status::ok;
}

// Streams 4-6 of a page and their gaps, composed here before they go out
// (encode_page); kept at most kScratchKeep bytes between calls.
thread_local std::vector<uint8_t> t_tail;

// The largest stream 4 a page keeps in scratch: 2 bytes per chunk, 2048
// chunks (2 Mi elements at the default chunk size) -- well past a page.
constexpr uint64_t kPageCountsMax = 4096;

// The escapes of elements [i, j), read from streams 4-6 from *e_idx on and
// checked against rules 16 and 17 (the first failing rule lands in *rule);
// only valid ones are listed for the kernel to patch. One walk for the
// one-thread path and the team body.
struct EscapeWalk {
  const uint8_t* counts;
  const uint8_t* pos;
  const uint8_t* exps;
  const uint8_t* codes;
  const uint64_t* in_codebook;
  uint64_t n;
  uint32_t log2;
  uint32_t exp_limit;

  EscapeList step(uint64_t i, uint64_t j, uint64_t* e_idx, int* rule, uint64_t* esc_idx, uint8_t* esc_exp) const {
    const uint64_t chunk = uint64_t{1} << log2;
    uint64_t listed = 0;
    const uint64_t q1 = (j + chunk - 1) >> log2;
    for (uint64_t q = i >> log2; q < q1; ++q) {
      const uint64_t c = load_le16(counts + 2 * q);
      const uint64_t len = std::min(chunk, n - q * chunk);
      uint64_t prev = 0;
      for (uint64_t k = 0; k < c; ++k, ++*e_idx) {
        const uint64_t p = load_le16(pos + 2 * *e_idx);
        const bool bad_pos = p >= len || (k > 0 && p <= prev);
        prev = p;
        if (bad_pos) {
          *rule = 16;
          continue;
        }
        const uint64_t idx = q * chunk + p;
        const uint32_t x = exps[*e_idx];
        if (nibble_at(codes, idx) != 0 || x >= exp_limit || ((in_codebook[x >> 6] >> (x & 63)) & 1) != 0) {
          if (*rule == 0) *rule = 17;
          continue;
        }
        esc_idx[listed] = idx;
        esc_exp[listed] = static_cast<uint8_t>(x);
        ++listed;
      }
    }
    EscapeList list;
    list.idx = esc_idx;
    list.exp = esc_exp;
    list.count = listed;
    return list;
  }
};

// decode_coded() on one thread without block hashes (batch pages, small
// frames): the team body's rules 15-18 in the same order, with no team
// state (offsets, atomics, hasher, output tap).
Status decode_one_thread(const FrameHeader& h, const uint8_t* f, const FrameLayout& L, const ConstStreams& s,
                         const DecodeTables& tables, const uint64_t in_codebook[4], uint8_t* dst,
                         const DecodeHints& hints) {
  const auto dtype = static_cast<Dtype>(h.dtype);
  const uint64_t n = h.n_elems;
  const uint32_t log2 = h.chunk_log2;
  const uint64_t chunk = uint64_t{1} << log2;
  const uint64_t last = L.n_chunks - 1;  // n > 0: a coded frame has elements (rule 8)
  const uint8_t* counts = f + L.count_off;
  const uint8_t* pos = f + L.pos_off;
  const uint8_t* exps = f + L.exp_off;
  const uint32_t exp_limit = exponent_limit(h.dtype);

  // Rule 15: every count fits its chunk, and they sum to escape_count.
  uint64_t sum = 0;
  bool bad = false;
  for (uint64_t q = 0; q < last; ++q) {
    const uint64_t c = load_le16(counts + 2 * q);
    bad |= c > chunk;
    sum += c;
  }
  const uint64_t c_last = load_le16(counts + 2 * last);
  bad |= c_last > n - last * chunk;
  sum += c_last;
  if (bad || sum != h.escape_count) return Status::bad_escape_counts;

  std::vector<uint64_t>& esc_idx = t_esc_idx;
  std::vector<uint8_t>& esc_exp = t_esc_exp;
  struct Trim {
    ~Trim() {
      trim_vector(t_esc_idx);
      trim_vector(t_esc_exp);
    }
  } trim;
  uint32_t max_code = 0;
  int rule = 0;
  try {
    const uint64_t need = std::min(kStep, h.escape_count);
    if (esc_idx.size() < need) {
      esc_idx.resize(need);
      esc_exp.resize(need);
    }
  } catch (...) {  // bad_alloc from the escape lists
    return Status::out_of_memory;
  }
  const EscapeWalk walk{counts, pos, exps, s.codes, in_codebook, n, log2, exp_limit};
  uint64_t e_idx = 0;
  for (uint64_t i = 0; i < n;) {
    const uint64_t j = std::min(n, i + kStep);
    const EscapeList list = walk.step(i, j, &e_idx, &rule, esc_idx.data(), esc_exp.data());
    max_code = std::max(max_code, decode_range(dtype, s, i, j, tables, list, OutputTap(), dst));
    i = j;
  }
  if (s.stream && !hints.caller_fences) flush_streams();
  if (rule != 0) return rule_status(rule);                        // rules 16-17
  if (max_code >= h.codebook_count) return Status::bad_code;     // rule 18
  return Status::ok;
}

}  // namespace

uint64_t page_counts_max() { return kPageCountsMax; }

void write_frame_bytes(uint8_t* dst, const uint8_t* src, uint64_t bytes, bool stream) {
#if defined(__SSE2__) && !defined(HWY_DISABLE_CACHE_CONTROL)
  // This file is built for the baseline target (Highway's static target
  // may be its scalar one), where SSE2's 16-byte stream store exists.
  if (stream && reinterpret_cast<uintptr_t>(dst) % 16 == 0 && bytes % 16 == 0) {
    for (uint64_t i = 0; i < bytes; i += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    return;
  }
#else
  (void)stream;  // elsewhere the kernels' stream stores are plain ones too
#endif
  std::memcpy(dst, src, bytes);
}

Status encode_page(const PageEncode& job, uint64_t* escapes_out, uint64_t* frame_size_out, bool* streamed) {
  const FrameLayout& L0 = *job.layout0;
  const uint64_t n = job.n;
  uint8_t* const f = job.frame;
  if (L0.frame_size > job.capacity || L0.count_size > kPageCountsMax) return Status::internal_error;
  Streams s;
  s.res = f + L0.res_off;
  s.high = f + L0.high_off;
  s.codes = f + L0.code_off;
  s.high_size = L0.high_size;
  // As encode_coded; the frame start aligned too, so that streams 4-6 and
  // the header can go out non-temporal as well.
  s.stream = job.dtype == Dtype::bf16 && (L0.count_off >= stream_min_bytes() || job.stream_output) &&
             reinterpret_cast<uintptr_t>(f) % 16 == 0;
  EscapeSink& sink = t_sink;
  const ScratchTrim trim(&sink);
  std::vector<uint8_t>& tail = t_tail;
  struct Trim {
    ~Trim() { trim_vector(t_tail); }
  } tail_trim;
  sink.size = 0;
  sink.chunk_log2 = job.chunk_log2;
  try {
    if (tail.size() < kPageCountsMax) tail.resize(kPageCountsMax);
    // The counts the kernel bumps live in L1 scratch, not in the frame's
    // line (a store miss there, then a load of it, per page).
    sink.counts = tail.data();
    std::memset(sink.counts, 0, L0.count_size);
    for (uint64_t i = 0; i < n;) {
      const uint64_t j = std::min(n, i + kStep);
      encode_range(job.dtype, job.src, i, j, *job.tables, s, &sink, nullptr);
      if (sink.size > job.budget) break;  // the frame is stored
      i = j;
    }
  } catch (...) {  // bad_alloc from the escape vectors or the scratch
    return Status::out_of_memory;
  }
  const uint64_t escapes = sink.size;
  if (escapes > job.budget) return Status::escape_overflow;
  const FrameLayout L = coded_layout(static_cast<uint32_t>(job.dtype), n, job.chunk_log2, escapes);
  if (L.frame_size > job.capacity) return Status::internal_error;
  // [count_off, frame_size): stream 4, its gap, streams 5 and 6 with
  // theirs (no stream 7 without a checksum), composed in the scratch.
  const uint64_t tail_bytes = L.frame_size - L.count_off;
  try {
    if (tail.size() < tail_bytes) tail.resize(tail_bytes);
  } catch (...) {
    return Status::out_of_memory;
  }
  uint8_t* const t = tail.data();
  std::memset(t + L.count_size, 0, tail_bytes - L.count_size);
  if (escapes != 0) {
    store_u16_le(t + (L.pos_off - L.count_off), sink.pos.data(), escapes);
    std::memcpy(t + (L.exp_off - L.count_off), sink.exp.data(), escapes);
  }
  write_frame_bytes(f + L.count_off, t, tail_bytes, s.stream);
  *escapes_out = escapes;
  *frame_size_out = L.frame_size;
  *streamed = s.stream;
  return Status::ok;
}

Status encode_coded(const CodedEncode& job, uint64_t* escapes_out) {
  const uint32_t id = static_cast<uint32_t>(job.dtype);
  const DtypeGeometry g = geometry_of(id);
  const uint64_t n = job.n;
  const uint64_t bytes = n * g.bytes;
  const uint32_t log2 = job.chunk_log2;
  // Streams 1..4 do not move with E; they must fit before anything is written.
  const FrameLayout L0 = coded_layout(id, n, log2, 0, job.n_checks);
  if (L0.frame_size > job.capacity) return Status::internal_error;

  // Built here only without prebuilt ones, in raw storage: clearing the
  // ~530 bytes (a std::optional's payload included: GCC zeroes it with a
  // slow-starting rep stos) is itself a cost per 16 KiB page.
  alignas(EncodeTables) unsigned char own_storage[sizeof(EncodeTables)];
  const EncodeTables* tables_p = job.tables;
  if (tables_p == nullptr) {
    auto* own = new (own_storage) EncodeTables();
    build_encode_tables(*job.codebook, g.exp_bits, own);
    tables_p = own;
  }
  static_assert(std::is_trivially_destructible<EncodeTables>::value, "raw storage is never destroyed");
  const EncodeTables& tables = *tables_p;
  Streams s;
  s.res = job.frame + L0.res_off;
  s.high = job.frame + L0.high_off;
  s.codes = job.frame + L0.code_off;
  s.high_size = L0.high_size;
  // Frames past the last-level cache bypass it: no read-for-ownership of
  // the output lines (bf16 only; the others use overlapping stores).
  s.stream = job.dtype == Dtype::bf16 && (L0.count_off >= stream_min_bytes() || job.stream_output) &&
             reinterpret_cast<uintptr_t>(s.res) % 16 == 0 && reinterpret_cast<uintptr_t>(s.codes) % 16 == 0;
  uint8_t* counts = job.frame + L0.count_off;

  const Partition part = partition_of(g.bytes, log2, job.hashes != nullptr);
  const uint64_t units = ceil_div(n, part.unit);
  const int threads = thread_count(job.threads, bytes, units);
  if (threads == 1 && job.hashes == nullptr) return encode_one_thread(job, L0, tables, s, escapes_out);
  // One thread (small frames, batch items): no heap for the per-thread
  // parts, and the escape vectors are this thread's, kept between calls
  // (a batch of pages would allocate and free them per page).
  std::vector<EscapeSink> many_sinks(threads > 1 ? static_cast<size_t>(threads) : 0);
  EscapeSink* const sinks = threads > 1 ? many_sinks.data() : &t_sink;
  const ScratchTrim trim(threads > 1 ? nullptr : &t_sink);
  for (int t = 0; t < threads; ++t) {
    sinks[t].size = 0;
    sinks[t].counts = counts;
    sinks[t].chunk_log2 = log2;
  }
  uint64_t one_offset[2] = {0, 0};
  std::vector<uint64_t> many_offsets(threads > 1 ? static_cast<size_t>(threads) + 1 : 0, 0);
  uint64_t* const offset = threads > 1 ? many_offsets.data() : one_offset;
  std::atomic<uint64_t> found{0};
  std::atomic<bool> stop{false}, no_memory{false};
  Status status = Status::ok;
  uint64_t escapes = 0;
  FrameLayout L = L0;

  // The team's work; one thread runs it without a parallel region (the
  // barrier and single below then bind to that thread alone), so small
  // frames and batch items pay no fork/join.
  const auto body = [&](int tid, int nt) {
    uint64_t u0, u1;
    split(units, nt, tid, &u0, &u1);
    EscapeSink& sink = sinks[static_cast<size_t>(tid)];
    const uint64_t e0 = std::min(n, u0 * part.unit);
    const uint64_t e1 = std::min(n, u1 * part.unit);
    if (e1 > e0) std::memset(counts + 2 * (e0 >> log2), 0, 2 * (ceil_div(e1, uint64_t{1} << log2) - (e0 >> log2)));
    try {
      std::optional<BlockHasher> hasher;
      if (job.hashes != nullptr) hasher.emplace(bytes, job.hashes);
      for (uint64_t i = e0; i < e1 && !stop.load(std::memory_order_relaxed);) {
        const uint64_t j = std::min(e1, i + part.step);
        const uint64_t before = sink.size;
        // The kernel may hash whole checksum blocks as it reads them (bf16).
        const uint64_t hashed = encode_range(job.dtype, job.src, i, j, tables, s, &sink, job.hashes, n);
        // The rest of the step's input, just read by the kernel, is still in
        // L2 (one call per step: smaller calls measured slower, each ends
        // with the streaming stores' fence).
        if (hasher && i + hashed < j)
          hasher->feed((i + hashed) * g.bytes, job.src + (i + hashed) * g.bytes, (j - i - hashed) * g.bytes);
        const uint64_t added = sink.size - before;
        // Past the budget the frame is stored: stop everyone early. One
        // thread counts without a locked add (it would drain the
        // write-combining buffers of the streaming stores every step).
        if (added != 0) {
          const uint64_t total = nt == 1 ? found.load(std::memory_order_relaxed) + added : found.fetch_add(added) + added;
          if (nt == 1) found.store(total, std::memory_order_relaxed);
          if (total > job.budget) stop.store(true, std::memory_order_relaxed);
        }
        // The step's checksum blocks, while the kernel's reads are in cache.
        i = j;
      }
    } catch (...) {  // bad_alloc from the escape vectors
      no_memory.store(true);
      stop.store(true);
    }
    if (s.stream && !(job.caller_fences && nt == 1)) flush_streams();
    team_barrier(nt);
    if (tid == 0) {
      for (int t = 0; t < nt; ++t)
        offset[static_cast<size_t>(t) + 1] = offset[static_cast<size_t>(t)] + sinks[static_cast<size_t>(t)].size;
      escapes = offset[static_cast<size_t>(nt)];
      if (no_memory.load()) {
        status = Status::out_of_memory;
      } else if (stop.load() || escapes > job.budget) {
        status = Status::escape_overflow;
      } else {
        L = coded_layout(id, n, log2, escapes, job.n_checks);
        if (L.frame_size > job.capacity) status = Status::internal_error;
      }
    }
    team_barrier(nt);
    // Each thread places its own escapes (streams 5 and 6) at its offset.
    if (status == Status::ok) {
      const uint64_t k = sink.size;
      const uint64_t off = offset[static_cast<size_t>(tid)];
      if (k != 0) {
        store_u16_le(job.frame + L.pos_off + 2 * off, sink.pos.data(), k);
        std::memcpy(job.frame + L.exp_off + off, sink.exp.data(), k);
      }
    }
  };
  run_team(threads, body);
  if (status == Status::ok) *escapes_out = escapes;
  return status;
}

Status decode_coded(const FrameHeader& h, const uint8_t* f, uint8_t* dst, uint64_t* hashes, int threads_req,
                    const DecodeHints& hints) {
  const auto dtype = static_cast<Dtype>(h.dtype);
  const DtypeGeometry g = geometry_of(h.dtype);
  const FrameLayout L = layout_of(h);
  const uint64_t n = h.n_elems;
  const uint64_t bytes = n * g.bytes;
  const uint32_t log2 = h.chunk_log2;
  const uint64_t chunk = uint64_t{1} << log2;
  const uint32_t exp_limit = exponent_limit(h.dtype);

  if (!stream_padding_ok(f, L)) return Status::bad_padding;  // rule 14 in-stream

  // Bit x: exponent x is a codebook entry (a bitmap: 32 bytes to clear
  // per frame, not 256; a batch of small pages clears one per page).
  uint64_t in_codebook[4] = {0, 0, 0, 0};
  for (uint32_t c = 0; c < h.codebook_count && c < 16; ++c)
    in_codebook[h.codebook[c] >> 6] |= uint64_t{1} << (h.codebook[c] & 63);
  DecodeTables tables;
  build_decode_tables(h.codebook, dtype, &tables);
  ConstStreams s;
  s.res = f + L.res_off;
  s.high = f + L.high_off;
  s.codes = f + L.code_off;
  s.end = f + L.frame_size;
  s.stream = bytes >= stream_min_bytes() || hints.stream_output;
  const uint8_t* counts = f + L.count_off;
  const uint8_t* pos = f + L.pos_off;
  const uint8_t* exps = f + L.exp_off;
  const EscapeWalk walk{counts, pos, exps, s.codes, in_codebook, n, log2, exp_limit};

  const Partition part = partition_of(g.bytes, log2, hashes != nullptr);
  const uint64_t units = ceil_div(n, part.unit);
  const int threads = thread_count(threads_req, bytes, units);
  if (threads == 1 && hashes == nullptr) return decode_one_thread(h, f, L, s, tables, in_codebook, dst, hints);
  uint64_t one_offset[2] = {0, 0};
  std::vector<uint64_t> many_offsets(threads > 1 ? static_cast<size_t>(threads) + 1 : 0, 0);
  uint64_t* const offset = threads > 1 ? many_offsets.data() : one_offset;
  std::atomic<bool> bad_counts{false}, no_memory{false};
  std::atomic<int> worst{0};
  std::atomic<uint32_t> max_code{0};

  const auto body = [&](int tid, int nt) {
    uint64_t u0, u1;
    split(units, nt, tid, &u0, &u1);
    const uint64_t c0 = std::min(L.n_chunks, (u0 * part.unit) >> log2);
    const uint64_t c1 = std::min(L.n_chunks, (u1 * part.unit) >> log2);
    auto chunk_len = [&](uint64_t q) { return q + 1 < L.n_chunks ? chunk : n - q * chunk; };

    // Rule 15, part 1: this thread's counts and their sum.
    uint64_t sum = 0;
    for (uint64_t q = c0; q < c1; ++q) {
      const uint64_t c = load_le16(counts + 2 * q);
      if (c > chunk_len(q)) bad_counts.store(true, std::memory_order_relaxed);
      sum += c;
    }
    offset[static_cast<size_t>(tid) + 1] = sum;
    team_barrier(nt);
    if (tid == 0) {
      for (int t = 0; t < nt; ++t) offset[static_cast<size_t>(t) + 1] += offset[static_cast<size_t>(t)];
      if (offset[static_cast<size_t>(nt)] != h.escape_count) bad_counts.store(true);
    }
    team_barrier(nt);
    if (!bad_counts.load()) {
      uint64_t e_idx = offset[static_cast<size_t>(tid)];
      uint32_t my_max = 0;
      int my_rule = 0;
      const uint64_t e1 = std::min(n, c1 << log2);
      try {
        // This thread's lists, kept between calls (see t_sink).
        std::vector<uint64_t>& esc_idx = t_esc_idx;
        std::vector<uint8_t>& esc_exp = t_esc_exp;
        struct Trim {
          ~Trim() {
            trim_vector(t_esc_idx);
            trim_vector(t_esc_exp);
          }
        } trim;
        // A step holds at most min(step, this thread's escapes) of them.
        const uint64_t mine = offset[static_cast<size_t>(tid) + 1] - offset[static_cast<size_t>(tid)];
        const uint64_t need = std::min(part.step, mine);
        if (esc_idx.size() < need) {
          esc_idx.resize(need);
          esc_exp.resize(need);
        }
        std::optional<BlockHasher> hasher;
        OutputTap tap;
        if (hashes != nullptr) {
          hasher.emplace(bytes, hashes);
          tap.fn = &BlockHasher::tap;
          tap.ctx = &*hasher;
          tap.hashes = hashes;  // the kernel hashes whole blocks itself
          tap.total = bytes;
        }
        for (uint64_t i = c0 << log2; i < e1;) {
          const uint64_t j = std::min(e1, i + part.step);
          const EscapeList list = walk.step(i, j, &e_idx, &my_rule, esc_idx.data(), esc_exp.data());
          my_max = std::max(my_max, decode_range(dtype, s, i, j, tables, list, tap, dst));
          i = j;
        }
      } catch (...) {  // bad_alloc from the escape lists or the hasher
        no_memory.store(true);
      }
      if (s.stream && !(hints.caller_fences && nt == 1)) flush_streams();
      if (my_rule != 0) lower_rule(worst, my_rule);
      if (nt == 1) {  // no locked instruction (see the encoder)
        max_code.store(my_max, std::memory_order_relaxed);
      } else {
        uint32_t cur = max_code.load();
        while (my_max > cur && !max_code.compare_exchange_weak(cur, my_max)) {
        }
      }
    }
  };
  run_team(threads, body);
  if (bad_counts.load()) return Status::bad_escape_counts;                       // rule 15
  if (no_memory.load()) return Status::out_of_memory;
  if (worst.load() != 0) return rule_status(worst.load());                       // rules 16-17
  if (max_code.load() >= h.codebook_count) return Status::bad_code;              // rule 18
  return Status::ok;
}

int batch_threads(int requested, uint64_t bytes, uint64_t items) {
  return thread_count(requested, bytes, std::max<uint64_t>(items, 1));
}

void exponent_histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256], int threads,
                        const WarmOutput* warm) {
  std::memset(counts, 0, 256 * sizeof(uint64_t));
  const uint64_t bytes = geometry_of(static_cast<uint32_t>(dtype)).bytes;
  const uint64_t blocks = ceil_div(n, kStep);
  const int t = thread_count(threads, n * bytes, blocks);
  if (t == 1) {  // no team, no per-thread tables
    histogram_range(dtype, src, n, counts, dtype == Dtype::bf16 ? warm : nullptr);
    return;
  }
  std::vector<std::array<uint64_t, 256>> parts(static_cast<size_t>(t));
#pragma omp parallel num_threads(t)
  {
    const int nt = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    uint64_t b0, b1;
    split(blocks, nt, tid, &b0, &b1);
    auto& part = parts[static_cast<size_t>(tid)];
    part.fill(0);
    const uint64_t i0 = std::min(n, b0 * kStep), i1 = std::min(n, b1 * kStep);
    if (i1 > i0) histogram_range(dtype, static_cast<const uint8_t*>(src) + i0 * bytes, i1 - i0, part.data());
  }
  for (const auto& part : parts)
    for (int b = 0; b < 256; ++b) counts[b] += part[static_cast<size_t>(b)];
}

void copy_hashed(const uint8_t* src, uint8_t* dst, uint64_t bytes, uint64_t* hashes, int threads) {
  if (bytes == 0) return;
  const uint64_t blocks = checksum_blocks(bytes);
  if (src < dst + bytes && dst < src + bytes) {  // overlapping: one move, then hash
    std::memmove(dst, src, bytes);
    if (hashes != nullptr) BlockHasher(bytes, hashes).feed(0, dst, bytes);
    return;
  }
  const int t = thread_count(threads, bytes, blocks);
  std::atomic<bool> no_memory{false};
#pragma omp parallel num_threads(t)
  {
    uint64_t b0, b1;
    split(blocks, omp_get_num_threads(), omp_get_thread_num(), &b0, &b1);
    const uint64_t lo = std::min(bytes, b0 << kChecksumBlockLog2), hi = std::min(bytes, b1 << kChecksumBlockLog2);
    if (hashes == nullptr) {
      std::memcpy(dst + lo, src + lo, hi - lo);
    } else {
      try {
        // Block by block: the hash reads what the copy just brought in.
        BlockHasher hasher(bytes, hashes);
        for (uint64_t off = lo; off < hi; off += kChecksumBlockBytes) {
          const uint64_t len = std::min(kChecksumBlockBytes, hi - off);
          std::memcpy(dst + off, src + off, len);
          hasher.feed(off, src + off, len);
        }
      } catch (...) {
        no_memory.store(true);
      }
    }
  }
  if (no_memory.load()) throw std::bad_alloc();
}

}  // namespace cpu
}  // namespace splitzip
