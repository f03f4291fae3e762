// SPDX-License-Identifier: Apache-2.0
// splitzip_e4m3_huffman_timing: is a per-64K-block Huffman code of the
// fp8_e4m3 exponent (the capacity mode's coder, FORMAT.md 4.6) at least
// 0.5x the marker layout's (4.7) CPU speed? A development tool, not a
// test; docs/DESIGN.md section 5 quotes its output.
//
//   splitzip_e4m3_huffman_timing [--mb 64] [--reps 5]
//
// Capacity mode is not defined for dtype 5, so the Huffman side runs on a
// bf16 proxy that carries exactly the E4M3 data's exponents (bf16 exponent
// field = the 4-bit E4M3 exponent) and its sign + 3 mantissa bits: the
// capacity coder sees the same symbols per 64K block, builds the same
// tables and decodes the same code stream; its join writes 2 output bytes
// per element instead of 1 (a cost the E4M3 form would not pay, so the
// proxy's speed is a lower bound of the Huffman layout's). One thread, the
// `cpu` backend, thread CPU time, best of --reps rounds, alternating, memcpy
// of the E4M3 bytes in the same rounds. Elements per second are compared.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tests/support/e4m3_data.h"
#include "tests/support/test_data.h"

namespace {

using namespace splitzip;

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double timed(const std::function<void()>& f) {
  const double t0 = cpu_seconds();
  f();
  return cpu_seconds() - t0;
}

void check(const Result& r, const char* what) {
  if (r.status != Status::ok) {
    std::fprintf(stderr, "%s: %s\n", what, status_name(r.status));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mb = 64;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: splitzip_e4m3_huffman_timing [--mb 64] [--reps 5]\n");
      return 2;
    }
  }
  // The 10 bundled tensors' f32 sources cast as vLLM does, tiled.
  std::vector<uint8_t> pool;
  for (const auto& in : test::real_inputs(Dtype::fp32)) {
    std::vector<float> f(in.n);
    std::memcpy(f.data(), in.bytes.data(), in.n * 4);
    const auto b = test::e4m3_scaled(f.data(), in.n);
    pool.insert(pool.end(), b.begin(), b.end());
  }
  if (pool.empty()) {
    std::fprintf(stderr, "no bundled data\n");
    return 1;
  }
  const uint64_t n = mb << 20;
  std::vector<uint8_t> e4(n);
  for (uint64_t i = 0; i < n; ++i) e4[i] = pool[i % pool.size()];
  // bf16 proxy: sign | exponent (the E4M3 one) << 7 | 3 mantissa bits.
  std::vector<uint16_t> bf(n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t v = e4[i];
    bf[i] = static_cast<uint16_t>(((v & 0x80u) << 8) | (((v >> 3) & 15u) << 7) | (v & 7u));
  }
  CompressOptions fast, cap;
  fast.backend = cap.backend = "cpu";
  fast.threads = cap.threads = 1;
  cap.mode = Mode::capacity;
  DecompressOptions dec;
  dec.backend = "cpu";
  dec.threads = 1;
  std::vector<uint8_t> f_marker(compress_bound(Dtype::fp8_e4m3, n)), f_huff(compress_bound(Dtype::bf16, n));
  std::vector<uint8_t> out(2 * n), copy(n);
  Result rm = compress(Dtype::fp8_e4m3, e4.data(), n, f_marker.data(), f_marker.size(), fast);
  Result rh = compress(Dtype::bf16, bf.data(), n, f_huff.data(), f_huff.size(), cap);
  check(rm, "marker compress");
  check(rh, "capacity compress");
  FrameInfo im, ih;
  check({frame_info(f_marker.data(), rm.size, &im), 0, nullptr}, "info");
  check({frame_info(f_huff.data(), rh.size, &ih), 0, nullptr}, "info");
  // Exponent bits per element: marker = codes + escape nibbles; Huffman =
  // stream 9 (tables, sizes, code streams) = the header's exp_bytes.
  const double marker_exp_bits = 8.0 * (rm.size - 64 - (n + 1) / 2) / n;
  const double huff_exp_bits = 8.0 * double(ih.escape_count) / n;
  double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
  enum { kMem, kMarkerDec, kHuffDec, kMarkerEnc, kHuffEnc };
  for (int r = 0; r < reps; ++r) {
    best[kMem] = std::min(best[kMem], timed([&] { std::memcpy(copy.data(), e4.data(), n); }));
    best[kMarkerDec] = std::min(best[kMarkerDec], timed([&] {
      check(decompress(f_marker.data(), rm.size, out.data(), n, dec), "marker decode");
    }));
    best[kHuffDec] = std::min(best[kHuffDec], timed([&] {
      check(decompress(f_huff.data(), rh.size, out.data(), 2 * n, dec), "capacity decode");
    }));
    best[kMarkerEnc] = std::min(best[kMarkerEnc], timed([&] {
      rm = compress(Dtype::fp8_e4m3, e4.data(), n, f_marker.data(), f_marker.size(), fast);
    }));
    best[kHuffEnc] = std::min(best[kHuffEnc], timed([&] {
      rh = compress(Dtype::bf16, bf.data(), n, f_huff.data(), f_huff.size(), cap);
    }));
  }
  // The proxy decodes the same values: check it.
  check(decompress(f_huff.data(), rh.size, out.data(), 2 * n, dec), "capacity decode");
  if (std::memcmp(out.data(), bf.data(), 2 * n) != 0) {
    std::fprintf(stderr, "capacity proxy round trip differs\n");
    return 1;
  }
  const double me = double(n) / 1e9;  // G elements
  std::printf("%llu MiB fp8_e4m3 (bundled KV cast, scale amax/448), 1 thread, CPU time, best of %d\n",
              static_cast<unsigned long long>(mb), reps);
  std::printf("memcpy %.2f GB/s\n", me / best[kMem]);
  // Huffman E4M3 frame = header + residual nibbles + stream 9 (no format defines it: an estimate).
  std::printf("exponent bits/element: marker %.3f, per-block Huffman %.3f; ratio marker %.4f (frame), "
              "Huffman %.4f (64 + n/2 + stream 9 bytes)\n",
              marker_exp_bits, huff_exp_bits, double(n) / rm.size,
              double(n) / (64.0 + double((n + 1) / 2) + double(ih.escape_count)));
  std::printf("decode: marker %.3f Gelem/s | Huffman (bf16 proxy) %.3f Gelem/s = %.2fx marker\n",
              me / best[kMarkerDec], me / best[kHuffDec], best[kMarkerDec] / best[kHuffDec]);
  std::printf("encode: marker %.3f Gelem/s | Huffman (bf16 proxy) %.3f Gelem/s = %.2fx marker\n",
              me / best[kMarkerEnc], me / best[kHuffEnc], best[kMarkerEnc] / best[kHuffEnc]);
  return 0;
}
