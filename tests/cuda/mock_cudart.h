/* SPDX-License-Identifier: Apache-2.0 */
// A recording stand-in for the CUDA runtime, linked instead of libcudart
// into splitzip_cuda_launch_tests (CPU only, no driver): the real host code
// of the CUDA backend (api.cu, encode.cu, decode.cu, calibrate.cu,
// cuda_backend.cu, compiled by nvcc) runs against it, and every kernel
// launch, copy, memset, allocation and host synchronisation it asks for is
// recorded with its stream. Kernels do not run; "device" memory is host
// memory, so copies move bytes. It answers one device of 132 SMs with 4
// resident CTAs per kernel (an H200's shape).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace splitzip::test::mock {

enum class OpKind { launch, memcpy_h2d, memcpy_d2h, memcpy_d2d, memset, alloc, free, sync };

struct Op {
  OpKind kind;
  std::string name;   // launches: the kernel's (mangled) device name
  cudaStream_t stream = nullptr;
  unsigned grid = 0, block = 0;
  uint64_t bytes = 0;
  bool cooperative = false;  // cudaLaunchCooperativeKernel
};

// Clears the record (not the allocations).
void reset();
const std::vector<Op>& ops();
uint64_t count(OpKind k);
// Ops on a stream other than `s` (host syncs and frees excluded when asked).
uint64_t ops_not_on(cudaStream_t s);
// The next runtime call that checks for errors sees `e` as pending (sticky
// until cudaGetLastError reads it).
void set_pending_error(cudaError_t e);
// Device allocations made by the test itself (tracked as device memory).
void* device_alloc(uint64_t bytes);
void device_free(void* p);

}  // namespace splitzip::test::mock
