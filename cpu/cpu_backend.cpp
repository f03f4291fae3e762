// SPDX-License-Identifier: Apache-2.0
// The "cpu" backend: whole frames on the host. The format core decides
// everything about a frame (escape budget, codebook order, layout, stored
// fallback, block checks, gaps, header, rules 1-14 outside the streams and
// 19); cpu/parallel_codec.cpp runs streams 1..6 and the block hashes on
// Highway SIMD kernels over OpenMP threads.
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "backends/registry.h"
#include "core/frame_rules.h"
#include "core/frame_skeleton.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/layout.h"
#include "core/le_bytes.h"
#include "cpu/capacity_codec.h"
#include "cpu/cpu_targets.h"
#include "cpu/e4m3_codec.h"
#include "cpu/parallel_codec.h"
#include "hwy/cache_control.h"

namespace splitzip {
namespace {

// How a frame is written when it is one item of a batch.
struct BatchItem {
  bool stream_output = false;  // the batch is too large to stay in cache
  bool caller_fences = false;  // the batch worker calls flush_streams() at its end
  // The codebook every item shares, already checked (validate_codebook and
  // its dtype), and its encode tables; null: each frame checks and builds.
  const Codebook* codebook = nullptr;
  const cpu::EncodeTables* tables = nullptr;
  // Decode: the next item's frame (capacity frames prefetch it as they go);
  // encode: the next item's input (capacity frames prefetch its start).
  const void* next = nullptr;
  uint64_t next_size = 0;
};

// This thread's last escape budget (batch pages of one size share it).
thread_local BudgetMemo t_budget;

// The cpu kernel table for encode (core/frame_skeleton.h). The coded
// codecs hash the input blocks in their coding pass; the capacity codec
// (cpu/capacity_codec.cpp) writes its whole frame, so finish() only takes
// its size.
struct CpuEncode {
  explicit CpuEncode(const BatchItem& i) : item(i) {}
  const BatchItem& item;
  bool shared = false;  // the batch's codebook and tables, checked once
  std::vector<uint64_t> hashes;
  uint64_t* hash_out = nullptr;
  bool whole = false;  // the codec wrote the whole frame
  bool res_done = false;  // the e4m3 histogram pass wrote stream 1
  uint64_t whole_size = 0;

