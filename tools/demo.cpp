// SPDX-License-Identifier: Apache-2.0
// splitzip-demo: the README's showcase. Compresses the bundled real KV cache
// (data/kv/stories260k) with every available backend: fast mode with a
// per-file dynamic codebook and with one calibrated K and one V codebook
// shared across files, capacity mode, and the bf16 files cast to fp8 as
// vLLM's fp8 KV cache holds them; then zstd -1 on the same files, and a large
// synthetic bf16 buffer. Prints ratio next to the paper's prediction
// 2/(1.5+3e), throughput next to memcpy, and checks every round trip. Exit
// status 1 if any round trip fails.
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/e4m3_data.h"
#include "tests/support/synthetic.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/options.h"
#include "tools/cli/tensor_formats.h"
#include "tools/cli/tensor_input.h"
#include "tools/cli/timing.h"

#ifdef SPLITZIP_DEMO_HAVE_ZSTD
#include <zstd.h>
#endif

#ifndef SPLITZIP_DEMO_DATA_DIR
#define SPLITZIP_DEMO_DATA_DIR "data/kv/stories260k"
#endif

namespace {

using splitzip::Dtype;

const char kUsage[] =
    "usage: splitzip-demo [DATA_DIR] [options]\n"
    "  DATA_DIR                 raw KV files (.bf16 .f16 .f32 .e5m2); default the\n"
    "                           bundled " SPLITZIP_DEMO_DATA_DIR "\n"
    "  --synthetic-elems N      synthetic bf16 buffer size in elements (default\n"
    "                           64Mi = 128 MiB, keeps the demo near a minute on\n"
    "                           2 cores; the paper's scale is 256Mi; 0 skips it)\n"
    "  --seconds S              timing per measurement on the real files (default 0.05)\n"
    "  --backend B              only this backend (default: every available one)\n"
    "  --threads N              worker threads (default: 1 for the real files, whose\n"
    "                           512 KiB-1 MiB the fast mode codes on one thread\n"
    "                           anyway; the backend's choice for the synthetic buffer)\n";

struct KvFile {
  std::string name;
  szcli::InputBytes bytes;
  szcli::TensorView view;
  std::string group;  // "bf16 K", "fp32 V", ...: files sharing a calibrated codebook
};

struct Measure {
  bool ok = false;
  std::string error;
  uint64_t bytes = 0, compressed = 0, n = 0, escapes = 0;
  double enc_s = 0, dec_s = 0, memcpy_s = 0;
};

// Compresses, checks the round trip byte for byte, then times encode,
// decode and memcpy of the same buffer.
Measure run(const std::string& backend, Dtype dtype, const uint8_t* data, uint64_t n,
            const splitzip::Codebook* cb, double secs, int threads, splitzip::Mode mode = splitzip::Mode::fast) {
  Measure m;
  m.n = n;
  m.bytes = n * splitzip::dtype_bytes(dtype);
  const uint64_t cap = splitzip::compress_bound(dtype, n);
  std::unique_ptr<uint8_t[]> enc(new uint8_t[cap]);
  std::unique_ptr<uint8_t[]> dec(new uint8_t[m.bytes ? m.bytes : 1]);
  std::unique_ptr<uint8_t[]> cpy(new uint8_t[m.bytes ? m.bytes : 1]);
  std::memset(enc.get(), 0, cap);
  std::memset(cpy.get(), 0, m.bytes ? m.bytes : 1);

  splitzip::CompressOptions co;
  co.codebook = cb;
  co.backend = backend.c_str();
  co.threads = threads;
  co.mode = mode;
  splitzip::DecompressOptions dopt;
  dopt.backend = backend.c_str();
  dopt.threads = threads;

  const splitzip::Result r = splitzip::compress(dtype, data, n, enc.get(), cap, co);
  if (!r.ok()) {
    m.error = "compress: " + szcli::status_text(r.status);
    return m;
  }
  m.compressed = r.size;
  splitzip::FrameInfo fi;
  if (splitzip::frame_info(enc.get(), r.size, &fi) != splitzip::Status::ok) {
    m.error = "frame_info rejects the frame";
    return m;
  }
  m.escapes = fi.escape_count;
  std::memset(dec.get(), 0xA5, m.bytes ? m.bytes : 1);  // stale bytes must not pass as output
  const splitzip::Result d = splitzip::decompress(enc.get(), r.size, dec.get(), m.bytes, dopt);
  if (!d.ok() || d.size != m.bytes || std::memcmp(dec.get(), data, m.bytes) != 0) {
    m.error = d.ok() ? "decoded bytes differ" : "decompress: " + szcli::status_text(d.status);
    return m;
  }
  m.ok = true;
  m.enc_s = szcli::median_seconds([&] { splitzip::compress(dtype, data, n, enc.get(), cap, co); }, secs);
  m.dec_s = szcli::median_seconds([&] { splitzip::decompress(enc.get(), r.size, dec.get(), m.bytes, dopt); }, secs);
  m.memcpy_s = szcli::median_seconds([&] { std::memcpy(cpy.get(), data, m.bytes); }, secs);
  return m;
}

double ratio_of(const Measure& m) {
  return m.compressed ? static_cast<double>(m.bytes) / static_cast<double>(m.compressed) : 0.0;
}
double erate_of(const Measure& m) {
  return m.n ? static_cast<double>(m.escapes) / static_cast<double>(m.n) : 0.0;
}

#ifdef SPLITZIP_DEMO_HAVE_ZSTD
// zstd -1 on the same bytes, one frame per file, timed like the codec.
Measure run_zstd(const uint8_t* data, uint64_t bytes, double secs) {
  Measure m;
  m.bytes = bytes;
  const size_t cap = ZSTD_compressBound(bytes);
  std::unique_ptr<uint8_t[]> enc(new uint8_t[cap]);
  std::unique_ptr<uint8_t[]> dec(new uint8_t[bytes ? bytes : 1]);
  std::unique_ptr<uint8_t[]> cpy(new uint8_t[bytes ? bytes : 1]);
  std::memset(enc.get(), 0, cap);
  std::memset(cpy.get(), 0, bytes ? bytes : 1);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  size_t c = 0;
  auto enc_fn = [&] { c = ZSTD_compressCCtx(cctx, enc.get(), cap, data, bytes, 1); };
  enc_fn();
  if (ZSTD_isError(c)) {
    m.error = std::string("zstd: ") + ZSTD_getErrorName(c);
  } else {
    m.compressed = c;
    std::memset(dec.get(), 0xA5, bytes ? bytes : 1);
    const size_t d = ZSTD_decompressDCtx(dctx, dec.get(), bytes, enc.get(), c);
    if (ZSTD_isError(d) || d != bytes || std::memcmp(dec.get(), data, bytes) != 0) {
      m.error = "zstd round trip differs";
    } else {
      m.ok = true;
      m.enc_s = szcli::median_seconds(enc_fn, secs);
      m.dec_s = szcli::median_seconds([&] { ZSTD_decompressDCtx(dctx, dec.get(), bytes, enc.get(), c); }, secs);
      m.memcpy_s = szcli::median_seconds([&] { std::memcpy(cpy.get(), data, bytes); }, secs);
    }
  }
  ZSTD_freeCCtx(cctx);
  ZSTD_freeDCtx(dctx);
  return m;
}
#endif

void print_header(const char* first = "file") {
  std::printf("%-20s %-5s %10s %9s %7s %7s %7s %15s %15s %8s  %s\n", first, "mode", "elements", "escape%", "ratio",
              "pred.", "vs pred", "encode GB/s", "decode GB/s", "memcpy", "round trip");
}

// mode: dyn / cal (fast mode, dynamic or calibrated codebook), cap (capacity
// mode: no escapes, no 2/(1.5+3e) prediction), zstd.
void print_row(const std::string& name, const char* mode, Dtype dtype, const Measure& m) {
  if (!m.ok) {
    std::printf("%-20s %-5s %10" PRIu64 "  FAILED: %s\n", name.c_str(), mode, m.n, m.error.c_str());
    return;
  }
  const bool fast = std::strcmp(mode, "dyn") == 0 || std::strcmp(mode, "cal") == 0;
  const double e = erate_of(m), ratio = ratio_of(m), pred = szcli::predicted_ratio(dtype, e);
  const double mc = szcli::gb_per_s(m.bytes, m.memcpy_s);
  const double enc = szcli::gb_per_s(m.bytes, m.enc_s), dec = szcli::gb_per_s(m.bytes, m.dec_s);
  char encs[32], decs[32], es[16] = "-", ps[16] = "-", vs[16] = "-";
  std::snprintf(encs, sizeof encs, "%.2f (%.2fx)", enc, mc > 0 ? enc / mc : 0.0);
  std::snprintf(decs, sizeof decs, "%.2f (%.2fx)", dec, mc > 0 ? dec / mc : 0.0);
  if (fast) {
    std::snprintf(es, sizeof es, "%.4f%%", 100.0 * e);
    std::snprintf(ps, sizeof ps, "%.4f", pred);
    std::snprintf(vs, sizeof vs, "%+.2f%%", 100.0 * (ratio / pred - 1.0));
  }
  std::printf("%-20s %-5s %10" PRIu64 " %9s %7.4f %7s %7s %15s %15s %8.2f  ok\n", name.c_str(), mode, m.n, es, ratio,
              ps, vs, encs, decs, mc);
}

// Sums over files: GB/s of the whole set = its bytes over the summed medians.
struct Total {
  Dtype dtype = Dtype::bf16;
  bool ok = true;
  Measure sum;
  void add(const Measure& m) {
    ok = ok && m.ok;
    sum.ok = ok;
    sum.n += m.n;
    sum.bytes += m.bytes;
    sum.compressed += m.compressed;
    sum.escapes += m.escapes;
    sum.enc_s += m.enc_s;
    sum.dec_s += m.dec_s;
    sum.memcpy_s += m.memcpy_s;
    if (!m.ok && sum.error.empty()) sum.error = m.error;
  }
};

// bf16 bits to float, exactly.
float bf16_to_f32(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to the nearest fp8_e5m2, ties to even, saturating at the largest
// finite value (57344).
uint8_t f32_to_e5m2(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80);
  const uint32_t a = u & 0x7FFFFFFFu;
  float af;
  std::memcpy(&af, &a, 4);
  if (af < 0x1p-14f) return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(af * 0x1p16f)));  // subnormal
  const uint32_t r = a + 0xFFFFFu + ((a >> 21) & 1u);  // round the 23 mantissa bits to 2
  const uint32_t b = (r >> 21) - ((127u - 15u) << 2);  // rebias the exponent
  return static_cast<uint8_t>(sign | std::min<uint32_t>(b, 0x7B));
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) szcli::fail(szcli::kExitIo, dir + ": cannot open data directory");
  while (dirent* e = readdir(d)) {
    Dtype dt;
    if (e->d_name[0] != '.' && szcli::dtype_from_extension(e->d_name, &dt)) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string kv_kind(const std::string& name) {
  if (name.find("_k.") != std::string::npos) return "K";
  if (name.find("_v.") != std::string::npos) return "V";
  return "other";
}

int demo(int argc, char** argv) {
  szcli::Args a("demo",
                {{"synthetic-elems", 0, true},
                 {"seconds", 0, true},
                 {"backend", 0, true},
                 {"threads", 0, true},
                 {"help", 'h', false}},
                argc, argv, 1);
  if (a.has("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.positional().size() > 1) szcli::fail(szcli::kExitUsage, "demo: at most one DATA_DIR");
  const std::string dir = a.positional().empty() ? SPLITZIP_DEMO_DATA_DIR : a.positional()[0];
  const uint64_t synth_n = a.size("synthetic-elems", uint64_t{64} << 20);
  const double secs = a.seconds("seconds", 0.05);
  const int threads = static_cast<int>(std::min<uint64_t>(a.u64("threads", 0), 4096));
  // One thread on the small real files unless asked: every row then runs
  // alike (the capacity and e4m3 codecs would otherwise start a parallel
  // region per 512 KiB call, which a loaded 2-core machine makes stall).
  const int file_threads = a.has("threads") ? threads : 1;

  std::vector<std::string> backends;
  std::printf("splitzip demo: frame format v%u; backends in this build:", splitzip::kFormatVersion);
  for (size_t i = 0; i < splitzip::backend_count(); ++i) {
    const char* b = splitzip::backend_name(i);
    const bool avail = splitzip::backend_available(b);
    std::printf(" %s%s", b, avail ? "" : " (not available here)");
    if (avail && (!a.value("backend") || *a.value("backend") == b)) backends.push_back(b);
  }
  std::printf("\n");
  if (backends.empty()) szcli::fail(szcli::kExitBackend, "demo: no available backend to run");

  // Load the KV files and pool histograms per (dtype, K/V) group.
  std::vector<KvFile> files;
  std::map<std::string, splitzip::Histogram> hists;
  for (const std::string& name : list_dir(dir)) {
    KvFile f;
    f.name = name;
    f.bytes = szcli::InputBytes::open(dir + "/" + name);
    Dtype dt;
    szcli::dtype_from_extension(name, &dt);
    std::string err;
    if (!szcli::parse_raw(f.bytes.data(), f.bytes.size(), dt, &f.view, &err))
      szcli::fail(szcli::kExitInvalid, dir + "/" + name + ": " + err);
    f.group = std::string(splitzip::dtype_name(dt)) + " " + kv_kind(name);
    hists.emplace(f.group, splitzip::Histogram(dt)).first->second.add(f.view.data, f.view.n_elems);
    files.push_back(std::move(f));
  }
  if (files.empty()) szcli::fail(szcli::kExitIo, dir + ": no .bf16/.f16/.f32/.e5m2 files");
  std::map<std::string, splitzip::Codebook> books;
  std::printf("\nReal KV cache: %zu files from %s\n", files.size(), dir.c_str());
  std::printf("calibrated codebooks (one per dtype and K/V, pooled over the files):\n");
  for (const auto& h : hists) {
    books[h.first] = h.second.codebook();
    const splitzip::Codebook& cb = books[h.first];
    std::printf("  %-10s %u entries:", h.first.c_str(), cb.count);
    for (unsigned i = 0; i < cb.count; ++i) std::printf(" %u", cb.entries[i]);
    std::printf("\n");
  }
  // The bf16 files cast to fp8 as vLLM's fp8 KV cache holds them: e4m3
  // with a per-tensor scale amax/448, e5m2 rounded without a scale.
  struct Fp8File {
    std::string name;
    Dtype dtype;
    std::vector<uint8_t> bytes;
  };
  std::vector<Fp8File> fp8;
  for (const KvFile& f : files) {
    if (f.view.dtype != Dtype::bf16) continue;
    std::vector<float> x(f.view.n_elems);
    for (uint64_t i = 0; i < f.view.n_elems; ++i) {
      uint16_t h;
      std::memcpy(&h, static_cast<const uint8_t*>(f.view.data) + 2 * i, 2);
      x[i] = bf16_to_f32(h);
    }
    fp8.push_back({f.name, Dtype::fp8_e4m3, splitzip::test::e4m3_scaled(x.data(), x.size())});
    std::vector<uint8_t> e5(x.size());
    for (uint64_t i = 0; i < x.size(); ++i) e5[i] = f32_to_e5m2(x[i]);
    fp8.push_back({f.name, Dtype::fp8_e5m2, std::move(e5)});
  }

  std::printf("mode: dyn / cal = fast mode (4-bit exponent codes) with the file's own top-16 exponents / the shared\n"
              "calibrated codebook; cap = capacity mode (per-block Huffman exponents, for host-memory offload).\n");
  std::printf("pred. = bytes/(residual + 0.5 + 3e) per element, 2/(1.5+3e) for bf16; vs pred = measured ratio\n"
              "against it (the frame header and per-chunk escape counts cost the difference).\n"
              "GB/s = 1e9 uncompressed bytes/s, median of repeated runs; (Nx) = relative to memcpy of the same\n"
              "buffer in the same run. Default options: the v2 block checksum is on, as users run it; one thread\n"
              "per file (--threads N to change it).\n"
              "fp8 rows: the bf16 files cast as vLLM's fp8 KV cache holds them (e4m3 scaled by amax/448, e5m2\n"
              "rounded); the capacity mode codes fp8_e4m3's whole byte (format v3).\n");

  bool all_ok = true;
  const splitzip::Mode cap = splitzip::Mode::capacity;
  for (const std::string& b : backends) {
    std::printf("\nbackend %s\n", b.c_str());
    print_header();
    std::map<std::string, Total> totals;  // "dtype files, mode" -> sums
    auto add = [&](Dtype dt, const char* mode, const Measure& m) {
      Total& t = totals[std::string(splitzip::dtype_name(dt)) + " files, " + mode];
      t.dtype = dt;
      t.add(m);
      all_ok = all_ok && m.ok;
    };
    for (const KvFile& f : files) {
      const Dtype dt = f.view.dtype;
      const Measure dyn = run(b, dt, f.view.data, f.view.n_elems, nullptr, secs, file_threads);
      const Measure cal = run(b, dt, f.view.data, f.view.n_elems, &books[f.group], secs, file_threads);
      const Measure cp = run(b, dt, f.view.data, f.view.n_elems, nullptr, secs, file_threads, cap);
      print_row(f.name, "dyn", dt, dyn);
      print_row(f.name, "cal", dt, cal);
      print_row(f.name, "cap", dt, cp);
      add(dt, "dyn", dyn);
      add(dt, "cal", cal);
      add(dt, "cap", cp);
    }
    for (const Fp8File& f : fp8) {
      add(f.dtype, "dyn", run(b, f.dtype, f.bytes.data(), f.bytes.size(), nullptr, secs, file_threads));
      add(f.dtype, "cap", run(b, f.dtype, f.bytes.data(), f.bytes.size(), nullptr, secs, file_threads, cap));
    }
    std::printf("all files of a dtype, each compressed alone (GB/s: their bytes over the summed medians):\n");
    print_header("all");
    for (const auto& t : totals) {
      const std::string label = t.first.substr(0, t.first.find(','));
      const std::string mode = t.first.substr(t.first.rfind(' ') + 1);
      print_row(label, mode.c_str(), t.second.dtype, t.second.sum);
    }
  }

#ifdef SPLITZIP_DEMO_HAVE_ZSTD
  std::printf("\nPeer on the same files, in the same run: zstd %s -1, each file alone\n", ZSTD_versionString());
  print_header("all");
  {
    std::map<std::string, Total> totals;
    for (const KvFile& f : files) {
      Total& t = totals[splitzip::dtype_name(f.view.dtype)];
      t.dtype = f.view.dtype;
      Measure m = run_zstd(static_cast<const uint8_t*>(f.view.data), f.view.bytes, secs);
      m.n = f.view.n_elems;
      t.add(m);
    }
    for (const Fp8File& f : fp8) {
      Total& t = totals[splitzip::dtype_name(f.dtype)];
      t.dtype = f.dtype;
      Measure m = run_zstd(f.bytes.data(), f.bytes.size(), secs);
      m.n = f.bytes.size();
      t.add(m);
    }
    for (const auto& t : totals) {
      print_row(t.first + " files", "zstd", t.second.dtype, t.second.sum);
      all_ok = all_ok && t.second.ok;
    }
  }
#else
  std::printf("\nPeer line skipped: this build has no libzstd (install libzstd-dev and rebuild).\n");
#endif

  if (synth_n) {
    std::printf("\nSynthetic bf16 KV-like buffer (gaussian_kv, seed 1): %" PRIu64 " elements, %.0f MiB\n", synth_n,
                static_cast<double>(synth_n) * 2 / (1 << 20));
    const std::vector<uint8_t> buf =
        splitzip::synth::generate(splitzip::synth::Generator::gaussian_kv, Dtype::bf16, synth_n, 1);
    if (buf.size() != synth_n * 2) szcli::fail(szcli::kExitInternal, "demo: synthetic generator failed");
    print_header();
    for (const std::string& b : backends) {
      // One warm-up and three timed runs per measurement at this size.
      const Measure m = run(b, Dtype::bf16, buf.data(), synth_n, nullptr, 0.0, threads);
      print_row("synthetic (" + b + ")", "dyn", Dtype::bf16, m);
      all_ok = all_ok && m.ok;
    }
  }
  std::printf("\n%s\n", all_ok ? "All round trips byte-exact." : "ROUND TRIP FAILURES: see FAILED rows above.");
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return demo(argc, argv);
  } catch (const szcli::CliError& e) {
    std::fprintf(stderr, "splitzip-demo: %s\n", e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "splitzip-demo: out of memory\n");
    return szcli::kExitInternal;
  }
}
