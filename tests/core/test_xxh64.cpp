// SPDX-License-Identifier: Apache-2.0
// XXH64 against published vectors and, when available, libxxhash.
#include <gtest/gtest.h>

#include <vector>

#include "core/synthetic.h"
#include "splitzip/splitzip.hpp"

#ifdef SPLITZIP_HAVE_XXHASH_ORACLE
#include <xxhash.h>
#endif

namespace splitzip {
namespace {

TEST(Xxh64, KnownVectors) {
  EXPECT_EQ(xxh64("", 0, 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64("a", 1, 0), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(xxh64("abc", 3, 0), 0x44BC2CF5AD770999ull);
  EXPECT_EQ(xxh64(nullptr, 0, 0), 0xEF46DB3751D8E999ull);
}

TEST(Xxh64, SeedChangesHash) { EXPECT_NE(xxh64("abc", 3, 0), xxh64("abc", 3, 1)); }

#ifdef SPLITZIP_HAVE_XXHASH_ORACLE
TEST(Xxh64, MatchesLibxxhashAllLengthsAndSeeds) {
  std::vector<uint8_t> buf(1100);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(synth::random_u64(7, i));
  for (uint64_t seed : {0ull, 1ull, 0x9E3779B185EBCA87ull, ~0ull}) {
    for (size_t len = 0; len <= 200; ++len)
      ASSERT_EQ(xxh64(buf.data(), len, seed), XXH64(buf.data(), len, seed)) << "len " << len;
    // Unaligned start and long inputs.
    for (size_t off = 1; off < 8; ++off)
      ASSERT_EQ(xxh64(buf.data() + off, buf.size() - off, seed), XXH64(buf.data() + off, buf.size() - off, seed));
  }
}
#endif

}  // namespace
}  // namespace splitzip
