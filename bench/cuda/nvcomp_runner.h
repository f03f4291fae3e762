/* SPDX-License-Identifier: Apache-2.0 */
// Optional nvCOMP side-by-side runs (batched LZ4, Cascaded, Bitcomp, ANS)
// for bench_cuda. Compiled only when nvCOMP's headers and library are found
// (SPLITZIP_WITH_NVCOMP); otherwise nvcomp_available() is false.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace splitzip::bench {

struct NvcompResult {
  std::string algo;
  bool ok = false;
  std::string error;
  uint64_t compressed_bytes = 0;
  double compress_ms = 0;    // median over iterations
  double decompress_ms = 0;  // median over iterations
  bool roundtrip_ok = false;
};

bool nvcomp_available();
std::string nvcomp_version();

// Runs every algorithm on the device buffer d_in (bytes long), split into
// chunk_bytes chunks. elem_bytes picks the algorithms' data type (2 for
// bf16/fp16, 4 for fp32, 1 otherwise).
std::vector<NvcompResult> run_nvcomp(const void* d_in, uint64_t bytes, uint32_t elem_bytes, uint64_t chunk_bytes,
                                     int iters, cudaStream_t stream);

}  // namespace splitzip::bench
