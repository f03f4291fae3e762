// SPDX-License-Identifier: Apache-2.0
// The roofline and the general-purpose peers, on the same input buffers:
// memcpy, zstd -1 / -3, lz4 (default), blosc byte-shuffle + lz4 / + zstd.
#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef SPLITZIP_BENCH_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef SPLITZIP_BENCH_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef SPLITZIP_BENCH_HAVE_BLOSC
#include <blosc.h>
#endif

#include "bench/bench_buffers.h"
#include "bench/bench_register.h"

namespace splitzip_bench {
namespace {

// ---- memcpy -----------------------------------------------------------------

// Copies in `threads` contiguous 64-byte-aligned slices, the same split the
// parallel codecs use, so "all threads" memcpy is their roofline.
void parallel_memcpy(uint8_t* dst, const uint8_t* src, uint64_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  uint64_t per = (bytes / static_cast<uint64_t>(threads) + 63) / 64 * 64;
  auto copy_part = [&](int i) {
    uint64_t begin = per * static_cast<uint64_t>(i);
    if (begin >= bytes) return;
    uint64_t end = begin + per < bytes ? begin + per : bytes;
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
  };
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int i = 0; i < threads; ++i) copy_part(i);
#else
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(copy_part, i);
  copy_part(0);
  for (std::thread& t : pool) t.join();
#endif
}

void run_memcpy(benchmark::State& st, const InputSpec& in, int threads) {
  std::string err;
  const uint8_t* src = input_data(in, &err);
  if (!src) {
    st.SkipWithError(err.c_str());
    return;
  }
  uint8_t* dst = scratch(Slot::decode_out, in.bytes());
  if (!dst) {
    st.SkipWithError("out of memory");
    return;
  }
  parallel_memcpy(dst, src, in.bytes(), threads);  // warm-up (and the OpenMP pool)
  for (auto _ : st) {
    parallel_memcpy(dst, src, in.bytes(), threads);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(in.bytes()));
  st.counters["ratio"] = 1.0;
  st.counters["threads"] = threads;
}

// ---- compressors ------------------------------------------------------------

// Returns the compressed size, 0 on failure (with *err set).
using CompressFn = std::function<uint64_t(const InputSpec&, const uint8_t* src, uint8_t* dst,
                                          uint64_t cap, int threads, std::string* err)>;
// Returns false on failure (with *err set).
using DecompressFn = std::function<bool(const InputSpec&, const uint8_t* src, uint64_t size,
                                        uint8_t* dst, int threads, std::string* err)>;

struct Peer {
  std::string name;  // BM_<name>_Compress
  bool threaded;     // runs at every thread count; otherwise only 1 thread
  std::function<uint64_t(const InputSpec&)> bound;  // 0: input too large for it
  CompressFn compress;
  DecompressFn decompress;
};

std::vector<Peer> peers() {
  std::vector<Peer> out;
#ifdef SPLITZIP_BENCH_HAVE_ZSTD
  for (int level : {1, 3}) {
    Peer p;
    p.name = "Zstd" + std::to_string(level);
    p.threaded = false;
    p.bound = [](const InputSpec& in) { return uint64_t{ZSTD_compressBound(in.bytes())}; };
    p.compress = [level](const InputSpec& in, const uint8_t* src, uint8_t* dst, uint64_t cap, int,
                         std::string* err) -> uint64_t {
      static thread_local ZSTD_CCtx* cctx = ZSTD_createCCtx();  // reused: no per-call setup in the loop
      size_t r = ZSTD_compressCCtx(cctx, dst, cap, src, in.bytes(), level);
      if (ZSTD_isError(r)) {
        *err = ZSTD_getErrorName(r);
        return 0;
      }
      return r;
    };
    p.decompress = [](const InputSpec& in, const uint8_t* src, uint64_t size, uint8_t* dst, int,
                      std::string* err) {
      static thread_local ZSTD_DCtx* dctx = ZSTD_createDCtx();
      size_t r = ZSTD_decompressDCtx(dctx, dst, in.bytes(), src, size);
      if (ZSTD_isError(r) || r != in.bytes()) {
        *err = ZSTD_isError(r) ? ZSTD_getErrorName(r) : "zstd: short output";
        return false;
      }
      return true;
    };
    out.push_back(p);
  }
#endif
#ifdef SPLITZIP_BENCH_HAVE_LZ4
  {
    Peer p;
    p.name = "Lz4";
    p.threaded = false;
    p.bound = [](const InputSpec& in) -> uint64_t {
      if (in.bytes() > LZ4_MAX_INPUT_SIZE) return 0;
      return static_cast<uint64_t>(LZ4_compressBound(static_cast<int>(in.bytes())));
    };
    p.compress = [](const InputSpec& in, const uint8_t* src, uint8_t* dst, uint64_t cap, int,
                    std::string* err) -> uint64_t {
      int r = LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                   static_cast<int>(in.bytes()), static_cast<int>(cap));
      if (r <= 0) *err = "LZ4_compress_default failed";
      return r > 0 ? static_cast<uint64_t>(r) : 0;
    };
    p.decompress = [](const InputSpec& in, const uint8_t* src, uint64_t size, uint8_t* dst, int,
                      std::string* err) {
      int r = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                  static_cast<int>(size), static_cast<int>(in.bytes()));
      if (r < 0 || static_cast<uint64_t>(r) != in.bytes()) {
        *err = "LZ4_decompress_safe failed";
        return false;
      }
      return true;
    };
    out.push_back(p);
  }
