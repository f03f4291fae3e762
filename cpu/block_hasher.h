/* SPDX-License-Identifier: Apache-2.0 */
// Block hashes (FORMAT.md 4.5) of bytes that arrive in pieces, in order:
// the decoder feeds each sub-block it has just written (still in L1), the
// encoder each step of input it has just read; the hash of a 64 KiB block is
// final when its last byte arrives. libxxhash's streaming XXH3 gives the
// same value as hash_xxh3 over the whole block (the tests compare every
// frame with the reference's).
//
// On x86-64 the update goes through libxxhash's runtime dispatch
// (SZ_HOST_XXH3_UPDATE in core/hash.h: AVX2 / AVX-512 when the CPU has
// them). The plain entry points of Debian's libxxhash are its SSE2 build,
// several times slower: with them the checksum halved encode and decode
// speed (docs/DESIGN.md, section 1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>

#include "core/hash.h"

namespace splitzip {
namespace cpu {

class BlockHasher {
 public:
  // total: bytes of the whole output; hashes: one slot per block of it.
  BlockHasher(uint64_t total, uint64_t* hashes) : total_(total), hashes_(hashes), state_(XXH3_createState()) {
    if (state_ == nullptr) throw std::bad_alloc();
  }
  ~BlockHasher() { XXH3_freeState(state_); }
  BlockHasher(const BlockHasher&) = delete;
  BlockHasher& operator=(const BlockHasher&) = delete;

  // Bytes [off, off + bytes) of the output at p; each call continues where
  // the previous one ended (or starts a block).
  void feed(uint64_t off, const uint8_t* p, uint64_t bytes) {
    while (bytes > 0) {
      const uint64_t block = off >> kChecksumBlockLog2;
      if ((off & (kChecksumBlockBytes - 1)) == 0) XXH3_64bits_reset(state_);
      const uint64_t block_end = std::min(total_, (block + 1) << kChecksumBlockLog2);
      const uint64_t take = std::min(bytes, block_end - off);
      SZ_HOST_XXH3_UPDATE(state_, p, static_cast<size_t>(take));
      off += take;
      p += take;
      bytes -= take;
      if (off == block_end) hashes_[block] = XXH3_64bits_digest(state_);
    }
  }

  // The decode kernels' OutputTap callback (cpu/kernels.h).
  static void tap(void* self, uint64_t off, const uint8_t* p, uint64_t bytes) {
    static_cast<BlockHasher*>(self)->feed(off, p, bytes);
  }

 private:
  uint64_t total_;
  uint64_t* hashes_;
  XXH3_state_t* state_;
};

}  // namespace cpu
}  // namespace splitzip
