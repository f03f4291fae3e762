// SPDX-License-Identifier: Apache-2.0
// splitzip_small_frame_timing: the fixed cost of coding one small frame
// (host offload stores KV pages of a few KiB to a few hundred KiB, one
// frame each). Compress and decompress of single frames of real bf16 KV
// (layers 1-4 of data/kv cut into consecutive SIZE-byte pages, up to 16,
// coded in turn so that no call sees its predecessor's data or tables,
// as consecutive offload pages), fast and capacity mode,
// checksum off and on, one thread, through the public API. Per call: the
// best of --reps batches of --batch calls, this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID: a loaded machine's other tenants left out),
// beside memcpy of the same bytes timed the same way. A development tool,
// not a test.
//
//   splitzip_small_frame_timing [--kib 4,32,128] [--reps 200] [--batch 20]
//                               [--mode fast|capacity] [--checksum off|on]
//   (--mode / --checksum: only those rows, e.g. under perf record)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/test_data.h"

namespace {

using namespace splitzip;

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Seconds per call: best batch over reps.
template <class F>
double per_call(int reps, int batch, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = thread_seconds();
    for (int i = 0; i < batch; ++i) f();
    best = std::min(best, (thread_seconds() - t0) / batch);
  }
  return best;
}

void fail(const char* what, Status s) {
  std::printf("%s failed: %s\n", what, status_name(s));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> kibs = {4, 32, 128};
  int reps = 200, batch = 20;
  std::string only_mode, only_checksum;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", k.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (k == "--kib") {
      kibs.clear();
      for (size_t p = 0; p < v.size();) {
        const size_t c = v.find(',', p);
        kibs.push_back(std::strtoull(v.substr(p, c - p).c_str(), nullptr, 10));
        p = c == std::string::npos ? v.size() : c + 1;
      }
    } else if (k == "--reps") {
      reps = std::atoi(v.c_str());
    } else if (k == "--mode") {
      only_mode = v;
    } else if (k == "--checksum") {
      only_checksum = v;
    } else if (k == "--batch") {
      batch = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::vector<uint8_t> pool;
  for (const auto& name : test::bf16_data_files()) {
    if (name.rfind("layer00", 0) == 0) continue;  // layer 0 V repeats per token
    const auto b = test::load_data_file(name);
    pool.insert(pool.end(), b.begin(), b.end());
  }
  if (pool.empty()) {
    std::fprintf(stderr, "no real bf16 data found (data/kv)\n");
    return 1;
  }
  std::printf(
      "single frames of real bf16 KV (16 pages in turn), 1 thread, thread CPU time per call, "
      "best of %d batches of %d\n",
      reps, batch);
  std::printf("%8s %-8s %-5s %10s %10s %10s %8s\n", "KiB", "mode", "csum", "memcpy us", "comp us", "decomp us",
              "ratio");
  for (uint64_t kib : kibs) {
    const uint64_t bytes = kib * 1024, n = bytes / 2;
    if (bytes > pool.size()) {
      std::fprintf(stderr, "%llu KiB is more than the data (%zu bytes)\n", static_cast<unsigned long long>(kib),
                   pool.size());
      return 1;
    }
    const uint64_t pages = std::min<uint64_t>(16, pool.size() / bytes);
    const uint64_t bound = compress_bound(Dtype::bf16, n);
    std::vector<uint8_t> frames(pages * bound), out(bytes), copy(bytes);
    std::vector<uint64_t> sizes(pages);
    for (Mode mode : {Mode::fast, Mode::capacity}) {
      for (bool csum : {false, true}) {
        if (!only_mode.empty() && only_mode != (mode == Mode::capacity ? "capacity" : "fast")) continue;
        if (!only_checksum.empty() && only_checksum != (csum ? "on" : "off")) continue;
        CompressOptions co;
        co.backend = "cpu";
        co.threads = 1;
        co.mode = mode;
        co.checksum = csum;
        DecompressOptions dopt;
        dopt.backend = "cpu";
        dopt.threads = 1;
        uint64_t total = 0;
        for (uint64_t p = 0; p < pages; ++p) {
          Result r = compress(Dtype::bf16, pool.data() + p * bytes, n, frames.data() + p * bound, bound, co);
          if (!r.ok()) fail("compress", r.status);
          sizes[p] = r.size;
          total += r.size;
          r = decompress(frames.data() + p * bound, sizes[p], out.data(), out.size(), dopt);
          if (!r.ok()) fail("decompress", r.status);
          if (r.size != bytes || std::memcmp(out.data(), pool.data() + p * bytes, bytes) != 0) {
            std::printf("round trip differs\n");
            return 1;
          }
        }
        uint64_t pc = 0, pd = 0;  // the next page to compress / decompress
        // Alternating, so a burst of load hits all three alike.
        double mem = 1e30, comp = 1e30, dec = 1e30;
        for (int round = 0; round < 4; ++round) {
          mem = std::min(mem, per_call(reps / 4, batch, [&] {
            std::memcpy(copy.data(), pool.data() + pd * bytes, bytes);
            pd = (pd + 1) % pages;
          }));
          comp = std::min(comp, per_call(reps / 4, batch, [&] {
            if (!compress(Dtype::bf16, pool.data() + pc * bytes, n, frames.data() + pc * bound, bound, co).ok())
              std::abort();
            pc = (pc + 1) % pages;
          }));
          dec = std::min(dec, per_call(reps / 4, batch, [&] {
            if (!decompress(frames.data() + pd * bound, sizes[pd], out.data(), out.size(), dopt).ok()) std::abort();
            pd = (pd + 1) % pages;
          }));
        }
        std::printf("%8llu %-8s %-5s %10.2f %10.2f %10.2f %8.3f\n", static_cast<unsigned long long>(kib),
                    mode == Mode::capacity ? "capacity" : "fast", csum ? "on" : "off", mem * 1e6, comp * 1e6, dec * 1e6,
                    double(bytes * pages) / double(total));
      }
    }
  }
  return 0;
}
