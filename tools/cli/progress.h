/* SPDX-License-Identifier: Apache-2.0 */
// A one-line progress meter on stderr for long runs: shown only when stderr
// is a terminal and the job is large (over kProgressMinBytes), redrawn at
// most a few times a second, erased when done.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace szcli {

inline constexpr uint64_t kProgressMinBytes = uint64_t{1} << 30;

// -q turns the meter off for the rest of the run.
void set_progress_quiet(bool quiet);

class Progress {
 public:
  // total 0 means unknown (stdin): the meter appears once done passes the threshold.
  Progress(std::string label, uint64_t total);
  ~Progress();
  void update(uint64_t done);
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace szcli
