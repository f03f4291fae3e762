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

// count, plan, write.
struct CapEncodeLaunches {
  LaunchShape count, plan, write;
  static constexpr uint32_t kLaunches = 3;
};
// setup, blocks, [hash], final.
struct CapDecodeLaunches {
  LaunchShape setup, blocks, hash, final_;  // hash.grid == 0: not launched
  uint32_t launches() const { return hash.grid ? 4u : 3u; }
};

Status cap_encode_launches(const DeviceInfo& info, const CapEncArgs& a, CapEncodeLaunches* out);
Status cap_decode_launches(const DeviceInfo& info, const CapDecArgs& a, CapDecodeLaunches* out);

// One mode-1 (or stored) frame of a.n elements into a.dst; size and status
// to the device words. Enqueue only, no synchronisation.
Status enqueue_capacity_encode(const CapEncArgs& a, uint64_t* d_size, Status* d_status, cudaStream_t stream);

// One frame; frames that are not mode 1 are left alone (out->handled = 0),
// so this may follow enqueue_decode for a frame whose mode the host does not
// know. Enqueue only, no synchronisation.
Status enqueue_capacity_decode(const CapDecArgs& a, CapDecOut* d_out, cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace splitzip
