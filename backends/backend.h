// The backend interface. A backend encodes and decodes the payload streams of
// a coded frame (FORMAT.md 4.2); header, stored mode, checksum and stream-gap
// padding are handled once, by the frame layer (core/frame.cpp).
#pragma once

#include <cstdint>

#include "splitzip/splitzip.hpp"
#include "core/header.h"
#include "core/layout.h"

namespace splitzip {

struct EncodeJob {
  Dtype dtype;
  const void* src;            // n elements
  uint64_t n;
  uint32_t chunk_log2;
  const Codebook* codebook;   // validated, count >= 1
  uint8_t* frame;             // frame start; write streams 1..6 only
  uint64_t capacity;          // bytes available at frame
  uint64_t max_escapes;       // E above this: return Status::escape_overflow
  int threads;                // 0: backend default
  // Output: total escapes. Streams 5/6 must be at coded_layout(..., E).
  uint64_t escape_count = 0;
};

struct DecodeJob {
  const FrameHeader* header;  // parsed and validated through rule 13, coded
  const uint8_t* frame;       // frame start, frame_size readable bytes
  void* dst;                  // n * bytes writable bytes
  int threads;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Usable in this process (CPU features, device present, ...). Cached.
  virtual bool available() const = 0;
  virtual bool accepts(MemoryKind kind) const = 0;
  // Writes every byte of streams 1..6 (in-stream padding bits zero), not the
  // gaps between streams. Returns escape_overflow when E > max_escapes.
  virtual Status encode(EncodeJob& job) const = 0;
  // Decodes streams 1..6 into dst and enforces rules 14-18 (the frame layer
  // has already checked the zero gap bytes between streams, rule 14).
  virtual Status decode(const DecodeJob& job) const = 0;
  // Exponent histogram for dynamic calibration. counts[256] is overwritten.
  virtual Status histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256],
                           int threads) const;

  // Byte movement for the frame layer (header, gaps, stored payload,
  // checksum). The defaults work on host memory; a backend that accepts
  // device memory overrides them. copy_bytes must handle any direction
  // between host and the memory kinds it accepts.
  virtual Status copy_bytes(void* dst, const void* src, uint64_t bytes) const;
  virtual Status zero_bytes(void* dst, uint64_t bytes) const;
  // XXH64 (seed 0) of bytes at src (FORMAT.md 4.1 content_checksum).
  virtual Status content_hash(const void* src, uint64_t bytes, uint64_t* out) const;
};

}  // namespace splitzip
