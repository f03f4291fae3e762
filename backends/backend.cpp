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
  const auto* src = static_cast<const uint8_t*>(args.src);
  auto* dst = static_cast<uint8_t*>(args.dst);
  // Host streams: the public frame iterator. Streams this process cannot
  // read directly: each header through read_header_bytes, the same rules.
  const bool host = host_reachable(args.src);
  FrameIterator it(args.src, args.src_size);
  for (;;) {
    FrameInfo info;
    Status s = Status::ok;
    const uint64_t at = total.frame_size;
    if (host) {
      FrameView v;
      s = it.next(&v);
      if (s == Status::ok && v.data == nullptr) break;  // the end
      info = v.info;
    } else {
      if (at == args.src_size) break;
      const uint64_t left = args.src_size - at;
      uint8_t hb[64] = {};
      s = left < 64 ? Status::truncated : read_header_bytes(src + at, hb);  // rule 1
      if (s == Status::ok) s = frame_header_info(hb, &info);                // rules 2-10
      if (s == Status::ok && left < info.frame_size) s = Status::truncated;  // rule 11
    }
    if (s != Status::ok) {
      total.status = s;
      return total;
    }
    // The output limit covers the whole stream (rule 12).
    if (args.max_output != 0 && info.decoded_size > args.max_output - total.decoded_size) {
      total.status = Status::limit_exceeded;
      return total;
    }
    DecompressArgs one = args;
    one.src = src + at;
    one.src_size = info.frame_size;
    one.dst = dst == nullptr ? nullptr : dst + total.decoded_size;
    one.capacity = args.capacity - total.decoded_size;
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
  return total;
}

bool Backend::host_reachable(const void* p) const { return memory_kind_of(p) != MemoryKind::device; }

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
