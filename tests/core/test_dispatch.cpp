// SPDX-License-Identifier: Apache-2.0
// Registry and dispatch: explicit list, forced names, $SPLITZIP_BACKEND,
// no silent fallback.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/synthetic.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

// Restores $SPLITZIP_BACKEND when a test ends.
class EnvGuard {
 public:
  EnvGuard() {
    const char* v = std::getenv("SPLITZIP_BACKEND");
    had_ = v != nullptr;
    if (had_) old_ = v;
  }
  ~EnvGuard() {
    if (had_) setenv("SPLITZIP_BACKEND", old_.c_str(), 1);
    else unsetenv("SPLITZIP_BACKEND");
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(Registry, ReferenceFirstAndListed) {
  ASSERT_GE(registry_size(), 1u);
  EXPECT_STREQ(registry_at(0)->name(), "reference");
  EXPECT_EQ(registry_at(registry_size()), nullptr);
  EXPECT_EQ(find_backend("reference"), reference_backend());
  EXPECT_EQ(find_backend("nope"), nullptr);
  EXPECT_EQ(find_backend(nullptr), nullptr);
  EXPECT_EQ(backend_count(), registry_size());
  EXPECT_STREQ(backend_name(0), "reference");
  EXPECT_EQ(backend_name(backend_count()), nullptr);
  EXPECT_TRUE(backend_available("reference"));
  EXPECT_FALSE(backend_available("bogus"));
  size_t expected = 1;
#ifdef SPLITZIP_HAVE_CPU
  ++expected;
  EXPECT_NE(find_backend("cpu"), nullptr);
#endif
#ifdef SPLITZIP_HAVE_CUDA
  ++expected;
  EXPECT_NE(find_backend("cuda"), nullptr);
#endif
#ifdef SPLITZIP_HAVE_KOKKOS
  ++expected;
  EXPECT_NE(find_backend("kokkos"), nullptr);
#endif
  EXPECT_EQ(registry_size(), expected);
  for (size_t i = 0; i < registry_size(); ++i)
    for (size_t j = i + 1; j < registry_size(); ++j) EXPECT_STRNE(registry_at(i)->name(), registry_at(j)->name());
}

TEST(Dispatch, DefaultsForHostMemory) {
  EnvGuard g;
  unsetenv("SPLITZIP_BACKEND");
  const Backend* b = nullptr;
  DispatchRequest req;
  ASSERT_EQ(select_backend(req, &b), Status::ok);
  const Backend* cpu = find_backend("cpu");
  EXPECT_STREQ(b->name(), cpu != nullptr && cpu->available() ? "cpu" : "reference");
  EXPECT_EQ(select_backend(req, nullptr), Status::invalid_argument);
  // Kokkos is never picked unless forced.
  EXPECT_STRNE(b->name(), "kokkos");
}

TEST(Dispatch, DeviceMemoryWithoutCuda) {
  EnvGuard g;
  unsetenv("SPLITZIP_BACKEND");
  const Backend* cuda = find_backend("cuda");
  if (cuda != nullptr && cuda->available()) GTEST_SKIP() << "a CUDA device is present";
  const Backend* b = nullptr;
  DispatchRequest req;
  req.memory = MemoryKind::device;
  EXPECT_EQ(select_backend(req, &b), Status::unsupported_memory);
  req.memory = MemoryKind::managed;  // host-reachable: a host backend takes it
  ASSERT_EQ(select_backend(req, &b), Status::ok);
  EXPECT_STRNE(b->name(), "cuda");
}

TEST(Dispatch, ForcedNames) {
  EnvGuard g;
  unsetenv("SPLITZIP_BACKEND");
  const Backend* b = nullptr;
  DispatchRequest req;
  req.forced = "reference";
  ASSERT_EQ(select_backend(req, &b), Status::ok);
  EXPECT_STREQ(b->name(), "reference");
  req.forced = "bogus";
  EXPECT_EQ(select_backend(req, &b), Status::unknown_backend);
  req.forced = "";
  EXPECT_EQ(select_backend(req, &b), Status::unknown_backend);
  // Forced reference with device memory: an error, not a fallback.
  req.forced = "reference";
  req.memory = MemoryKind::device;
  EXPECT_EQ(select_backend(req, &b), Status::unsupported_memory);
  // A compiled backend that cannot run here is backend_unavailable.
  for (size_t i = 0; i < registry_size(); ++i) {
    const Backend* cand = registry_at(i);
    if (!cand->available()) {
      req.forced = cand->name();
      req.memory = MemoryKind::host;
      EXPECT_EQ(select_backend(req, &b), Status::backend_unavailable) << cand->name();
    }
  }
}

TEST(Dispatch, EnvironmentVariable) {
  EnvGuard g;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 1000, 1);
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, 1000)), out(in.size());

  setenv("SPLITZIP_BACKEND", "bogus", 1);
  Result r = compress(Dtype::bf16, in.data(), 1000, f.data(), f.size());
  EXPECT_EQ(r.status, Status::unknown_backend);
  EXPECT_EQ(decompress(f.data(), f.size(), out.data(), out.size()).status, Status::unknown_backend);
  EXPECT_EQ(decompress_frames(f.data(), f.size(), out.data(), out.size()).status, Status::unknown_backend);
  // The option wins over the environment.
  CompressOptions o;
  o.backend = "reference";
  r = compress(Dtype::bf16, in.data(), 1000, f.data(), f.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "reference");
  const uint64_t size = r.size;

  setenv("SPLITZIP_BACKEND", "reference", 1);
  r = compress(Dtype::bf16, in.data(), 1000, f.data(), f.size());
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "reference");
  const Result d = decompress(f.data(), size, out.data(), out.size());
  EXPECT_EQ(d.status, Status::ok);
  EXPECT_STREQ(d.backend, "reference");
  EXPECT_EQ(out, in);

  setenv("SPLITZIP_BACKEND", "", 1);  // empty means unset
  r = compress(Dtype::bf16, in.data(), 1000, f.data(), f.size());
  EXPECT_EQ(r.status, Status::ok);
  unsetenv("SPLITZIP_BACKEND");
  o.backend = "bogus";
  EXPECT_EQ(compress(Dtype::bf16, in.data(), 1000, f.data(), f.size(), o).status, Status::unknown_backend);
}

