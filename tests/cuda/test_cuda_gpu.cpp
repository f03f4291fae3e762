// SPDX-License-Identifier: Apache-2.0
// The "cuda" Backend through the public frame API, on a GPU: byte-identical
// frames to the reference, cross-decoding, corrupt frames, memory kinds.
// Skips with a message when the machine has no CUDA device.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/header.h"
#include "core/reference.h"
#include "tests/cuda/gpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/e4m3_data.h"
#include "tests/support/synthetic.h"
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

// fp8_e4m3 (FORMAT.md 4.7) on the device: the committed goldens
// (tests/golden/e4m3, those without a tensor section) byte for byte, their
// decode; every byte value, edge sizes, real KV cast to E4M3 and the
// dynamic (device-calibrated top-7) codebook against the reference;
// corrupt frames give the reference's status.
TEST(CudaBackend, E4M3GoldensRoundTripAndCorruptFrames) {
  SZ_REQUIRE_GPU();
  namespace fs = std::filesystem;
  const Dtype d = Dtype::fp8_e4m3;
  int goldens = 0;
  for (const auto& entry : fs::directory_iterator(golden_dir() + "/e4m3")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("e4m3_", 0) != 0 || entry.path().extension() != ".sz") continue;
    bool ok = false;
    const std::vector<uint8_t> golden = read_file(entry.path().string(), &ok);
    ASSERT_TRUE(ok) << name;
    FrameInfo fi;
    ASSERT_EQ(frame_info(golden.data(), golden.size(), &fi), Status::ok) << name;
    std::vector<uint8_t> input(fi.n_elems + 1);
    DecompressOptions dc;
    dc.backend = "cuda";
    const Result dr = decompress(golden.data(), golden.size(), input.data(), input.size(), dc);
    ASSERT_EQ(dr.status, Status::ok) << name;
    input.resize(dr.size);
    std::vector<uint8_t> ref_out(input.size() + 1);
    DecompressOptions rc;
    rc.backend = "reference";
    ASSERT_EQ(decompress(golden.data(), golden.size(), ref_out.data(), ref_out.size(), rc).status, Status::ok);
    EXPECT_TRUE(bytes_equal(input.data(), input.size(), ref_out.data(), input.size())) << name;
    CompressOptions o;
    o.checksum = fi.has_checksum;
    EXPECT_TRUE(matches_reference("cuda", d, input.data(), input.size(), o)) << name;
    FrameHeader h;
    ASSERT_EQ(parse_header(golden.data(), golden.size(), &h), Status::ok) << name;
    if (!h.stored()) {  // the golden's own codebook: the GPU writes the golden bytes
      Codebook cb;
      cb.dtype = d;
      cb.count = h.codebook_count;
      std::memcpy(cb.entries, h.codebook, 16);
      o.codebook = &cb;
      o.chunk_log2 = h.chunk_log2;
      o.backend = "cuda";
      std::vector<uint8_t> f(compress_bound(d, input.size()));
      const Result cr = compress(d, input.data(), input.size(), f.data(), f.size(), o);
      ASSERT_EQ(cr.status, Status::ok) << name;
      EXPECT_TRUE(bytes_equal(f.data(), cr.size, golden.data(), golden.size())) << name;
    }
    ++goldens;
  }
  EXPECT_GE(goldens, 5);
  std::vector<uint8_t> all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<uint8_t>(b));
  const auto kv = e4m3_kv_bytes(3 * 32768 + 5, 7);
  std::vector<uint8_t> mixed(kv);
  mixed.insert(mixed.begin() + 100, all.begin(), all.end());
  for (bool checksum : {false, true}) {
    CompressOptions o;
    o.checksum = checksum;
    EXPECT_TRUE(matches_reference("cuda", d, all.data(), all.size(), o));
    EXPECT_TRUE(matches_reference("cuda", d, mixed.data(), mixed.size(), o));
    for (uint64_t n : {0, 1, 9, 17, 1023, 32767, 32768, 32769, 65537})
      EXPECT_TRUE(matches_reference("cuda", d, kv.data(), n, o)) << "n " << n;
  }
  for (const RealInput& in : real_inputs(Dtype::fp32)) {
    std::vector<float> f(in.n);
    std::memcpy(f.data(), in.bytes.data(), in.n * 4);
    const auto v = e4m3_scaled(f.data(), in.n);
    CompressOptions o;
    o.checksum = true;
    EXPECT_TRUE(matches_reference("cuda", d, v.data(), v.size(), o)) << in.name;
  }
  const auto small = e4m3_kv_bytes(3001, 9, 8);
  std::vector<uint8_t> frame(compress_bound(d, small.size()));
  CompressOptions ro;
  ro.backend = "reference";
  const Result r = compress(d, small.data(), small.size(), frame.data(), frame.size(), ro);
  ASSERT_EQ(r.status, Status::ok);
  frame.resize(r.size);
  for (uint64_t pos = 0; pos < frame.size(); pos += 3) {
    std::vector<uint8_t> bad = frame;
    bad[pos] ^= static_cast<uint8_t>(1u << (pos % 8));
    EXPECT_TRUE(same_decode_result("cuda", bad.data(), bad.size(), small.size())) << "byte " << pos;
  }
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
