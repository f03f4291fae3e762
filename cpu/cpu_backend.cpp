// SPDX-License-Identifier: Apache-2.0
// The "cpu" backend: whole frames on the host. The format core decides
// everything about a frame (escape budget, codebook order, layout, stored
// fallback, block checks, gaps, header, rules 1-14 outside the streams and
// 19); cpu/parallel_codec.cpp runs streams 1..6 and the block hashes on
// Highway SIMD kernels over OpenMP threads.
#include <cstring>
#include <new>
#include <vector>

#include "backends/registry.h"
#include "core/frame_rules.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/layout.h"
#include "cpu/capacity_codec.h"
#include "cpu/cpu_targets.h"
#include "cpu/e4m3_codec.h"
#include "cpu/parallel_codec.h"

namespace splitzip {
namespace {

// stream_output: the frame is one of a batch too large to stay in cache.
FrameOutcome compress_impl(const CompressArgs& a, bool stream_output = false) {
  FrameOutcome out;
  if (a.mode == Mode::capacity) return capacity_compress_frame(a);
  FramePlan p;
  if ((out.status = plan_frame(a, &p)) != Status::ok) return out;
  const auto* src = static_cast<const uint8_t*>(a.src);
  auto* f = static_cast<uint8_t*>(a.dst);
  FrameHeader h = make_header(p.dtype_id, a.n, a.chunk_log2, a.checksum);
  std::vector<uint64_t> hashes(p.n_checks);
  uint64_t* const hash_out = a.checksum ? hashes.data() : nullptr;
  Status s = Status::escape_overflow;
  if (p.budget != kNoEscapeBudget) {
    Codebook cb;
    if (a.codebook != nullptr) {
      cb = *a.codebook;
    } else {
      uint64_t counts[256];
      cpu::exponent_histogram(a.dtype, src, a.n, counts, a.threads);
      cb.dtype = a.dtype;
      cb.count = static_cast<uint8_t>(top_codebook(counts, cb.entries, codebook_limit(p.dtype_id)));
    }
    uint64_t escapes = 0;
    if (a.dtype == Dtype::fp8_e4m3) {  // FORMAT.md 4.7
      s = cpu::e4m3_encode(src, a.n, cb, p.budget, p.n_checks, f, hash_out, a.threads, &escapes);
    } else {
      cpu::CodedEncode job;
      job.dtype = a.dtype;
      job.src = src;
      job.n = a.n;
      job.chunk_log2 = a.chunk_log2;
      job.codebook = &cb;
      job.frame = f;
      job.capacity = a.capacity;
      job.budget = p.budget;
      job.n_checks = p.n_checks;
      job.hashes = hash_out;
      job.threads = a.threads;
      job.stream_output = stream_output;
      s = cpu::encode_coded(job, &escapes);
    }
    if (s == Status::ok) set_coded_fields(&h, escapes, cb);
  }
  if (s == Status::escape_overflow) {
    if ((out.status = plan_stored(a, p, &h)) != Status::ok) return out;
    cpu::copy_hashed(src, f + 64, p.bytes, hash_out, a.threads);
  } else if (s != Status::ok) {
    out.status = s;
    return out;
  }
  finish_frame(h, f, hashes.data());
  out.frame_size = h.frame_size;
  return out;
}

FrameOutcome decompress_impl(const DecompressArgs& a) {
  FrameOutcome out;
  const auto* f = static_cast<const uint8_t*>(a.src);
  auto* dst = static_cast<uint8_t*>(a.dst);
  FrameHeader h;
  if ((out.status = open_host_frame(a, &h)) != Status::ok) return out;  // rules 1-14 (gaps)
  if (h.mode == kModeCapacity) return capacity_decompress_frame(a);
  const uint64_t bytes = h.decoded_bytes();
  const bool verify = a.verify_checksum && h.has_checksum();
  // v2: block hashes taken while the output is written.
  std::vector<uint64_t> hashes(verify ? h.n_checks() : 0);
  uint64_t* const hash_out = verify && h.version >= 2 ? hashes.data() : nullptr;
  if (h.stored()) {
    cpu::copy_hashed(f + 64, dst, bytes, hash_out, a.threads);
  } else if (h.dtype == kDtypeE4M3) {  // FORMAT.md 4.7
    if ((out.status = cpu::e4m3_decode(h, f, dst, hash_out, a.threads)) != Status::ok) return out;
  } else if ((out.status = cpu::decode_coded(h, f, dst, hash_out, a.threads)) != Status::ok) {  // 14-18
    return out;
  }
  if (verify) {  // rule 19 (v1: XXH64 over the output afterwards)
    out.status = hash_out != nullptr ? verify_block_hashes(h, f, hash_out, &out.corrupt_block)
                                     : check_content_host(h, f, dst, &out.corrupt_block);
    if (out.status != Status::ok) return out;
  }
  out.frame_size = h.frame_size;
  out.decoded_size = bytes;
  return out;
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
  // escapes and size), each item coded on its worker alone.
  void compress_batch(const CompressArgs* args, size_t count, int threads, FrameOutcome* out) const override {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += args[i].n * dtype_bytes(args[i].dtype);
    // A batch past the cache: its frames bypass it as one large frame would.
    const bool stream = bytes >= cpu::stream_min_bytes();
    run_items(count, cpu::batch_threads(threads, bytes, count), out,
              [&](size_t i) { return compress_impl(args[i], stream); });
  }
  void decompress_batch(const DecompressArgs* args, size_t count, int threads, FrameOutcome* out) const override {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += args[i].capacity;
    // No non-temporal stores here: on 4096 pages of 16 KiB they measured
    // slower (7.1 against 8.9 GB/s, one thread), unlike the encoder's.
    run_items(count, cpu::batch_threads(threads, bytes, count), out,
              [&](size_t i) { return decompress_impl(args[i]); });
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
      return;
    }
    const auto n = static_cast<int64_t>(count);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
    for (int64_t i = 0; i < n; ++i) one(static_cast<size_t>(i));
  }
};

}  // namespace

const Backend* cpu_backend() {
  static const CpuBackend instance;
  return &instance;
}

}  // namespace splitzip
