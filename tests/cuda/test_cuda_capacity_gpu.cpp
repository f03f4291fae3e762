// SPDX-License-Identifier: Apache-2.0
// The "cuda" Backend's capacity mode (FORMAT.md 4.6) on a GPU: frames
// byte-identical to the reference, cross-decoding, device-resident buffers
// (the decode path that runs both decoders), the golden error vectors and
// corrupt frames with the reference's statuses; table sets (FORMAT.md 4.9).
// Skips without a device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/reference.h"
#include "tests/cuda/capacity_cases.h"
#include "tests/cuda/gpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/capacity_golden.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};

CompressOptions cap_opts(bool checksum) {
  CompressOptions o;
  o.mode = Mode::capacity;
  o.checksum = checksum;
  return o;
}

TEST(CudaCapacity, SizesDtypesAndGenerators) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes)
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{33}, uint64_t{65535}, uint64_t{65536}, uint64_t{65537},
                       uint64_t{5 * 65536 + 11}})
      for (synth::Generator g : {synth::Generator::gaussian_kv, synth::Generator::random_bits,
                                 synth::Generator::special_values}) {
        const auto in = synth::generate(g, d, n, 9, {});
        for (bool ck : {false, true})
          EXPECT_TRUE(matches_reference("cuda", d, in.data(), n, cap_opts(ck)))
              << dtype_name(d) << " n " << n << " " << synth::generator_name(g) << " ck " << ck;
      }
}

// Every case of tests/golden/capacity: the GPU frame is the reference's.
TEST(CudaCapacity, GoldenCases) {
  SZ_REQUIRE_GPU();
  const auto cases = cap_cases();
  ASSERT_GE(cases.size(), 15u);
  for (const CapCase& c : cases) {
    const auto in = cap_input(c);
    EXPECT_TRUE(matches_reference("cuda", c.dtype, in.data(), in.size() / dtype_bytes(c.dtype), cap_opts(c.checksum)))
        << c.name;
  }
}

// fp8_e4m3 in mode 1 (format v3, FORMAT.md 4.6.7): the v3 golden cases and
// the whole-byte alphabet (tables up to 256 values); the frames are the
// reference's. gpu_check.sh reports these as their own row.
TEST(CudaCapacity, Fp8E4M3Frames) {
  SZ_REQUIRE_GPU();
  bool ok = false;
  const std::string dir = capacity_golden_v3_fp8cap_dir();
  const auto cases = capacity_golden_cases(&ok, dir);
  ASSERT_TRUE(ok);
  ASSERT_GE(cases.size(), 6u);
  for (const CapacityGoldenCase& c : cases) {
    const auto in = capacity_golden_input(c, &ok);
    EXPECT_TRUE(matches_reference("cuda", c.dtype, in.data(), c.n, cap_opts(c.checksum))) << c.name;
  }
  std::vector<uint8_t> every(3 * 65536 + 5);
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint8_t>(i % 97 ? 0x38 + i % 5 : i / 97);
  EXPECT_TRUE(matches_reference("cuda", Dtype::fp8_e4m3, every.data(), every.size(), cap_opts(true)));
}

TEST(CudaCapacity, RealKvAllDtypes) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes)
    for (const RealInput& in : real_inputs(d))
      EXPECT_TRUE(matches_reference("cuda", d, in.bytes.data(), in.n, cap_opts(true))) << in.name;
}

// Device memory on both ends: the frame equals the reference's, and the
// device-to-device decode (both decoders enqueued) reads mode-1 and mode-0
// frames alike.
TEST(CudaCapacity, DeviceBuffers) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    const RealInput& in = real_inputs(d).front();
    const uint64_t bytes = in.n * dtype_bytes(d), bound = compress_bound(d, in.n);
    DeviceBuffer src(bytes), frame(bound), out(bytes);
    ASSERT_TRUE(src.upload(in.bytes.data(), bytes));
    for (Mode mode : {Mode::capacity, Mode::fast}) {
      CompressOptions o;
      o.backend = "cuda";
      o.mode = mode;
      o.checksum = true;
      const Result r = compress(d, src.get(), in.n, frame.get(), bound, o);
      ASSERT_EQ(r.status, Status::ok);
      std::vector<uint8_t> ref(bound);
      o.backend = "reference";
      const Result rr = compress(d, in.bytes.data(), in.n, ref.data(), ref.size(), o);
      ASSERT_EQ(rr.status, Status::ok);
      const auto gpu_frame = frame.download(r.size);
      EXPECT_TRUE(bytes_equal(gpu_frame.data(), r.size, ref.data(), rr.size)) << in.name;
      DecompressOptions dopt;
      dopt.backend = "cuda";
      const Result dr = decompress(frame.get(), r.size, out.get(), bytes, dopt);
      ASSERT_EQ(dr.status, Status::ok) << status_name(dr.status);
      EXPECT_EQ(dr.size, bytes);
      const auto back = out.download(bytes);
      EXPECT_TRUE(bytes_equal(back.data(), bytes, in.bytes.data(), bytes));
    }
  }
}

