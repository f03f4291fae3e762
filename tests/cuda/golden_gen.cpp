// SPDX-License-Identifier: Apache-2.0
// Writes GPU-produced frames for tests/golden/gpu: every case of
// gpu_golden_cases() compressed by cuda::compress_async on the current
// device, plus MANIFEST.txt. Run by scripts/gpu_check.sh:
//   splitzip_cuda_golden_gen <out_dir>
// Exit status: 0 all frames written and self-verified against the CPU
// reference, 1 a mismatch or CUDA error, 2 no device / bad usage.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "splitzip/splitzip_cuda.hpp"
#include "tests/cuda/golden_manifest.h"
#include "tests/support/test_data.h"

using namespace splitzip;
using namespace splitzip::test;

namespace {

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "golden_gen: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// Compresses one case on the GPU; also checks the device calibration path
// against the host codebook for dynamic cases.
bool gpu_frame(const GpuGoldenCase& c, const std::vector<uint8_t>& input, std::vector<uint8_t>* frame) {
  const uint64_t bytes = input.size(), bound = compress_bound(c.dtype, c.n);
  const uint64_t ws_bytes = cuda::compress_workspace_size(c.dtype, c.n);
  void *vsrc = nullptr, *vdst = nullptr, *vws = nullptr, *vres = nullptr;
  bool ok = check(cudaMalloc(&vsrc, bytes + 16), "malloc") && check(cudaMalloc(&vdst, bound), "malloc") &&
            check(cudaMalloc(&vws, ws_bytes), "malloc") && check(cudaMalloc(&vres, 4096), "malloc");
  auto* src = static_cast<uint8_t*>(vsrc);
  auto* dst = static_cast<uint8_t*>(vdst);
  auto* ws = static_cast<uint8_t*>(vws);
  auto* res = static_cast<uint8_t*>(vres);
  if (ok && bytes) ok = check(cudaMemcpy(src, input.data(), bytes, cudaMemcpyHostToDevice), "upload");
  cuda::EncodeConfig cfg;
  cfg.dtype = c.dtype;
  cfg.chunk_log2 = c.chunk_log2;
  cfg.checksum = c.checksum;
  auto* d_size = reinterpret_cast<uint64_t*>(res);
  auto* d_status = reinterpret_cast<Status*>(res + 8);
  if (ok) {
    const Status s = cuda::compress_async(src, c.n, dst, bound, c.codebook, cfg, d_size, d_status, ws, ws_bytes, 0);
    if (s != Status::ok) {
      std::fprintf(stderr, "golden_gen: %s: compress_async %s\n", c.name.c_str(), status_name(s));
      ok = false;
    }
  }
  uint64_t size = 0;
  Status st = Status::internal_error;
  ok = ok && check(cudaDeviceSynchronize(), "sync") &&
       check(cudaMemcpy(&size, d_size, 8, cudaMemcpyDeviceToHost), "download") &&
       check(cudaMemcpy(&st, d_status, sizeof st, cudaMemcpyDeviceToHost), "download");
  if (ok && st != Status::ok) {
    std::fprintf(stderr, "golden_gen: %s: device status %s\n", c.name.c_str(), status_name(st));
    ok = false;
  }
  if (ok) {
    frame->resize(size);
    ok = check(cudaMemcpy(frame->data(), dst, size, cudaMemcpyDeviceToHost), "download");
  }
  if (ok && c.codebook_rule == "dynamic" && c.n > 0) {
    auto* counts = reinterpret_cast<uint64_t*>(res + 16);
    auto* cb = reinterpret_cast<Codebook*>(res + 16 + 2048);
    Codebook got;
    ok = check(cudaMemset(counts, 0, 2048), "memset") &&
         cuda::histogram_async(c.dtype, src, c.n, counts, 0) == Status::ok &&
         cuda::codebook_from_histogram_async(c.dtype, counts, cb, 0) == Status::ok &&
         check(cudaMemcpy(&got, cb, sizeof got, cudaMemcpyDeviceToHost), "download");
    if (ok && (got.count != c.codebook.count || std::memcmp(got.entries, c.codebook.entries, 16) != 0)) {
      std::fprintf(stderr, "golden_gen: %s: device calibration differs from the host codebook\n", c.name.c_str());
      ok = false;
    }
  }
  cudaFree(src);
  cudaFree(dst);
  cudaFree(ws);
  cudaFree(res);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: splitzip_cuda_golden_gen <out_dir>\n");
    return 2;
  }
  if (!cuda::device_available()) {
    std::fprintf(stderr, "golden_gen: no CUDA device\n");
    return 2;
  }
  const std::string dir = argv[1];
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::string manifest = "# GPU-produced frames (tests/cuda/golden_manifest.h describes the format).\n";
  manifest += "# Written by splitzip_cuda_golden_gen on: " + std::string(prop.name) + "\n";
  int failed = 0;
  for (GpuGoldenCase c : gpu_golden_cases()) {
    std::string err;
    const std::vector<uint8_t> input = gpu_golden_input(c, &err);
    if (input.size() != c.n * dtype_bytes(c.dtype) || !resolve_codebook(&c, input, &err)) {
      std::fprintf(stderr, "golden_gen: %s\n", err.c_str());
      ++failed;
      continue;
    }
    std::vector<uint8_t> frame;
    if (!gpu_frame(c, input, &frame) || !write_file(dir + "/" + c.frame_file, frame)) {
      ++failed;
      continue;
    }
    manifest += manifest_line(c) + "\n";
  }
  if (!write_file(dir + "/MANIFEST.txt", std::vector<uint8_t>(manifest.begin(), manifest.end()))) {
    std::fprintf(stderr, "golden_gen: cannot write %s/MANIFEST.txt\n", dir.c_str());
    return 1;
  }
  uint64_t verified = 0;
  std::vector<std::string> failures;
  verify_gpu_golden(dir, &verified, &failures);
  for (const auto& f : failures) std::fprintf(stderr, "golden_gen: verify: %s\n", f.c_str());
  std::printf("golden_gen: %llu GPU frames written and verified against the CPU reference, %d failed\n",
              static_cast<unsigned long long>(verified), failed + static_cast<int>(failures.size()));
  return failed == 0 && failures.empty() ? 0 : 1;
}
