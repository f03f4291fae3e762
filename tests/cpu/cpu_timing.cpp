// SPDX-License-Identifier: Apache-2.0
// splitzip_cpu_timing: the CPU backend's throughput against memcpy (and
// zstd -1 when built with libzstd) in one run, and the single- vs
// multi-thread crossover behind cpu::parallel_min_bytes(). A development
// tool, not a test: the timed numbers go into the report and README.
//
//   splitzip_cpu_timing [--mb 256] [--dtype bf16] [--data real|synth|heavy|file:PATH]
//                       [--reps 5] [--threads 1,2] [--zstd] [--threshold]
//                       [--target AVX2|SSE4|SSSE3|SCALAR] [--cpu-time]
//                       [--stream-min BYTES]  (non-temporal store threshold)
//                       [--cold]  (threshold runs after a pause: workers asleep)
//                       [--no-dynamic]  (skip the dynamic-codebook figures)
//                       [--frames KIB]  (the buffer as back-to-back frames of KIB)
//                       [--batch [--pages 4096] [--page-kib 16]]  (pages vs one buffer)
//                       [--checksum]  (with --frames / --batch: v2 block checksum on)
//                       [--mode capacity]  (capacity mode, FORMAT.md 4.6: encode and
//                                           decode without and with the checksum;
//                                           with --frames: capacity frames of KIB)
//
// --data file:PATH tiles the bytes of a raw file (of --dtype) to --mb MiB;
// with the file's own size, the kernel codes the very bytes a whole-process
// CLI run reads (bench/cli/run_cli_bench.py).
//
// --frames: one thread codes --mb MiB as consecutive frames of KIB each (as
// the streaming CLI and serving stacks do): memcpy of the whole buffer,
// encode with the offline codebook, encode with each frame's own dynamic
// top-16 codebook, the histogram alone, decode; alternating, best round.
// --batch: compress_batch / decompress_batch of --pages (4096) pages of
// --page-kib (16) KiB against compress / decompress of one buffer of the
// same total size, per thread count, alternating, best round.
//
// Each thread count prints memcpy, encode and decode, the same with the v2
// block checksum (encode with it, decode verifying it) and the ratio of the
// two, and the dynamic-codebook compress; all measured in turn, round by
// round, so a burst of background load hits them alike.
//
// Throughput is uncompressed bytes per second, best of --reps rounds (the
// machine is shared, so the best run is the least disturbed one).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cpu/cpu_targets.h"
#include "cpu/parallel_codec.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/e4m3_data.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

#ifdef SPLITZIP_TIMING_ZSTD
#include <zstd.h>
#endif

