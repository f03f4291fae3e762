// SPDX-License-Identifier: Apache-2.0
// splitzip rows of the capacity-mode benchmark (bench/capacity/run_peers.py
// runs this and the peers in the same run). One JSON object per line:
//   capacity_bench FILE DTYPE THREADS REPS [--ref] [--variants] [--memcpy] [--fast-cpu]
//                  [--target NAME]
// Rows: capacity mode through the public API with default options (block
// checksum on), and the codec (cpu/capacity_codec.cpp) with the checksum off;
// --fast-cpu: the fast mode through the public API; --memcpy: a
// memcpy of the input in the same run; with --ref
// also the scalar reference in both modes. Times are the best of REPS
// alternating encode/decode runs, wall clock, GB/s of uncompressed bytes.
// --variants: the coder alternatives' sizes on this input (docs/DESIGN.md section 2).
// --target NAME: the cpu kernels forced to one Highway target (AVX2 on an
// AVX-512 host, say); the rows' names say which.
//   capacity_bench pages DIR REPS [calib-all]
// Table sets on pages (docs/DESIGN.md, "capacity table sets"): DIR's
// layer*_{k,v}.bf16 files of [2 sequences][...] (../shared/data/kv/smollm2),
// a set per file calibrated on sequence 0 (calib-all: both), pages of 32
// and 64 KiB of sequence 1 in serving order (page p of every file, then
// p + 1: the sets round robin), with and without the set, through the
// public batch calls (compress_batch a page per call, decompress_batch one
// call with every set), against one 256 MiB buffer (sequence 1 of every
// file, tiled) and a memcpy of it, all in one run, one thread, checksum on;
// best of REPS alternating runs, this thread's CPU time (the box is shared).
// Environment: SZ_PAGES_ONLY=TEXT (only the cases naming it), SZ_PAGES_REPEAT=K
// (each page case K times a rep, for a profiler), SZ_PAGES_TARGET=NAME (as --target).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "core/capacity/format.h"
#include "core/capacity/tables.h"
#include "core/reference.h"
#include "cpu/capacity_codec.h"
#include "cpu/cpu_targets.h"
#include "splitzip/splitzip.hpp"

using namespace splitzip;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// CPU seconds of the whole process (all threads): on a loaded machine the
// single-thread figure from it is the codec's speed when it has a core.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Row {
  double ratio = 0, enc = 0, dec = 0, enc_cpu = 0, dec_cpu = 0;
  bool exact = false;
  std::vector<uint8_t> frame;
};

Row run(const std::vector<uint8_t>& in, Dtype d, int threads, int reps, Mode mode,
        const std::function<FrameOutcome(const CompressArgs&)>& comp,
        const std::function<FrameOutcome(const DecompressArgs&)>& decomp) {
  Row r;
  const uint64_t n = in.size() / dtype_bytes(d);
  std::vector<uint8_t> frame(compress_bound(d, n));
  std::vector<uint8_t> out(in.size());
  CompressArgs a;
  a.dtype = d;
  a.src = in.data();
  a.n = n;
  a.dst = frame.data();
  a.capacity = frame.size();
  a.threads = threads;
  a.mode = mode;
  DecompressArgs da;
  da.dst = out.data();
  da.capacity = out.size();
  da.threads = threads;
  double be = 1e30, bd = 1e30, bec = 1e30, bdc = 1e30;
  uint64_t fs = 0;
  for (int k = 0; k < reps; ++k) {
    double c0 = cpu_now();
    double t0 = now();
    const FrameOutcome o = comp(a);
    be = std::min(be, now() - t0);
    bec = std::min(bec, cpu_now() - c0);
    if (o.status != Status::ok) {
      std::fprintf(stderr, "compress: %s\n", status_name(o.status));
      std::exit(1);
    }
    fs = o.frame_size;
    da.src = frame.data();
    da.src_size = fs;
    c0 = cpu_now();
    t0 = now();
    const FrameOutcome od = decomp(da);
    bd = std::min(bd, now() - t0);
    bdc = std::min(bdc, cpu_now() - c0);
    if (od.status != Status::ok) {
      std::fprintf(stderr, "decompress: %s\n", status_name(od.status));
      std::exit(1);
    }
  }
  r.ratio = double(in.size()) / double(fs);
  r.enc = in.size() / be / 1e9;
  r.dec = in.size() / bd / 1e9;
  r.enc_cpu = in.size() / bec / 1e9;
  r.dec_cpu = in.size() / bdc / 1e9;
  r.exact = out == in;
  frame.resize(fs);
  r.frame = std::move(frame);
  return r;
}

