// SPDX-License-Identifier: Apache-2.0
// Decompression-bomb guard (DecompressOptions.max_output_bytes, FORMAT.md
// rule 12) and allocation bounds. This binary replaces the global operator
// new to see every C++ allocation the library makes during a call: hostile
// headers must cost no allocation proportional to what they claim, and a
// frame over the limit must fail before any sizable allocation.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "test_data.h"

namespace {

std::atomic<bool> g_tracking{false};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_largest{0};

void note(std::size_t n) {
  if (!g_tracking.load(std::memory_order_relaxed)) return;
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  uint64_t prev = g_largest.load(std::memory_order_relaxed);
  while (n > prev && !g_largest.compare_exchange_weak(prev, n, std::memory_order_relaxed)) {
  }
}

void* alloc(std::size_t n) {
  note(n);
  void* p = std::malloc(n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* alloc_aligned(std::size_t n, std::align_val_t a) {
  note(n);
  const auto al = static_cast<std::size_t>(a);
  void* p = std::aligned_alloc(al, (n + al - 1) / al * al);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return alloc(n); }
void* operator new[](std::size_t n) { return alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a) { return alloc_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return alloc_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace szrel {
namespace {

using splitzip::DecompressOptions;
using splitzip::Dtype;
using splitzip::Status;

// Allocation made by the library between start() and stop().
struct AllocScope {
  AllocScope() {
    g_bytes = 0;
    g_largest = 0;
    g_tracking = true;
  }
  ~AllocScope() { g_tracking = false; }
  uint64_t bytes() const { return g_bytes.load(); }
  uint64_t largest() const { return g_largest.load(); }
};

std::vector<uint8_t> make_frame(uint64_t n, uint64_t seed, bool checksum = false) {
  const auto data = make_values(Dtype::bf16, n, seed, [](uint64_t, Rng& r) {
    return 118 + static_cast<uint32_t>(r.next() % 10);
  });
  std::vector<uint8_t> f(splitzip::compress_bound(Dtype::bf16, n));
  splitzip::CompressOptions o;
  o.checksum = checksum;
  const splitzip::Result r = splitzip::compress(Dtype::bf16, data.data(), n, f.data(), f.size(), o);
  EXPECT_TRUE(r.ok());
  f.resize(r.size);
  return f;
}

// A header that passes rules 1-9 with the given size fields (FORMAT.md 4.1),
// written from the table rather than with the library's writer.
std::vector<uint8_t> header(uint8_t dtype, uint8_t flags, uint64_t n, uint64_t escapes, uint64_t frame_size,
                            uint64_t total_bytes) {
  std::vector<uint8_t> h(total_bytes < 64 ? 64 : total_bytes, 0);
  const uint8_t magic[4] = {0x53, 0x5A, 0x4B, 0x56};
  std::memcpy(h.data(), magic, 4);
  h[4] = 1;
  h[5] = dtype;
  h[6] = flags;
  h[7] = 10;
  for (int i = 0; i < 8; ++i) {
    h[8 + i] = static_cast<uint8_t>(n >> (8 * i));
    h[16 + i] = static_cast<uint8_t>(escapes >> (8 * i));
    h[24 + i] = static_cast<uint8_t>(frame_size >> (8 * i));
  }
  if (!(flags & 1)) {
    h[32] = 120;
    h[48] = 1;
  }
  const uint64_t c = splitzip::xxh64(h.data(), 64, 0);  // field 52..55 still zero
  for (int i = 0; i < 4; ++i) h[52 + i] = static_cast<uint8_t>(c >> (8 * i));
  return h;
}

TEST(ReliabilityOutputLimit, SingleFrameLimitIsExact) {
  const auto f = make_frame(10000, 1);
  std::vector<uint8_t> out(20000);
  DecompressOptions o;
  o.max_output_bytes = 19999;
  EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), out.size(), o).status, Status::limit_exceeded);
  o.max_output_bytes = 20000;
  EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), out.size(), o).status, Status::ok);
  // Rule 12 comes before rule 13: a small destination does not hide the limit.
  o.max_output_bytes = 100;
  EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), 50, o).status, Status::limit_exceeded);
  for (const auto& b : available_backends()) {
    o.backend = b.c_str();
    o.max_output_bytes = 19999;
    EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), out.size(), o).status, Status::limit_exceeded)
        << b;
  }
}

