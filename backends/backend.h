/* SPDX-License-Identifier: Apache-2.0 */
// The backend interface. A backend owns whole frames: it writes every byte
// of a frame (header, streams, block checks, gaps, stored fallback) and
// decodes one with every rule of FORMAT.md 9, through the shared format core
// (core/header.h, core/layout.h, core/frame_rules.h). Buffers are caller-owned;
// a backend that needs scratch memory says how much (workspace_size) and
// takes it from the caller, or allocates it itself when none is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/codec_args.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

enum class Direction { encode, decode };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Usable in this process (CPU features, device present, ...). Cached.
  virtual bool available() const = 0;
  // Why not, when unavailable (for `splitzip backends`); "" when available.
  virtual const char* unavailable_reason() const { return ""; }
  virtual bool accepts(MemoryKind kind) const = 0;

  // Scratch bytes one call on n elements of dtype may use (0: none).
  virtual uint64_t workspace_size(Dtype /*dtype*/, uint64_t /*n*/, Direction /*dir*/) const { return 0; }

  // One frame into args.dst (FORMAT.md 4); never writes past args.capacity.
  virtual FrameOutcome compress_frame(const CompressArgs& args) const = 0;
  // The frame at args.src, all rules of FORMAT.md 9.
  virtual FrameOutcome decompress_frame(const DecompressArgs& args) const = 0;
  // Every frame of a stream (FORMAT.md 7). The default walks the stream
  // (the frame iterator in host memory, read_header_bytes elsewhere) and
  // calls decompress_frame; frame_size of the outcome is the bytes consumed.
  virtual FrameOutcome decompress_stream(const DecompressArgs& args) const;
  // Batched pages: out[i] = compress_frame(args[i]) / decompress_frame(args[i])
  // for each of count independent items (every item's bytes are exactly
  // those of the single call). threads: workers across the items (0: the
  // backend's default); each item's args.threads is used as given. The
  // default runs the items one after another; a bad_alloc on one item is
  // that item's out_of_memory.
  virtual void compress_batch(const CompressArgs* args, size_t count, int threads, FrameOutcome* out) const;
  virtual void decompress_batch(const DecompressArgs* args, size_t count, int threads,
                                FrameOutcome* out) const;
  // The 64 header bytes at src into out (device backends copy them).
  virtual Status read_header_bytes(const void* src, uint8_t out[64]) const;
  // Whether this process can read p directly (the default stream walk reads
  // headers in place there, else through read_header_bytes).
  virtual bool host_reachable(const void* p) const;
};

}  // namespace splitzip