// The public API with the cpu backend and default options otherwise.
std::function<FrameOutcome(const CompressArgs&)> api_compress(Mode mode) {
  return [mode](const CompressArgs& a) {
    CompressOptions o;
    o.backend = "cpu";
    o.threads = a.threads;
    o.mode = mode;
    const Result r = compress(a.dtype, a.src, a.n, a.dst, a.capacity, o);
    FrameOutcome f;
    f.status = r.status;
    f.frame_size = r.size;
    return f;
  };
}

FrameOutcome api_decompress(const DecompressArgs& a) {
  DecompressOptions o;
  o.backend = "cpu";
  o.threads = a.threads;
  const Result r = decompress(a.src, a.src_size, a.dst, a.capacity, o);
  FrameOutcome f;
  f.status = r.status;
  f.decoded_size = r.size;
  return f;
}

std::string g_suffix;  // " [TARGET]" when --target forced one

void print(const char* name, const Row& r, int threads, const char* extra = "") {
  std::printf("{\"codec\": \"%s%s\", \"threads\": %d, \"ratio\": %.4f, \"encode_gbps\": %.3f, \"decode_gbps\": %.3f, "
              "\"encode_gbps_per_cpu_s\": %.3f, \"decode_gbps_per_cpu_s\": %.3f, \"exact\": %s%s}\n",
              name, std::strncmp(name, "splitzip", 8) == 0 ? g_suffix.c_str() : "", threads, r.ratio, r.enc, r.dec, r.enc_cpu, r.dec_cpu, r.exact ? "true" : "false", extra);
  std::fflush(stdout);
}

uint64_t huffman_bits(const uint32_t counts[256]) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> q;
  for (int e = 0; e < 256; ++e)
    if (counts[e]) q.push(counts[e]);
  if (q.size() < 2) return 0;
  uint64_t cost = 0;
  while (q.size() > 1) {
    const uint64_t a = q.top();
    q.pop();
    const uint64_t b = q.top();
    q.pop();
    cost += a + b;
    q.push(a + b);
  }
  return cost;
}

