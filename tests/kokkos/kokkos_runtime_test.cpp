// SPDX-License-Identifier: Apache-2.0
// The Kokkos backend as the rest of splitzip sees it: registered under its
// name (lazy start: kokkos_lazy_init_test.cpp), selectable by option and environment, and
// safe to call from several host threads.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/compare.h"

namespace splitzip::test {
namespace {

TEST(KokkosRuntime, RegisteredAndAvailable) {
  bool listed = false;
  for (size_t i = 0; i < backend_count(); ++i) listed = listed || std::strcmp(backend_name(i), "kokkos") == 0;
  EXPECT_TRUE(listed);
  ASSERT_NE(kokkos(), nullptr);
  EXPECT_STREQ(kokkos()->name(), "kokkos");
  EXPECT_TRUE(backend_available("kokkos"));
}

TEST(KokkosRuntime, MemoryKindsFollowTheExecutionSpace) {
  constexpr bool host_space =
      Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible;
  EXPECT_EQ(kokkos()->accepts(MemoryKind::host), host_space);
  EXPECT_EQ(kokkos()->accepts(MemoryKind::device), !host_space);
  EXPECT_TRUE(kokkos()->accepts(MemoryKind::managed));
}

TEST(KokkosRuntime, ForcedByOptionAndEnvironment) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  const uint64_t n = 5000;
  const auto src = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, n, 2);
  std::vector<uint8_t> f(compress_bound(Dtype::fp16, n));
  CompressOptions o;
  o.backend = "kokkos";
  Result r = compress(Dtype::fp16, src.data(), n, f.data(), f.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "kokkos");

  ASSERT_EQ(setenv("SPLITZIP_BACKEND", "kokkos", 1), 0);
  r = compress(Dtype::fp16, src.data(), n, f.data(), f.size());
  const uint64_t size = r.size;
  std::vector<uint8_t> out(n * 2);
  const Result d = decompress(f.data(), size, out.data(), out.size());
  unsetenv("SPLITZIP_BACKEND");
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "kokkos");
  ASSERT_EQ(d.status, Status::ok);
  EXPECT_STREQ(d.backend, "kokkos");
  EXPECT_TRUE(bytes_equal(out, src));
}

// Launches are serialized internally; concurrent callers get the same bytes
// as a single-threaded run.
TEST(KokkosRuntime, ConcurrentCallersGetIdenticalFrames) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  const uint64_t n = 30000;
  synth::Params p;
  p.escape_rate = 0.02;
  const auto src = synth::generate(synth::Generator::heavy_tail, Dtype::bf16, n, 3, p);
  std::vector<uint8_t> want(compress_bound(Dtype::bf16, n));
  CompressOptions o;
  o.backend = "reference";
  const Result rw = compress(Dtype::bf16, src.data(), n, want.data(), want.size(), o);
  ASSERT_EQ(rw.status, Status::ok);
  want.resize(rw.size);

  constexpr int kThreads = 4, kRounds = 10;
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      CompressOptions ko;
      ko.backend = "kokkos";
      DecompressOptions kd;
      kd.backend = "kokkos";
      for (int round = 0; round < kRounds; ++round) {
        std::vector<uint8_t> f(compress_bound(Dtype::bf16, n));
        const Result r = compress(Dtype::bf16, src.data(), n, f.data(), f.size(), ko);
        f.resize(r.size);
        std::vector<uint8_t> out(n * 2);
        const Result d = decompress(f.data(), f.size(), out.data(), out.size(), kd);
        if (!r.ok() || f != want || !d.ok() || out != src) ++bad[t];
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace splitzip::test
