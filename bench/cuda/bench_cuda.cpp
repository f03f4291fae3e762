// SPDX-License-Identifier: Apache-2.0
// GPU throughput of the stream-ordered CUDA API against the device-to-device
// copy roofline measured in the same run, and optionally nvCOMP.
//
//   splitzip_bench_cuda [--out-json F] [--out-md F] [--iters N] [--quick] [--no-nvcomp | --only-nvcomp]
//
// Order: bf16 at the paper's size first, then per-layer / per-page buffer
// sizes (64 KiB - 4 MiB, single calls and one batched call), then the other
// dtypes. The JSON (and markdown) files are rewritten after every workload,
// so a run cut short by a timeout still leaves every finished point.
// nVCOMP is off the main path: --only-nvcomp runs just the nvCOMP side of
// the workloads marked for it (scripts/gpu_check.sh runs it last).
//
// Timing: CUDA events around each call on one stream, warm-up first, median
// of N. GB/s counts uncompressed bytes (input for encode, output for
// decode), 1 GB = 1e9 bytes. Roofline: a D2D cudaMemcpy of the workload's
// size gives copy bandwidth B (bytes read + written per second); the ideal
// time of a direction is (bytes read + bytes written) / B, i.e. input +
// frame for encode and frame + output for decode; "% roofline" = ideal /
// measured. Every workload's frames are decoded and compared with the input.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/cuda/nvcomp_runner.h"
#include "splitzip/splitzip_cuda.hpp"
#include "tests/support/e4m3_data.h"
#include "tests/support/synthetic.h"

using namespace splitzip;

