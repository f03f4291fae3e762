// SPDX-License-Identifier: Apache-2.0
// A program that runs Kokkos itself: splitzip must use that instance, leave
// its lifetime alone, and fail cleanly (not restart Kokkos) once the program
// has finalized it. Its own binary: it ends Kokkos for the whole process.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <vector>

#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/compare.h"

namespace splitzip::test {
namespace {

TEST(KokkosProgramRuntime, UsesTheProgramsKokkosAndStopsWithIt) {
  ASSERT_FALSE(Kokkos::is_initialized()) << "must run first in its own process";
  ASSERT_TRUE(kokkos_runs_host_buffers());
  const uint64_t n = 20000;
  const auto src = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 8);
  std::vector<uint8_t> want(compress_bound(Dtype::bf16, n)), got(want.size());
  CompressOptions o;
  o.backend = "reference";
  const Result rw = compress(Dtype::bf16, src.data(), n, want.data(), want.size(), o);
  ASSERT_EQ(rw.status, Status::ok);
  o.backend = "kokkos";

  Kokkos::initialize();
  const Result r = compress(Dtype::bf16, src.data(), n, got.data(), got.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_TRUE(bytes_equal(got.data(), r.size, want.data(), rw.size));
  EXPECT_TRUE(Kokkos::is_initialized());
  Kokkos::finalize();  // the program's call; splitzip registered no finalize of its own

  EXPECT_FALSE(Kokkos::is_initialized());
  EXPECT_FALSE(backend_available("kokkos"));
  EXPECT_EQ(compress(Dtype::bf16, src.data(), n, got.data(), got.size(), o).status, Status::backend_unavailable);
  EXPECT_FALSE(Kokkos::is_initialized()) << "splitzip must not restart Kokkos";
  // Dispatch without a forced backend still works (it never picks kokkos).
  o.backend = nullptr;
  EXPECT_EQ(compress(Dtype::bf16, src.data(), n, got.data(), got.size(), o).status, Status::ok);
}

}  // namespace
}  // namespace splitzip::test