// Sizes of the exponent part under the alternatives, from the block
// histograms and the normative lengths; residual and frame bytes are added
// as in the format.
void variants(const std::vector<uint8_t>& in, Dtype d) {
  const uint64_t n = in.size() / dtype_bytes(d);
  const DtypeGeometry g = geometry_of(static_cast<uint32_t>(d));
  std::vector<uint8_t> exps(n);
  with_traits(d, [&](auto t) {
    using T = decltype(t);
    for (uint64_t i = 0; i < n; ++i) {
      typename T::Bits v;
      std::memcpy(&v, in.data() + i * T::kBytes, sizeof v);
      exps[i] = static_cast<uint8_t>(T::exponent(v));
    }
  });
  const double res_bytes = n * g.res_bytes + std::ceil(n * g.res_high / 8.0);
  double h0_bits = 0, huff_bits = 0;
  double fmt_bytes[3] = {0, 0, 0};  // S = 8, 16, 32 with the L=12 lengths
  const uint32_t S_list[3] = {8, 16, 32};
  double table_bytes = 0, frame_h0_whole = 0;
  uint32_t whole[256] = {};
  for (uint64_t b = 0; b < cap_blocks(n); ++b) {
    const uint64_t m = cap_block_len(n, b);
    uint32_t counts[256] = {};
    for (uint64_t j = 0; j < m; ++j) ++counts[exps[(b << kCapBlockLog2) + j]];
    for (int e = 0; e < 256; ++e) {
      whole[e] += counts[e];
      if (counts[e]) h0_bits -= counts[e] * std::log2(double(counts[e]) / m);
    }
    huff_bits += huffman_bits(counts);
    CapTable t;
    cap_code_lengths(counts, &t);
    table_bytes += t.bytes;
    for (int v = 0; v < 3; ++v) {
      const uint32_t S = S_list[v];
      std::vector<uint64_t> bits(S, 0);
      for (uint64_t j = 0; j < m; ++j) bits[j % S] += t.len[exps[(b << kCapBlockLog2) + j]];
      double z = t.bytes;
      if (t.symbols > 1) {
        z += 2 * S;
        for (uint32_t s = 0; s < S; ++s) z += (bits[s] + 7) / 8;
      }
      fmt_bytes[v] += z + 4;  // + the block index entry
    }
  }
  for (int e = 0; e < 256; ++e)
    if (whole[e]) frame_h0_whole -= whole[e] * std::log2(double(whole[e]) / n);
  const double raw = in.size();
  auto ratio = [&](double exp_bytes) { return raw / (64 + res_bytes + exp_bytes); };
  std::printf("{\"variants\": true, \"elements\": %llu, \"bits_per_exp_h0_block\": %.4f, \"bits_per_exp_h0_whole\": %.4f, "
              "\"ratio_h0_block_bound\": %.4f, \"ratio_huffman_unlimited_no_overhead\": %.4f, "
              "\"ratio_L12_S8\": %.4f, \"ratio_L12_S16\": %.4f, \"ratio_L12_S32\": %.4f, \"table_bytes_per_block\": %.1f}\n",
              static_cast<unsigned long long>(n), h0_bits / n, frame_h0_whole / n, ratio(h0_bits / 8),
              ratio(huff_bits / 8), ratio(fmt_bytes[0]), ratio(fmt_bytes[1]), ratio(fmt_bytes[2]),
              table_bytes / double(cap_blocks(n)));
}

}  // namespace

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> b;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    b.resize(static_cast<size_t>(std::ftell(f)));
    std::fseek(f, 0, SEEK_SET);
    if (std::fread(b.data(), 1, b.size(), f) != b.size()) b.clear();
    std::fclose(f);
  }
  return b;
}

struct PageCase {
  std::string name;
  uint64_t page = 0;      // bytes; 0: the 256 MiB buffer
  uint32_t T = 0;         // 0: per-block tables
  double enc = 0, dec = 0;  // best seconds
  uint64_t in_bytes = 0, out_bytes = 0;
  bool exact = true;
};