namespace {

#define CK(expr)                                                                          \
  do {                                                                                    \
    const cudaError_t e_ = (expr);                                                        \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "bench_cuda: %s: %s (line %d)\n", #expr, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

std::string data_dir() {
  const char* env = std::getenv("SPLITZIP_DATA_DIR");
  return env != nullptr && env[0] ? env : SPLITZIP_DATA_DIR;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "bench_cuda: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  uint8_t buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + got);
  std::fclose(f);
  return out;
}

struct DevMem {
  void* p = nullptr;
  explicit DevMem(uint64_t bytes) { CK(cudaMalloc(&p, bytes ? bytes : 16)); }
  ~DevMem() { cudaFree(p); }
  uint8_t* get() const { return static_cast<uint8_t*>(p); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Median milliseconds of f() over iters runs after warm-up, timed by events.
template <class F>
double time_ms(cudaStream_t s, int iters, F&& f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int i = 0; i < iters + 2; ++i) {
    CK(cudaEventRecord(a, s));
    f();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (i >= 2) ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(ms);
}

template <class F>
double time_graph_ms(cudaStream_t s, int iters, F&& enqueue) {
  cudaGraph_t g;
  cudaGraphExec_t x;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  enqueue();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  const double ms = time_ms(s, iters, [&] { CK(cudaGraphLaunch(x, s)); });
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  return ms;
}

// ---------------------------------------------------------------- workloads

struct Workload {
  Workload(std::string name_, std::string what_, Dtype dtype_, uint64_t n_)
      : name(std::move(name_)), what(std::move(what_)), dtype(dtype_), n(n_) {}
  std::string name;
  std::string what;
  Dtype dtype = Dtype::bf16;
  uint64_t n = 0;
  std::vector<uint8_t> host;
  uint32_t batch = 0;   // >0: compress_batch_async with this many equal items
  bool nvcomp = false;  // also run nvCOMP on it (when available)
};

// Generates n elements with all cores (element i depends only on (seed, i)).
std::vector<uint8_t> generate_parallel(synth::Generator g, Dtype d, uint64_t n, uint64_t seed, double rate) {
  std::vector<uint8_t> out(n * dtype_bytes(d));
  synth::Params p;
  p.escape_rate = rate;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  const uint64_t per = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const uint64_t first = std::min<uint64_t>(n, per * t), count = std::min<uint64_t>(per, n - first);
    pool.emplace_back([&, first, count] {
      if (count) synth::generate_range(g, d, n, seed, p, first, count, out.data() + first * dtype_bytes(d));
    });
  }
  for (auto& th : pool) th.join();
  return out;
}

// The bundled real KV tiled up to `bytes` (bf16 files, or the float32 pair
// converted to dtype).
std::vector<uint8_t> tiled_real(Dtype d, uint64_t bytes) {
  std::vector<uint8_t> unit;
  if (d == Dtype::bf16) {
    for (int layer = 0; layer <= 4; ++layer)
      for (const char* kv : {"k", "v"}) {
        char name[64];
        std::snprintf(name, sizeof name, "/layer%02d_%s.bf16", layer, kv);
        const auto f = read_file(data_dir() + name);
        unit.insert(unit.end(), f.begin(), f.end());
      }
  } else {
    for (const char* name : {"/layer02_k.f32", "/layer02_v.f32"}) {
      const auto raw = read_file(data_dir() + name);
      std::vector<float> f(raw.size() / 4);
      std::memcpy(f.data(), raw.data(), f.size() * 4);
      std::vector<uint8_t> conv(f.size() * dtype_bytes(d));
      if (d == Dtype::fp8_e4m3) conv = test::e4m3_scaled(f.data(), f.size());  // vLLM's cast: scale amax/448
      else synth::convert_f32(f.data(), f.size(), d, conv.data());
      unit.insert(unit.end(), conv.begin(), conv.end());
    }
  }
  std::vector<uint8_t> out(bytes);
  for (uint64_t off = 0; off < bytes; off += unit.size())
    std::memcpy(out.data() + off, unit.data(), std::min<uint64_t>(unit.size(), bytes - off));
  return out;
}

// ---------------------------------------------------------------- results

struct Row {
  std::string name, what, dtype;
  uint64_t n = 0, in_bytes = 0, frame_bytes = 0;
  uint32_t batch = 0;
  double copy_ms = 0, copy_gbps = 0;
  double enc_ms = 0, dec_ms = 0, enc_graph_ms = 0, dec_graph_ms = 0;
  double enc_gbps = 0, dec_gbps = 0, enc_graph_gbps = 0, dec_graph_gbps = 0;
  double enc_roof = 0, dec_roof = 0;
  bool roundtrip_ok = false;
  std::vector<bench::NvcompResult> nvcomp;
};

Codebook device_codebook(Dtype d, const uint8_t* d_src, uint64_t n, cudaStream_t s) {
  DevMem counts(256 * 8), cb(sizeof(Codebook));
  CK(cudaMemsetAsync(counts.get(), 0, 256 * 8, s));
  if (cuda::histogram_async(d, d_src, n, reinterpret_cast<uint64_t*>(counts.get()), s) != Status::ok ||
      cuda::codebook_from_histogram_async(d, reinterpret_cast<uint64_t*>(counts.get()),
                                          reinterpret_cast<Codebook*>(cb.get()), s) != Status::ok) {
    std::fprintf(stderr, "bench_cuda: calibration failed\n");
    std::exit(1);
  }
  Codebook out;
  CK(cudaMemcpyAsync(&out, cb.get(), sizeof out, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  return out;
}

Row run_workload(const Workload& w, int iters, bool with_nvcomp, cudaStream_t s) {
  Row r;
  r.name = w.name;
  r.what = w.what;
  r.dtype = dtype_name(w.dtype);
  r.n = w.n;
  r.batch = w.batch;
  const uint64_t bytes = w.n * dtype_bytes(w.dtype);
  r.in_bytes = bytes;
  DevMem src(bytes), copy(bytes), out(bytes);
  CK(cudaMemcpy(src.get(), w.host.data(), bytes, cudaMemcpyHostToDevice));
  r.copy_ms = time_ms(s, iters, [&] { CK(cudaMemcpyAsync(copy.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); });
  r.copy_gbps = 2.0 * static_cast<double>(bytes) / (r.copy_ms * 1e6);

  const uint32_t items = w.batch ? w.batch : 1;
  const uint64_t per = w.n / items;  // batch workloads divide evenly
  const uint64_t bound = compress_bound(w.dtype, per);
  DevMem frames(bound * items), res(items * 16 + 64);
  auto* sizes = reinterpret_cast<uint64_t*>(res.get());
  auto* statuses = reinterpret_cast<Status*>(res.get() + items * 8);
  cuda::EncodeConfig cfg;
  cfg.dtype = w.dtype;

  // Codebooks from the device histogram (not timed): one per item.
  std::vector<Codebook> cbs;
  for (uint32_t k = 0; k < items; ++k) cbs.push_back(device_codebook(w.dtype, src.get() + k * per * dtype_bytes(w.dtype), per, s));
  const uint64_t ews = cuda::compress_workspace_size(w.dtype, w.n, items);
  const uint64_t dws = cuda::decompress_workspace_size(bytes, items);
  DevMem enc_ws(ews), dec_ws(dws);

  DevMem d_items(items * sizeof(cuda::CompressItem)), d_cbs(items * sizeof(Codebook)),
      d_ditems(items * sizeof(cuda::DecompressItem)), dres(items * 16 + 64);
  auto* dsizes = reinterpret_cast<uint64_t*>(dres.get());
  auto* dstatuses = reinterpret_cast<Status*>(dres.get() + items * 8);
  std::vector<cuda::CompressItem> hitems(items);
  for (uint32_t k = 0; k < items; ++k)
    hitems[k] = {src.get() + k * per * dtype_bytes(w.dtype), frames.get() + k * bound, per, bound, k, 0};
  CK(cudaMemcpy(d_items.get(), hitems.data(), items * sizeof(cuda::CompressItem), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_cbs.get(), cbs.data(), items * sizeof(Codebook), cudaMemcpyHostToDevice));

  auto encode = [&] {
    Status st;
    if (w.batch)
      st = cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(d_items.get()), items, w.n,
                                      reinterpret_cast<Codebook*>(d_cbs.get()), items, cfg, sizes, statuses,
                                      enc_ws.get(), ews, s);
    else
      st = cuda::compress_async(src.get(), w.n, frames.get(), bound, cbs[0], cfg, sizes, statuses, enc_ws.get(), ews, s);
    if (st != Status::ok) {
      std::fprintf(stderr, "bench_cuda: %s: encode enqueue %s\n", w.name.c_str(), status_name(st));
      std::exit(1);
    }
  };
  r.enc_ms = time_ms(s, iters, encode);
  std::vector<uint64_t> fs(items);
  std::vector<Status> fst(items);
  CK(cudaMemcpy(fs.data(), sizes, items * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(fst.data(), statuses, items * sizeof(Status), cudaMemcpyDeviceToHost));
  for (uint32_t k = 0; k < items; ++k) {
    if (fst[k] != Status::ok) {
      std::fprintf(stderr, "bench_cuda: %s: item %u status %s\n", w.name.c_str(), k, status_name(fst[k]));
      std::exit(1);
    }
    r.frame_bytes += fs[k];
  }
  std::vector<cuda::DecompressItem> ditems(items);
  for (uint32_t k = 0; k < items; ++k)
    ditems[k] = {frames.get() + k * bound, fs[k], out.get() + k * per * dtype_bytes(w.dtype), per * dtype_bytes(w.dtype)};
  CK(cudaMemcpy(d_ditems.get(), ditems.data(), items * sizeof(cuda::DecompressItem), cudaMemcpyHostToDevice));
  cuda::DecodeConfig dc;
  auto decode = [&] {
    Status st;
    if (w.batch)
      st = cuda::decompress_batch_async(reinterpret_cast<cuda::DecompressItem*>(d_ditems.get()), items, bytes, dc,
                                        dsizes, dstatuses, dec_ws.get(), dws, s);
    else
      st = cuda::decompress_async(frames.get(), fs[0], out.get(), bytes, dc, dsizes, dstatuses, dec_ws.get(), dws, s);
    if (st != Status::ok) {
      std::fprintf(stderr, "bench_cuda: %s: decode enqueue %s\n", w.name.c_str(), status_name(st));
      std::exit(1);
    }
  };
  CK(cudaMemset(out.get(), 0, bytes));
  r.dec_ms = time_ms(s, iters, decode);
  std::vector<Status> dst(items);
  CK(cudaMemcpy(dst.data(), dstatuses, items * sizeof(Status), cudaMemcpyDeviceToHost));
  std::vector<uint8_t> back(bytes);
  CK(cudaMemcpy(back.data(), out.get(), bytes, cudaMemcpyDeviceToHost));
  r.roundtrip_ok = std::all_of(dst.begin(), dst.end(), [](Status x) { return x == Status::ok; }) &&
                   std::memcmp(back.data(), w.host.data(), bytes) == 0;

  r.enc_graph_ms = time_graph_ms(s, iters, encode);
  r.dec_graph_ms = time_graph_ms(s, iters, decode);

  const double gb = static_cast<double>(bytes) / 1e9;
  r.enc_gbps = gb / (r.enc_ms / 1e3);
  r.dec_gbps = gb / (r.dec_ms / 1e3);
  r.enc_graph_gbps = gb / (r.enc_graph_ms / 1e3);
  r.dec_graph_gbps = gb / (r.dec_graph_ms / 1e3);
  const double moved = static_cast<double>(bytes + r.frame_bytes);  // each direction
  const double ideal_ms = moved / (r.copy_gbps * 1e6);
  r.enc_roof = 100.0 * ideal_ms / r.enc_ms;
  r.dec_roof = 100.0 * ideal_ms / r.dec_ms;

  if (with_nvcomp && w.nvcomp && bench::nvcomp_available())
    r.nvcomp = bench::run_nvcomp(src.get(), bytes, dtype_bytes(w.dtype), 65536, std::min(iters, 5), s);
  return r;
}

// nvCOMP only (the last, optional step of the GPU check).
Row run_nvcomp_only(const Workload& w, int iters, cudaStream_t s) {
  Row r;
  r.name = w.name;
  r.what = w.what;
  r.dtype = dtype_name(w.dtype);
  r.n = w.n;
  const uint64_t bytes = w.n * dtype_bytes(w.dtype);
  r.in_bytes = bytes;
  r.frame_bytes = bytes;
  r.roundtrip_ok = true;
  DevMem src(bytes);
  CK(cudaMemcpy(src.get(), w.host.data(), bytes, cudaMemcpyHostToDevice));
  r.nvcomp = bench::run_nvcomp(src.get(), bytes, dtype_bytes(w.dtype), 65536, std::min(iters, 5), s);
  for (const auto& v : r.nvcomp) r.roundtrip_ok &= !v.ok || v.roundtrip_ok;
  return r;
}

// ---------------------------------------------------------------- output

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) o += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return o + "\"";
}

void write_json(const std::string& path, const std::string& device, const std::vector<Row>& rows, int iters) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "bench_cuda: cannot write %s\n", path.c_str());
    return;
  }
  char when[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  std::fprintf(f, "{\n  \"device\": %s,\n  \"date\": \"%s\",\n  \"cuda_runtime\": %d,\n  \"iterations\": %d,\n",
               json_str(device).c_str(), when, rt, iters);
  std::fprintf(f, "  \"method\": \"CUDA events, median after 2 warm-ups; GB/s = uncompressed bytes / time (1e9); "
                  "roofline = (bytes read + written) / D2D cudaMemcpy bandwidth of the same size, same run\",\n");
  std::fprintf(f, "  \"nvcomp\": %s,\n  \"workloads\": [\n",
               bench::nvcomp_available() ? json_str(bench::nvcomp_version()).c_str() : "null");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "    {\"name\": %s, \"what\": %s, \"dtype\": \"%s\", \"elements\": %llu, \"bytes\": %llu, "
                 "\"batch_items\": %u, \"frame_bytes\": %llu, \"ratio\": %.4f, \"roundtrip_ok\": %s,\n"
                 "     \"copy_ms\": %.4f, \"copy_GBps_rw\": %.1f,\n"
                 "     \"encode_ms\": %.4f, \"encode_GBps\": %.1f, \"encode_pct_roofline\": %.1f, "
                 "\"encode_graph_ms\": %.4f, \"encode_graph_GBps\": %.1f,\n"
                 "     \"decode_ms\": %.4f, \"decode_GBps\": %.1f, \"decode_pct_roofline\": %.1f, "
                 "\"decode_graph_ms\": %.4f, \"decode_graph_GBps\": %.1f,\n     \"nvcomp\": [",
                 json_str(r.name).c_str(), json_str(r.what).c_str(), r.dtype.c_str(),
                 static_cast<unsigned long long>(r.n), static_cast<unsigned long long>(r.in_bytes), r.batch,
                 static_cast<unsigned long long>(r.frame_bytes),
                 static_cast<double>(r.in_bytes) / static_cast<double>(r.frame_bytes), r.roundtrip_ok ? "true" : "false",
                 r.copy_ms, r.copy_gbps, r.enc_ms, r.enc_gbps, r.enc_roof, r.enc_graph_ms, r.enc_graph_gbps, r.dec_ms,
                 r.dec_gbps, r.dec_roof, r.dec_graph_ms, r.dec_graph_gbps);
    for (size_t k = 0; k < r.nvcomp.size(); ++k) {
      const auto& v = r.nvcomp[k];
      const double gb = static_cast<double>(r.in_bytes) / 1e9;
      std::fprintf(f,
                   "%s{\"algo\": \"%s\", \"ok\": %s, \"error\": %s, \"compressed_bytes\": %llu, \"ratio\": %.4f, "
                   "\"compress_ms\": %.4f, \"compress_GBps\": %.1f, \"decompress_ms\": %.4f, "
                   "\"decompress_GBps\": %.1f, \"roundtrip_ok\": %s}",
                   k ? ", " : "", v.algo.c_str(), v.ok ? "true" : "false", json_str(v.error).c_str(),
                   static_cast<unsigned long long>(v.compressed_bytes),
                   v.compressed_bytes ? static_cast<double>(r.in_bytes) / static_cast<double>(v.compressed_bytes) : 0.0,
                   v.compress_ms, v.compress_ms > 0 ? gb / (v.compress_ms / 1e3) : 0.0, v.decompress_ms,
                   v.decompress_ms > 0 ? gb / (v.decompress_ms / 1e3) : 0.0, v.roundtrip_ok ? "true" : "false");
    }
    std::fprintf(f, "]}%s\n", i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

void write_md(const std::string& path, const std::string& device, const std::vector<Row>& rows, int iters) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "bench_cuda: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "# splitzip CUDA benchmark: %s\n\n", device.c_str());
  std::fprintf(f, "Measured by `splitzip_bench_cuda` (scripts/gpu_check.sh). CUDA events, median of %d runs after "
                  "2 warm-ups. GB/s = uncompressed bytes / time (1 GB = 1e9 B). Roofline: a D2D `cudaMemcpy` of "
                  "the same size in the same run gives the copy bandwidth (read + write); %% roofline = "
                  "(input + frame bytes) / copy bandwidth / measured time. \"graph\" = the same call replayed from a "
                  "captured CUDA graph.\n\n", iters);
  std::fprintf(f, "| workload | dtype | GiB | ratio | copy GB/s (r+w) | encode GB/s | enc %% roof | encode graph GB/s | "
                  "decode GB/s | dec %% roof | decode graph GB/s | round trip |\n");
  std::fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Row& r : rows)
    std::fprintf(f, "| %s | %s | %.2f | %.3f | %.0f | %.0f | %.1f | %.0f | %.0f | %.1f | %.0f | %s |\n",
                 r.name.c_str(), r.dtype.c_str(), static_cast<double>(r.in_bytes) / (1ull << 30),
                 static_cast<double>(r.in_bytes) / static_cast<double>(r.frame_bytes), r.copy_gbps, r.enc_gbps,
                 r.enc_roof, r.enc_graph_gbps, r.dec_gbps, r.dec_roof, r.dec_graph_gbps, r.roundtrip_ok ? "ok" : "FAILED");
  std::fprintf(f, "\nWorkloads:\n\n");
  for (const Row& r : rows) std::fprintf(f, "- `%s`: %s\n", r.name.c_str(), r.what.c_str());
  bool any = false;
  for (const Row& r : rows) any |= !r.nvcomp.empty();
  if (any) {
    std::fprintf(f, "\n## nvCOMP %s, same buffers (batched API, 64 KiB chunks)\n\n", bench::nvcomp_version().c_str());
    std::fprintf(f, "| workload | algorithm | ratio | compress GB/s | decompress GB/s | round trip |\n|---|---|---:|---:|---:|---|\n");
    for (const Row& r : rows)
      for (const auto& v : r.nvcomp) {
        const double gb = static_cast<double>(r.in_bytes) / 1e9;
        if (!v.ok) {
          std::fprintf(f, "| %s | %s | - | - | - | %s |\n", r.name.c_str(), v.algo.c_str(), v.error.c_str());
          continue;
        }
        std::fprintf(f, "| %s | %s | %.3f | %.0f | %.0f | %s |\n", r.name.c_str(), v.algo.c_str(),
                     static_cast<double>(r.in_bytes) / static_cast<double>(v.compressed_bytes), gb / (v.compress_ms / 1e3),
                     gb / (v.decompress_ms / 1e3), v.roundtrip_ok ? "ok" : "FAILED");
      }
  } else {
    std::fprintf(f, "\nnvCOMP: not run (library not available in this build).\n");
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_json, out_md;
  int iters = 20;
  bool quick = false, with_nvcomp = true, only_nvcomp = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out-json" && i + 1 < argc) out_json = argv[++i];
    else if (a == "--out-md" && i + 1 < argc) out_md = argv[++i];
    else if (a == "--iters" && i + 1 < argc) iters = std::max(1, std::atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else if (a == "--no-nvcomp") with_nvcomp = false;
    else if (a == "--only-nvcomp") only_nvcomp = true;
    else {
      std::fprintf(stderr, "usage: %s [--out-json F] [--out-md F] [--iters N] [--quick] [--no-nvcomp | --only-nvcomp]\n", argv[0]);
      return 2;
    }
  }
  if (!cuda::device_available()) {
    std::fprintf(stderr, "bench_cuda: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const std::string device = prop.name;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  const uint64_t gib = quick ? (uint64_t{1} << 24) : (uint64_t{1} << 30);  // --quick: 16 MiB smoke run
  const uint64_t paper_n = quick ? (uint64_t{1} << 22) : (uint64_t{256} << 20);
  std::vector<Row> rows;
  if (only_nvcomp && !bench::nvcomp_available()) {
    std::fprintf(stderr, "bench_cuda: --only-nvcomp: nvCOMP is not available in this build\n");
    return 3;
  }
  auto run = [&](Workload w) {
    if (only_nvcomp && !w.nvcomp) return;
    std::printf("bench_cuda: %-28s %s %.2f GiB ...\n", w.name.c_str(), dtype_name(w.dtype),
                static_cast<double>(w.host.size()) / (1ull << 30));
    std::fflush(stdout);
    if (only_nvcomp) {
      rows.push_back(run_nvcomp_only(w, iters, s));
      if (!out_json.empty()) write_json(out_json, device, rows, iters);
      std::printf("  nvCOMP: %zu algorithms\n", rows.back().nvcomp.size());
      return;
    }
    rows.push_back(run_workload(w, iters, with_nvcomp && !only_nvcomp, s));
    // Every finished point is on disk before the next one starts.
    if (!out_json.empty()) write_json(out_json, device, rows, iters);
    if (!out_md.empty()) write_md(out_md, device, rows, iters);
    const Row& r = rows.back();
    std::printf("  ratio %.3f  encode %.0f GB/s (%.1f%% roof)  decode %.0f GB/s (%.1f%% roof)  copy %.0f GB/s  %s\n",
                static_cast<double>(r.in_bytes) / static_cast<double>(r.frame_bytes), r.enc_gbps, r.enc_roof,
                r.dec_gbps, r.dec_roof, r.copy_gbps, r.roundtrip_ok ? "round trip ok" : "ROUND TRIP FAILED");
    std::fflush(stdout);
  };
  {
    Workload w{"synth_bf16_256M", "gaussian_kv generator, 256M bf16 elements (the paper's size)", Dtype::bf16, paper_n};
    w.nvcomp = true;
    w.host = generate_parallel(synth::Generator::gaussian_kv, w.dtype, w.n, 1, 0);
    run(std::move(w));
  }
  // Serving sizes: one layer / page per call (64 KiB - 4 MiB), then the same
  // buffers as one batched call (target: 1 MiB at >= 25% of the 256M figure).
  for (uint64_t kib : {64u, 256u, 1024u, 4096u}) {
    Workload w{"realkv_bf16_" + std::to_string(kib) + "KiB", "bundled KV, one buffer of " + std::to_string(kib) +
               " KiB per call", Dtype::bf16, kib * 512};
    w.host = tiled_real(w.dtype, kib * 1024);
    run(std::move(w));
  }
  for (uint64_t kib : {64u, 1024u}) {
    const uint32_t items = kib == 64 ? 256 : 64;
    Workload w{"realkv_bf16_" + std::to_string(kib) + "KiB_x" + std::to_string(items),
               std::to_string(items) + " buffers of " + std::to_string(kib) + " KiB in one compress_batch_async",
               Dtype::bf16, kib * 512 * items};
    w.batch = items;
    w.host = tiled_real(w.dtype, kib * 1024 * items);
    run(std::move(w));
  }
  {
    Workload w{"synth_bf16_1GiB", "gaussian_kv generator, 1 GiB of bf16", Dtype::bf16, gib / 2};
    w.host = generate_parallel(synth::Generator::gaussian_kv, w.dtype, w.n, 2, 0);
    run(std::move(w));
  }
  {
    Workload w{"synth_bf16_1GiB_esc1pct", "heavy_tail generator, 1% escapes, 1 GiB of bf16", Dtype::bf16, gib / 2};
    w.host = generate_parallel(synth::Generator::heavy_tail, w.dtype, w.n, 3, 0.01);
    run(std::move(w));
  }
  {
    Workload w{"realkv_bf16_1GiB", "bundled stories260k KV (10 layer K/V files) tiled to 1 GiB", Dtype::bf16, gib / 2};
    w.nvcomp = true;
    w.host = tiled_real(w.dtype, gib);
    run(std::move(w));
  }
  {
    Workload w{"realkv_bf16_1GiB_batch64", "the same tiled KV as 64 buffers of 16 MiB, one compress_batch_async, "
               "one codebook per buffer", Dtype::bf16, gib / 2};
    w.batch = 64;
    w.host = tiled_real(w.dtype, gib);
    run(std::move(w));
  }
  for (Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::fp8_e5m2, Dtype::fp8_e4m3}) {
    Workload w{std::string("realkv_") + dtype_name(d) + "_1GiB",
               "bundled layer02 float32 KV converted to " + std::string(dtype_name(d)) +
                   (d == Dtype::fp8_e4m3 ? " (per-tensor scale amax/448)" : "") + ", tiled to 1 GiB", d,
               gib / dtype_bytes(d)};
    w.nvcomp = d == Dtype::fp32;
    w.host = tiled_real(d, gib);
    run(std::move(w));
  }
  if (!out_json.empty()) write_json(out_json, device, rows, iters);
  if (!out_md.empty()) write_md(out_md, device, rows, iters);
  bool ok = true;
  for (const Row& r : rows) ok &= r.roundtrip_ok;
  cudaStreamDestroy(s);
  return ok ? 0 : 1;
}
