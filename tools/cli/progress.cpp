// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/progress.h"

#include <atomic>

#include <unistd.h>

#include <cstdio>

namespace szcli {

namespace {
std::atomic<bool> g_quiet{false};
}  // namespace

void set_progress_quiet(bool quiet) { g_quiet = quiet; }

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), tty_(!g_quiet && isatty(2) == 1) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done) {
  if (!tty_) return;
  if (total_ ? total_ <= kProgressMinBytes : done <= kProgressMinBytes) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(200) && done != total_) return;
  last_ = now;
  shown_ = true;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double rate = secs > 0 ? static_cast<double>(done) / secs / 1e9 : 0.0;
  if (total_)
    std::fprintf(stderr, "\r%s: %.2f / %.2f GiB (%3.0f%%) %.2f GB/s ", label_.c_str(),
                 static_cast<double>(done) / gib, static_cast<double>(total_) / gib,
                 100.0 * static_cast<double>(done) / static_cast<double>(total_), rate);
  else
    std::fprintf(stderr, "\r%s: %.2f GiB %.2f GB/s ", label_.c_str(), static_cast<double>(done) / gib, rate);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!shown_) return;
  shown_ = false;
  std::fputs("\r\033[K", stderr);  // erase the meter line
  std::fflush(stderr);
}

}  // namespace szcli
