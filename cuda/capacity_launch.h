/* SPDX-License-Identifier: Apache-2.0 */
// Host entry points of the capacity-mode kernels (capacity_encode.cu,
// capacity_decode.cu) and their launch shapes. Host code, CUDA runtime types.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/capacity_logic.h"
#include "cuda/launch.h"

namespace splitzip {
namespace cuda_detail {

// setup, count, plan, write.
struct CapEncodeLaunches {
  LaunchShape setup, count, plan, write;
  static constexpr uint32_t kLaunches = 4;
};
// setup, index, blocks, [hash], final.
struct CapDecodeLaunches {
  LaunchShape setup, index, blocks, hash, final_;  // hash.grid == 0: not launched
  uint32_t launches() const { return hash.grid ? 5u : 4u; }
};

Status cap_encode_launches(const DeviceInfo& info, const CapEncArgs& a, CapEncodeLaunches* out);
Status cap_decode_launches(const DeviceInfo& info, const CapDecArgs& a, CapDecodeLaunches* out);

// A mode-1 (or stored) frame per buffer (a.count of them: the one held in
// a, or a.items[]); sizes and statuses to the device arrays. Enqueue only,
// no synchronisation.
Status enqueue_capacity_encode(const CapEncArgs& a, uint64_t* d_sizes, Status* d_statuses, cudaStream_t stream);

// a.count frames; frames that are not mode 1 are left alone (handled = 0:
// nothing written to dest.sizes / statuses / corrupt for them), so this may
// follow enqueue_decode on the same outputs for frames whose mode the host
// does not know. Enqueue only, no synchronisation.
Status enqueue_capacity_decode(const CapDecArgs& a, const CapDecDest& dest, cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace splitzip
