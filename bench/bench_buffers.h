/* SPDX-License-Identifier: Apache-2.0 */
// Buffers for the timed loops. Every buffer is 64-byte aligned and touched
// once when allocated, so no benchmark times page faults, and the big ones
// are reused across benchmarks instead of being faulted in again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace splitzip_bench {

class Buffer {
 public:
  Buffer() = default;
  // Allocates and zero-fills `bytes`; empty() afterwards when out of memory.
  explicit Buffer(uint64_t bytes);
  uint8_t* data() const { return ptr_.get(); }
  uint64_t size() const { return size_; }
  bool empty() const { return !ptr_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> ptr_;
  uint64_t size_ = 0;
};

// Named scratch areas that persist between benchmarks and grow on demand.
// Null when the allocation fails.
enum class Slot { encode_out, decode_out };
uint8_t* scratch(Slot slot, uint64_t bytes);

// One compressed buffer, kept so that a decode benchmark reuses the frame its
// encode benchmark made (benchmarks run in registration order). One slot:
// holding every frame of a 512 MB input would cost gigabytes.
const uint8_t* cached_frame(const std::string& key, uint64_t* size);
// Copies `size` bytes under `key`, replacing what was there. False when out of memory.
bool store_frame(const std::string& key, const uint8_t* data, uint64_t size);

}  // namespace splitzip_bench
