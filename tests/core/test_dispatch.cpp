// SPDX-License-Identifier: Apache-2.0
// Registry and dispatch: explicit list, forced names, $SPLITZIP_BACKEND,
// no silent fallback.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

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

// Backend's default decompress_stream walks frames with the FrameIterator
// and calls decompress_frame; read_header_bytes copies 64 host bytes.
TEST(BackendDefaults, StreamWalkAndHeaderBytes) {
  const Backend* b = reference_backend();
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, 999, 4);
  std::vector<uint8_t> stream;
  for (int k = 0; k < 3; ++k) {
    std::vector<uint8_t> f(compress_bound(Dtype::fp16, 999));
    CompressArgs c;
    c.dtype = Dtype::fp16;
    c.src = in.data();
    c.n = 999;
    c.dst = f.data();
    c.capacity = f.size();
    c.checksum = k == 1;
    const FrameOutcome o = b->compress_frame(c);
    ASSERT_EQ(o.status, Status::ok);
    stream.insert(stream.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(o.frame_size));
  }
  std::vector<uint8_t> out(3 * in.size());
  DecompressArgs d;
  d.src = stream.data();
  d.src_size = stream.size();
  d.dst = out.data();
  d.capacity = out.size();
  FrameOutcome o = b->decompress_stream(d);
  ASSERT_EQ(o.status, Status::ok);
  EXPECT_EQ(o.frame_size, stream.size());
  EXPECT_EQ(o.decoded_size, out.size());
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(std::memcmp(out.data() + k * in.size(), in.data(), in.size()), 0) << k;
  // The stream-wide output limit, and a bad middle frame's status.
  d.max_output = 2 * in.size();
  EXPECT_EQ(b->decompress_stream(d).status, Status::limit_exceeded);
  d.max_output = 0;
  d.src_size = 0;  // the empty stream: zero frames
  o = b->decompress_stream(d);
  EXPECT_EQ(o.status, Status::ok);
  EXPECT_EQ(o.decoded_size, 0u);
  d.src_size = stream.size() - 1;
  EXPECT_EQ(b->decompress_stream(d).status, Status::truncated);

  uint8_t hb[64] = {};
  ASSERT_EQ(b->read_header_bytes(stream.data(), hb), Status::ok);
  EXPECT_EQ(std::memcmp(hb, stream.data(), 64), 0);
  EXPECT_EQ(b->read_header_bytes(nullptr, hb), Status::invalid_argument);
  EXPECT_EQ(b->workspace_size(Dtype::bf16, 1000, Direction::encode), 0u);
  EXPECT_STREQ(b->unavailable_reason(), "");
}

// Encode with A, decode with B, for every ordered pair of available host backends.
TEST(Dispatch, EveryBackendPairCrossDecodes) {
  std::vector<const char*> names;
  for (size_t i = 0; i < backend_count(); ++i)
    if (backend_available(backend_name(i)) && find_backend(backend_name(i))->accepts(MemoryKind::host))
      names.push_back(backend_name(i));
  ASSERT_FALSE(names.empty());
  for (Dtype dt : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const uint64_t n = 70001;  // several chunks, several checksum blocks
    const auto in = synth::generate(synth::Generator::heavy_tail, dt, n, 9);
    for (const char* enc : names) {
      std::vector<uint8_t> f(compress_bound(dt, n));
      CompressOptions o;
      o.backend = enc;
      o.checksum = true;
      const Result r = compress(dt, in.data(), n, f.data(), f.size(), o);
      ASSERT_EQ(r.status, Status::ok) << enc;
      for (const char* dec : names) {
        std::vector<uint8_t> out(in.size());
        DecompressOptions d;
        d.backend = dec;
        const Result rd = decompress(f.data(), r.size, out.data(), out.size(), d);
        ASSERT_EQ(rd.status, Status::ok) << enc << " -> " << dec << " " << dtype_name(dt);
        EXPECT_EQ(out, in) << enc << " -> " << dec << " " << dtype_name(dt);
      }
    }
  }
}

}  // namespace
}  // namespace splitzip
