// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"

namespace szcli {

namespace {

constexpr uint64_t kPage = 4096;

uint64_t round_page(uint64_t n) { return (n + kPage - 1) / kPage * kPage; }

}  // namespace

// ---- AlignedBuffer ----------------------------------------------------------

AlignedBuffer::~AlignedBuffer() { std::free(p_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& o) noexcept : p_(o.p_), cap_(o.cap_) {
  o.p_ = nullptr;
  o.cap_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    std::free(p_);
    p_ = o.p_;
    cap_ = o.cap_;
    o.p_ = nullptr;
    o.cap_ = 0;
  }
  return *this;
}

void AlignedBuffer::reserve(uint64_t bytes, uint64_t keep) {
  if (bytes <= cap_ && p_) return;
  const uint64_t cap = round_page(bytes ? bytes : 1);
  if (cap < bytes || cap > SIZE_MAX) fail(kExitInternal, "cannot allocate " + std::to_string(bytes) + " bytes");
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kPage, static_cast<size_t>(cap)));
  if (!p) fail(kExitInternal, "cannot allocate " + std::to_string(bytes) + " bytes (out of memory)");
  if (keep > cap_) keep = cap_;
  if (keep) std::memcpy(p, p_, keep);
  // Touch every page now, so frames never fault on it later.
  std::memset(p + keep, 0, cap - keep);
  std::free(p_);
  p_ = p;
  cap_ = cap;
}

void AlignedBuffer::shrink_to(uint64_t limit) {
  if (cap_ <= limit) return;
  std::free(p_);
  p_ = nullptr;
  cap_ = 0;
  reserve(limit);
}

uint64_t read_growing(InputFd& in, AlignedBuffer& buf, uint64_t want, uint64_t have) {
  while (have < want) {
    if (buf.capacity() <= have) buf.reserve(std::min(want, std::max(have * 2, uint64_t{1} << 20)), have);
    const uint64_t step = std::min(want, buf.capacity()) - have;
    const uint64_t got = in.read(buf.data() + have, step);
    have += got;
    if (got < step) break;
  }
  return have;
}

// ---- FramePipeline ----------------------------------------------------------

uint32_t online_cpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

FramePipeline::FramePipeline(uint32_t coders, uint32_t slots)
    : coders_(coders ? coders : 1),
      slots_(slots > coders_ ? slots : coders_ + 1),
      state_(slots_.size(), State::free) {}

void FramePipeline::record_error(uint64_t index, int code, const std::string& message) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!failed_ || index < error_index_) {
    failed_ = true;
    error_index_ = index;
    error_code_ = code;
    error_message_ = message;
  }
  stop_ = true;
  cv_reader_.notify_all();
  cv_coder_.notify_all();
  cv_writer_.notify_all();
}

bool FramePipeline::wait_drained(uint64_t index) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_reader_.wait(lk, [&] { return stop_ || consumed_ >= index; });
  return !stop_;
}

// Runs f, turning any exception into a recorded error for frame i; false
// when f failed.
#define SZ_GUARDED(i, stmt)                                                       \
  do {                                                                            \
    try {                                                                         \
      stmt;                                                                       \
    } catch (const CliError& e) {                                                 \
      record_error((i), e.code, e.message);                                       \
      return;                                                                     \
    } catch (const std::bad_alloc&) {                                             \
      record_error((i), kExitInternal, "out of memory");                          \
      return;                                                                     \
    } catch (const std::exception& e) {                                           \
      record_error((i), kExitInternal, std::string("internal error: ") + e.what()); \
      return;                                                                     \
    }                                                                             \
  } while (0)

void FramePipeline::reader_loop(const ProduceFn& produce) {
  const uint64_t S = slots_.size();
  for (uint64_t i = 0;; ++i) {
    const size_t s = static_cast<size_t>(i % S);
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_reader_.wait(lk, [&] { return stop_ || state_[s] == State::free; });
      if (stop_) return;
    }
    PipelineSlot& slot = slots_[s];
    slot.index = i;
    slot.in_size = slot.out_size = 0;
    Produced p = Produced::none;
    SZ_GUARDED(i, p = produce(slot));
    std::lock_guard<std::mutex> lk(mu_);
    if (p != Produced::none) {
      state_[s] = State::filled;
      produced_ = i + 1;
    }
    if (p != Produced::frame) ended_ = true;
    cv_coder_.notify_one();
    if (ended_) {
      cv_coder_.notify_all();
      cv_writer_.notify_all();
      return;
    }
  }
}

