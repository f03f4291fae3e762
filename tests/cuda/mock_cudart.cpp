// SPDX-License-Identifier: Apache-2.0
#include "tests/cuda/mock_cudart.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace splitzip::test::mock {
namespace {

std::mutex mu;
std::vector<Op> g_ops;
std::map<const void*, std::string> g_names;  // host stub -> device name
std::map<uintptr_t, uint64_t> g_device;      // device allocations: start -> bytes
cudaError_t g_pending = cudaSuccess;
thread_local dim3 t_grid, t_block;
thread_local size_t t_shmem = 0;
thread_local cudaStream_t t_stream = nullptr;

void record(OpKind k, const std::string& name, cudaStream_t s, unsigned grid, unsigned block, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu);
  g_ops.push_back(Op{k, name, s, grid, block, bytes, false});
}
void mark_last_cooperative() {
  std::lock_guard<std::mutex> lock(mu);
  g_ops.back().cooperative = true;
}

bool is_device(const void* p) {
  std::lock_guard<std::mutex> lock(mu);
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = g_device.upper_bound(a);
  if (it == g_device.begin()) return false;
  --it;
  return a < it->first + it->second;
}

void* alloc_device(uint64_t bytes) {
  void* p = std::malloc(bytes ? bytes : 16);
  std::memset(p, 0, bytes ? bytes : 16);
  std::lock_guard<std::mutex> lock(mu);
  g_device[reinterpret_cast<uintptr_t>(p)] = bytes ? bytes : 16;
  return p;
}

void free_device(void* p) {
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu);
    g_device.erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
}

OpKind copy_kind(const void* dst, const void* src) {
  const bool d = is_device(dst), s = is_device(src);
  if (d && s) return OpKind::memcpy_d2d;
  return d ? OpKind::memcpy_h2d : OpKind::memcpy_d2h;
}

}  // namespace

void reset() {
  std::lock_guard<std::mutex> lock(mu);
  g_ops.clear();
  g_pending = cudaSuccess;
}
const std::vector<Op>& ops() { return g_ops; }
uint64_t count(OpKind k) {
  uint64_t n = 0;
  for (const Op& o : g_ops) n += o.kind == k;
  return n;
}
uint64_t ops_not_on(cudaStream_t s) {
  uint64_t n = 0;
  for (const Op& o : g_ops) n += o.stream != s;
  return n;
}
void set_pending_error(cudaError_t e) { g_pending = e; }
void* device_alloc(uint64_t bytes) { return alloc_device(bytes); }
void device_free(void* p) { free_device(p); }

}  // namespace splitzip::test::mock

using namespace splitzip::test::mock;

void sz_mock_register_name(const void* host, const char* dev);
std::string sz_mock_name_of(const void* host);

extern "C" {

// ---- what nvcc's generated host code calls ----
void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
void __cudaRegisterManagedVar(void**, void**, char*, const char*, int, size_t, int, int) {}
char __cudaInitModule(void**) { return 1; }
void __cudaRegisterFunction(void**, const char* hostFun, char*, const char* deviceName, int, uint3*, uint3*, dim3*,
                            dim3*, int*) {
  sz_mock_register_name(hostFun, deviceName);
}
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st* stream) {
  t_grid = grid;
  t_block = block;
  t_shmem = shmem;
  t_stream = stream;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shmem, void* stream) {
  *grid = t_grid;
  *block = t_block;
  *shmem = t_shmem;
  *static_cast<cudaStream_t*>(stream) = t_stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* k, const void* fun) {
  *k = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void**, size_t, cudaStream_t s) {
  record(OpKind::launch, sz_mock_name_of(reinterpret_cast<const void*>(k)), s, grid.x * grid.y * grid.z,
         block.x * block.y * block.z, 0);
  return g_pending;
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block, void** a, size_t sh, cudaStream_t s) {
  return __cudaLaunchKernel(k, grid, block, a, sh, s);
}
cudaError_t cudaLaunchKernel(const void* f, dim3 grid, dim3 block, void** a, size_t sh, cudaStream_t s) {
  return __cudaLaunchKernel(reinterpret_cast<cudaKernel_t>(const_cast<void*>(f)), grid, block, a, sh, s);
}
// Cooperative launches (the fused encode kernel) are recorded as launches
// too, flagged so the tests can tell them apart.
cudaError_t cudaLaunchCooperativeKernel(const void* f, dim3 grid, dim3 block, void**, size_t, cudaStream_t s) {
  record(OpKind::launch, sz_mock_name_of(f), s, grid.x * grid.y * grid.z, block.x * block.y * block.z, 0);
  mark_last_cooperative();
  return g_pending;
}
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* f, dim3 grid, dim3 block, void** a, size_t sh,
                                             cudaStream_t s) {
  return cudaLaunchCooperativeKernel(f, grid, block, a, sh, s);
}

// ---- the runtime API the backend uses ----
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int) {
  *v = attr == cudaDevAttrMultiProcessorCount ? 132 : 1;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void*, int, size_t, unsigned) {
  *n = 4;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*, int, size_t) {
  *n = 4;
  return cudaSuccess;
}
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void*) {
  std::memset(a, 0, sizeof *a);
  return cudaSuccess;
}
cudaError_t cudaGetLastError() {
  const cudaError_t e = g_pending;
  g_pending = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return g_pending; }
const char* cudaGetErrorString(cudaError_t) { return "mock error"; }
const char* cudaGetErrorName(cudaError_t) { return "cudaErrorMock"; }
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  std::memset(a, 0, sizeof *a);
  a->type = is_device(p) ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s) {
  *p = alloc_device(bytes);
  record(OpKind::alloc, "", s, 0, 0, bytes);
  return cudaSuccess;
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  free_device(p);
  record(OpKind::free, "", s, 0, 0, 0);
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = alloc_device(bytes);
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  free_device(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t s) {
  record(copy_kind(dst, src), "", s, 0, 0, bytes);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  record(copy_kind(dst, src), "", nullptr, 0, 0, bytes);
  record(OpKind::sync, "cudaMemcpy", nullptr, 0, 0, 0);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t bytes, cudaStream_t s) {
  record(OpKind::memset, "", s, 0, 0, bytes);
  std::memset(p, v, bytes);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  record(OpKind::sync, "cudaStreamSynchronize", s, 0, 0, 0);
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  record(OpKind::sync, "cudaDeviceSynchronize", nullptr, 0, 0, 0);
  return cudaSuccess;
}

}  // extern "C"

namespace {
std::map<const void*, std::string>& names() {
  static std::map<const void*, std::string> m;
  return m;
}
}  // namespace
void sz_mock_register_name(const void* host, const char* dev) { names()[host] = dev ? dev : "?"; }
std::string sz_mock_name_of(const void* host) {
  auto it = names().find(host);
  return it == names().end() ? "?" : it->second;
}
