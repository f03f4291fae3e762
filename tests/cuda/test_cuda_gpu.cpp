// SPDX-License-Identifier: Apache-2.0
// The "cuda" Backend through the public frame API, on a GPU: byte-identical
// frames to the reference, cross-decoding, corrupt frames, memory kinds.
// Skips with a message when the machine has no CUDA device.
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/reference.h"
#include "core/synthetic.h"
#include "tests/cuda/gpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

TEST(CudaBackend, RegisteredAndAvailable) {
  ASSERT_NE(find_backend("cuda"), nullptr);
  // Without a device the reason says so; with one it is empty.
  EXPECT_EQ(std::string(find_backend("cuda")->unavailable_reason()).empty(), cuda::device_available());
  SZ_REQUIRE_GPU();
  EXPECT_TRUE(backend_available("cuda"));
}

TEST(CudaBackend, MemoryKinds) {
  std::vector<uint8_t> host(64);
  EXPECT_EQ(cuda_pointer_kind(host.data()), MemoryKind::host);
  EXPECT_EQ(cuda_pointer_kind(nullptr), MemoryKind::host);
  SZ_REQUIRE_GPU();
  DeviceBuffer d(64);
  EXPECT_EQ(cuda_pointer_kind(d.get()), MemoryKind::device);
  EXPECT_EQ(memory_kind_of(d.get()), MemoryKind::device);
  void* m = nullptr;
  SZ_CUDA_OK(cudaMallocManaged(&m, 64));
  EXPECT_EQ(cuda_pointer_kind(m), MemoryKind::managed);
  cudaFree(m);
  void* pinned = nullptr;
  SZ_CUDA_OK(cudaMallocHost(&pinned, 64));
  EXPECT_EQ(cuda_pointer_kind(pinned), MemoryKind::host);
  cudaFreeHost(pinned);
}

TEST(CudaBackend, GoldenCases) {
  SZ_REQUIRE_GPU();
  EXPECT_TRUE(golden_cases_match("cuda"));
}

TEST(CudaBackend, RealKvAllDtypes) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes)
    for (const RealInput& in : real_inputs(d))
      for (uint32_t cl : {6u, 10u, 15u}) {
        CompressOptions o;
        o.chunk_log2 = cl;
        EXPECT_TRUE(matches_reference("cuda", d, in.bytes.data(), in.n, o)) << in.name << " cl " << cl;
      }
}

TEST(CudaBackend, SyntheticIncludingNanInfAndAllEscape) {
  SZ_REQUIRE_GPU();
  using synth::Generator;
  for (Dtype d : kDtypes) {
    for (Generator g : {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                        Generator::random_bits, Generator::special_values, Generator::exponent_shift}) {
      synth::Params p;
      p.escape_rate = 0.04;
      const uint64_t n = 200003;
      const auto data = synth::generate(g, d, n, 5, p);
      CompressOptions o;
      EXPECT_TRUE(matches_reference("cuda", d, data.data(), n, o)) << dtype_name(d) << " " << synth::generator_name(g);
      o.checksum = true;
      const Codebook body = synth::body_codebook(d);
      o.codebook = &body;
      EXPECT_TRUE(matches_reference("cuda", d, data.data(), n, o)) << dtype_name(d) << " body+checksum";
    }
  }
}

TEST(CudaBackend, EdgeSizes) {
  SZ_REQUIRE_GPU();
  const uint64_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025,
                            32767, 32768, 32769, 65535, 65536, 65537, 8 * 32768 * 132 + 3};
  for (Dtype d : kDtypes) {
    const uint64_t max_n = sizes[std::size(sizes) - 1];
    synth::Params p;
    p.escape_rate = 0.01;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, max_n, 77, p);
    for (uint64_t n : sizes) {
      CompressOptions o;
      o.chunk_log2 = n % 2 ? 6 : 15;
      EXPECT_TRUE(matches_reference("cuda", d, data.data(), n, o)) << dtype_name(d) << " n " << n;
    }
  }
}

// Device-resident buffers through the frame layer; GPU frames decoded on
// the CPU and CPU frames decoded on the GPU.
TEST(CudaBackend, DeviceBuffersAndCrossDecode) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    const auto inputs = real_inputs(d);
    ASSERT_FALSE(inputs.empty());
    const RealInput& in = inputs.front();
    const uint64_t bytes = in.n * dtype_bytes(d);
    const uint64_t bound = compress_bound(d, in.n);
    DeviceBuffer src(bytes), frame(bound), out(bytes);
    ASSERT_TRUE(src.upload(in.bytes.data(), bytes));
    const Result r = compress(d, src.get(), in.n, frame.get(), bound);  // dispatch picks cuda
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_STREQ(r.backend, "cuda");
    const std::vector<uint8_t> gpu_frame = frame.download(r.size);

    std::vector<uint8_t> ref(bound);
    CompressOptions ro;
    ro.backend = "reference";
    const Result rr = compress(d, in.bytes.data(), in.n, ref.data(), ref.size(), ro);
    ASSERT_EQ(rr.status, Status::ok);
    EXPECT_TRUE(bytes_equal(gpu_frame.data(), r.size, ref.data(), rr.size)) << in.name;

    // GPU frame -> CPU decode.
    std::vector<uint8_t> host_out(bytes);
    DecompressOptions cpu;
    cpu.backend = "reference";
    ASSERT_EQ(decompress(gpu_frame.data(), gpu_frame.size(), host_out.data(), bytes, cpu).status, Status::ok);
    EXPECT_TRUE(bytes_equal(host_out.data(), bytes, in.bytes.data(), bytes));
    // CPU frame -> GPU decode, on device memory.
    DeviceBuffer dframe(rr.size);
    ASSERT_TRUE(dframe.upload(ref.data(), rr.size));
    const Result dr = decompress(dframe.get(), rr.size, out.get(), bytes);
    ASSERT_EQ(dr.status, Status::ok);
    EXPECT_STREQ(dr.backend, "cuda");
    const auto back = out.download(bytes);
    EXPECT_TRUE(bytes_equal(back.data(), bytes, in.bytes.data(), bytes));
  }
}

