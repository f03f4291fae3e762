// SPDX-License-Identifier: Apache-2.0
// Target listing/forcing and the thread override (cpu/cpu_targets.h).
#include "cpu/cpu_targets.h"

#include <atomic>

#include "cpu/kernels.h"
#include "hwy/highway.h"
#include "hwy/targets.h"

namespace splitzip {
namespace cpu {
namespace {

std::atomic<int64_t> g_forced{0};
std::atomic<int> g_threads{0};

std::vector<int64_t> bits_to_list(int64_t bits) {
  std::vector<int64_t> out;
  // Lower bit = better target in Highway's numbering.
  for (; bits != 0; bits &= bits - 1) out.push_back(bits & -bits);
  return out;
}

}  // namespace

std::vector<int64_t> runnable_targets() {
  // SupportedTargets() reflects a forced target; ask with the mock off.
  const int64_t forced = g_forced.load();
  if (forced != 0) hwy::SetSupportedTargetsForTest(0);
  const int64_t bits = hwy::SupportedTargets() & HWY_TARGETS;
  if (forced != 0) hwy::SetSupportedTargetsForTest(forced);
  return bits_to_list(bits);
}

std::vector<int64_t> compiled_targets() { return bits_to_list(HWY_TARGETS); }

const char* target_name(int64_t target) { return hwy::TargetName(target); }

void force_target(int64_t target) {
  g_forced.store(target);
  hwy::SetSupportedTargetsForTest(target);
}

int64_t active_target() { return encode_target(); }

void set_thread_override(int threads) { g_threads.store(threads > 0 ? threads : 0); }

int thread_override() { return g_threads.load(); }

}  // namespace cpu
}  // namespace splitzip