TEST(Dispatch, EveryAvailableBackendRoundTrips) {
  EnvGuard g;
  unsetenv("SPLITZIP_BACKEND");
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 5000, 1);
  for (size_t i = 0; i < backend_count(); ++i) {
    const char* name = backend_name(i);
    if (!backend_available(name) || !find_backend(name)->accepts(MemoryKind::host)) continue;
    std::vector<uint8_t> f(compress_bound(Dtype::bf16, 5000)), out(in.size());
    CompressOptions o;
    o.backend = name;
    const Result r = compress(Dtype::bf16, in.data(), 5000, f.data(), f.size(), o);
    ASSERT_EQ(r.status, Status::ok) << name;
    EXPECT_STREQ(r.backend, name);
    DecompressOptions d;
    d.backend = name;
    ASSERT_EQ(decompress(f.data(), r.size, out.data(), out.size(), d).status, Status::ok) << name;
    EXPECT_EQ(out, in) << name;
  }
}

TEST(BackendDefaults, HistogramAndByteHelpers) {
  const Backend* b = reference_backend();
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, 999, 4);
  uint64_t counts[256];
  std::memset(counts, 0xFF, sizeof counts);  // overwritten, not added to
  ASSERT_EQ(b->histogram(Dtype::fp16, in.data(), 999, counts, 0), Status::ok);
  Histogram h(Dtype::fp16);
  h.add(in.data(), 999);
  uint64_t total = 0;
  for (uint32_t e = 0; e < 256; ++e) {
    EXPECT_EQ(counts[e], h.count(e));
    total += counts[e];
  }
  EXPECT_EQ(total, 999u);
  EXPECT_EQ(b->histogram(static_cast<Dtype>(0), in.data(), 999, counts, 0), Status::invalid_argument);
  uint64_t hash = 0;
  ASSERT_EQ(b->content_hash(in.data(), in.size(), &hash), Status::ok);
  EXPECT_EQ(hash, xxh64(in.data(), in.size()));
  std::vector<uint8_t> buf(10, 7);
  ASSERT_EQ(b->zero_bytes(buf.data(), 10), Status::ok);
  EXPECT_EQ(buf, std::vector<uint8_t>(10, 0));
  ASSERT_EQ(b->copy_bytes(buf.data(), in.data(), 10), Status::ok);
  EXPECT_EQ(std::memcmp(buf.data(), in.data(), 10), 0);
}

}  // namespace
}  // namespace splitzip