namespace {

using namespace splitzip;
using Clock = std::chrono::steady_clock;

// With --cpu-time, single-thread runs are timed by this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), which leaves out the time other tenants of a
// loaded machine hold the core; wall time otherwise.
bool g_cpu_time = false;

double now_seconds(bool cpu) {
  if (cpu) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

double best_seconds(int reps, const std::function<void()>& f, int threads = 1) {
  const bool cpu = g_cpu_time && threads == 1;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds(cpu);
    f();
    const double s = now_seconds(cpu) - t0;
    if (s < best) best = s;
  }
  return best;
}

// Real KV from layers 1-4 (layer 0 V repeats per token, so it is left out)
// tiled to the requested size, or synthetic gaussian_kv. Each dtype but
// bf16 comes from the f32 layer-02 tensors (fp8_e4m3: cast with a
// per-tensor scale).
std::vector<uint8_t> make_input(Dtype d, uint64_t n, const std::string& kind) {
  if (kind == "synth") return synth::generate(synth::Generator::gaussian_kv, d, n, 1234);
  if (kind == "heavy") {  // 1% escapes
    synth::Params p;
    p.escape_rate = 0.01;
    return synth::generate(synth::Generator::heavy_tail, d, n, 1234, p);
  }
  std::vector<uint8_t> pool;
  if (kind.rfind("file:", 0) == 0) {  // a raw file of d (the CLI bench's input): the same bytes in memory
    std::FILE* fp = std::fopen(kind.c_str() + 5, "rb");
    if (!fp) {
      std::fprintf(stderr, "cannot open %s\n", kind.c_str() + 5);
      std::exit(1);
    }
    uint8_t buf[1 << 16];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, fp)) > 0;) pool.insert(pool.end(), buf, buf + got);
    std::fclose(fp);
    pool.resize(pool.size() / dtype_bytes(d) * dtype_bytes(d));
  } else if (kind != "real") {
    std::fprintf(stderr, "--data: real, synth, heavy or file:PATH\n");
    std::exit(2);
  } else if (d == Dtype::bf16) {
    for (const auto& name : test::bf16_data_files()) {
      if (name.rfind("layer00", 0) == 0) continue;
      const auto b = test::load_data_file(name);
      pool.insert(pool.end(), b.begin(), b.end());
    }
  } else if (d == Dtype::fp8_e4m3) {  // the f32 tensors cast as vLLM does (scale amax/448)
    for (const auto& in : test::real_inputs(Dtype::fp32)) {
      std::vector<float> f(in.n);
      std::memcpy(f.data(), in.bytes.data(), in.n * 4);
      const auto b = test::e4m3_scaled(f.data(), in.n);
      pool.insert(pool.end(), b.begin(), b.end());
    }
  } else {
    for (const auto& in : test::real_inputs(d)) pool.insert(pool.end(), in.bytes.begin(), in.bytes.end());
  }
  if (pool.empty()) {
    std::fprintf(stderr, "no input data found (real data missing, or an empty file); use --data synth\n");
    std::exit(1);
  }
  const uint64_t bytes = n * dtype_bytes(d);
  std::vector<uint8_t> out(bytes);
  for (uint64_t off = 0; off < bytes; off += pool.size())
    std::memcpy(out.data() + off, pool.data(), std::min<uint64_t>(pool.size(), bytes - off));
  return out;
}

