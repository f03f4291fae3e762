// SPDX-License-Identifier: Apache-2.0
// Lazy, once-only Kokkos initialization with finalize at exit.
#include "backends/kokkos/kokkos_runtime.h"

#include <Kokkos_Core.hpp>
#include <cstdlib>

namespace splitzip {
namespace kokkos_impl {
namespace {

enum class State { untouched, ours, theirs, failed };

std::mutex& state_mutex() {
  static std::mutex m;
  return m;
}
State g_state = State::untouched;

// Registered with atexit right after our initialize, so it runs before the
// destructors of Kokkos statics created earlier. The host program may have
// finalized in the meantime.
void finalize_ours() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

}  // namespace

bool ensure_runtime() {
  std::lock_guard<std::mutex> lock(state_mutex());
  if (Kokkos::is_initialized()) {
    if (g_state == State::untouched) g_state = State::theirs;
    return true;
  }
  if (g_state != State::untouched) return false;  // failed, or finalized since
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized()) {
    g_state = State::failed;
    return false;
  }
#endif
  try {
    Kokkos::initialize();
  } catch (...) {
    g_state = State::failed;
    return false;
  }
  g_state = State::ours;
  std::atexit(finalize_ours);
  return true;
}

bool runtime_usable() {
  std::lock_guard<std::mutex> lock(state_mutex());
  if (Kokkos::is_initialized()) return true;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized()) return false;
#endif
  return g_state == State::untouched;
}

std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace kokkos_impl
}  // namespace splitzip