void FramePipeline::coder_loop(const CodeFn& code) {
  const uint64_t S = slots_.size();
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_coder_.wait(lk, [&] { return stop_ || claimed_ < produced_ || ended_; });
    if (stop_) return;
    if (claimed_ >= produced_) {
      if (ended_) return;
      continue;
    }
    const uint64_t i = claimed_++;
    const size_t s = static_cast<size_t>(i % S);
    state_[s] = State::coding;
    lk.unlock();
    SZ_GUARDED(i, code(slots_[s]));
    lk.lock();
    state_[s] = State::coded;
    cv_writer_.notify_one();
  }
}

uint64_t FramePipeline::run(const ProduceFn& produce, const CodeFn& code, const ConsumeFn& consume) {
  const uint64_t S = slots_.size();
  std::vector<std::thread> threads;
  threads.reserve(coders_ + 1);
  try {
    threads.emplace_back([&] { reader_loop(produce); });
    for (uint32_t t = 0; t < coders_; ++t) threads.emplace_back([&] { coder_loop(code); });
  } catch (const std::exception&) {
    record_error(0, kExitInternal, "cannot start worker threads");
  }

  auto writer = [&] {
    for (uint64_t w = 0;; ++w) {
      const size_t s = static_cast<size_t>(w % S);
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_writer_.wait(lk, [&] {
          return stop_ || (ended_ && w >= produced_) || (w < produced_ && state_[s] == State::coded);
        });
        if (stop_ || w >= produced_) return;
      }
      SZ_GUARDED(w, consume(slots_[s]));
      std::lock_guard<std::mutex> lk(mu_);
      state_[s] = State::free;
      consumed_ = w + 1;
      cv_reader_.notify_all();
    }
  };
  writer();

  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    cv_reader_.notify_all();
    cv_coder_.notify_all();
    cv_writer_.notify_all();
  }
  for (std::thread& t : threads) t.join();
  if (failed_) throw CliError{error_code_, error_message_};
  return consumed_;
}

#undef SZ_GUARDED

// ---- positional mode --------------------------------------------------------

namespace {
constexpr int kStoppedCode = -1;
}  // namespace

uint64_t OrderedOffsets::take(uint64_t index, uint64_t size) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return stop_ || next_index_ == index; });
  if (stop_) throw CliError{kStoppedCode, "stopped after an earlier frame failed"};
  const uint64_t off = next_offset_;
  next_offset_ += size;
  ++next_index_;
  cv_.notify_all();
  return off;
}

void OrderedOffsets::stop() {
  std::lock_guard<std::mutex> lk(mu_);
  stop_ = true;
  cv_.notify_all();
}

void run_frames_parallel(uint32_t threads, const std::function<bool(uint32_t, uint64_t)>& work,
                         OrderedOffsets* offsets) {
  std::mutex mu;
  uint64_t next = 0;
  bool stop = false, failed = false;
  uint64_t err_index = 0;
  CliError err{0, ""};
  auto record = [&](uint64_t i, int code, const std::string& msg) {
    if (code == kStoppedCode) return;  // released by stop(): the real error is recorded
    {
      std::lock_guard<std::mutex> lk(mu);
      // An error that only says "an earlier frame failed" never wins.
      if (!failed || i < err_index) {
        failed = true;
        err_index = i;
        err = CliError{code, msg};
      }
      stop = true;
    }
    if (offsets) offsets->stop();
  };
  auto worker = [&](uint32_t w) {
    for (;;) {
      uint64_t i = 0;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (stop) return;
        i = next++;
      }
      try {
        if (!work(w, i)) {
          std::lock_guard<std::mutex> lk(mu);
          stop = true;
          return;
        }
      } catch (const CliError& e) {
        // A worker released by stop() after an earlier failure reports a
        // later index, so the real error keeps the lowest.
        record(i, e.code, e.message);
        return;
      } catch (const std::bad_alloc&) {
        record(i, kExitInternal, "out of memory");
        return;
      } catch (const std::exception& e) {
        record(i, kExitInternal, std::string("internal error: ") + e.what());
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  const uint32_t n = threads ? threads : 1;
  try {
    for (uint32_t t = 1; t < n; ++t) pool.emplace_back(worker, t);
  } catch (const std::exception&) {
    record(0, kExitInternal, "cannot start worker threads");
  }
  worker(0);
  for (std::thread& t : pool) t.join();
  if (failed) throw err;
}

}  // namespace szcli