TEST(CudaBackend, CorruptFramesGiveReferenceStatuses) {
  SZ_REQUIRE_GPU();
  uint64_t checked = 0;
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.03;
    const uint64_t n = 3001;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 3, p);
    const Codebook body = synth::body_codebook(d);
    std::vector<uint8_t> frame(compress_bound(d, n));
    CompressOptions o;
    o.backend = "reference";
    o.codebook = &body;
    o.chunk_log2 = 6;
    const Result r = compress(d, data.data(), n, frame.data(), frame.size(), o);
    ASSERT_EQ(r.status, Status::ok);
    frame.resize(r.size);
    for (uint64_t pos = 0; pos < frame.size(); pos += 3) {
      std::vector<uint8_t> bad = frame;
      bad[pos] ^= static_cast<uint8_t>(1u << (pos % 8));
      EXPECT_TRUE(same_decode_result("cuda", bad.data(), bad.size(), n * dtype_bytes(d))) << "byte " << pos;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

// More than 2^31 elements (fp8: 2 GiB + 4097 bytes, 32769 checksum blocks,
// a short last block) with the v2 checksum, device buffers through the
// "cuda" Backend: the host oracle (libxxhash) accepts the device-written
// frame (stream 7 and content checksum), and the device decoder verifies
// and reproduces the input.
TEST(CudaHuge, Fp8ChecksumFrameOver2Pow31ElementsThroughBackend) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::fp8_e5m2;
  const uint64_t n = (uint64_t{1} << 31) + 4097;
  std::vector<uint8_t> input(n);
  const auto pattern = synth::generate(synth::Generator::gaussian_kv, d, uint64_t{1} << 24, 5);
  for (uint64_t off = 0; off < n; off += pattern.size())
    std::memcpy(input.data() + off, pattern.data(), std::min<uint64_t>(pattern.size(), n - off));
  for (uint64_t i = 0; i < n; i += 65537) input[i] ^= static_cast<uint8_t>(i >> 16);  // blocks differ
  const uint64_t cap = compress_bound(d, n);
  DeviceBuffer src(n), frame(cap), out(n);
  ASSERT_TRUE(src.upload(input.data(), n));
  CompressOptions co;
  co.backend = "cuda";
  co.checksum = true;
  const Result c = compress(d, src.get(), n, frame.get(), cap, co);
  ASSERT_EQ(c.status, Status::ok);
  const std::vector<uint8_t> host_frame = frame.download(c.size);
  std::vector<uint8_t> back(n);
  DecompressArgs ra;
  ra.src = host_frame.data();
  ra.src_size = host_frame.size();
  ra.dst = back.data();
  ra.capacity = n;
  const FrameOutcome ro = reference_decompress(ra);
  ASSERT_EQ(ro.status, Status::ok) << status_name(ro.status) << " block " << ro.corrupt_block;
  EXPECT_TRUE(back == input);
  DecompressOptions dopt;
  dopt.backend = "cuda";
  const Result dr = decompress(frame.get(), c.size, out.get(), n, dopt);
  ASSERT_EQ(dr.status, Status::ok);
  EXPECT_TRUE(out.download(n) == input);
}

// Every call of the synchronous backend runs on the caller's stream: an
// input produced on a non-blocking stream by an async copy is compressed
// right after it without any other synchronisation (cuda::ScopedBackendStream).
TEST(CudaBackend, RunsOnTheCallersStream) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::bf16;
  const uint64_t n = 3u << 20;
  const auto data = synth::generate(synth::Generator::gaussian_kv, d, n, 41);
  void* pinned = nullptr;
  SZ_CUDA_OK(cudaMallocHost(&pinned, n * 2));
  std::memcpy(pinned, data.data(), n * 2);
  cudaStream_t s;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DeviceBuffer src(n * 2), frame(compress_bound(d, n)), out(n * 2);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(src.fill(0));
    SZ_CUDA_OK(cudaMemcpyAsync(src.get(), pinned, n * 2, cudaMemcpyHostToDevice, s));
    cuda::ScopedBackendStream scope(s);
    CompressOptions o;
    o.backend = "cuda";
    o.checksum = true;
    const Result r = compress(d, src.get(), n, frame.get(), frame.size(), o);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_TRUE(matches_reference("cuda", d, data.data(), n, o));
    std::vector<uint8_t> want(compress_bound(d, n));
    o.backend = "reference";
    const Result rr = compress(d, data.data(), n, want.data(), want.size(), o);
    ASSERT_EQ(rr.status, Status::ok);
    EXPECT_TRUE(bytes_equal(frame.download(r.size).data(), r.size, want.data(), rr.size)) << round;
    DecompressOptions dopt;
    dopt.backend = "cuda";
    ASSERT_EQ(decompress(frame.get(), r.size, out.get(), n * 2, dopt).status, Status::ok);
    EXPECT_TRUE(out.download(n * 2) == data);
  }
  cudaStreamDestroy(s);
  cudaFreeHost(pinned);
}

}  // namespace
}  // namespace splitzip::test