TEST(CudaCapacity, GoldenErrorVectors) {
  SZ_REQUIRE_GPU();
  const std::string dir = golden_dir() + "/../golden-errors/capacity";
  bool ok = false;
  const auto list = read_file(dir + "/LIST", &ok);
  ASSERT_TRUE(ok);
  std::istringstream is(std::string(list.begin(), list.end()));
  std::string name;
  while (is >> name) {
    const auto bin = read_file(dir + "/" + name + ".bin", &ok);
    ASSERT_TRUE(ok);
    EXPECT_TRUE(same_decode_result("cuda", bin.data(), bin.size(), 1 << 20)) << name;
    // Device to device: the backend has not read the header.
    DeviceBuffer f(bin.size()), out(1 << 20);
    ASSERT_TRUE(f.upload(bin.data(), bin.size()));
    std::vector<uint8_t> ref_out(1 << 20);
    DecompressArgs a;
    a.src = bin.data();
    a.src_size = bin.size();
    a.dst = ref_out.data();
    a.capacity = ref_out.size();
    a.verify_checksum = true;
    DecompressOptions dopt;
    dopt.backend = "cuda";
    EXPECT_EQ(status_name(decompress(f.get(), bin.size(), out.get(), 1 << 20, dopt).status),
              std::string(status_name(reference_decompress(a).status)))
        << name;
  }
}

TEST(CudaCapacity, CorruptFramesGiveReferenceStatuses) {
  SZ_REQUIRE_GPU();
  const uint64_t n = 2 * 65536 + 999;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, n, 21, {});
  std::vector<uint8_t> frame(compress_bound(Dtype::fp16, n));
  CompressOptions o = cap_opts(true);
  o.backend = "reference";
  const Result r = compress(Dtype::fp16, in.data(), n, frame.data(), frame.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  frame.resize(r.size);
  for (uint64_t pos = 0; pos < frame.size(); pos += pos < 2048 ? 3 : 1531) {
    auto bad = frame;
    bad[pos] ^= 0x10;
    EXPECT_TRUE(same_decode_result("cuda", bad.data(), bad.size(), n * 2)) << "byte " << pos;
  }
}

// Small runs of every capacity kernel for compute-sanitizer (memcheck,
// racecheck: scripts/gpu_check.sh step 6 runs CudaSanitize.*): device
// buffers, both decoders (device to device), a corrupt stream.
TEST(CudaSanitize, CapacitySmallEveryPath) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    const auto data = synth::generate(synth::Generator::gaussian_kv, d, 70001, 3, {});
    for (uint64_t n : {uint64_t{0}, uint64_t{17}, uint64_t{70001}}) {
      const uint64_t bytes = n * dtype_bytes(d), bound = compress_bound(d, n);
      DeviceBuffer src(bytes + 1), frame(bound), out(bytes + 1);
      ASSERT_TRUE(src.upload(data.data(), bytes));
      CompressOptions o = cap_opts(n % 2 == 1);
      o.backend = "cuda";
      const Result r = compress(d, src.get(), n, frame.get(), bound, o);
      ASSERT_EQ(r.status, Status::ok) << dtype_name(d) << " " << n;
      auto f = frame.download(r.size);
      DecompressOptions dopt;
      dopt.backend = "cuda";
      EXPECT_EQ(decompress(frame.get(), r.size, out.get(), bytes, dopt).status, Status::ok);
      if (r.size > 200 && f[49] == 1) {
        f[r.size - 40] ^= 0x11;
        std::vector<uint8_t> ref_out(bytes);
        DecompressArgs a;
        a.src = f.data();
        a.src_size = f.size();
        a.dst = ref_out.data();
        a.capacity = bytes;
        a.verify_checksum = true;
        ASSERT_TRUE(frame.upload(f.data(), f.size()));
        EXPECT_EQ(decompress(frame.get(), f.size(), out.get(), bytes, dopt).status, reference_decompress(a).status);
      }
    }
  }
}

