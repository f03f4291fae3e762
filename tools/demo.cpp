// SPDX-License-Identifier: Apache-2.0
// splitzip-demo: the README's showcase. Compresses the bundled real KV cache
// (data/kv/stories260k) with every available backend, once with a per-file
// dynamic codebook and once with one calibrated K and one V codebook shared
// across files, then a large synthetic bf16 buffer. Prints ratio next to the
// paper's prediction 2/(1.5+3e), throughput next to memcpy, and checks every
// round trip. Exit status 1 if any round trip fails.
#include <dirent.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/options.h"
#include "tools/cli/tensor_formats.h"
#include "tools/cli/tensor_input.h"
#include "tools/cli/timing.h"

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
    "  --threads N              worker threads (default: backend's choice)\n";

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
            const splitzip::Codebook* cb, double secs, int threads) {
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

void print_header() {
  std::printf("%-20s %-5s %10s %9s %7s %7s %7s %15s %15s %8s  %s\n", "file", "cb", "elements", "escape%", "ratio",
              "pred.", "vs pred", "encode GB/s", "decode GB/s", "memcpy", "round trip");
}

void print_row(const std::string& name, const char* mode, Dtype dtype, const Measure& m) {
  if (!m.ok) {
    std::printf("%-20s %-5s %10" PRIu64 "  FAILED: %s\n", name.c_str(), mode, m.n, m.error.c_str());
    return;
  }
  const double e = erate_of(m), ratio = ratio_of(m), pred = szcli::predicted_ratio(dtype, e);
  const double mc = szcli::gb_per_s(m.bytes, m.memcpy_s);
  const double enc = szcli::gb_per_s(m.bytes, m.enc_s), dec = szcli::gb_per_s(m.bytes, m.dec_s);
  char encs[32], decs[32];
  std::snprintf(encs, sizeof encs, "%.2f (%.2fx)", enc, mc > 0 ? enc / mc : 0.0);
  std::snprintf(decs, sizeof decs, "%.2f (%.2fx)", dec, mc > 0 ? dec / mc : 0.0);
  std::printf("%-20s %-5s %10" PRIu64 " %8.4f%% %7.4f %7.4f %+6.2f%% %15s %15s %8.2f  ok\n", name.c_str(), mode, m.n,
              100.0 * e, ratio, pred, 100.0 * (ratio / pred - 1.0), encs, decs, mc);
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
  std::printf("cb: dyn = the file's own top-16 exponents, cal = the shared calibrated codebook.\n");
  std::printf("pred. = bytes/(residual + 0.5 + 3e) per element, 2/(1.5+3e) for bf16; vs pred = measured ratio\n"
              "against it (the frame header and per-chunk escape counts cost the difference).\n"
              "GB/s = 1e9 uncompressed bytes/s, median of repeated runs; (Nx) = relative to memcpy of the same\n"
              "buffer in the same run. Default options: the v2 block checksum is on, as users run it.\n");

  bool all_ok = true;
  for (const std::string& b : backends) {
    std::printf("\nbackend %s\n", b.c_str());
    print_header();
    std::map<std::string, std::pair<uint64_t, uint64_t>> totals;  // dtype+mode -> (bytes, compressed)
    for (const KvFile& f : files) {
      const Measure dyn = run(b, f.view.dtype, f.view.data, f.view.n_elems, nullptr, secs, threads);
      const Measure cal = run(b, f.view.dtype, f.view.data, f.view.n_elems, &books[f.group], secs, threads);
      print_row(f.name, "dyn", f.view.dtype, dyn);
      print_row(f.name, "cal", f.view.dtype, cal);
      all_ok = all_ok && dyn.ok && cal.ok;
      const std::string dt = splitzip::dtype_name(f.view.dtype);
      totals[dt + " files, dyn"].first += dyn.bytes;
      totals[dt + " files, dyn"].second += dyn.compressed;
      totals[dt + " files, cal"].first += cal.bytes;
      totals[dt + " files, cal"].second += cal.compressed;
    }
    for (const auto& t : totals)
      std::printf("all %s: %" PRIu64 " -> %" PRIu64 " bytes, ratio %.4f\n", t.first.c_str(), t.second.first,
                  t.second.second, t.second.second ? static_cast<double>(t.second.first) / static_cast<double>(t.second.second) : 0.0);
  }

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
