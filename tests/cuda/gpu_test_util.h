/* SPDX-License-Identifier: Apache-2.0 */
// Helpers for the GPU tests: skip without a device, checked CUDA calls,
// RAII device buffers.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "splitzip/splitzip_cuda.hpp"

namespace splitzip::test {

#define SZ_REQUIRE_GPU()                                                                             \
  do {                                                                                               \
    if (!::splitzip::cuda::device_available())                                                       \
      GTEST_SKIP() << "no CUDA device on this machine: GPU test skipped (run scripts/gpu_check.sh on " \
                      "a GPU machine)";                                                              \
  } while (0)

#define SZ_CUDA_OK(expr)                                                   \
  do {                                                                     \
    const cudaError_t sz_e_ = (expr);                                      \
    ASSERT_EQ(sz_e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(sz_e_); \
  } while (0)

// Device memory owned by the test.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(uint64_t bytes) { reset(bytes); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), size_(o.size_) {
    o.p_ = nullptr;
    o.size_ = 0;
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  bool reset(uint64_t bytes) {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    size_ = bytes;
    return cudaMalloc(&p_, bytes ? bytes : 16) == cudaSuccess;
  }
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }
  uint64_t size() const { return size_; }
  bool upload(const void* src, uint64_t bytes, uint64_t offset = 0) {
    return bytes == 0 || cudaMemcpy(get() + offset, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  // A failed copy is a test failure (ADD_FAILURE), never silent zeros.
  std::vector<uint8_t> download(uint64_t bytes, uint64_t offset = 0) const {
    std::vector<uint8_t> out(bytes);
    if (bytes) {
      const cudaError_t e = cudaMemcpy(out.data(), get() + offset, bytes, cudaMemcpyDeviceToHost);
      if (e != cudaSuccess) ADD_FAILURE() << "download of " << bytes << " bytes: " << cudaGetErrorString(e);
    }
    return out;
  }
  bool fill(uint8_t v) { return cudaMemset(p_, v, size_ ? size_ : 16) == cudaSuccess; }

 private:
  void* p_ = nullptr;
  uint64_t size_ = 0;
};

// One value from device memory; a failed copy is a test failure.
template <class T>
T download_value(const void* d) {
  T v{};
  const cudaError_t e = cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) ADD_FAILURE() << "download_value: " << cudaGetErrorString(e);
  return v;
}

}  // namespace splitzip::test