// memcpy split over t threads (the baseline at the codec's thread count).
void parallel_memcpy(uint8_t* dst, const uint8_t* src, uint64_t bytes, int t) {
#pragma omp parallel for num_threads(t) schedule(static)
  for (int k = 0; k < t; ++k) {
    const uint64_t lo = bytes / t * k, hi = k + 1 == t ? bytes : bytes / t * (k + 1);
    std::memcpy(dst + lo, src + lo, hi - lo);
  }
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

struct Args {
  uint64_t mb = 256;
  Dtype dtype = Dtype::bf16;
  std::string data = "real";
  int reps = 5;
  std::vector<int> threads = {1, 2};
  bool zstd = false;
  bool threshold = false;
  bool cold = false;
  bool dynamic = true;
  bool checksum = false;
  uint64_t frame_kib = 0;  // --frames
  bool batch = false;
  uint64_t pages = 4096, page_kib = 16;
  std::string target;
  Mode mode = Mode::fast;  // --mode capacity: the throughput run codes capacity frames
};

void run_throughput(const Args& a) {
  const uint32_t eb = dtype_bytes(a.dtype);
  const uint64_t n = a.mb * (uint64_t{1} << 20) / eb;
  const uint64_t bytes = n * eb;
  const auto src = make_input(a.dtype, n, a.data);
  std::vector<uint8_t> frame(compress_bound(a.dtype, n)), out(bytes);
  std::memset(frame.data(), 0, frame.size());
  std::memset(out.data(), 0, out.size());
  Codebook cb;
  const void* bufs[1] = {src.data()};
  const uint64_t ns[1] = {n};
  calibrate(a.dtype, bufs, ns, 1, &cb);  // the "offline" codebook

  const bool cap = a.mode == Mode::capacity;
  std::printf("dtype %s, %.0f MiB, data %s, target %s, %s mode, best of %d\n", dtype_name(a.dtype),
              bytes / 1048576.0, a.data.c_str(), cpu::target_name(cpu::active_target()), cap ? "capacity" : "fast",
              a.reps);
  const double gb = bytes / 1e9;
  for (int t : a.threads) {
    CompressOptions co;
    co.backend = "cpu";
    co.threads = t;
    co.codebook = &cb;
    co.checksum = false;  // the plain figures: the checksum is on by default
    if (cap) {            // no codebook
      co.mode = Mode::capacity;
      co.codebook = nullptr;
    }
    CompressOptions co_sum = co;  // the same with the v2 block checksum
    co_sum.checksum = true;
    DecompressOptions dopt;
    dopt.backend = "cpu";
    dopt.threads = t;
    // Frames with and without the checksum, checked once before timing.
    std::vector<uint8_t> frame_sum(frame.size());
    Result rc = compress(a.dtype, src.data(), n, frame.data(), frame.size(), co);
    const Result rc_sum = compress(a.dtype, src.data(), n, frame_sum.data(), frame_sum.size(), co_sum);
    if (!rc.ok() || !rc_sum.ok()) {
      std::printf("compress failed: %s\n", status_name(rc.ok() ? rc_sum.status : rc.status));
      std::exit(1);
    }
    const uint64_t fsize = rc.size, fsize_sum = rc_sum.size;
    FrameInfo info;
    frame_info(frame.data(), fsize, &info);
    for (const auto* f : {&frame, &frame_sum}) {
      const Result rd = decompress(f->data(), f == &frame ? fsize : fsize_sum, out.data(), out.size(), dopt);
      if (!rd.ok() || std::memcmp(out.data(), src.data(), bytes) != 0) {
        std::printf("decompress failed or differs: %s\n", status_name(rd.status));
        std::exit(1);
      }
    }
    // Every measurement once per round, in turn, so background load hits
    // all alike; each figure is the best round.
    enum { kMem, kEnc, kEncSum, kDec, kDecSum, kDyn, kHist, kCount };
    double best[kCount];
    for (double& b : best) b = 1e30;
    uint64_t counts[256];
    for (int r = 0; r < a.reps; ++r) {
      // memcpy with the same thread count, on the same buffers.
      best[kMem] = std::min(best[kMem], best_seconds(1, [&] { parallel_memcpy(out.data(), src.data(), bytes, t); }, t));
      best[kEnc] = std::min(best[kEnc], best_seconds(1, [&] {
        rc = compress(a.dtype, src.data(), n, frame.data(), frame.size(), co);
      }, t));
      best[kEncSum] = std::min(best[kEncSum], best_seconds(1, [&] {
        rc = compress(a.dtype, src.data(), n, frame_sum.data(), frame_sum.size(), co_sum);
      }, t));
      best[kDec] = std::min(best[kDec], best_seconds(1, [&] {
        rc = decompress(frame.data(), fsize, out.data(), out.size(), dopt);
      }, t));
      best[kDecSum] = std::min(best[kDecSum], best_seconds(1, [&] {
        rc = decompress(frame_sum.data(), fsize_sum, out.data(), out.size(), dopt);  // verifies
      }, t));
      if (!rc.ok()) {
        std::printf("checksummed decompress failed: %s\n", status_name(rc.status));
        std::exit(1);
      }
      if (a.dynamic && !cap) {
        CompressOptions dyn = co;
        dyn.codebook = nullptr;  // dynamic top-16: histogram + encode
        best[kDyn] = std::min(best[kDyn], best_seconds(1, [&] {
          rc = compress(a.dtype, src.data(), n, frame.data(), frame.size(), dyn);
        }, t));
        best[kHist] = std::min(best[kHist], best_seconds(1, [&] {
          cpu::exponent_histogram(a.dtype, src.data(), n, counts, t);
        }, t));
      }
    }
    std::printf("threads %d: memcpy %.2f GB/s | encode %.2f GB/s (%.2fx memcpy) | decode %.2f GB/s "
                "(%.2fx) | ratio %.4f, %s %.4f%%\n",
                t, gb / best[kMem], gb / best[kEnc], best[kMem] / best[kEnc], gb / best[kDec],
                best[kMem] / best[kDec], double(bytes) / double(fsize), cap ? "exponent bytes" : "escapes",
                100.0 * double(info.escape_count) / double(cap ? bytes : n));  // capacity: header 16..23 = stream 9
    std::printf("  checksum on: encode %.2f GB/s (%.2fx memcpy, %.3fx checksum-off) | decode+verify %.2f GB/s "
                "(%.2fx memcpy, %.3fx checksum-off)\n",
                gb / best[kEncSum], best[kMem] / best[kEncSum], best[kEnc] / best[kEncSum], gb / best[kDecSum],
                best[kMem] / best[kDecSum], best[kDec] / best[kDecSum]);
    if (a.dynamic && !cap)
      std::printf("  dynamic top-16 compress %.2f GB/s (%.2fx the offline-codebook time); "
                  "cpu histogram alone %.2f GB/s\n",
                  gb / best[kDyn], best[kDyn] / best[kEnc], gb / best[kHist]);
  }
#ifdef SPLITZIP_TIMING_ZSTD
  if (a.zstd) {
    std::vector<uint8_t> z(ZSTD_compressBound(bytes));
    size_t zsize = 0;
    const int zreps = a.reps < 3 ? a.reps : 3;
    const double t_zc = best_seconds(zreps, [&] {
      zsize = ZSTD_compress(z.data(), z.size(), src.data(), bytes, 1);
    });
    const double t_zd = best_seconds(zreps, [&] {
      ZSTD_decompress(out.data(), out.size(), z.data(), zsize);
    });
    std::printf("zstd -1 (1 thread): compress %.3f GB/s, decompress %.3f GB/s, ratio %.4f\n", gb / t_zc,
                gb / t_zd, double(bytes) / double(zsize));
  }
#endif
}

void run_frames(const Args& a) {
  const uint32_t eb = dtype_bytes(a.dtype);
  const uint64_t n = a.mb * (uint64_t{1} << 20) / eb, bytes = n * eb;
  const uint64_t fn = a.frame_kib * 1024 / eb;  // elements per frame
  const auto src = make_input(a.dtype, n, a.data);
  std::vector<uint8_t> frames(compress_bound(a.dtype, n) + (n / fn + 1) * compress_bound(a.dtype, 0));
  std::vector<uint8_t> out(bytes);
  std::memset(frames.data(), 0, frames.size());
  std::memset(out.data(), 0, out.size());
  Codebook cb;
  const void* bufs[1] = {src.data()};
  const uint64_t ns[1] = {n};
  calibrate(a.dtype, bufs, ns, 1, &cb);
  std::vector<uint64_t> sizes;
  auto encode_all = [&](const Codebook* book) {
    sizes.clear();
    uint64_t off = 0;
    CompressOptions o;
    o.backend = "cpu";
    o.threads = 1;
    o.codebook = book;
    o.checksum = a.checksum;
    if (a.mode == Mode::capacity) {  // no codebook: per-block Huffman tables
      o.mode = Mode::capacity;
      o.codebook = nullptr;
    }
    for (uint64_t i = 0; i < n; i += fn) {
      const uint64_t k = std::min(fn, n - i);
      const Result r = compress(a.dtype, src.data() + i * eb, k, frames.data() + off, frames.size() - off, o);
      if (!r.ok()) {
        std::printf("compress failed: %s\n", status_name(r.status));
        std::exit(1);
      }
      sizes.push_back(r.size);
      off += r.size;
    }
    return off;
  };
  auto decode_all = [&] {
    DecompressOptions o;
    o.backend = "cpu";
    o.threads = 1;
    uint64_t off = 0, pos = 0;
    for (uint64_t s : sizes) {
      const Result r = decompress(frames.data() + off, s, out.data() + pos, out.size() - pos, o);
      if (!r.ok()) {
        std::printf("decompress failed: %s\n", status_name(r.status));
        std::exit(1);
      }
      off += s;
      pos += r.size;
    }
  };
  if (a.mode == Mode::capacity) {
    // As the CLI codes --mode capacity: frame by frame, one thread; memcpy,
    // encode and decode in turn each round, the best round of each.
    const uint64_t cap_bytes = encode_all(nullptr);
    decode_all();
    if (std::memcmp(out.data(), src.data(), bytes) != 0) {
      std::printf("capacity round trip differs\n");
      std::exit(1);
    }
    double mem = 1e30, enc = 1e30, dec = 1e30;
    for (int r = 0; r < a.reps; ++r) {
      mem = std::min(mem, best_seconds(1, [&] { std::memcpy(out.data(), src.data(), bytes); }));
      enc = std::min(enc, best_seconds(1, [&] { encode_all(nullptr); }));
      dec = std::min(dec, best_seconds(1, [&] { decode_all(); }));
    }
    const double gb = bytes / 1e9;
    std::printf("dtype %s, %.0f MiB as %llu KiB frames%s, data %s, target %s, capacity mode, 1 thread, best of %d\n",
                dtype_name(a.dtype), bytes / 1048576.0, static_cast<unsigned long long>(a.frame_kib),
                a.checksum ? " with checksum" : "", a.data.c_str(), cpu::target_name(cpu::active_target()), a.reps);
    std::printf("memcpy %.2f GB/s (%.4f s) | capacity encode %.2f GB/s (%.4f s, %.2fx memcpy) | decode %.2f GB/s "
                "(%.4f s, %.2fx memcpy) | ratio %.4f\n",
                gb / mem, mem, gb / enc, enc, mem / enc, gb / dec, dec, mem / dec, double(bytes) / double(cap_bytes));
    return;
  }
  const uint64_t cal_bytes = encode_all(&cb);
  decode_all();
  if (std::memcmp(out.data(), src.data(), bytes) != 0) {
    std::printf("round trip differs\n");
    std::exit(1);
  }
  const uint64_t dyn_bytes = encode_all(nullptr);
  decode_all();
  if (std::memcmp(out.data(), src.data(), bytes) != 0) {
    std::printf("dynamic round trip differs\n");
    std::exit(1);
  }
  enum { kMem, kCal, kDyn, kHist, kDec, kCount };
  double best[kCount];
  for (double& b : best) b = 1e30;
  uint64_t counts[256];
  for (int r = 0; r < a.reps; ++r) {
    best[kMem] = std::min(best[kMem], best_seconds(1, [&] { std::memcpy(out.data(), src.data(), bytes); }));
    best[kCal] = std::min(best[kCal], best_seconds(1, [&] { encode_all(&cb); }));
    best[kDyn] = std::min(best[kDyn], best_seconds(1, [&] { encode_all(nullptr); }));
    best[kHist] = std::min(best[kHist], best_seconds(1, [&] {
      for (uint64_t i = 0; i < n; i += fn) cpu::exponent_histogram(a.dtype, src.data() + i * eb, std::min(fn, n - i), counts, 1);
    }));
    best[kDec] = std::min(best[kDec], best_seconds(1, [&] { decode_all(); }));  // dynamic frames
  }
  const double gb = bytes / 1e9;
  std::printf("dtype %s, %.0f MiB as %llu KiB frames%s, data %s, target %s, 1 thread, best of %d\n",
              dtype_name(a.dtype), bytes / 1048576.0, static_cast<unsigned long long>(a.frame_kib),
              a.checksum ? " with checksum" : "", a.data.c_str(), cpu::target_name(cpu::active_target()), a.reps);
  std::printf("memcpy %.2f GB/s | calibrated encode %.2f GB/s (%.2fx memcpy) | dynamic encode %.2f GB/s "
              "(%.3fx calibrated) | histogram alone %.2f GB/s | decode %.2f GB/s (%.2fx memcpy)\n",
              gb / best[kMem], gb / best[kCal], best[kMem] / best[kCal], gb / best[kDyn], best[kCal] / best[kDyn],
              gb / best[kHist], gb / best[kDec], best[kMem] / best[kDec]);
  std::printf("ratio: calibrated %.4f, dynamic %.4f\n", double(bytes) / double(cal_bytes),
              double(bytes) / double(dyn_bytes));
}

void run_batch(const Args& a) {
  const uint32_t eb = dtype_bytes(a.dtype);
  const uint64_t pn = a.page_kib * 1024 / eb, pages = a.pages, n = pn * pages, bytes = n * eb;
  const auto src = make_input(a.dtype, n, a.data);
  const uint64_t pbound = compress_bound(a.dtype, pn);
  std::vector<uint8_t> one(compress_bound(a.dtype, n)), paged(pbound * pages), out(bytes);
  std::memset(one.data(), 0, one.size());
  std::memset(paged.data(), 0, paged.size());
  std::memset(out.data(), 0, out.size());
  std::printf("dtype %s, %llu pages of %llu KiB (%.0f MiB) vs one buffer, data %s, target %s, %s codebook%s, "
              "best of %d\n",
              dtype_name(a.dtype), static_cast<unsigned long long>(pages),
              static_cast<unsigned long long>(a.page_kib), bytes / 1048576.0, a.data.c_str(),
              cpu::target_name(cpu::active_target()), a.dynamic ? "dynamic" : "calibrated",
              a.checksum ? ", checksum" : "", a.reps);
  Codebook cb;
  const void* bufs[1] = {src.data()};
  const uint64_t ns[1] = {n};
  calibrate(a.dtype, bufs, ns, 1, &cb);
  std::vector<CompressItem> citems(pages);
  std::vector<DecompressItem> ditems(pages);
  std::vector<Result> res(pages);
  for (uint64_t p = 0; p < pages; ++p) citems[p] = {src.data() + p * pn * eb, pn, paged.data() + p * pbound, pbound};
  const double gb = bytes / 1e9;
  for (int t : a.threads) {
    CompressOptions co;
    co.backend = "cpu";
    co.threads = t;
    co.codebook = a.dynamic ? nullptr : &cb;
    co.checksum = a.checksum;
    DecompressOptions dopt;
    dopt.backend = "cpu";
    dopt.threads = t;
    Result r1 = compress(a.dtype, src.data(), n, one.data(), one.size(), co);
    if (!r1.ok() || compress_batch(a.dtype, citems.data(), pages, res.data(), co) != Status::ok) {
      std::printf("compress failed\n");
      std::exit(1);
    }
    uint64_t paged_bytes = 0;
    for (uint64_t p = 0; p < pages; ++p) {
      ditems[p] = {paged.data() + p * pbound, res[p].size, out.data() + p * pn * eb, pn * eb};
      paged_bytes += res[p].size;
    }
    if (decompress_batch(ditems.data(), pages, res.data(), dopt) != Status::ok ||
        std::memcmp(out.data(), src.data(), bytes) != 0) {
      std::printf("batch round trip failed\n");
      std::exit(1);
    }
    enum { kMem, kEnc1, kEncB, kDec1, kDecB, kCount };
    double best[kCount];
    for (double& b : best) b = 1e30;
    for (int r = 0; r < a.reps; ++r) {
      best[kMem] = std::min(best[kMem], best_seconds(1, [&] { parallel_memcpy(out.data(), src.data(), bytes, t); }, t));
      best[kEnc1] = std::min(best[kEnc1], best_seconds(1, [&] {
        r1 = compress(a.dtype, src.data(), n, one.data(), one.size(), co);
      }, t));
      best[kEncB] = std::min(best[kEncB], best_seconds(1, [&] {
        compress_batch(a.dtype, citems.data(), pages, res.data(), co);
      }, t));
      best[kDec1] = std::min(best[kDec1], best_seconds(1, [&] {
        decompress(one.data(), r1.size, out.data(), out.size(), dopt);
      }, t));
      best[kDecB] = std::min(best[kDecB], best_seconds(1, [&] {
        decompress_batch(ditems.data(), pages, res.data(), dopt);
      }, t));
    }
    std::printf("threads %d: memcpy %.2f GB/s | encode one %.2f GB/s, batch %.2f GB/s (%.3fx one) | "
                "decode one %.2f GB/s, batch %.2f GB/s (%.3fx one) | ratio one %.4f, pages %.4f\n",
                t, gb / best[kMem], gb / best[kEnc1], gb / best[kEncB], best[kEnc1] / best[kEncB], gb / best[kDec1],
                gb / best[kDecB], best[kDec1] / best[kDecB], double(bytes) / double(r1.size),
                double(bytes) / double(paged_bytes));
  }
}

// For doubling sizes: encode/decode time with 1 thread against 2+ threads.
// The two thread counts alternate run by run, so background load hits both
// alike; each figure is the best of --reps rounds (31 at least).
void run_threshold(const Args& a) {
  const uint32_t eb = dtype_bytes(a.dtype);
  const int many = a.threads.back() > 1 ? a.threads.back() : 2;
  const int rounds = a.reps < 31 ? 31 : a.reps;
  std::printf("size_KiB enc_1t_us enc_%dt_us speedup dec_1t_us dec_%dt_us speedup\n", many, many);
  for (uint64_t kib = 16; kib <= 64 * 1024; kib *= 2) {
    const uint64_t n = kib * 1024 / eb, bytes = n * eb;
    const auto src = make_input(a.dtype, n, a.data);
    std::vector<uint8_t> frame(compress_bound(a.dtype, n)), out(bytes);
    Codebook cb;
    const void* bufs[1] = {src.data()};
    const uint64_t ns[1] = {n};
    calibrate(a.dtype, bufs, ns, 1, &cb);
    // Enough repetitions for ~5 ms per measurement; --cold: one call after
    // a 5 ms pause, so OpenMP's idle workers have gone to sleep.
    const int inner = a.cold ? 1 : static_cast<int>(std::max<uint64_t>(1, (16u << 20) / bytes));
    CompressOptions co[2];
    DecompressOptions dopt[2];
    for (int k = 0; k < 2; ++k) {
      co[k].backend = dopt[k].backend = "cpu";
      co[k].codebook = &cb;
      co[k].threads = dopt[k].threads = k == 0 ? 1 : many;
    }
    uint64_t fsize = compress(a.dtype, src.data(), n, frame.data(), frame.size(), co[0]).size;
    double te[2] = {1e30, 1e30}, td[2] = {1e30, 1e30};
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) {
        if (a.cold) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        te[k] = std::min(te[k], best_seconds(1, [&] {
                  for (int i = 0; i < inner; ++i)
                    fsize = compress(a.dtype, src.data(), n, frame.data(), frame.size(), co[k]).size;
                }, 2) / inner);
        if (a.cold) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        td[k] = std::min(td[k], best_seconds(1, [&] {
                  for (int i = 0; i < inner; ++i) decompress(frame.data(), fsize, out.data(), out.size(), dopt[k]);
                }, 2) / inner);
      }
    }
    std::printf("%8llu %9.1f %9.1f %7.2f %9.1f %9.1f %7.2f\n", static_cast<unsigned long long>(kib),
                te[0] * 1e6, te[1] * 1e6, te[0] / te[1], td[0] * 1e6, td[1] * 1e6, td[0] / td[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--mb") a.mb = std::strtoull(next(), nullptr, 10);
    else if (k == "--dtype") {
      if (!parse_dtype(next(), &a.dtype)) return 2;
    } else if (k == "--data") a.data = next();
    else if (k == "--reps") a.reps = std::atoi(next());
    else if (k == "--threads") a.threads = parse_list(next());
    else if (k == "--zstd") a.zstd = true;
    else if (k == "--threshold") a.threshold = true;
    else if (k == "--cold") a.cold = true;
    else if (k == "--no-dynamic") a.dynamic = false;
    else if (k == "--checksum") a.checksum = true;
    else if (k == "--frames") a.frame_kib = std::strtoull(next(), nullptr, 10);
    else if (k == "--batch") a.batch = true;
    else if (k == "--pages") a.pages = std::strtoull(next(), nullptr, 10);
    else if (k == "--page-kib") a.page_kib = std::strtoull(next(), nullptr, 10);
    else if (k == "--cpu-time") g_cpu_time = true;
    else if (k == "--stream-min") cpu::set_stream_min_bytes(std::strtoull(next(), nullptr, 10));
    else if (k == "--target") a.target = next();
    else if (k == "--mode") {
      const std::string m = next();
      if (m != "capacity" && m != "fast") {
        std::fprintf(stderr, "--mode: fast or capacity\n");
        return 2;
      }
      a.mode = m == "capacity" ? Mode::capacity : Mode::fast;
    }
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (!a.target.empty()) {
    for (int64_t t : cpu::runnable_targets())
      if (a.target == cpu::target_name(t)) cpu::force_target(t);
    if (a.target != cpu::target_name(cpu::active_target())) {
      std::fprintf(stderr, "target %s is not runnable here\n", a.target.c_str());
      return 2;
    }
  }
  if (a.frame_kib != 0) {
    run_frames(a);
  } else if (a.batch) {
    run_batch(a);
  } else if (a.threshold) {
    run_threshold(a);
  } else {
    run_throughput(a);
  }
  return 0;
}
