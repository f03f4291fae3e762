/* SPDX-License-Identifier: Apache-2.0 */
// Throughput timing shared by `splitzip bench` and the demo: the median of
// repeated calls, so one preempted run on a shared machine does not skew it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace szcli {

// Calls fn once to warm up, then repeatedly until `seconds` have passed and
// at least min_calls were timed. Returns the median seconds per call.
template <class F>
double median_seconds(F&& fn, double seconds, int min_calls = 3) {
  using clock = std::chrono::steady_clock;
  fn();
  std::vector<double> t;
  const auto start = clock::now();
  while (true) {
    const auto a = clock::now();
    fn();
    const auto b = clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
    if (static_cast<int>(t.size()) >= min_calls && std::chrono::duration<double>(b - start).count() >= seconds)
      break;
  }
  std::sort(t.begin(), t.end());
  const size_t m = t.size() / 2;
  return t.size() % 2 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

inline double gb_per_s(uint64_t bytes, double secs) {
  return secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0.0;
}

}  // namespace szcli