// The throughput line of scripts/gpu_check.sh: the synchronous API on
// device buffers (each call includes its one host sync), best of 5, a
// 64 Mi-element bf16 input (Gaussian KV-like). Prints, asserts only the
// round trip.
TEST(CudaCapacityBench, SyncApiThroughput) {
  SZ_REQUIRE_GPU();
  const uint64_t n = uint64_t{1} << 26, bytes = n * 2, bound = compress_bound(Dtype::bf16, n);
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 1, {});
  DeviceBuffer src(bytes), frame(bound), out(bytes);
  ASSERT_TRUE(src.upload(in.data(), bytes));
  for (Mode mode : {Mode::fast, Mode::capacity}) {
    CompressOptions o;
    o.backend = "cuda";
    o.mode = mode;
    o.checksum = true;
    DecompressOptions d;
    d.backend = "cuda";
    double enc = 1e30, dec = 1e30;
    uint64_t size = 0;
    for (int it = 0; it < 6; ++it) {  // the first is a warm-up
      const auto t0 = std::chrono::steady_clock::now();
      const Result r = compress(Dtype::bf16, src.get(), n, frame.get(), bound, o);
      const auto t1 = std::chrono::steady_clock::now();
      ASSERT_EQ(r.status, Status::ok);
      size = r.size;
      const Result dr = decompress(frame.get(), r.size, out.get(), bytes, d);
      const auto t2 = std::chrono::steady_clock::now();
      ASSERT_EQ(dr.status, Status::ok);
      if (it == 0) continue;
      enc = std::min(enc, std::chrono::duration<double>(t1 - t0).count());
      dec = std::min(dec, std::chrono::duration<double>(t2 - t1).count());
    }
    EXPECT_TRUE(out.download(bytes) == in);
    std::printf("capacity_throughput mode=%s bf16 n=%llu ratio=%.4f encode=%.2f GB/s decode=%.2f GB/s (sync API, device buffers, checksum)\n",
                mode == Mode::capacity ? "capacity" : "fast", static_cast<unsigned long long>(n),
                static_cast<double>(bytes) / static_cast<double>(size), bytes / enc / 1e9, bytes / dec / 1e9);
  }
}

// Table sets (FORMAT.md 4.9) on the GPU: every dtype, T = 1, 4, 32, a set
// of the input (shared blocks) and of other data (own-table fallbacks);
// host and device buffers; frames equal to the reference's, decoded with
// the set (one or two given, device to device too), MISSING_TABLES without.
TEST(CudaCapacity, TableSets) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes)
    for (uint32_t T : {1u, 4u, 32u})
      for (uint64_t n : {uint64_t{33}, uint64_t{2 * 65536 + 77}}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " T=" + std::to_string(T) + " n=" + std::to_string(n));
        const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 13 + n, {});
        const auto other = synth::generate(synth::Generator::gaussian_kv, d, 300, 7, {});
        TableSet own, small;
        const void* b1[1] = {in.data()};
        const void* b2[1] = {other.data()};
        const uint64_t n1[1] = {n}, n2[1] = {300};
        ASSERT_EQ(calibrate_tables(d, b1, n1, 1, &own, T), Status::ok);
        ASSERT_EQ(calibrate_tables(d, b2, n2, 1, &small, T), Status::ok);
        for (const TableSet* ts : {&own, &small}) {
          const uint64_t bytes = in.size(), bound = compress_bound(d, n);
          CompressOptions ro = cap_opts(true);
          ro.backend = "reference";
          ro.tables = ts;
          std::vector<uint8_t> want(bound), got(bound);
          const Result r = compress(d, in.data(), n, want.data(), bound, ro);
          ASSERT_EQ(r.status, Status::ok);
          want.resize(r.size);
          CompressOptions co = ro;
          co.backend = "cuda";
          const Result g = compress(d, in.data(), n, got.data(), bound, co);
          ASSERT_EQ(g.status, Status::ok);
          got.resize(g.size);
          ASSERT_EQ(got, want);
          DeviceBuffer src(bytes), frame(bound), out(bytes);
          ASSERT_TRUE(src.upload(in.data(), bytes));
          const Result gd = compress(d, src.get(), n, frame.get(), bound, co);
          ASSERT_EQ(gd.status, Status::ok);
          ASSERT_EQ(frame.download(gd.size), want);
          const TableSet pair[2] = {ts == &own ? small : own, *ts};
          for (size_t k : {size_t{1}, size_t{2}}) {
            DecompressOptions o;
            o.backend = "cuda";
            o.tables = k == 1 ? ts : pair;
            o.n_tables = k;
            std::vector<uint8_t> back(bytes);
            ASSERT_EQ(decompress(want.data(), want.size(), back.data(), bytes, o).status, Status::ok);
            ASSERT_EQ(back, in);
            ASSERT_TRUE(out.fill(0xEE));
            ASSERT_EQ(decompress(frame.get(), gd.size, out.get(), bytes, o).status, Status::ok);
            ASSERT_EQ(out.download(bytes), in);
          }
          if ((want[6] & 8u) == 0) continue;  // stored: names no set
          DecompressOptions none;
          none.backend = "cuda";
          std::vector<uint8_t> back(bytes);
          EXPECT_EQ(decompress(want.data(), want.size(), back.data(), bytes, none).status, Status::missing_tables);
          EXPECT_EQ(decompress(frame.get(), gd.size, out.get(), bytes, none).status, Status::missing_tables);
        }
      }
}

}  // namespace
}  // namespace splitzip::test
