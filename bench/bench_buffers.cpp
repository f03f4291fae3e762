// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_buffers.h"

#include <cstdlib>
#include <cstring>

namespace splitzip_bench {

void Buffer::Free::operator()(uint8_t* p) const { std::free(p); }

Buffer::Buffer(uint64_t bytes) {
  uint64_t alloc = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(64, static_cast<size_t>(alloc));
  if (!p) return;
  std::memset(p, 0, static_cast<size_t>(alloc));  // fault the pages in now, not in a timed loop
  ptr_.reset(static_cast<uint8_t*>(p));
  size_ = bytes;
}

uint8_t* scratch(Slot slot, uint64_t bytes) {
  static Buffer slots[2];
  Buffer& b = slots[static_cast<int>(slot)];
  if (b.empty() || b.size() < bytes) {
    b = Buffer();  // free first: peak memory stays one buffer per slot
    b = Buffer(bytes);
    if (b.empty()) return nullptr;
  }
  return b.data();
}

namespace {
struct FrameSlot {
  std::string key;
  Buffer bytes;
  uint64_t size = 0;
};
FrameSlot& frame_slot() {
  static FrameSlot s;
  return s;
}
}  // namespace

const uint8_t* cached_frame(const std::string& key, uint64_t* size) {
  FrameSlot& s = frame_slot();
  if (s.bytes.empty() || s.key != key) return nullptr;
  *size = s.size;
  return s.bytes.data();
}

bool store_frame(const std::string& key, const uint8_t* data, uint64_t size) {
  FrameSlot& s = frame_slot();
  s.key.clear();
  if (s.bytes.empty() || s.bytes.size() < size) {
    s.bytes = Buffer();
    s.bytes = Buffer(size);
    if (s.bytes.empty()) return false;
  }
  std::memcpy(s.bytes.data(), data, static_cast<size_t>(size));
  s.key = key;
  s.size = size;
  return true;
}

}  // namespace splitzip_bench
