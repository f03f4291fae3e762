/* SPDX-License-Identifier: Apache-2.0 */
// A writable buffer whose last byte sits right before an inaccessible page,
// so a single byte written (or read) past its end faults at once, whatever
// the sanitizer. Bytes between the page start and the buffer carry a canary
// that before_intact() checks, for writes before the start.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace szrel {

class GuardBuffer {
 public:
  explicit GuardBuffer(uint64_t size) : size_(size) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    data_pages_ = (size + page - 1) / page;
    if (data_pages_ == 0) data_pages_ = 1;
    map_size_ = (data_pages_ + 1) * page;
    void* m = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<uint8_t*>(m);
    guard_ = base_ + data_pages_ * page;
    if (mprotect(guard_, page, PROT_NONE) != 0) {
      munmap(base_, map_size_);
      base_ = nullptr;
      return;
    }
    data_ = guard_ - size_;
    std::memset(base_, kCanary, static_cast<size_t>(data_ - base_));
  }
  ~GuardBuffer() {
    if (base_) munmap(base_, map_size_);
  }
  GuardBuffer(const GuardBuffer&) = delete;
  GuardBuffer& operator=(const GuardBuffer&) = delete;

  bool valid() const { return base_ != nullptr; }
  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool before_intact() const {
    for (const uint8_t* p = base_; p < data_; ++p)
      if (*p != kCanary) return false;
    return true;
  }

 private:
  static constexpr uint8_t kCanary = 0xC5;
  uint64_t size_ = 0, data_pages_ = 0, map_size_ = 0;
  uint8_t* base_ = nullptr;
  uint8_t* guard_ = nullptr;
  uint8_t* data_ = nullptr;
};

}  // namespace szrel
