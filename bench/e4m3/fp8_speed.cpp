// SPDX-License-Identifier: Apache-2.0
// fp8 throughput of either mode against zstd -1 in the same run, one frame
// per file (each KV layer its own frame, as an offload layer writes them),
// or with --concat one frame of all files (the thread-scaling figure: a
// 196 KiB layer is only 3 capacity blocks), cpu backend, dynamic codebook
// (the default). Best of R alternating runs.
//
//   splitzip_bench_fp8 [--dtype fp8_e4m3|fp8_e5m2] [--mode fast|capacity]
//                      [--target AVX2|AVX3|...] [--threads T] [--no-checksum]
//                      [--concat] [--reps R] FILE...
// A (dtype, mode) pair the format does not define prints refused=STATUS.
// Prints one line of key=value figures (bench/e4m3/fp8_peers.py reads it).
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cpu/cpu_targets.h"
#include "splitzip/splitzip.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "splitzip_bench_fp8: %s\n", what.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  splitzip::Dtype dtype = splitzip::Dtype::fp8_e4m3;
  std::string target;
  splitzip::Mode mode = splitzip::Mode::fast;
  int threads = 1, reps = 7;
  bool checksum = true, concat = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dtype" && i + 1 < argc) {
      if (!splitzip::parse_dtype(argv[++i], &dtype)) return fail("unknown dtype");
    } else if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "fast" && m != "capacity") return fail("mode is fast or capacity");
      mode = m == "fast" ? splitzip::Mode::fast : splitzip::Mode::capacity;
    } else if (a == "--target" && i + 1 < argc) {
      target = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::stoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (a == "--no-checksum") {
      checksum = false;
    } else if (a == "--concat") {
      concat = true;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) return fail("no input files");
  if (!target.empty()) {
    bool found = false;
    for (int64_t t : splitzip::cpu::runnable_targets())
      if (target == splitzip::cpu::target_name(t)) {
        splitzip::cpu::force_target(t);
        found = true;
      }
    if (!found) return fail("target " + target + " is not runnable here");
  }
  std::vector<std::vector<uint8_t>> in, frames, zframes, out;
  uint64_t total = 0;
  for (const auto& p : paths) {
    std::ifstream f(p, std::ios::binary);
    if (!f) return fail("cannot read " + p);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    total += bytes.size();
    if (concat && !in.empty()) in.back().insert(in.back().end(), bytes.begin(), bytes.end());
    else in.push_back(std::move(bytes));
  }
  for (const auto& b : in) {
    frames.emplace_back(splitzip::compress_bound(dtype, b.size()));
    zframes.emplace_back(ZSTD_compressBound(b.size()));
    out.emplace_back(b.size());
  }
  splitzip::CompressOptions co;
  co.backend = "cpu";
  co.threads = threads;
  co.checksum = checksum;
  co.mode = mode;
  splitzip::DecompressOptions dopt;
  dopt.backend = "cpu";
  dopt.threads = threads;
  std::vector<uint64_t> fsize(in.size()), zsize(in.size());
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  double best[4] = {1e30, 1e30, 1e30, 1e30};  // sz enc, sz dec, zstd enc, zstd dec
  bool exact = true;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (size_t i = 0; i < in.size(); ++i) {
      const auto res = splitzip::compress(dtype, in[i].data(), in[i].size(), frames[i].data(), frames[i].size(), co);
      if (res.status == splitzip::Status::undefined_mode) {
        std::printf("dtype=%s mode=%s refused=%s message=\"%s\"\n", splitzip::dtype_name(dtype),
                    mode == splitzip::Mode::fast ? "fast" : "capacity", splitzip::status_name(res.status),
                    splitzip::status_message(res.status));
        return 0;
      }
      if (!res.ok()) return fail(std::string("compress: ") + splitzip::status_message(res.status));
      fsize[i] = res.size;
    }
    double t1 = now();
    for (size_t i = 0; i < in.size(); ++i) {
      const auto res = splitzip::decompress(frames[i].data(), fsize[i], out[i].data(), out[i].size(), dopt);
      if (!res.ok()) return fail(std::string("decompress: ") + splitzip::status_message(res.status));
    }
    double t2 = now();
    for (size_t i = 0; i < in.size(); ++i)
      zsize[i] = ZSTD_compress2(cctx, zframes[i].data(), zframes[i].size(), in[i].data(), in[i].size());
    double t3 = now();
    for (size_t i = 0; i < in.size(); ++i)
      ZSTD_decompressDCtx(dctx, out[i].data(), out[i].size(), zframes[i].data(), zsize[i]);
    double t4 = now();
    const double t[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
    for (int k = 0; k < 4; ++k) best[k] = t[k] < best[k] ? t[k] : best[k];
    for (size_t i = 0; i < in.size(); ++i) {
      splitzip::decompress(frames[i].data(), fsize[i], out[i].data(), out[i].size(), dopt);
      exact = exact && out[i] == in[i];
    }
  }
  uint64_t fs = 0, zs = 0;
  for (size_t i = 0; i < in.size(); ++i) fs += fsize[i], zs += zsize[i];
  std::printf("dtype=%s mode=%s target=%s threads=%d checksum=%d frames=%zu bytes=%llu ratio=%.4f enc=%.3f dec=%.3f "
              "zstd1_ratio=%.4f zstd1_enc=%.3f zstd1_dec=%.3f enc_x=%.2f dec_x=%.2f exact=%d\n",
              splitzip::dtype_name(dtype), mode == splitzip::Mode::fast ? "fast" : "capacity",
              splitzip::cpu::target_name(splitzip::cpu::active_target()), threads,
              checksum ? 1 : 0, in.size(), static_cast<unsigned long long>(total), double(total) / fs,
              total / best[0] / 1e9, total / best[1] / 1e9, double(total) / zs, total / best[2] / 1e9,
              total / best[3] / 1e9, best[2] / best[0], best[3] / best[1], exact ? 1 : 0);
  ZSTD_freeCCtx(cctx);
  ZSTD_freeDCtx(dctx);
  return exact ? 0 : 1;
}