  Status plan(const CompressArgs& a, FramePlan* p) {
    shared = item.codebook != nullptr && a.codebook == item.codebook;
    Status s;
    if (shared) {  // the same checks but the codebook's, done once for the batch
      CompressArgs b = a;
      b.codebook = nullptr;
      s = plan_frame(b, p, &t_budget);
    } else {
      s = plan_frame(a, p, &t_budget);
    }
    if (s != Status::ok || codec_of(a.dtype, a.mode) == Codec::capacity) return s;
    hashes.resize(p->n_checks);
    if (a.checksum) hash_out = hashes.data();
    return s;
  }
  Status histogram(const CompressArgs& a, const FramePlan& p, uint64_t counts[256]) {
    // Streams 1 and 3 sit where coded_layout puts them for any escape
    // count: the histogram pass warms them for the encode pass.
    auto* f = static_cast<uint8_t*>(a.dst);
    const FrameLayout L0 = coded_layout(p.dtype_id, a.n, a.chunk_log2, 0, p.n_checks);
    cpu::WarmOutput warm;
    warm.res = f + L0.res_off;
    warm.codes = f + L0.code_off;
    const bool fits = L0.frame_size <= a.capacity;
    if (a.dtype == Dtype::fp8_e4m3) {  // writes stream 1 in the same pass
      res_done = cpu::e4m3_histogram(static_cast<const uint8_t*>(a.src), a.n, p.n_checks, fits ? f : nullptr, counts,
                                     a.threads);
      return Status::ok;
    }
    cpu::exponent_histogram(a.dtype, a.src, a.n, counts, a.threads, fits ? &warm : nullptr);
    return Status::ok;
  }
  Status encode(CodecTag<Codec::capacity>, const CompressArgs& a, const FramePlan&, FrameHeader*) {
    CapEncodeHints hints;
    hints.next = item.next;
    const FrameOutcome o = capacity_compress_frame(a, hints);
    whole = true;
    whole_size = o.frame_size;
    return o.status;
  }
  Status encode(CodecTag<Codec::e4m3>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {  // FORMAT.md 4.7
    return cpu::e4m3_encode(static_cast<const uint8_t*>(a.src), a.n, cb, p.budget, p.n_checks,
                            static_cast<uint8_t*>(a.dst), res_done, hash_out, a.threads, escapes);
  }
  Status encode(CodecTag<Codec::nibble>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {
    cpu::CodedEncode job;
    job.dtype = a.dtype;
    job.src = static_cast<const uint8_t*>(a.src);
    job.n = a.n;
    job.chunk_log2 = a.chunk_log2;
    job.codebook = &cb;
    job.tables = shared ? item.tables : nullptr;
    job.frame = static_cast<uint8_t*>(a.dst);
    job.capacity = a.capacity;
    job.budget = p.budget;
    job.n_checks = p.n_checks;
    job.hashes = hash_out;
    job.threads = a.threads;
    job.stream_output = item.stream_output;
    job.caller_fences = item.caller_fences;
    return cpu::encode_coded(job, escapes);
  }
  Status store(const CompressArgs& a, const FramePlan& p) {
    cpu::copy_hashed(static_cast<const uint8_t*>(a.src), static_cast<uint8_t*>(a.dst) + 64, p.bytes, hash_out,
                     a.threads);
    return Status::ok;
  }
  Status finish(const CompressArgs& a, const FramePlan&, FrameHeader* h) {
    if (whole) {
      h->frame_size = whole_size;
      return Status::ok;
    }
    finish_frame(*h, static_cast<uint8_t*>(a.dst), hashes.data());
    return Status::ok;
  }
};

FrameOutcome compress_impl(const CompressArgs& a, const BatchItem& item = BatchItem()) {
  CpuEncode k(item);
  return compress_with(k, a);
}

// What the pages of a batch share when they have one shape: same dtype,
// element count and chunk size, one codebook or each its own (dynamic),
// fast mode, no checksum (the usual KV-cache batch). Made once per batch
// instead of per 16 KiB page.
struct PageShape {
  Dtype dtype = Dtype::bf16;
  uint32_t dtype_id = 0;
  uint64_t n = 0;
  uint32_t chunk_log2 = 0;
  bool dynamic = false;  // no shared codebook: each page's from its histogram
  FrameLayout layout0;   // coded_layout(.., 0 escapes): streams 1-4 do not move with E
  FrameHeader header;    // make_header plus the shared codebook's fields
  Gap gaps[7];           // zero gaps before stream 4 (those after it come with streams 4-6)
  int n_gaps = 0;
};

// One page of such a batch, on the calling thread (the API codes each item
// on one): the steps of compress_impl with the shared parts made once
// (PageShape), and the frame's bytes past stream 3 and its header written
// in one go each (cpu::encode_page). Anything off the shape, and every page
// that is stored or fails, takes compress_impl.
FrameOutcome compress_page(const CompressArgs& a, const BatchItem& item, const PageShape& ps) {
  if (a.n != ps.n || a.dtype != ps.dtype || a.chunk_log2 != ps.chunk_log2 || a.checksum || a.mode != Mode::fast ||
      a.codebook != item.codebook || a.dst == nullptr || a.src == nullptr || a.threads != 1)
    return compress_impl(a, item);
  const uint64_t budget = t_budget.get(ps.dtype_id, a.n, a.chunk_log2, a.capacity, 0);
  if (budget == kNoEscapeBudget) return compress_impl(a, item);  // stored, or nothing fits
  auto* f = static_cast<uint8_t*>(a.dst);
  FrameHeader h = ps.header;
  // Raw storage: the tables' member initializers would clear ~530 bytes
  // per page even where the batch's shared ones are used.
  alignas(cpu::EncodeTables) unsigned char own_storage[sizeof(cpu::EncodeTables)];
  const cpu::EncodeTables* tables = item.tables;
  if (ps.dynamic) {  // as compress_impl: the histogram warms streams 1 and 3
    uint64_t counts[256];
    cpu::WarmOutput warm;
    warm.res = f + ps.layout0.res_off;
    warm.codes = f + ps.layout0.code_off;
    cpu::exponent_histogram(a.dtype, a.src, a.n, counts, a.threads, &warm);
    Codebook cb;
    cb.dtype = a.dtype;
    cb.count = static_cast<uint8_t>(top_codebook(counts, cb.entries, codebook_limit(ps.dtype_id)));
    auto* own = new (own_storage) cpu::EncodeTables();
    cpu::build_encode_tables(cb, geometry_of(ps.dtype_id).exp_bits, own);
    tables = own;
    set_coded_fields(&h, 0, cb);
  }
  cpu::PageEncode job;
  job.dtype = a.dtype;
  job.src = static_cast<const uint8_t*>(a.src);
  job.n = a.n;
  job.chunk_log2 = a.chunk_log2;
  job.tables = tables;
  job.layout0 = &ps.layout0;
  job.frame = f;
  job.capacity = a.capacity;
  job.budget = budget;
  job.stream_output = item.stream_output;
  uint64_t escapes = 0, size = 0;
  bool streamed = false;
  // Past the escape budget (the page is stored) or on an error, the
  // general path does the page again from the start.
  if (cpu::encode_page(job, &escapes, &size, &streamed) != Status::ok) return compress_impl(a, item);
  zero_ranges(f, ps.gaps, ps.n_gaps);
  h.escape_count = escapes;
  h.frame_size = size;
  if (streamed) {
    alignas(16) uint8_t head[64];
    write_header(h, head);
    cpu::write_frame_bytes(f, head, 64, true);
  } else {
    write_header(h, f);
  }
  FrameOutcome out;
  out.frame_size = size;
  return out;
}

// The shape of args[0] when every item may take compress_page (they are
// still checked one by one there); false: none.
bool page_shape(const CompressArgs* args, size_t count, const BatchItem& item, PageShape* ps) {
  if (count == 0 || (item.codebook != nullptr && item.tables == nullptr)) return false;
  const CompressArgs& a = args[0];
  if (codec_of(a.dtype, a.mode) != Codec::nibble || a.checksum || a.codebook != item.codebook) return false;
  ps->dynamic = item.codebook == nullptr;
  CompressArgs unbooked = a;
  unbooked.codebook = nullptr;
  if (check_compress_args(unbooked) != Status::ok || a.n == 0) return false;
  ps->dtype = a.dtype;
  ps->dtype_id = static_cast<uint32_t>(a.dtype);
  ps->n = a.n;
  ps->chunk_log2 = a.chunk_log2;
  ps->layout0 = coded_layout(ps->dtype_id, a.n, a.chunk_log2, 0);
  if (ps->layout0.count_size > cpu::page_counts_max()) return false;
  ps->header = make_header(ps->dtype_id, a.n, a.chunk_log2, false);
  if (!ps->dynamic) set_coded_fields(&ps->header, 0, *item.codebook);
  Gap all[7];
  const int k = coded_gaps(ps->layout0, all);
  ps->n_gaps = 0;
  for (int g = 0; g < k; ++g)
    if (all[g].off < ps->layout0.count_off) ps->gaps[ps->n_gaps++] = all[g];
  return true;
}

// The cpu kernel table for decode (core/frame_skeleton.h). v2 block hashes
// are taken while the output is written and checked by verify(); the
// capacity codec (cpu/capacity_codec.cpp) checks rule 19 itself, and its
// result is held for verify().
struct CpuDecode {
  const BatchItem& item;
  std::vector<uint64_t> hashes;
  uint64_t* hash_out = nullptr;
  bool checked = false;  // the capacity codec ran rule 19
  FrameOutcome rule19;
  static const uint8_t* frame(const DecompressArgs& a) { return static_cast<const uint8_t*>(a.src); }
  static uint8_t* out(const DecompressArgs& a) { return static_cast<uint8_t*>(a.dst); }

  Status open(const DecompressArgs& a, FrameHeader* h) {
    const Status s = open_host_frame(a, h);  // rules 1-14 (gaps)
    if (s != Status::ok || codec_of(h->dtype, h->mode) == Codec::capacity) return s;
    if (a.verify_checksum && h->has_checksum()) {
      hashes.resize(h->n_checks());
      if (h->version >= 2) hash_out = hashes.data();
    }
    return s;
  }
  Status copy_stored(const DecompressArgs& a, const FrameHeader& h) {
    cpu::copy_hashed(frame(a) + 64, out(a), h.decoded_bytes(), hash_out, a.threads);
    return Status::ok;
  }
  Status decode(CodecTag<Codec::capacity>, const DecompressArgs& a, const FrameHeader& h) {
    rule19 = capacity_decompress_opened(a, h, {item.stream_output, item.next, item.next_size});  // opened once
    checked = true;
    return rule19.status == Status::checksum_mismatch ? Status::ok : rule19.status;
  }
  Status decode(CodecTag<Codec::e4m3>, const DecompressArgs& a, const FrameHeader& h) {
    return cpu::e4m3_decode(h, frame(a), out(a), hash_out, a.threads);  // FORMAT.md 4.7
  }
  Status decode(CodecTag<Codec::nibble>, const DecompressArgs& a, const FrameHeader& h) {
    return cpu::decode_coded(h, frame(a), out(a), hash_out, a.threads, {item.stream_output, item.caller_fences});
  }
  Status verify(const DecompressArgs& a, const FrameHeader& h, uint64_t* corrupt_block) {
    if (checked) {
      *corrupt_block = rule19.corrupt_block;
      return rule19.status;
    }
    // v1: XXH64 over the output afterwards.
    return hash_out != nullptr ? verify_block_hashes(h, frame(a), hash_out, corrupt_block)
                               : check_content_host(h, frame(a), out(a), corrupt_block);
  }
};

FrameOutcome decompress_impl(const DecompressArgs& a, const BatchItem& item = BatchItem()) {
  CpuDecode k{item, {}, nullptr, false, {}};
  return decompress_with(k, a);
}

// A prefetch the optimizer keeps: GCC treats a function that only
// prefetches as pure and drops calls to it; the empty asm is a side effect.
inline void prefetch_line(const void* p) {
  hwy::Prefetch(static_cast<const uint8_t*>(p));
#if defined(__GNUC__)
  asm volatile("" : : "r"(p) : "memory");
#endif
}

// Batch decode, one item ahead: prefetches the lines of the frame at
// a.src that a decode reads first or out of stream order (streams 4-6,
// read to validate escapes before the codes they patch, and the heads of
// streams 1 and 3), so their misses overlap the item before it instead of
// stalling this one. The header is read unchecked (decompress_impl checks
// it): a prefetch never faults, and every address is inside the source.
void prefetch_frame(const DecompressArgs& a) {
  const auto* f = static_cast<const uint8_t*>(a.src);
  if (f == nullptr || a.src_size < 64) return;
  const uint32_t dtype = f[5], log2 = f[7];
  if (codec_of(dtype, f[49]) != Codec::nibble || (f[6] & kFlagStored) != 0 ||
      log2 < kMinChunkLog2 || log2 > kMaxChunkLog2)
    return;
  const uint64_t n = load_le64(f + 8), escapes = load_le64(f + 16);
  if (n > a.src_size * 8 || escapes > n) return;
  const FrameLayout L = coded_layout(dtype, n, log2, escapes);
  // [off, off + len) clipped to the source, one prefetch per line (a tight
  // loop: this runs once per page, ~70 lines).
  const auto range = [&](uint64_t off, uint64_t len) {
    const uint64_t end = std::min(a.src_size, off + len);
    for (; off < end; off += 64) prefetch_line(f + off);
  };
  // bf16: the kernel prefetches stream 1 from kDecodePrefetchAhead elements on.
  range(L.res_off, std::min<uint64_t>(L.res_size, cpu::kDecodePrefetchAhead));
  range(L.code_off, std::min<uint64_t>(L.code_size, 2048));
  range(L.count_off, 1);
  range(L.pos_off, 1);
  range(L.exp_off, 1);
}

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  // Highway always has a fallback target, so the backend runs anywhere.
  bool available() const override { return true; }
  bool accepts(MemoryKind kind) const override {
    return kind == MemoryKind::host || kind == MemoryKind::managed || kind == MemoryKind::unknown;
  }
  FrameOutcome compress_frame(const CompressArgs& a) const override { return compress_impl(a); }
  FrameOutcome decompress_frame(const DecompressArgs& a) const override { return decompress_impl(a); }

  // Batched pages: items spread over threads (dynamic: pages differ in
  // escapes and size), each item coded on its worker alone. A batch past
  // the cache bypasses it as one large frame would (non-temporal stores),
  // and each worker fences once after its last item, not once per item
  // (each fence waits for the write-combining buffers to drain).
  void compress_batch(const CompressArgs* args, size_t count, int threads, FrameOutcome* out) const override {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += args[i].n * dtype_bytes(args[i].dtype);
    BatchItem item;
    item.stream_output = bytes >= cpu::stream_min_bytes();
    item.caller_fences = true;
    // One valid codebook for every item (the API passes one): checked and
    // made into tables once, not per page.
    cpu::EncodeTables shared;
    const Codebook* cb = count > 0 ? args[0].codebook : nullptr;
    bool one_codebook = cb != nullptr && codec_of(args[0].dtype, args[0].mode) == Codec::nibble &&
                        cb->dtype == args[0].dtype && validate_codebook(*cb) == Status::ok;
    for (size_t i = 1; i < count && one_codebook; ++i)
      one_codebook = args[i].codebook == cb && args[i].dtype == args[0].dtype;
    if (one_codebook) {
      cpu::build_encode_tables(*cb, geometry_of(static_cast<uint32_t>(args[0].dtype)).exp_bits, &shared);
      item.codebook = cb;
      item.tables = &shared;
    }
    PageShape shape;
    if (page_shape(args, count, item, &shape)) {
      run_items(count, cpu::batch_threads(threads, bytes, count), out,
                [&](size_t i) { return compress_page(args[i], item, shape); });
    } else {
      run_items(count, cpu::batch_threads(threads, bytes, count), out, [&](size_t i) {
        BatchItem it = item;
        if (i + 1 < count) it.next = args[i + 1].src;
        return compress_impl(args[i], it);
      });
    }
  }
  void decompress_batch(const DecompressArgs* args, size_t count, int threads, FrameOutcome* out) const override {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += args[i].capacity;
    BatchItem item;
    item.stream_output = bytes >= cpu::batch_decode_stream_min_bytes();
    item.caller_fences = true;
    run_items(count, cpu::batch_threads(threads, bytes, count), out, [&](size_t i) {
      if (i + 2 < count) prefetch_line(args[i + 2].src);  // its header, for the line below next time
      if (i + 1 < count) prefetch_frame(args[i + 1]);
      BatchItem it = item;
      if (i + 1 < count) {
        it.next = args[i + 1].src;
        it.next_size = args[i + 1].src_size;
      }
      return decompress_impl(args[i], it);
    });
  }

 private:
  template <class F>
  static void run_items(size_t count, int threads, FrameOutcome* out, const F& f) {
    const auto one = [&](size_t i) {
      try {
        out[i] = f(i);
      } catch (const std::bad_alloc&) {
        out[i] = FrameOutcome{};
        out[i].status = Status::out_of_memory;
      } catch (...) {
        out[i] = FrameOutcome{};
        out[i].status = Status::internal_error;
      }
    };
    if (threads <= 1) {
      for (size_t i = 0; i < count; ++i) one(i);
      cpu::flush_streams();
      return;
    }
    const auto n = static_cast<int64_t>(count);
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(dynamic, 8) nowait
      for (int64_t i = 0; i < n; ++i) one(static_cast<size_t>(i));
      cpu::flush_streams();  // this worker's items, before the join
    }
  }
};

}  // namespace

const Backend* cpu_backend() {
  static const CpuBackend instance;
  return &instance;
}

}  // namespace splitzip