// calib_all: the sets are calibrated on both sequences (no block lacks a
// symbol: every block shared), else on sequence 0 only.
// This thread's CPU seconds: the one-thread figures on a shared, loaded box.
double thread_cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Forces the cpu kernels to the Highway target named want (--target,
// SZ_PAGES_TARGET); false, with a message, when it cannot run here.
bool force_target_named(const char* want) {
  int64_t found = 0;
  for (const int64_t t : cpu::runnable_targets())
    if (std::strcmp(cpu::target_name(t), want) == 0) found = t;
  if (found == 0) {
    std::fprintf(stderr, "capacity_bench: target %s is not runnable here\n", want);
    return false;
  }
  cpu::force_target(found);
  return true;
}

int pages_main(const std::string& dir, int reps, bool calib_all) {
  // SZ_PAGES_ONLY=text: only the cases whose name contains it (and the 256 MiB row).
  const char* only = std::getenv("SZ_PAGES_ONLY");
  // SZ_PAGES_REPEAT=k: each page case k times a rep (for a profiler).
  const int page_repeat = std::getenv("SZ_PAGES_REPEAT") ? std::max(1, std::atoi(std::getenv("SZ_PAGES_REPEAT"))) : 1;
  // SZ_PAGES_TARGET=NAME: the cpu kernels forced to one Highway target (AVX2 on an AVX-512 host).
  if (const char* want = std::getenv("SZ_PAGES_TARGET"))
    if (!force_target_named(want)) return 2;
  std::vector<std::vector<uint8_t>> test;  // sequence 1 of each file
  std::vector<std::vector<uint8_t>> calib;
  for (int layer = 0; layer < 64; ++layer)
    for (const char* kv : {"k", "v"}) {
      char name[64];
      std::snprintf(name, sizeof name, "/layer%02d_%s.bf16", layer, kv);
      auto b = read_file(dir + name);
      if (b.empty()) continue;
      const size_t half = b.size() / 2;
      calib.emplace_back(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(calib_all ? b.size() : half));
      test.emplace_back(b.begin() + static_cast<std::ptrdiff_t>(half), b.end());
    }
  if (test.empty()) {
    std::fprintf(stderr, "no layer*_{k,v}.bf16 in %s\n", dir.c_str());
    return 2;
  }
  std::vector<uint8_t> big(uint64_t{256} << 20);
  for (uint64_t off = 0, i = 0; off < big.size(); ++i) {
    const auto& t = test[i % test.size()];
    const uint64_t k = std::min<uint64_t>(t.size(), big.size() - off);
    std::memcpy(big.data() + off, t.data(), k);
    off += k;
  }
  const uint32_t Ts[] = {1, 2, 8, 32};
  std::vector<std::vector<TableSet>> sets(4);
  for (int ti = 0; ti < 4; ++ti)
    for (const auto& c : calib) {
      TableSet ts;
      const void* bufs[1] = {c.data()};
      const uint64_t n[1] = {c.size() / 2};
      if (calibrate_tables(Dtype::bf16, bufs, n, 1, &ts, Ts[ti]) != Status::ok) return 1;
      sets[ti].push_back(ts);
    }
  std::vector<PageCase> cases;
  cases.push_back({"256 MiB buffer, per-block tables", 0, 0});
  for (uint64_t page : {uint64_t{32768}, uint64_t{65536}}) {
    cases.push_back({std::to_string(page >> 10) + " KiB pages, per-block tables", page, 0});
    for (uint32_t T : Ts) cases.push_back({std::to_string(page >> 10) + " KiB pages, set T=" + std::to_string(T), page, T});
  }
  if (only != nullptr)
    cases.erase(std::remove_if(cases.begin() + 1, cases.end(),
                               [&](const PageCase& c) { return c.name.find(only) == std::string::npos; }),
                cases.end());
  std::vector<uint8_t> frames(compress_bound(Dtype::bf16, big.size() / 2)), out(big.size());
  double memcpy_best = 1e30;
  auto code = [&](PageCase& c) {
    // The units: the big buffer, or every page of every file.
    struct Unit { const uint8_t* p; uint64_t bytes; const TableSet* set; };
    std::vector<Unit> units;
    if (c.page == 0) {
      units.push_back({big.data(), big.size(), nullptr});
    } else {
      int ti = 0;
      while (c.T != 0 && Ts[ti] != c.T) ++ti;
      // Serving order: page p of every layer and K/V, then page p + 1 (a
      // block of tokens moves through all layers), each with its own set.
      uint64_t longest = 0;
      for (const auto& t : test) longest = std::max<uint64_t>(longest, t.size());
      for (uint64_t off = 0; off < longest; off += c.page)
        for (size_t f = 0; f < test.size(); ++f)
          if (off < test[f].size())
            units.push_back({test[f].data() + off, std::min<uint64_t>(c.page, test[f].size() - off),
                           c.T != 0 ? &sets[ti][f] : nullptr});
    }
    std::vector<uint64_t> at(units.size() + 1, 0), sizes(units.size());
    for (size_t u = 0; u < units.size(); ++u) at[u + 1] = at[u] + compress_bound(Dtype::bf16, units[u].bytes / 2);
    if (frames.size() < at.back()) frames.resize(at.back());
    // Through the public batch calls, one thread, checksum on: one call for
    // every page each way (encode: each page with its file's set, as an
    // offload store's put of blocks; decode: given every set).
    CompressOptions co;
    co.mode = Mode::capacity;
    co.threads = 1;
    std::vector<CompressItem> citems(units.size());
    std::vector<Result> cres(units.size());
    for (size_t u = 0; u < units.size(); ++u) {
      citems[u].src = units[u].p;
      citems[u].n_elems = units[u].bytes / 2;
      citems[u].dst = frames.data() + at[u];
      citems[u].dst_capacity = at[u + 1] - at[u];
      citems[u].tables = units[u].set;
    }
    double t0 = thread_cpu_now();
    if (compress_batch(Dtype::bf16, citems.data(), citems.size(), cres.data(), co) != Status::ok) c.exact = false;
    const double te = thread_cpu_now() - t0;
    for (size_t u = 0; u < units.size(); ++u) sizes[u] = cres[u].size;
    uint64_t in_b = 0, out_b = 0, o_at = 0;
    std::vector<DecompressItem> items(units.size());
    std::vector<Result> results(units.size());
    for (size_t u = 0; u < units.size(); ++u) {
      items[u].src = frames.data() + at[u];
      items[u].src_size = sizes[u];
      items[u].dst = out.data() + o_at;
      items[u].dst_capacity = units[u].bytes;
      o_at += units[u].bytes;
    }
    DecompressOptions dopt;
    dopt.threads = 1;
    if (c.T != 0) {
      int ti = 0;
      while (Ts[ti] != c.T) ++ti;
      dopt.tables = sets[ti].data();
      dopt.n_tables = sets[ti].size();
    }
    t0 = thread_cpu_now();
    if (decompress_batch(items.data(), items.size(), results.data(), dopt) != Status::ok) c.exact = false;
    const double td = thread_cpu_now() - t0;
    o_at = 0;
    for (size_t u = 0; u < units.size(); ++u) {
      if (std::memcmp(out.data() + o_at, units[u].p, units[u].bytes) != 0) c.exact = false;
      o_at += units[u].bytes;
      in_b += units[u].bytes;
      out_b += sizes[u];
    }
    c.enc = c.enc == 0 ? te : std::min(c.enc, te);
    c.dec = c.dec == 0 ? td : std::min(c.dec, td);
    c.in_bytes = in_b;
    c.out_bytes = out_b;
  };
  for (int r = 0; r < reps; ++r) {
    double t0 = thread_cpu_now();
    std::memcpy(out.data(), big.data(), big.size());
    memcpy_best = std::min(memcpy_best, thread_cpu_now() - t0);
    for (auto& c : cases)
      for (int k = 0; k < (&c == &cases[0] ? 1 : page_repeat); ++k) code(c);
  }
  const double mc = big.size() / memcpy_best / 1e9;
  const PageCase& b = cases[0];
  const double be = b.in_bytes / b.enc / 1e9, bd = b.in_bytes / b.dec / 1e9;
  std::printf("memcpy (256 MiB, same run): %.2f GB/s\n\n", mc);
  std::printf("| case | ratio | encode GB/s | decode GB/s | encode / memcpy | decode / memcpy | encode / 256 MiB | decode / 256 MiB | round trip exact |\n");
  std::printf("|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (const auto& c : cases) {
    const double e = c.in_bytes / c.enc / 1e9, d = c.in_bytes / c.dec / 1e9;
    std::printf("| %s | %.4f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f | %s |\n", c.name.c_str(),
                double(c.in_bytes) / c.out_bytes, e, d, e / mc, d / mc, e / be, d / bd, c.exact ? "yes" : "NO");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "pages")
    return pages_main(argv[2], std::atoi(argv[3]), argc >= 5 && std::string(argv[4]) == "calib-all");
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: capacity_bench FILE DTYPE THREADS REPS [--ref] [--variants] [--memcpy] [--fast-cpu] "
                 "[--target NAME]\n");
    return 2;
  }
  Dtype d;
  if (!parse_dtype(argv[2], &d)) return 2;
  const int threads = std::atoi(argv[3]);
  const int reps = std::atoi(argv[4]);
  bool ref = false, var = false, memcpy_row = false, fast_cpu = false;
  for (int i = 5; i < argc; ++i) {
    memcpy_row |= std::strcmp(argv[i], "--memcpy") == 0;
    fast_cpu |= std::strcmp(argv[i], "--fast-cpu") == 0;
    ref |= std::strcmp(argv[i], "--ref") == 0;
    var |= std::strcmp(argv[i], "--variants") == 0;
    if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      const char* want = argv[++i];
      if (!force_target_named(want)) return 2;
      g_suffix = std::string(" [") + want + "]";
    }
  }
  std::FILE* fp = std::fopen(argv[1], "rb");
  if (!fp) return 1;
  std::fseek(fp, 0, SEEK_END);
  std::vector<uint8_t> in(static_cast<size_t>(std::ftell(fp)) / dtype_bytes(d) * dtype_bytes(d));
  std::fseek(fp, 0, SEEK_SET);
  if (std::fread(in.data(), 1, in.size(), fp) != in.size()) return 1;
  std::fclose(fp);
  if (var) variants(in, d);
  const Row cap = run(
      in, d, threads, reps, Mode::capacity, [](const CompressArgs& a) { return capacity_compress_frame(a); },
      capacity_decompress_frame);
  std::string extra;
  if (ref) {
    const Row rc = run(in, d, 1, 1, Mode::capacity, reference_compress, reference_decompress);
    extra = std::string(", \"identical_to_reference\": ") + (rc.frame == cap.frame ? "true" : "false");
    print("splitzip-capacity (reference)", rc, 1);
    const Row rf = run(in, d, 1, 1, Mode::fast, reference_compress, reference_decompress);
    print("splitzip-fast (reference)", rf, 1);
  }
  print("splitzip-capacity (cpu, no checksum)", cap, threads, extra.c_str());
  // What users run: the public API, backend "cpu", default options (the
  // block checksum on, verified on decode).
  const Row api = run(in, d, threads, reps, Mode::capacity, api_compress(Mode::capacity),
                      api_decompress);
  print("splitzip-capacity (cpu)", api, threads);
  if (fast_cpu) {  // mode 0 the same way (library build: build_lib.sh)
    const Row fr = run(in, d, threads, reps, Mode::fast, api_compress(Mode::fast), api_decompress);
    print("splitzip-fast (cpu)", fr, threads);
  }
  if (memcpy_row) {  // baseline in the same run: copy of the input, both directions
    Row mc;
    std::vector<uint8_t> dst(in.size());
    double b = 1e30, bc = 1e30;
    for (int k = 0; k < reps; ++k) {
      const double c0 = cpu_now(), t0 = now();
      std::memcpy(dst.data(), in.data(), in.size());
      b = std::min(b, now() - t0);
      bc = std::min(bc, cpu_now() - c0);
    }
    mc.ratio = 1;
    mc.enc = mc.dec = in.size() / b / 1e9;
    mc.enc_cpu = mc.dec_cpu = in.size() / bc / 1e9;
    mc.exact = dst == in;
    print("memcpy", mc, 1);
  }
  return 0;
}
