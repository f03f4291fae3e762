// SPDX-License-Identifier: Apache-2.0
// Why the CUDA backend cannot run in this process, in words: the backend's
// unavailable_reason(), which the registry gives `splitzip backends`,
// `splitzip -V` and sz_backend_unavailable_reason().
// The CUDA runtime is linked statically (cuda/CMakeLists.txt): with no driver
// installed it loads nothing and reports cudaErrorInsufficientDriver.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

namespace splitzip {

const char* cuda_unavailable_reason() {
  static const std::string reason = [] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaGetLastError();
    char buf[256];
    if (e == cudaSuccess) {
      if (n > 0) return std::string();
      return std::string("no CUDA device (driver present, 0 devices)");
    }
    if (e == cudaErrorInsufficientDriver) {
      std::snprintf(buf, sizeof buf,
                    "no CUDA driver (libcuda.so.1 not found, or older than CUDA runtime %d.%d)",
                    CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
      return std::string(buf);
    }
    if (e == cudaErrorNoDevice) return std::string("no CUDA device (driver present, none visible)");
    std::snprintf(buf, sizeof buf, "CUDA runtime error %s: %s", cudaGetErrorName(e),
                  cudaGetErrorString(e));
    return std::string(buf);
  }();
  return reason.empty() ? nullptr : reason.c_str();
}

}  // namespace splitzip