TEST(ReliabilityOutputLimit, StreamLimitCoversAllFrames) {
  std::vector<uint8_t> stream;
  for (uint64_t s = 1; s <= 3; ++s) {
    const auto f = make_frame(10000, s, s == 2);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  std::vector<uint8_t> out(60000);
  DecompressOptions o;
  o.max_output_bytes = 59999;
  EXPECT_EQ(splitzip::decompress_frames(stream.data(), stream.size(), out.data(), out.size(), o).status,
            Status::limit_exceeded);
  o.max_output_bytes = 40000;  // each frame alone is under it
  EXPECT_EQ(splitzip::decompress_frames(stream.data(), stream.size(), out.data(), out.size(), o).status,
            Status::limit_exceeded);
  o.max_output_bytes = 60000;
  const splitzip::Result r = splitzip::decompress_frames(stream.data(), stream.size(), out.data(), out.size(), o);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.size, 60000u);
}

// A large frame over the limit is refused before the library allocates.
TEST(ReliabilityOutputLimit, OverLimitAllocatesNothingSizable) {
  const uint64_t n = 4u << 20;  // 8 MiB decoded
  const auto f = make_frame(n, 7);
  std::vector<uint8_t> out(2 * n);
  for (const auto& b : available_backends()) {
    DecompressOptions o;
    o.backend = b.c_str();
    o.max_output_bytes = 1 << 20;
    AllocScope scope;
    EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), out.size(), o).status, Status::limit_exceeded);
    EXPECT_LT(scope.largest(), 64u << 10) << b;
  }
}

// Headers that claim huge outputs: rejected from the header alone, with no
// allocation proportional to the claim.
TEST(ReliabilityOutputLimit, HostileHeadersCostNothing) {
  const uint64_t huge = uint64_t{1} << 56;
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    Status want;
  };
  std::vector<Case> cases;
  cases.push_back({"n over 2^56", header(1, 0, huge + 1, 0, 0, 64), Status::bad_header});
  cases.push_back({"stored 2^56, frame_size too small", header(1, 1, huge, 0, 64, 64), Status::size_mismatch});
  cases.push_back({"coded 2^56, wrong frame_size", header(1, 0, huge, 0, 4096, 64), Status::size_mismatch});
  // Consistent sizes, but the bytes are not there: TRUNCATED (rule 11).
  cases.push_back({"stored 2^56, consistent", header(3, 1, huge, 0, 64 + 4 * huge, 4096), Status::truncated});
  cases.push_back({"stored 2^40 fp8, consistent", header(4, 1, uint64_t{1} << 40, 0, 64 + (uint64_t{1} << 40), 4096),
                   Status::truncated});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    splitzip::FrameInfo fi;
    std::vector<uint8_t> out(64);
    for (const char* b : {static_cast<const char*>(nullptr), "reference"}) {
      AllocScope scope;
      EXPECT_EQ(splitzip::frame_info(c.bytes.data(), c.bytes.size(), &fi), c.want);
      DecompressOptions o;
      o.backend = b;
      EXPECT_EQ(splitzip::decompress(c.bytes.data(), c.bytes.size(), out.data(), out.size(), o).status, c.want);
      EXPECT_EQ(splitzip::decompress_frames(c.bytes.data(), c.bytes.size(), out.data(), out.size(), o).status, c.want);
      EXPECT_LT(scope.bytes(), 64u << 10);
    }
  }
}

// A valid frame decodes with allocations bounded by its own size.
TEST(ReliabilityOutputLimit, ValidDecodeAllocationIsBounded) {
  const uint64_t n = 1u << 20;
  const auto f = make_frame(n, 11, true);
  std::vector<uint8_t> out(2 * n);
  for (const auto& b : available_backends()) {
    for (int threads : {1, 0}) {
      DecompressOptions o;
      o.backend = b.c_str();
      o.threads = threads;
      AllocScope scope;
      EXPECT_EQ(splitzip::decompress(f.data(), f.size(), out.data(), out.size(), o).status, Status::ok) << b;
      EXPECT_LT(scope.largest(), f.size() + out.size()) << b;
    }
  }
}

}  // namespace
}  // namespace szrel
