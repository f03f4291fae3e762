// SPDX-License-Identifier: Apache-2.0
// Default Backend methods: host memory, one frame after another.
#include <cstring>
#include <new>

#include "backends/backend.h"
#include "core/header.h"

namespace splitzip {

FrameOutcome Backend::decompress_stream(const DecompressArgs& args) const {
  FrameOutcome total;
  if ((total.status = check_decompress_args(args)) != Status::ok) return total;
  auto* dst = static_cast<uint8_t*>(args.dst);
  FrameIterator it(args.src, args.src_size);
  FrameView v;
  Status s;
  while ((s = it.next(&v)) == Status::ok && v.data != nullptr) {
    DecompressArgs one = args;
    one.src = v.data;
    one.src_size = v.size;
    one.dst = dst == nullptr ? nullptr : dst + total.decoded_size;
    one.capacity = args.capacity - total.decoded_size;
    // The output limit covers the whole stream (rule 12, after the
    // iterator's rules 1-11 on this frame).
    if (args.max_output != 0 && v.info.decoded_size > args.max_output - total.decoded_size) {
      total.status = Status::limit_exceeded;
      return total;
    }
    one.max_output = 0;
    const FrameOutcome o = decompress_frame(one);
    if (o.status != Status::ok) {
      total.status = o.status;
      total.corrupt_block = o.corrupt_block;
      return total;
    }
    total.decoded_size += o.decoded_size;
    total.frame_size += o.frame_size;
  }
  total.status = s;
  return total;
}

namespace {

template <class F>
FrameOutcome guarded_item(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    FrameOutcome o;
    o.status = Status::out_of_memory;
    return o;
  } catch (...) {
    FrameOutcome o;
    o.status = Status::internal_error;
    return o;
  }
}

}  // namespace

void Backend::compress_batch(const CompressArgs* args, size_t count, int /*threads*/, FrameOutcome* out) const {
  for (size_t i = 0; i < count; ++i) out[i] = guarded_item([&] { return compress_frame(args[i]); });
}

void Backend::decompress_batch(const DecompressArgs* args, size_t count, int /*threads*/,
                               FrameOutcome* out) const {
  for (size_t i = 0; i < count; ++i) out[i] = guarded_item([&] { return decompress_frame(args[i]); });
}

Status Backend::read_header_bytes(const void* src, uint8_t out[64]) const {
  if (src == nullptr || out == nullptr) return Status::invalid_argument;
  std::memcpy(out, src, 64);
  return Status::ok;
}

}  // namespace splitzip
