// SPDX-License-Identifier: Apache-2.0
// Kokkos is started lazily by the first kernel call, not by registering or
// querying the backend. Its own binary, so no earlier test has started it.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <vector>

#include "backends/kokkos/kokkos_runtime.h"
#include "tests/kokkos/kokkos_test_util.h"

namespace splitzip::test {
namespace {

TEST(KokkosRuntime, InitializedLazilyOnFirstUse) {
  ASSERT_FALSE(Kokkos::is_initialized()) << "must run first in its own process";
  (void)kokkos()->available();
  (void)kokkos()->accepts(MemoryKind::host);
  EXPECT_FALSE(Kokkos::is_initialized()) << "querying the backend started Kokkos";
  ASSERT_TRUE(kokkos_runs_host_buffers());
  EXPECT_FALSE(Kokkos::is_initialized());
  const auto src = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 4096, 1);
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, 4096));
  CompressOptions o;
  o.backend = "kokkos";
  ASSERT_EQ(compress(Dtype::bf16, src.data(), 4096, f.data(), f.size(), o).status, Status::ok);
  EXPECT_TRUE(Kokkos::is_initialized());
  EXPECT_TRUE(kokkos_impl::ensure_runtime());
}

}  // namespace
}  // namespace splitzip::test