#endif
#ifdef SPLITZIP_BENCH_HAVE_BLOSC
  // Byte shuffle with typesize = element size. clevel 5 is blosc's default
  // for lz4; for zstd blosc maps clevel c to zstd level 2c-1, so 1 = zstd -1.
  struct BloscCfg {
    const char* name;
    const char* codec;
    int clevel;
  };
  for (BloscCfg c : {BloscCfg{"BloscLz4", "lz4", 5}, BloscCfg{"BloscZstd", "zstd", 1}}) {
    const char* compname = nullptr;
    if (blosc_compcode_to_compname(blosc_compname_to_compcode(c.codec), &compname) < 0) continue;
    Peer p;
    p.name = c.name;
    p.threaded = true;
    p.bound = [](const InputSpec& in) -> uint64_t {
      if (in.bytes() > static_cast<uint64_t>(BLOSC_MAX_BUFFERSIZE)) return 0;
      return in.bytes() + BLOSC_MAX_OVERHEAD;
    };
    p.compress = [c](const InputSpec& in, const uint8_t* src, uint8_t* dst, uint64_t cap,
                     int threads, std::string* err) -> uint64_t {
      int r = blosc_compress_ctx(c.clevel, BLOSC_SHUFFLE, splitzip::dtype_bytes(in.dtype),
                                 static_cast<size_t>(in.bytes()), src, dst, static_cast<size_t>(cap),
                                 c.codec, 0, threads);
      if (r <= 0) *err = "blosc_compress_ctx failed";
      return r > 0 ? static_cast<uint64_t>(r) : 0;
    };
    p.decompress = [](const InputSpec& in, const uint8_t* src, uint64_t, uint8_t* dst, int threads,
                      std::string* err) {
      int r = blosc_decompress_ctx(src, dst, static_cast<size_t>(in.bytes()), threads);
      if (r < 0 || static_cast<uint64_t>(r) != in.bytes()) {
        *err = "blosc_decompress_ctx failed";
        return false;
      }
      return true;
    };
    out.push_back(p);
  }
#endif
  return out;
}

std::string peer_key(const Peer& p, const InputSpec& in) { return "peer|" + p.name + "|" + in.name; }

// Untimed compress into the encode scratch, cached for the decompress benchmark.
bool compress_once(benchmark::State& st, const Peer& p, const InputSpec& in, const uint8_t* src,
                   int threads, uint8_t** dst, uint64_t* size) {
  uint64_t cap = p.bound(in);
  *dst = scratch(Slot::encode_out, cap);
  if (!*dst) {
    st.SkipWithError("out of memory");
    return false;
  }
  std::string err;
  *size = p.compress(in, src, *dst, cap, threads, &err);
  if (*size == 0) {
    st.SkipWithError(err.c_str());
    return false;
  }
  store_frame(peer_key(p, in), *dst, *size);
  return true;
}

void run_compress(benchmark::State& st, const Peer& p, const InputSpec& in, int threads) {
  std::string err;
  const uint8_t* src = input_data(in, &err);
  if (!src) {
    st.SkipWithError(err.c_str());
    return;
  }
  uint8_t* dst = nullptr;
  uint64_t size = 0;
  if (!compress_once(st, p, in, src, threads, &dst, &size)) return;
  uint64_t cap = p.bound(in);
  for (auto _ : st) {
    if (p.compress(in, src, dst, cap, threads, &err) == 0) {
      st.SkipWithError(err.c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(in.bytes()));
  st.counters["ratio"] = static_cast<double>(in.bytes()) / static_cast<double>(size);
  st.counters["threads"] = threads;
}

void run_decompress(benchmark::State& st, const Peer& p, const InputSpec& in, int threads) {
  std::string err;
  const uint8_t* src = input_data(in, &err);
  if (!src) {
    st.SkipWithError(err.c_str());
    return;
  }
  uint64_t size = 0;
  const uint8_t* frame = cached_frame(peer_key(p, in), &size);
  if (!frame) {
    uint8_t* f = nullptr;
    if (!compress_once(st, p, in, src, threads, &f, &size)) return;
    frame = f;
  }
  uint8_t* out = scratch(Slot::decode_out, in.bytes());
  if (!out) {
    st.SkipWithError("out of memory");
    return;
  }
  std::memset(out, 0xA5, static_cast<size_t>(in.bytes()));
  if (!p.decompress(in, frame, size, out, threads, &err)) {
    st.SkipWithError(err.c_str());
    return;
  }
  if (std::memcmp(out, src, static_cast<size_t>(in.bytes())) != 0) {
    st.SkipWithError("round trip differs from the input");
    return;
  }
  for (auto _ : st) {
    if (!p.decompress(in, frame, size, out, threads, &err)) {
      st.SkipWithError(err.c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(in.bytes()));
  st.counters["ratio"] = static_cast<double>(in.bytes()) / static_cast<double>(size);
  st.counters["threads"] = threads;
}

}  // namespace

void register_peers(const Config& cfg, const InputSpec& in) {
  for (int t : cfg.threads) {
    std::string name = "BM_Memcpy/" + bench_suffix(in, t);
    benchmark::RegisterBenchmark(name.c_str(), [in, t](benchmark::State& st) { run_memcpy(st, in, t); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  static const std::vector<Peer> all = peers();
  for (const Peer& p : all) {
    if (p.bound(in) == 0) continue;  // over the library's size limit
    std::vector<int> ts = p.threaded ? cfg.threads : std::vector<int>{1};
    std::string mid = std::string("/") + splitzip::dtype_name(in.dtype) + "/";
    for (int t : ts) {
      std::string name = "BM_" + p.name + "_Compress" + mid + bench_suffix(in, t);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&p, in, t](benchmark::State& st) { run_compress(st, p, in, t); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
    for (int t : ts) {
      std::string name = "BM_" + p.name + "_Decompress" + mid + bench_suffix(in, t);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&p, in, t](benchmark::State& st) { run_decompress(st, p, in, t); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace splitzip_bench
