/* SPDX-License-Identifier: Apache-2.0 */
// Kokkos must be initialized before any kernel runs. The backend does it
// lazily on first use (and finalizes at exit) unless the host program has
// already initialized Kokkos itself, in which case that instance is used and
// its lifetime is the program's business.
#pragma once

#include <mutex>

namespace splitzip {
namespace kokkos_impl {

// Initializes Kokkos once if nobody has. False when Kokkos cannot be used in
// this process: initialization failed, or Kokkos was finalized after splitzip
// first saw it (Kokkos cannot be restarted).
bool ensure_runtime();

// Like ensure_runtime() without initializing: false only when Kokkos is known
// to be unusable.
bool runtime_usable();

// Held around every launch: the default instance of a Serial (and CUDA)
// space is shared by all host threads and Kokkos 3.x launches on it are not
// safe from several threads at once.
std::mutex& launch_mutex();

}  // namespace kokkos_impl
}  // namespace splitzip
