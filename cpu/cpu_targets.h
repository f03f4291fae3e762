/* SPDX-License-Identifier: Apache-2.0 */
// Test and tooling hooks for the CPU backend: which Highway targets were
// compiled and run here, forcing one, and a thread-count override. No
// vector types.
#pragma once

#include <cstdint>
#include <vector>

namespace splitzip {
namespace cpu {

// Highway targets compiled into the kernels that this CPU can run, best
// first (e.g. AVX2, SSE4, SSSE3, SCALAR on a Zen 3).
std::vector<int64_t> runnable_targets();
// Every target compiled into the kernels, runnable here or not.
std::vector<int64_t> compiled_targets();
const char* target_name(int64_t target);

// Restricts dispatch to one target (must be runnable); 0 restores the
// normal choice. Process-wide: not for concurrent use.
void force_target(int64_t target);
// Target the kernels dispatch to now.
int64_t active_target();

// The fp8_e4m3 kernels of the AVX3 target use VBMI/VBMI2 (byte permutes,
// expand, compress) where the CPU has them; off runs the plain AVX3 loops
// (tests cover both). Process-wide, on by default.
void set_e4m3_vbmi2(bool on);
// Whether they are in use now (on, the CPU has them, AVX3 dispatched).
bool e4m3_vbmi2();

// Threads used when a job asks for the default (threads <= 0); 0 = none.
void set_thread_override(int threads);
int thread_override();

// Smallest buffer (uncompressed bytes) that gets more than one thread by
// default; see cpu_backend.cpp for the measurement behind it.
uint64_t parallel_min_bytes();

// Smallest output that uses non-temporal stores. Tests lower it to run the
// streaming paths on small buffers; 0 restores the default.
uint64_t stream_min_bytes();
void set_stream_min_bytes(uint64_t bytes);

}  // namespace cpu
}  // namespace splitzip
